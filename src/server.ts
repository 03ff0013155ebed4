/**
 * createGateway(config) assembles the gateway: runtimes per remote, pools,
 * metrics, the caller-facing routes and the ops routes, plus reload and a
 * draining shutdown. Each concern lives in its own module under src/.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Logger } from 'pino';
import type { GatewayConfig } from './config/schema.js';
import { createCallerAuth } from './policy/caller-auth.js';
import { RedisClients } from './policy/redis-bucket.js';
import { buildRuntimes, type RemoteRuntime } from './policy/remote-runtime.js';
import type { GatewayContext } from './proxy/context.js';
import { CardCache } from './a2a/card-cache.js';
import type { ValidCard } from './a2a/card-source.js';
import { notFoundRoutes } from './routes/not-found.js';
import { opsRoutes } from './routes/ops.js';
import { listenerMount, sharedMount } from './routes/remote-mount.js';
import { remoteRoutes } from './routes/remote-routes.js';
import { createLogger } from './telemetry/logger.js';
import { GatewayMetrics } from './telemetry/metrics.js';
import { BufferBudget } from './upstream/buffer-budget.js';
import { UpstreamPools, type PoolOptions } from './upstream/pools.js';
import { VERSION } from './version.js';

export interface GatewayOptions {
  readonly logger?: Logger;
  readonly pool?: PoolOptions;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Process metrics (CPU, heap...) in /metrics; off in tests that build many gateways. */
  readonly processMetrics?: boolean;
}

export interface Gateway {
  /** The caller-facing server (also serves the ops routes unless server.opsPort is set). */
  readonly app: FastifyInstance;
  /** The ops server, only with server.opsPort. */
  readonly ops: FastifyInstance | undefined;
  /** A listener of its own for each remote with `remotes.<name>.listen`, serving that remote at its root. */
  readonly listeners: ReadonlyMap<string, FastifyInstance>;
  readonly metrics: GatewayMetrics;
  config(): GatewayConfig;
  listen(): Promise<{ url: string; opsUrl?: string; remoteUrls: Record<string, string> }>;
  /** Validated config in, swapped atomically; in-flight calls finish on the config they started with. */
  reload(next: GatewayConfig): void;
  /** Stop accepting, end streams with GATEWAY_SHUTDOWN, let unary calls finish within drainMs, close. */
  close(): Promise<void>;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export async function createGateway(initial: GatewayConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(initial.server.logLevel);
  const metrics = new GatewayMetrics(options.processMetrics ?? true);
  const shutdown = new AbortController();
  // Every open stream listens for shutdown; thousands of streams are normal, not a leak.
  setMaxListeners(0, shutdown.signal);
  const pools = new UpstreamPools(options.pool);
  const rateStores = new RedisClients();
  const hooks = {
    env: options.env ?? process.env,
    rateStores,
    onRateStoreError: (remote: string, store: string, err: Error) =>
      logger.warn({ remote, store, problem: err.message }, 'rate-limit store failed; allowing calls until it answers'),
    onBreakerChange: (remote: string, state: string) => {
      metrics.breakerState.set({ remote }, state === 'open' ? 2 : state === 'half-open' ? 1 : 0);
      logger.warn({ remote, circuit: state }, 'circuit breaker changed state');
    },
    onCredentialError: (remote: string, err: Error) => logger.error({ remote, problem: err.message }, 'credential problem; keeping the last good value'),
  };
  let current = initial;
  let runtimes: Map<string, RemoteRuntime> = buildRuntimes(initial, hooks);
  const callerAuth = createCallerAuth(initial.server.auth, hooks.env);
  let ready = false;

  const ctx: GatewayContext = {
    config: () => current,
    runtime: (name) => runtimes.get(name),
    pools,
    metrics,
    userAgent: `a2a-egress/${VERSION}`,
    shutdown: shutdown.signal,
    budget: new BufferBudget(initial.server.maxBufferedBytes),
  };

  const server = initial.server;
  const fastifyOptions: FastifyServerOptions = {
    loggerInstance: logger as FastifyBaseLogger,
    // The call path writes its own single line per call (remote, method, outcome, bytes, durations).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    // Idle keep-alive sockets close at once on shutdown; busy ones get drainMs (see close()).
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    requestTimeout: server.requestTimeoutMs,
    maxRequestsPerSocket: server.maxRequestsPerSocket,
    // Accept a caller's x-request-id only if it is short and plain; otherwise make one.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { maxParamLength: 128 },
    // No pino child per request (it cost more than the rest of the call path's logging):
    // the call line names its requestId itself.
    childLoggerFactory: (logger) => logger,
  };
  const callerApp = (): FastifyInstance => {
    const instance = Fastify(fastifyOptions) as unknown as FastifyInstance;
    instance.server.maxConnections = server.maxConnections;
    return instance;
  };
  const app = callerApp();
  // Remotes with a listener of their own; they close with the main app (its preClose drains them all).
  const listeners = new Map<string, FastifyInstance>();
  for (const remote of initial.remotes.values()) if (remote.listen) listeners.set(remote.name, callerApp());
  const callerServers = [app.server, ...[...listeners.values()].map((l) => l.server)];
  // preClose runs before the server stops accepting: streams get their final event while sockets are open.
  // Sockets that connected but never sent a request: closeIdleConnections() skips them,
  // so shutdown closes them itself instead of waiting drainMs for them.
  const silentSockets = new Set<Socket>();
  for (const callerServer of callerServers) {
    callerServer.on('connection', (socket: Socket) => {
      silentSockets.add(socket);
      socket.once('close', () => silentSockets.delete(socket));
    });
    callerServer.on('request', (req: IncomingMessage) => silentSockets.delete(req.socket));
  }
  const closeIdle = () => {
    for (const callerServer of callerServers) callerServer.closeIdleConnections();
    for (const socket of silentSockets) socket.destroy();
  };
  let sweep: NodeJS.Timeout | undefined;
  let drainDeadline: NodeJS.Timeout | undefined;
  let listenersClosed: Promise<unknown> = Promise.resolve();
  app.addHook('preClose', async () => {
    ready = false;
    shutdown.abort();
    listenersClosed = Promise.allSettled([...listeners.values()].map((l) => l.close()));
    // Sockets become idle as calls and streams finish; close each as soon as it does, and
    // everything still busy once drainMs is up.
    closeIdle();
    sweep = setInterval(closeIdle, 50);
    drainDeadline = setTimeout(() => {
      for (const callerServer of callerServers) callerServer.closeAllConnections();
    }, current.server.drainMs);
  });
  app.addHook('onListen', async () => {
    ready = true;
  });
  app.addHook('onClose', async () => {
    clearInterval(sweep);
    clearTimeout(drainDeadline);
    await listenersClosed;
    await ops?.close();
    await pools.close();
    await rateStores.close();
  });

  // One card cache for both forms: a remote's card is fetched once whichever listener a caller uses.
  const cardCache = new CardCache<ValidCard>();
  await app.register(remoteRoutes, { ctx, mount: sharedMount, callerAuth, cardCache });
  await app.register(notFoundRoutes);
  for (const [name, listener] of listeners) {
    await listener.register(remoteRoutes, { ctx, mount: listenerMount(name, initial.remotes.get(name)?.listen?.publicBaseUrl), callerAuth, cardCache });
    await listener.register(notFoundRoutes, { sharedHints: false });
  }

  const opsOptions = {
    config: () => current,
    metrics,
    ready: () => ready && !shutdown.signal.aborted,
    remoteState: (name: string) => runtimes.get(name)?.state() ?? {},
    version: VERSION,
  };
  let ops: FastifyInstance | undefined;
  if (server.opsPort !== undefined) {
    ops = Fastify({ loggerInstance: logger as FastifyBaseLogger, logController: new LogController({ disableRequestLogging: true }) }) as unknown as FastifyInstance;
    await ops.register(opsRoutes, opsOptions);
  } else {
    await app.register(opsRoutes, opsOptions);
  }

  const urlOf = (instance: FastifyInstance): string => {
    const address = instance.server.address();
    if (!address || typeof address === 'string') return String(address);
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  };

  return {
    app,
    ops,
    listeners,
    metrics,
    config: () => current,
    async listen() {
      await app.listen({ host: current.server.host, port: current.server.port });
      if (ops) await ops.listen({ host: current.server.host, port: current.server.opsPort ?? 0 });
      const remoteUrls: Record<string, string> = {};
      for (const [name, listener] of listeners) {
        const where = initial.remotes.get(name)?.listen;
        await listener.listen({ host: where?.host ?? current.server.host, port: where?.port ?? 0 });
        remoteUrls[name] = urlOf(listener);
      }
      return { url: urlOf(app), ...(ops ? { opsUrl: urlOf(ops) } : {}), remoteUrls };
    },
    reload(next) {
      // Build first: a missing credential throws here and the old config stays in force.
      const nextRuntimes = buildRuntimes(next, hooks, runtimes);
      void pools.retire(current, next);
      current = next;
      runtimes = nextRuntimes;
      metrics.configReloads.inc({ result: 'ok' });
    },
    close: () => app.close(),
  };
}

/** The caller-facing Fastify instance alone (tests and embedders that manage listen/close themselves). */
export async function buildGateway(config: GatewayConfig, options: GatewayOptions = {}): Promise<FastifyInstance> {
  const gateway = await createGateway(config, { processMetrics: false, ...options });
  return gateway.app;
}
