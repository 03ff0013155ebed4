/**
 * createGateway(config) assembles the gateway: runtimes per remote, pools,
 * metrics, the caller-facing routes and the ops routes, plus reload (see
 * config/reload.ts for what it changes) and a draining shutdown. Each concern
 * lives in its own module under src/.
 */
import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyHttpOptions, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { changedRemotes, planReload } from './config/reload.js';
import type { GatewayConfig } from './config/schema.js';
import { createCardFetcher } from './cards/card-fetch.js';
import { createCallerAuth, type CallerCheck } from './policy/caller-auth.js';
import type { CircuitState } from './policy/circuit-breaker.js';
import { RedisClients } from './policy/redis-bucket.js';
import { requestIdOf } from './policy/request-id.js';
import { buildRuntimes, type RemoteRuntime } from './policy/remote-runtime.js';
import type { GatewayContext } from './proxy/context.js';
import { CardCache, type ValidCard } from './a2a/card-cache.js';
import { LearnedVersions, remoteGenerations } from './a2a/remote-versions.js';
import { isCardCacheKeyOf } from './routes/agent-card.js';
import { createGrpcFront, type GrpcFront } from './routes/grpc-front.js';
import type { GrpcAddresses } from './routes/grpc-listeners.js';
import { answerRequestTimeouts, applyCallerTimeout, callerTimeoutOptions } from './routes/caller-timeout.js';
import { createCallFront, type CallFront, type CallFrontOptions } from './routes/call-front.js';
import { pressureConfigChanged } from './routes/load-shed.js';
import { notFoundRoutes } from './routes/not-found.js';
import { opsRoutes } from './routes/ops.js';
import { listenerMount, sharedMount } from './routes/remote-mount.js';
import { remoteCardInterfaces } from './routes/remote-card-interfaces.js';
import { remoteRoutes } from './routes/remote-routes.js';
import { resolvePushConfig, startPushListener, PushMetrics, type PushListener, type PushSettings } from './push/index.js';
import { reportInternalError } from './telemetry/internal-error.js';
import { resolveTraces } from './config/traces.js';
import { createTelemetry, type Telemetry } from './telemetry/tracing.js';
import { createLogger } from './telemetry/logger.js';
import { GatewayMetrics } from './telemetry/metrics.js';
import { BufferBudget } from './upstream/buffer-budget.js';
import { UpstreamPools, type PoolOptions } from './upstream/pools.js';
import { VERSION } from './version.js';
// For embedders too (createGateway without cli.ts): the process's nextTick stays on fast code.
import './v8/tick-object-maps.js';

export interface GatewayOptions {
  readonly logger?: Logger;
  readonly pool?: PoolOptions;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Process metrics (CPU, heap...) in /metrics; off in tests that build many gateways. */
  readonly processMetrics?: boolean;
  /** Telemetry to use instead of the one `telemetry.traces` describes (embedders with their own exporter). */
  readonly telemetry?: Telemetry;
  /** Whether this process binds the push webhook listener (`server.push`); default true. Workers 2..N do not (src/cluster/). */
  readonly pushListener?: boolean;
  /** The text /metrics serves, instead of this process's registry (a cluster worker asks the primary for every worker's). */
  readonly metricsExposition?: () => Promise<string>;
  /**
   * Whether JSON-RPC calls to remotes reached over JSON-RPC are served by the call front (routes/call-front.ts) ahead
   * of Fastify; default true. False: every request goes through Fastify (the tests compare the two, byte for byte).
   */
  readonly callFront?: boolean;
}

export interface Gateway {
  /** The caller-facing server (also serves the ops routes unless server.opsPort is set). */
  readonly app: FastifyInstance;
  /** The ops server, only with server.opsPort. */
  readonly ops: FastifyInstance | undefined;
  /** A listener of its own for each remote with `remotes.<name>.listen`, serving that remote at its root. */
  readonly listeners: ReadonlyMap<string, FastifyInstance>;
  /** The push notification webhook listener (`server.push`); bound when the gateway is ready (listen()). */
  push(): PushListener | undefined;
  readonly metrics: GatewayMetrics;
  config(): GatewayConfig;
  listen(): Promise<{ url: string; opsUrl?: string; pushUrl?: string; remoteUrls: Record<string, string>; grpc?: GrpcAddresses }>;
  /**
   * Validated config in, swapped atomically; in-flight calls finish on the config they started with.
   * Every key takes effect except the listen addresses (server.host/port/opsPort, remotes.<name>.listen),
   * which keep their values and are returned in `restartNeeded` when `next` changes them. Throws
   * CredentialError (and changes nothing) when a secret of `next` is missing.
   */
  reload(next: GatewayConfig): { readonly restartNeeded: readonly string[] };
  /**
   * Stop accepting, end streams with GATEWAY_SHUTDOWN, let unary calls finish within drainMs, then
   * answer the ones still running with GATEWAY_SHUTDOWN and close.
   */
  close(): Promise<void>;
}

/** After drainMs, calls still running get their GATEWAY_SHUTDOWN envelope; sockets left after this are cut. */
const DRAIN_GRACE_MS = 500;

export async function createGateway(initial: GatewayConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(initial.server.logLevel);
  const metrics = new GatewayMetrics(options.processMetrics ?? true);
  const shutdown = new AbortController();
  const drainEnd = new AbortController();
  // Every open stream and call listens for these; thousands are normal, not a leak.
  setMaxListeners(0, shutdown.signal, drainEnd.signal);
  const pools = new UpstreamPools(options.pool);
  const rateStores = new RedisClients();
  const hooks = {
    env: options.env ?? process.env,
    rateStores,
    onRateStoreError: (remote: string, store: string, err: Error) =>
      logger.warn({ remote, store, problem: err.message }, 'rate-limit store failed; allowing calls until it answers'),
    onBreakerChange: (remote: string, state: CircuitState) => {
      metrics.setCircuitState(remote, state);
      logger.warn({ remote, circuit: state }, 'circuit breaker changed state');
    },
    onCredentialError: (remote: string, err: Error) => logger.error({ remote, problem: err.message }, 'credential problem; keeping the last good value'),
  };
  let current = initial;
  let runtimes: Map<string, RemoteRuntime> = buildRuntimes(initial, hooks);
  const trackRemotes = () => metrics.trackRemotes([...runtimes].map(([name, runtime]) => [name, runtime.breaker.state] as const));
  trackRemotes();
  let callerAuth: CallerCheck | undefined = createCallerAuth(initial.server.auth, hooks.env);
  let ready = false;
  const budget = new BufferBudget(initial.server.maxBufferedBytes);
  // Built once (restart keys): the push settings (keys read, allowlist parsed; may throw), then the exporter.
  const pushSettings: PushSettings | undefined = initial.server.push ? resolvePushConfig(initial.server.push, { env: hooks.env as NodeJS.ProcessEnv }) : undefined;
  const telemetry =
    options.telemetry ??
    (await createTelemetry(resolveTraces(initial.telemetry?.traces, hooks.env), {
      serviceVersion: VERSION,
      onExportFailure: (err, spans) => logger.warn({ spans, problem: err.message }, 'trace export failed; spans dropped'),
    }));
  let pushListener: PushListener | undefined;

  // Filled in below, once the card cache exists: `binding: auto` reads remotes' cards through it.
  let cardInterfaces: GatewayContext['cardInterfaces'];
  // The version bridge: what each remote's card said (its generations), for every form of the call path.
  const learnedVersions = new LearnedVersions();
  const ctx: GatewayContext = {
    cardInterfaces: (remote) => (cardInterfaces === undefined ? undefined : cardInterfaces(remote)),
    grpcCalls: () => grpc?.calls,
    remoteVersions: (remote) => remoteGenerations(remote.versions, learnedVersions.get(remote.name)),
    config: () => current,
    runtime: (name) => runtimes.get(name),
    pools,
    metrics,
    userAgent: `a2a-egress/${VERSION}`,
    shutdown: shutdown.signal,
    drainEnd: drainEnd.signal,
    budget,
    telemetry,
    push: pushSettings,
  };

  const server = initial.server;
  const fastifyOptions: FastifyHttpOptions<Server> = {
    loggerInstance: logger as FastifyBaseLogger,
    // The call path writes its own single line per call (remote, method, outcome, bytes, durations).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    // Idle keep-alive sockets close at once on shutdown; busy ones get drainMs (see close()).
    forceCloseConnections: 'idle',
    // A request arriving during the drain is answered by the call path (GATEWAY_SHUTDOWN envelope).
    return503OnClosing: false,
    // Given at creation, so Node enforces it within a small margin (routes/caller-timeout.ts).
    http: callerTimeoutOptions(server.requestTimeoutMs),
    requestTimeout: server.requestTimeoutMs,
    maxRequestsPerSocket: server.maxRequestsPerSocket,
    // Accept a caller's x-request-id only if it is short and plain; otherwise make one.
    genReqId: (req) => requestIdOf(req.headers['x-request-id']),
    routerOptions: { maxParamLength: 128 },
    // No pino child per request (it cost more than the rest of the call path's logging):
    // the call line names its requestId itself.
    childLoggerFactory: (logger) => logger,
  };
  // Each caller-facing listener's call front, filled in once its routes are registered (see remoteRoutes below).
  const frontSlots = new WeakMap<FastifyInstance, { front?: CallFront }>();
  const callerApp = (): FastifyInstance => {
    const slot: { front?: CallFront } = {};
    const instance = Fastify(options.callFront === false ? fastifyOptions : { ...fastifyOptions, serverFactory: frontServer(slot) }) as unknown as FastifyInstance;
    frontSlots.set(instance, slot);
    instance.server.maxConnections = server.maxConnections;
    answerRequestTimeouts(instance.server, (requestStarted) => {
      // Once a request's head has arrived, its route logs the call; before that nobody else sees it.
      if (requestStarted) return;
      metrics.recordCall('unknown', undefined, 'REQUEST_TIMEOUT', 0, 0);
      logger.info({ call: { remote: 'unknown', outcome: 'REQUEST_TIMEOUT', bytesIn: 0, bytesOut: 0 } }, 'call');
    });
    return instance;
  };
  // The routes' JSON-RPC call path, taken by the call front of the listener it is registered on.
  const attachFront = (instance: FastifyInstance, listenerRemote?: string) => (route: CallFrontOptions['route']) => {
    const slot = frontSlots.get(instance);
    if (slot) slot.front = createCallFront({ route, callerAuth: callerCheck, logger: instance.log, listenerRemote });
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
  // Assigned below, once the card cache exists (gRPC remotes may find their endpoint in their card).
  let grpc: GrpcFront | undefined;
  app.addHook('preClose', async () => {
    ready = false;
    shutdown.abort();
    // gRPC callers get GOAWAY now; calls in flight run until drainMs (then GATEWAY_SHUTDOWN), cut after the grace.
    const grpcClosed = grpc?.close(current.server.drainMs + DRAIN_GRACE_MS) ?? Promise.resolve();
    listenersClosed = Promise.allSettled([grpcClosed, ...[...listeners.values()].map((l) => l.close())]);
    // Sockets become idle as calls and streams finish; close each as soon as it does, and
    // everything still busy once drainMs is up.
    closeIdle();
    sweep = setInterval(closeIdle, 50);
    drainDeadline = setTimeout(() => {
      // Calls still running answer GATEWAY_SHUTDOWN (with Connection: close); whatever is left after that is cut.
      drainEnd.abort();
      drainDeadline = setTimeout(() => {
        for (const callerServer of callerServers) callerServer.closeAllConnections();
      }, DRAIN_GRACE_MS);
    }, current.server.drainMs);
  });
  app.addHook('onListen', async () => {
    ready = true;
  });
  // The webhook listener binds with the gateway (ready() runs inside listen(), and a failure to bind fails it).
  app.addHook('onReady', async () => {
    if (!pushSettings || options.pushListener === false) return;
    pushListener = await startPushListener({
      settings: pushSettings,
      remote: (name) => {
        const runtime = runtimes.get(name);
        return runtime ? { redactor: runtime.redactor() } : undefined;
      },
      logger,
      metrics: (queued) => new PushMetrics(metrics.registry, queued),
    });
  });
  app.addHook('onClose', async () => {
    // The other listeners first: gRPC calls outlive the HTTP server and still need the drain timers.
    await listenersClosed;
    clearInterval(sweep);
    clearTimeout(drainDeadline);
    grpc?.destroy();
    await ops?.close();
    // After the drain: pushes for calls that finished in it were still delivered; what waits now is dropped (and logged).
    await pushListener?.close();
    await pools.close();
    await rateStores.close();
    await telemetry.shutdown();
  });

  // One card cache for both forms: a remote's card is fetched once whichever listener a caller uses.
  const cardCache = new CardCache<ValidCard>();
  const cards = {
    cardCache,
    learnedVersions,
    fetchCard: createCardFetcher({
      pools,
      policy: (name) => runtimes.get(name),
      budget,
      userAgent: ctx.userAgent,
      telemetry,
      onFetch: (record) => {
        metrics.cardFetches.inc({ remote: record.remote, outcome: record.outcome });
        logger.info({ cardFetch: record }, 'card fetch');
      },
    }),
    onCardRequest: (request: { id: string; log: Logger | FastifyBaseLogger }, record: { remote: string; outcome: string }) => {
      metrics.cardRequests.inc({ remote: record.remote, outcome: record.outcome });
      request.log.info({ requestId: request.id, cardRequest: record }, 'card request');
    },
    onInternalError: (request: { id: string; log: Logger | FastifyBaseLogger }, err: unknown) =>
      reportInternalError(request.log, metrics.internalErrors, 'card', err, { requestId: request.id }),
  };
  cardInterfaces = remoteCardInterfaces(cardCache, cards.fetchCard, Date.now, (remote, card) => learnedVersions.learn(remote, card));
  // A getter: a reload may turn server.auth on, off or change its tokens.
  const callerCheck = () => callerAuth;

  grpc = createGrpcFront({ ctx, logger, initial, runtime: (name) => runtimes.get(name), callerAuth: callerCheck, cardCache, fetchCard: cards.fetchCard, httpBaseUrl: () => urlOf(app) });
  // A remote with its own gRPC listener: its card keeps its gRPC interfaces, pointing at that listener.
  const cardRoutes = { ...cards, grpcCard: grpc.cardOptions };
  await app.register(remoteRoutes, { ctx, mount: sharedMount, callerAuth: callerCheck, onJsonRpcRoute: attachFront(app), ...cardRoutes });
  await app.register(notFoundRoutes);
  for (const [name, listener] of listeners) {
    await listener.register(remoteRoutes, { ctx, mount: listenerMount(name, initial.remotes.get(name)?.listen?.publicBaseUrl), callerAuth: callerCheck, onJsonRpcRoute: attachFront(listener, name), ...cardRoutes });
    await listener.register(notFoundRoutes, { sharedHints: false });
  }

  const opsOptions = {
    config: () => current,
    metrics,
    ready: () => ready && !shutdown.signal.aborted,
    remoteState: (name: string) => runtimes.get(name)?.state() ?? {},
    version: VERSION,
    ...(options.metricsExposition ? { exposition: options.metricsExposition } : {}),
  };
  let ops: FastifyInstance | undefined;
  if (server.opsPort !== undefined) {
    ops = Fastify({
      loggerInstance: logger as FastifyBaseLogger,
      logController: new LogController({ disableRequestLogging: true }),
      // The same bound on slow senders as the caller port (Fastify's own 408 body: probes are not JSON-RPC callers).
      http: callerTimeoutOptions(server.requestTimeoutMs),
      requestTimeout: server.requestTimeoutMs,
    } satisfies FastifyHttpOptions<Server>) as unknown as FastifyInstance;
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
    push: () => pushListener,
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
      const grpcAddresses = await grpc?.start(current);
      return {
        url: urlOf(app),
        ...(ops ? { opsUrl: urlOf(ops) } : {}),
        ...(pushListener ? { pushUrl: pushListener.url } : {}),
        remoteUrls,
        ...(grpcAddresses ? { grpc: grpcAddresses } : {}),
      };
    },
    reload(proposed) {
      const { config: next, restartNeeded } = planReload(current, proposed);
      // Build first: a missing credential throws here and the old config stays in force.
      const nextRuntimes = buildRuntimes(next, hooks, runtimes);
      const nextCallerAuth = createCallerAuth(next.server.auth, hooks.env);
      void pools.retire(current, next);
      const changed = new Set(changedRemotes(current, next));
      if (changed.size > 0) cardCache.deleteWhere((key) => [...changed].some((name) => isCardCacheKeyOf(name, key)));
      for (const name of changed) learnedVersions.forget(name);
      const s = next.server;
      logger.level = s.logLevel;
      budget.maxBytes = s.maxBufferedBytes;
      for (const callerServer of callerServers) {
        callerServer.maxConnections = s.maxConnections;
        callerServer.maxRequestsPerSocket = s.maxRequestsPerSocket;
        applyCallerTimeout(callerServer, s.requestTimeoutMs);
      }
      if (ops) applyCallerTimeout(ops.server, s.requestTimeoutMs);
      callerAuth = nextCallerAuth;
      current = next;
      runtimes = nextRuntimes;
      grpc?.reloaded(next);
      pressureConfigChanged(ctx);
      trackRemotes();
      metrics.configReloads.inc({ result: 'ok' });
      return { restartNeeded };
    },
    close: () => app.close(),
  };
}

/**
 * Fastify's `serverFactory`: the node:http server it would make itself (same options, same settings as
 * fastify/lib/server.js gives its own), whose request handler offers each request to the call front first.
 */
function frontServer(slot: { readonly front?: CallFront }) {
  return (handler: (req: IncomingMessage, res: ServerResponse) => void, opts: FastifyHttpOptions<Server>): Server => {
    const front = (req: IncomingMessage, res: ServerResponse) => {
      if (slot.front?.(req, res) !== true) handler(req, res);
    };
    const created = createServer(opts.http ?? {}, front);
    created.keepAliveTimeout = opts.keepAliveTimeout ?? 72_000;
    created.requestTimeout = opts.requestTimeout ?? 0;
    created.setTimeout(opts.connectionTimeout ?? 0);
    if ((opts.maxRequestsPerSocket ?? 0) > 0) created.maxRequestsPerSocket = opts.maxRequestsPerSocket ?? null;
    return created;
  };
}

/** The caller-facing Fastify instance alone (tests and embedders that manage listen/close themselves). */
export async function buildGateway(config: GatewayConfig, options: GatewayOptions = {}): Promise<FastifyInstance> {
  const gateway = await createGateway(config, { processMetrics: false, ...options });
  return gateway.app;
}
