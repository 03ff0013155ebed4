/**
 * One worker of `server.workers: N`: a whole gateway (src/server.ts) on
 * its share of the per-process limits (src/config/worker-share.ts), serving
 * callers on sockets node:cluster shares with the other workers: the caller
 * listener, the ops listener, remotes' own listeners and the gRPC listeners
 * (grpc-js binds through node:cluster like node:http). The push webhook
 * listener runs in worker 1 only: one redelivery window and one delivery
 * queue for the gateway, as with one process (tickets carry their state, so
 * any worker can mint them).
 * The config comes from the primary as file text (the text the gateway
 * started with, then each reload the primary validated), so that every
 * worker, and a replacement forked later, runs the config the primary has
 * in force, restart keys as started.
 */
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import { workerShare } from '../config/worker-share.js';
import { CredentialError } from '../policy/credentials.js';
import type { Gateway } from '../server.js';
import { reportInternalError } from '../telemetry/internal-error.js';
import { createLogger } from '../telemetry/logger.js';
import { isToWorker, workerSlot, type FromWorker, type ToWorker } from './messages.js';

/** How long a /metrics request waits for the primary's aggregate. */
const EXPOSITION_TIMEOUT_MS = 5_000;

export interface WorkerOptions {
  /** Parses config text as the CLI does (secrets checked, --port/--host applied). Throws ConfigError/CredentialError. */
  readonly parse: (text: string) => GatewayConfig;
}

export interface RunningWorker {
  readonly gateway: Gateway;
  readonly log: Logger;
  readonly slot: number;
}

const send = (message: FromWorker) => process.send?.(message);

/** Waits for the primary's config, builds and starts the gateway; `onDrain` runs when the primary asks for a drain. */
export async function startWorker(opts: WorkerOptions, onDrain: (why: string) => void): Promise<RunningWorker> {
  const { slot, workers } = workerSlot(process.env)!;
  const share = (config: GatewayConfig) => workerShare(config, workers, slot);
  const pendingExpositions = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void }>();
  let nextExposition = 0;
  let running: RunningWorker | undefined;
  let gotConfig: (message: Extract<ToWorker, { type: 'a2a-egress:config' }>) => void = () => {};
  const firstConfig = new Promise<Extract<ToWorker, { type: 'a2a-egress:config' }>>((resolve) => (gotConfig = resolve));

  // A reload that arrives while the gateway is being built is applied once it is.
  let reloadedMeanwhile: string | undefined;
  const reload = (text: string) => {
    if (!running) {
      reloadedMeanwhile = text;
      return;
    }
    try {
      running.gateway.reload(share(opts.parse(text)));
    } catch (err) {
      // The primary checked this text; only a secret that changed since (a token file) fails here.
      if (!(err instanceof CredentialError)) reportInternalError(running.log, running.gateway.metrics.internalErrors, 'reload', err, {});
      running.log.error({ problem: err instanceof Error ? err.message : String(err) }, 'config reload failed in this worker; keeping the previous config');
    }
  };

  process.on('message', (message: unknown) => {
    if (!isToWorker(message)) return;
    switch (message.type) {
      case 'a2a-egress:config':
        return gotConfig(message);
      case 'a2a-egress:reload':
        return reload(message.text);
      case 'a2a-egress:drain':
        return onDrain('primary asked');
      case 'a2a-egress:collect':
        if (!running) return send({ type: 'a2a-egress:collected', id: message.id, metrics: [] });
        void running.gateway.metrics.registry.getMetricsAsJSON().then((metrics) => send({ type: 'a2a-egress:collected', id: message.id, metrics }));
        return;
      case 'a2a-egress:exposition': {
        const pending = pendingExpositions.get(message.id);
        pendingExpositions.delete(message.id);
        if (message.text !== undefined) pending?.resolve(message.text);
        else pending?.reject(new Error(`metrics aggregation failed: ${message.problem ?? 'unknown'}`));
        return;
      }
    }
  });
  // The primary is gone (killed): nobody will restart or drain us, so drain now.
  process.on('disconnect', () => onDrain('primary gone'));
  send({ type: 'a2a-egress:hello' });

  const exposition = () =>
    new Promise<string>((resolve, reject) => {
      const id = nextExposition++;
      const timer = setTimeout(() => {
        pendingExpositions.delete(id);
        reject(new Error('the primary did not answer'));
      }, EXPOSITION_TIMEOUT_MS);
      pendingExpositions.set(id, {
        resolve: (text) => (clearTimeout(timer), resolve(text)),
        reject: (err) => (clearTimeout(timer), reject(err)),
      });
      send({ type: 'a2a-egress:exposition?', id });
    });

  const { start, current } = await firstConfig;
  const initial = opts.parse(start);
  const log = createLogger(initial.server.logLevel).child({ worker: slot });
  // Loaded only to serve, as in the single-process path.
  const { createGateway } = await import('../server.js');
  const gateway = await createGateway(share(initial), { logger: log, pushListener: slot === 1, metricsExposition: exposition });
  running = { gateway, log, slot };
  // A replacement forked after reloads: start-up keys from the start text, the rest from the text in force.
  const inForce = reloadedMeanwhile ?? current;
  if (inForce !== start) reload(inForce);
  const listen = await gateway.listen();
  send({ type: 'a2a-egress:listening', listen });
  return running;
}
