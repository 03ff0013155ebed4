#!/usr/bin/env node
/**
 * a2a-egress [--config FILE] [--port N] [--host ADDR]   serve
 * a2a-egress check [--config FILE]                       validate, print the effective config
 * a2a-egress schema                                      print the config's JSON Schema
 * The only module that reads argv, handles signals and calls process.exit.
 */
// First, before any other module runs: keeps nextTick's inline caches fast (src/v8/tick-object-maps.ts).
import './v8/tick-object-maps.js';
import cluster from 'node:cluster';
import { parseArgs } from 'node:util';
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import { workerSlot } from './cluster/messages.js';
import type { RunningWorker } from './cluster/worker.js';
import { stringify } from 'yaml';
import { effectiveConfig } from './commands/effective-config.js';
import { ConfigError } from './config/errors.js';
import { configJsonSchemaText } from './config/json-schema.js';
import { callerPort, configPath, PortError } from './config/listen.js';
import { loadConfigFile, parseConfig, readConfigText } from './loader/load.js';
import type { GatewayConfig } from './config/schema.js';
import { watchConfigFile } from './config/watch.js';
import { CredentialError } from './policy/credentials.js';
import type { Gateway } from './server.js';
import { describeInternal, reportInternalError } from './telemetry/internal-error.js';
import { createLogger } from './telemetry/logger.js';
import { VERSION } from './version.js';

const EXIT_CONFIG = 2;

const USAGE = `usage: a2a-egress [--config FILE] [--port N] [--host ADDR] [--watch-config]
       a2a-egress check [--config FILE]
       a2a-egress schema
  (no command)    run the gateway
  check           validate the config and the secrets it names, print the effective
                  config (defaults merged, secrets masked); exit 0, or 2 with the problems
  schema          print the config file's JSON Schema
  --config FILE   gateway config (YAML); default $A2A_EGRESS_CONFIG or config/gateway.yaml
  --port N        listen port, overrides $A2A_EGRESS_PORT, which overrides server.port
                  (0 picks a free port)
  --host ADDR     listen address, overrides server.host
  --watch-config  reload when the config file changes (SIGHUP always reloads)
  --version       print the version`;

/** Loads the file and checks the secrets it names in this process's environment. */
const loadChecked = (path: string): GatewayConfig => loadConfigFile(path, { env: process.env });
const parseChecked = (text: string, path: string): GatewayConfig => parseConfig(text, path, { env: process.env });

/** The loader's warnings (a deprecated key name, with its file:line), one log line each. */
function logConfigWarnings(log: Logger, config: GatewayConfig): void {
  for (const warning of config.warnings ?? []) log.warn({ warning }, 'config warning');
}

const isUsageError = (err: unknown): boolean => (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') === true;

function failConfig(err: unknown): never {
  process.stderr.write(`a2a-egress: invalid configuration\n${(err as Error).message}\n`);
  process.exit(EXIT_CONFIG);
}

/** `check`: exit 0 and the effective config, or exit 2 and every problem found. */
function check(argv: string[]): void {
  let path: string;
  let config: GatewayConfig;
  try {
    const { values } = parseArgs({ args: argv, options: { config: { type: 'string', short: 'c' } }, strict: true });
    path = configPath(values.config, process.env);
    // As the gateway would run it: $A2A_EGRESS_PORT applied.
    config = withOverrides(loadChecked(path));
  } catch (err) {
    if (err instanceof ConfigError || err instanceof PortError || isUsageError(err)) failConfig(err);
    throw err;
  }
  for (const warning of config.warnings ?? []) process.stderr.write(`a2a-egress: warning: ${warning}\n`);
  process.stdout.write(`# ${path}: valid. The effective configuration (defaults merged, secrets masked):\n`);
  process.stdout.write(stringify(effectiveConfig(config), { lineWidth: 0 }));
}

interface CliOptions {
  configPath: string;
  /** --port as given; resolved with $A2A_EGRESS_PORT and server.port by src/config/listen.ts. */
  port?: string;
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
    configPath: configPath(values.config, process.env),
    watchConfig: values['watch-config'] === true,
  };
  if (values.port !== undefined) out.port = values.port;
  if (values.host !== undefined) out.host = values.host;
  return out;
}

/** The config with the listen address the command line and environment ask for. */
function withOverrides(config: GatewayConfig, portArg?: string, host?: string): GatewayConfig {
  const port = callerPort(config.server.port, portArg, process.env);
  return { ...config, server: { ...config.server, port, ...(host ? { host } : {}) } };
}

/** Set once the gateway runs: the process-level handlers below report through it. */
let running: { internalErrors: Counter<'where'>; log: Logger; stop: (why: string, exitCode: number) => void } | undefined;

/**
 * server.workers > 1, in the primary: it serves no caller; it forks the workers and owns reload, drain,
 * replacing dead workers and /metrics (src/cluster/primary.ts).
 */
async function servePrimary(cli: CliOptions, config: GatewayConfig, text: string, logger: Logger): Promise<void> {
  const { startPrimary } = await import('./cluster/primary.js');
  const primary = startPrimary({
    config,
    text,
    logger,
    load: () => {
      const next = readConfigText(cli.configPath);
      const nextConfig = withOverrides(parseChecked(next, cli.configPath), cli.port, cli.host);
      logConfigWarnings(logger, nextConfig);
      return { text: next, config: nextConfig };
    },
  });
  process.on('SIGHUP', () => primary.reload('SIGHUP'));
  if (cli.watchConfig) watchConfigFile(cli.configPath, () => primary.reload('file changed'));
  const stop = (why: string, exitCode = 0) => primary.stop(why, exitCode);
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  void primary.exited.then((code) => process.exit(code));
  running = { internalErrors: primary.metrics.gateway.internalErrors, log: logger, stop };
}

/** A worker forked by the primary: it serves callers on the config the primary sends (src/cluster/worker.ts). */
async function serveWorker(cli: CliOptions): Promise<void> {
  let worker: RunningWorker | undefined;
  let stopping = false;
  const stop = (why: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    if (!worker) process.exit(exitCode);
    worker.log.info({ signal: why, drainMs: worker.gateway.config().server.drainMs }, 'shutting down');
    worker.gateway.close().then(
      () => process.exit(exitCode),
      () => process.exit(1),
    );
  };
  // The primary directs reloads and drains; Ctrl-C and a hangup reach the whole process group, the primary included.
  process.on('SIGINT', () => {});
  process.on('SIGHUP', () => {});
  // A worker signalled on its own drains and exits; the primary replaces it.
  process.on('SIGTERM', () => stop('SIGTERM'));
  const { startWorker } = await import('./cluster/worker.js');
  worker = await startWorker({ parse: (text) => withOverrides(parseChecked(text, cli.configPath), cli.port, cli.host) }, (why) => stop(why));
  running = { internalErrors: worker.gateway.metrics.internalErrors, log: worker.log, stop };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === 'check') return check(argv.slice(1));
  if (argv[0] === 'schema') {
    process.stdout.write(configJsonSchemaText());
    return;
  }
  let config: GatewayConfig;
  let cli: CliOptions;
  let gateway: Gateway;
  let logger: Logger;
  try {
    cli = parseCli(argv);
    if (cluster.isWorker && workerSlot(process.env)) return await serveWorker(cli);
    const text = readConfigText(cli.configPath);
    config = withOverrides(parseChecked(text, cli.configPath), cli.port, cli.host);
    logger = createLogger(config.server.logLevel);
    logConfigWarnings(logger, config);
    // server.workers: 1 (the default) runs no cluster code at all.
    if (config.server.workers > 1) return await servePrimary(cli, config, text, logger);
    // Loaded only to serve: `check` and `schema` stay quick without Fastify, undici and the A2A schemas.
    const { createGateway } = await import('./server.js');
    gateway = await createGateway(config, { logger });
  } catch (err) {
    if (err instanceof ConfigError || err instanceof CredentialError || err instanceof PortError || isUsageError(err)) failConfig(err);
    throw err;
  }

  const { url, opsUrl, pushUrl, remoteUrls, grpc } = await gateway.listen();
  const log = logger;
  const own = Object.keys(remoteUrls).length > 0 ? { remoteAddresses: remoteUrls } : {};
  // gRPC listeners (host:port): the shared one and each remote's own.
  const grpcAddresses = grpc ? { grpcAddresses: grpc } : {};
  log.info({ address: url, ...(opsUrl ? { opsAddress: opsUrl } : {}), ...(pushUrl ? { pushAddress: pushUrl } : {}), ...own, ...grpcAddresses, remotes: [...config.remotes.keys()], version: VERSION }, 'a2a-egress listening');

  const reload = (why: string) => {
    try {
      const next = withOverrides(loadChecked(cli.configPath), cli.port, cli.host);
      logConfigWarnings(log, next);
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
  running = { internalErrors: gateway.metrics.internalErrors, log, stop };
}

// A rejected promise nobody awaited leaves no state half-changed: log it (message and stack) and keep serving.
process.on('unhandledRejection', (reason) => {
  if (!running) return void process.stderr.write(`a2a-egress: unhandled rejection: ${JSON.stringify(describeInternal(reason))}\n`);
  reportInternalError(running.log, running.internalErrors, 'process', reason, { event: 'unhandledRejection' });
});

// After an uncaught exception the process state is unknown (Node's own advice is not to resume):
// log it, then drain like SIGTERM (streams end, calls get drainMs) and exit 1 for the supervisor to restart.
process.on('uncaughtException', (err) => {
  if (!running) {
    process.stderr.write(`a2a-egress: uncaught exception: ${JSON.stringify(describeInternal(err))}\n`);
    process.exit(1);
  }
  reportInternalError(running.log, running.internalErrors, 'process', err, { event: 'uncaughtException' });
  running.stop('uncaughtException', 1);
});

main().catch((err: unknown) => {
  process.stderr.write(`a2a-egress: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
