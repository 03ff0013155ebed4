#!/usr/bin/env node
/**
 * a2a-egress [--config FILE] [--port N] [--host ADDR]
 * The only module that reads argv, handles signals and calls process.exit.
 */
import { parseArgs } from 'node:util';
import { ConfigError } from './config/errors.js';
import { loadConfigFile } from './config/load.js';
import type { GatewayConfig } from './config/schema.js';
import { watch } from 'node:fs';
import { CredentialError } from './policy/credentials.js';
import { createGateway, type Gateway } from './server.js';
import { VERSION } from './version.js';

const EXIT_CONFIG = 2;

const USAGE = `usage: a2a-egress [--config FILE] [--port N] [--host ADDR]
  --config FILE   gateway config (YAML); default $A2A_EGRESS_CONFIG or config/gateway.yaml
  --port N        listen port, overrides server.port (0 picks a free port)
  --host ADDR     listen address, overrides server.host
  --watch-config  reload when the config file changes (SIGHUP always reloads)
  --version       print the version`;

interface CliOptions {
  configPath: string;
  port?: number;
  host?: string;
  watchConfig: boolean;
}

function parseCli(argv: string[]): CliOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      config: { type: 'string', short: 'c' },
      port: { type: 'string', short: 'p' },
      host: { type: 'string' },
      'watch-config': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (values.version) {
    process.stdout.write(`${VERSION}\n`);
    process.exit(0);
  }
  const out: CliOptions = {
    configPath: values.config ?? process.env.A2A_EGRESS_CONFIG ?? 'config/gateway.yaml',
    watchConfig: values['watch-config'] === true,
  };
  if (values.port !== undefined) {
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`--port: must be an integer 0..65535`);
    out.port = port;
  }
  if (values.host !== undefined) out.host = values.host;
  return out;
}

function withOverrides(config: GatewayConfig, port?: number, host?: string): GatewayConfig {
  return { ...config, server: { ...config.server, ...(port !== undefined ? { port } : {}), ...(host ? { host } : {}) } };
}

async function main(): Promise<void> {
  let config: GatewayConfig;
  let cli: CliOptions;
  let gateway: Gateway;
  try {
    cli = parseCli(process.argv.slice(2));
    config = withOverrides(loadConfigFile(cli.configPath), cli.port, cli.host);
    gateway = await createGateway(config);
  } catch (err) {
    if (err instanceof ConfigError || err instanceof CredentialError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`a2a-egress: invalid configuration\n${(err as Error).message}\n`);
      process.exit(EXIT_CONFIG);
    }
    throw err;
  }

  const { url, opsUrl, remoteUrls } = await gateway.listen();
  const log = gateway.app.log;
  const own = Object.keys(remoteUrls).length > 0 ? { remoteAddresses: remoteUrls } : {};
  log.info({ address: url, ...(opsUrl ? { opsAddress: opsUrl } : {}), ...own, remotes: [...config.remotes.keys()], version: VERSION }, 'a2a-egress listening');

  const reload = (why: string) => {
    try {
      const next = withOverrides(loadConfigFile(cli.configPath), cli.port, cli.host);
      const before = gateway.config().server;
      if (next.server.host !== before.host || next.server.port !== before.port || next.server.opsPort !== before.opsPort) {
        log.warn('listen address changes need a restart; keeping the current one');
      }
      const listenOf = (c: GatewayConfig, name: string) => JSON.stringify(c.remotes.get(name)?.listen ?? null);
      const names = new Set([...next.remotes.keys(), ...gateway.config().remotes.keys()]);
      const moved = [...names].filter((name) => listenOf(next, name) !== listenOf(gateway.config(), name));
      if (moved.length > 0) log.warn({ remotes: moved }, 'remotes.<name>.listen changes need a restart; the listeners started with stay as they are');
      gateway.reload({ ...next, server: { ...next.server, host: before.host, port: before.port, opsPort: before.opsPort } });
      log.info({ why, remotes: [...next.remotes.keys()] }, 'config reloaded');
    } catch (err) {
      gateway.metrics.configReloads.inc({ result: 'invalid' });
      const problem = err instanceof Error ? err.message : String(err);
      log.error({ why, problem }, 'config reload failed; keeping the previous config');
    }
  };
  process.on('SIGHUP', () => reload('SIGHUP'));
  if (cli.watchConfig) {
    let pending: NodeJS.Timeout | undefined;
    // Editors write in several steps: wait for the file to settle before reading it.
    watch(cli.configPath, () => {
      clearTimeout(pending);
      pending = setTimeout(() => reload('file changed'), 200);
    }).unref();
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, drainMs: gateway.config().server.drainMs }, 'shutting down');
    gateway.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

// A gateway must outlive any one bad call: log and keep serving rather than die.
process.on('unhandledRejection', (reason) => {
  process.stderr.write(`a2a-egress: unhandled rejection: ${reason instanceof Error ? reason.name : typeof reason}\n`);
});

main().catch((err: unknown) => {
  process.stderr.write(`a2a-egress: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
