/**
 * The primary process of `server.workers: N` (N > 1). It serves no caller:
 * it forks N workers (src/cluster/worker.ts), which share the listening
 * sockets through node:cluster, and owns what must happen once per gateway:
 * - config reload (SIGHUP, --watch-config): the file is loaded and checked
 *   here, the one "config reloaded" line is logged here, and the validated
 *   text is sent to every worker;
 * - drain (SIGTERM/SIGINT): every worker finishes its calls within drainMs
 *   and exits; the primary exits after the last one;
 * - replacing a worker that died (./restart-policy.ts: bounded);
 * - aggregating /metrics (./cluster-metrics.ts).
 * Signals and process.exit stay in src/cli.ts; this module reports through
 * `exited`.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { ConfigError } from '../config/errors.js';
import { planReload } from '../config/reload.js';
import type { GatewayConfig } from '../config/schema.js';
import { workerShareProblems } from '../config/worker-share.js';
import { CredentialError } from '../policy/credentials.js';
import { reportInternalError } from '../telemetry/internal-error.js';
import { VERSION } from '../version.js';
import { ClusterMetrics } from './cluster-metrics.js';
import { isFromWorker, SLOT_ENV, WORKERS_ENV, type FromWorker, type ListenResult } from './messages.js';
import { RestartPolicy } from './restart-policy.js';
import { workerExecArgv } from './young-generation.js';

/** Past drainMs, workers answer what is left and close (server.ts's grace); past this too, they are killed. */
const DRAIN_MARGIN_MS = 5_000;

export interface PrimaryOptions {
  /** The config in force at start, and the file text it came from. */
  readonly config: GatewayConfig;
  readonly text: string;
  /** Reads and checks the config file again (throws ConfigError or CredentialError). */
  readonly load: () => { readonly config: GatewayConfig; readonly text: string };
  readonly logger: Logger;
  readonly restartPolicy?: RestartPolicy;
}

export interface Primary {
  readonly metrics: ClusterMetrics;
  readonly log: Logger;
  reload(why: string): void;
  /** Drain every worker, then resolve `exited` with `exitCode` (1 if a worker failed to drain). */
  stop(why: string, exitCode?: number): void;
  /** The exit code the process should end with, once every worker is gone. */
  readonly exited: Promise<number>;
}

export function startPrimary(opts: PrimaryOptions): Primary {
  const log = opts.logger;
  const count = opts.config.server.workers;
  const metrics = new ClusterMetrics();
  const policy = opts.restartPolicy ?? new RestartPolicy();
  const startText = opts.text;
  let current = opts.config;
  let currentText = opts.text;
  const slots = new Map<Worker, number>();
  const listening = new Set<Worker>();
  // Workers whose message listener is in place (they said hello): a message sent before it would be lost.
  const greeted = new Set<Worker>();
  let started = false;
  let stopping = false;
  let exitCode = 0;
  const restartTimers = new Set<NodeJS.Timeout>();
  let finish: (code: number) => void = () => {};
  const exited = new Promise<number>((resolve) => (finish = resolve));
  const alive = () => [...slots.keys()];

  // Workers get the gateway's young generation even when the primary was started without it (young-generation.ts).
  cluster.setupPrimary({ execArgv: workerExecArgv(process.execArgv, process.env.NODE_OPTIONS) });
  const fork = (slot: number) => {
    const worker = cluster.fork({ [SLOT_ENV]: String(slot), [WORKERS_ENV]: String(count) });
    slots.set(worker, slot);
    worker.on('message', (message: unknown) => {
      if (isFromWorker(message)) onMessage(worker, slot, message);
    });
    worker.on('exit', (code, signal) => onExit(worker, slot, code, signal));
  };

  const onMessage = (worker: Worker, slot: number, message: FromWorker) => {
    switch (message.type) {
      case 'a2a-egress:hello':
        greeted.add(worker);
        worker.send(stopping ? { type: 'a2a-egress:drain' } : { type: 'a2a-egress:config', start: startText, current: currentText });
        return;
      case 'a2a-egress:listening':
        listening.add(worker);
        metrics.workers.set(listening.size);
        log.info({ worker: slot, pid: worker.process.pid }, 'worker listening');
        if (!started && listening.size === count) {
          started = true;
          logListening(message.listen);
        }
        return;
      case 'a2a-egress:collected':
        metrics.collected(message.id, message.metrics);
        return;
      case 'a2a-egress:exposition?':
        metrics.exposition(alive()).then(
          (text) => worker.isConnected() && worker.send({ type: 'a2a-egress:exposition', id: message.id, text }),
          (err: unknown) => worker.isConnected() && worker.send({ type: 'a2a-egress:exposition', id: message.id, problem: String(err) }),
        );
        return;
    }
  };

  const logListening = (where: ListenResult) => {
    const own = Object.keys(where.remoteUrls).length > 0 ? { remoteAddresses: where.remoteUrls } : {};
    log.info(
      {
        address: where.url,
        ...(where.opsUrl ? { opsAddress: where.opsUrl } : {}),
        ...(where.pushUrl ? { pushAddress: where.pushUrl } : {}),
        ...own,
        ...(where.grpc ? { grpcAddresses: where.grpc } : {}),
        remotes: [...current.remotes.keys()],
        workers: count,
        version: VERSION,
      },
      'a2a-egress listening',
    );
  };

  const onExit = (worker: Worker, slot: number, code: number | null, signal: string | null) => {
    slots.delete(worker);
    listening.delete(worker);
    greeted.delete(worker);
    metrics.workers.set(listening.size);
    const gone = { worker: slot, pid: worker.process.pid, code, signal };
    if (stopping) {
      if (code !== 0) exitCode = 1;
      if (slots.size === 0) finish(exitCode);
      return;
    }
    if (!started) {
      // A worker that cannot start (port taken, a credential unreadable): the gateway cannot start either.
      log.error(gone, 'worker failed to start; stopping');
      stop('worker failed to start', code === null || code === 0 ? 1 : code);
      return;
    }
    const decision = policy.onDeath();
    if (!decision.restart) {
      log.error({ ...gone, why: decision.why }, 'workers keep dying; giving up and stopping the gateway');
      stop('workers keep dying', 1);
      return;
    }
    metrics.restarts.inc();
    log.warn({ ...gone, restartInMs: decision.delayMs }, 'worker died; starting a replacement');
    const timer = setTimeout(() => {
      restartTimers.delete(timer);
      if (!stopping) fork(slot);
    }, decision.delayMs);
    restartTimers.add(timer);
  };

  const reload = (why: string) => {
    try {
      const { config: next, text } = opts.load();
      const plan = planReload(current, next);
      // Shares are computed for the workers running (server.workers itself needs a restart).
      const problems = workerShareProblems(plan.config);
      if (problems.length > 0) throw new ConfigError(problems.join('\n'), problems);
      current = plan.config;
      currentText = text;
      // A worker not yet greeted gets the text in force with its config.
      for (const worker of greeted) if (worker.isConnected()) worker.send({ type: 'a2a-egress:reload', text });
      log.level = next.server.logLevel;
      log[plan.restartNeeded.length > 0 ? 'warn' : 'info']({ why, remotes: [...next.remotes.keys()], restartNeeded: plan.restartNeeded }, 'config reloaded');
    } catch (err) {
      metrics.gateway.configReloads.inc({ result: 'invalid' });
      if (!(err instanceof ConfigError || err instanceof CredentialError)) reportInternalError(log, metrics.gateway.internalErrors, 'reload', err, { why });
      const problem = err instanceof Error ? err.message : String(err);
      log.error({ why, problem }, 'config reload failed; keeping the previous config');
    }
  };

  const stop = (why: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    for (const timer of restartTimers) clearTimeout(timer);
    const drainMs = current.server.drainMs;
    log.info({ signal: why, drainMs, workers: slots.size }, 'shutting down');
    if (slots.size === 0) return finish(exitCode);
    // A worker that has not said hello yet gets the drain in answer to it.
    for (const worker of greeted) if (worker.isConnected()) worker.send({ type: 'a2a-egress:drain' });
    // Bounded: a worker stuck past its own drain is killed (and the exit code says so).
    setTimeout(() => {
      for (const worker of alive()) {
        log.error({ worker: slots.get(worker), pid: worker.process.pid }, 'worker did not stop in time; killing it');
        worker.process.kill('SIGKILL');
      }
    }, drainMs + DRAIN_MARGIN_MS).unref();
  };

  for (let slot = 1; slot <= count; slot++) fork(slot);
  return { metrics, log, reload, stop, exited };
}
