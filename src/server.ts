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
import { agentCardRoutes } from './routes/agent-card.js';
import { cardResultRewrite } from './routes/extended-card.js';
import { callerAuthHook, jsonRpcRoutes } from './routes/jsonrpc.js';
import { notFoundRoutes } from './routes/not-found.js';
import { opsRoutes } from './routes/ops.js';
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
  readonly metrics: GatewayMetrics;
  config(): GatewayConfig;
  listen(): Promise<{ url: string; opsUrl?: string }>;
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
  const app = Fastify(fastifyOptions) as unknown as FastifyInstance;
  app.server.maxConnections = server.maxConnections;
  // preClose runs before the server stops accepting: streams get their final event while sockets are open.
  // Sockets that connected but never sent a request: closeIdleConnections() skips them,
  // so shutdown closes them itself instead of waiting drainMs for them.
  const silentSockets = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    silentSockets.add(socket);
    socket.once('close', () => silentSockets.delete(socket));
  });
  app.server.on('request', (req: IncomingMessage) => silentSockets.delete(req.socket));
  const closeIdle = () => {
    app.server.closeIdleConnections();
    for (const socket of silentSockets) socket.destroy();
  };
  let sweep: NodeJS.Timeout | undefined;
  let drainDeadline: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    ready = false;
    shutdown.abort();
    // Sockets become idle as calls and streams finish; close each as soon as it does, and
    // everything still busy once drainMs is up.
    closeIdle();
    sweep = setInterval(closeIdle, 50);
    drainDeadline = setTimeout(() => app.server.closeAllConnections(), current.server.drainMs);
  });
  app.addHook('onListen', async () => {
    ready = true;
  });
  app.addHook('onClose', async () => {
    clearInterval(sweep);
    clearTimeout(drainDeadline);
    await ops?.close();
    await pools.close();
    await rateStores.close();
  });

  await app.register(async (remotes) => {
    if (callerAuth) remotes.addHook('onRequest', callerAuthHook(ctx, callerAuth));
    await remotes.register(jsonRpcRoutes, { ctx, cardResultRewrite: cardResultRewrite(ctx) });
    await remotes.register(agentCardRoutes, { config: () => current });
  });
  await app.register(notFoundRoutes);

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
    metrics,
    config: () => current,
    async listen() {
      await app.listen({ host: current.server.host, port: current.server.port });
      if (ops) await ops.listen({ host: current.server.host, port: current.server.opsPort ?? 0 });
      return { url: urlOf(app), ...(ops ? { opsUrl: urlOf(ops) } : {}) };
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
