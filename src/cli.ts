#!/usr/bin/env node
/**
 * a2a-egress [--config FILE] [--port N] [--host ADDR]
 * The only module that reads argv, handles signals and calls process.exit.
 */
import { parseArgs } from 'node:util';
import type { Logger } from 'pino';
import { ConfigError } from './config/errors.js';
import { loadConfigFile } from './config/load.js';
import type { GatewayConfig } from './config/schema.js';
import { watchConfigFile } from './config/watch.js';
import { CredentialError } from './policy/credentials.js';
import { createGateway, type Gateway } from './server.js';
import { describeInternal, reportInternalError } from './telemetry/internal-error.js';
import { createLogger } from './telemetry/logger.js';
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

/** Set once the gateway runs: the process-level handlers below report through it. */
let running: { gateway: Gateway; log: Logger; stop: (why: string, exitCode: number) => void } | undefined;

async function main(): Promise<void> {
  let config: GatewayConfig;
  let cli: CliOptions;
  let gateway: Gateway;
  let logger: Logger;
  try {
    cli = parseCli(process.argv.slice(2));
    config = withOverrides(loadConfigFile(cli.configPath), cli.port, cli.host);
    logger = createLogger(config.server.logLevel);
    gateway = await createGateway(config, { logger });
  } catch (err) {
    if (err instanceof ConfigError || err instanceof CredentialError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`a2a-egress: invalid configuration\n${(err as Error).message}\n`);
      process.exit(EXIT_CONFIG);
    }
    throw err;
  }

  const { url, opsUrl, remoteUrls } = await gateway.listen();
  const log = logger;
  const own = Object.keys(remoteUrls).length > 0 ? { remoteAddresses: remoteUrls } : {};
  log.info({ address: url, ...(opsUrl ? { opsAddress: opsUrl } : {}), ...own, remotes: [...config.remotes.keys()], version: VERSION }, 'a2a-egress listening');

  const reload = (why: string) => {
    try {
      const next = withOverrides(loadConfigFile(cli.configPath), cli.port, cli.host);
      // Every key takes effect except the listen addresses, which are named here when they changed.
      const { restartNeeded } = gateway.reload(next);
      log[restartNeeded.length > 0 ? 'warn' : 'info']({ why, remotes: [...next.remotes.keys()], restartNeeded }, 'config reloaded');
    } catch (err) {
      gateway.metrics.configReloads.inc({ result: 'invalid' });
      if (!(err instanceof ConfigError || err instanceof CredentialError)) reportInternalError(log, gateway.metrics.internalErrors, 'reload', err, { why });
      const problem = err instanceof Error ? err.message : String(err);
      log.error({ why, problem }, 'config reload failed; keeping the previous config');
    }
  };
  process.on('SIGHUP', () => reload('SIGHUP'));
  if (cli.watchConfig) watchConfigFile(cli.configPath, () => reload('file changed'));

  let stopping = false;
  const stop = (why: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal: why, drainMs: gateway.config().server.drainMs }, 'shutting down');
    gateway.close().then(
      () => process.exit(exitCode),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  running = { gateway, log, stop };
}

// A rejected promise nobody awaited leaves no state half-changed: log it (message and stack) and keep serving.
process.on('unhandledRejection', (reason) => {
  if (!running) return void process.stderr.write(`a2a-egress: unhandled rejection: ${JSON.stringify(describeInternal(reason))}\n`);
  reportInternalError(running.log, running.gateway.metrics.internalErrors, 'process', reason, { event: 'unhandledRejection' });
});

// After an uncaught exception the process state is unknown (Node's own advice is not to resume):
// log it, then drain like SIGTERM (streams end, calls get drainMs) and exit 1 for the supervisor to restart.
process.on('uncaughtException', (err) => {
  if (!running) {
    process.stderr.write(`a2a-egress: uncaught exception: ${JSON.stringify(describeInternal(err))}\n`);
    process.exit(1);
  }
  reportInternalError(running.log, running.gateway.metrics.internalErrors, 'process', err, { event: 'uncaughtException' });
  running.stop('uncaughtException', 1);
});

main().catch((err: unknown) => {
  process.stderr.write(`a2a-egress: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
