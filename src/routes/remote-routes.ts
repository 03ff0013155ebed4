/**
 * Everything a caller can ask of one remote, mounted once per form (see
 * remote-mount.ts): under /remotes/:name on the shared listener, and at the
 * root of each remote's own listener. A binding added later registers here
 * and so works on both forms at once.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CardCache, ValidCard } from '../a2a/card-cache.js';
import type { FetchCard } from '../cards/card-fetch.js';
import type { RemoteConfig } from '../config/schema.js';
import type { CallerCheck } from '../policy/caller-auth.js';
import type { GatewayContext } from '../proxy/context.js';
import { remoteGenerations, type LearnedVersions } from '../a2a/remote-versions.js';
import { agentCardRoutes, type AgentCardRouteOptions } from './agent-card.js';
import { cardResultRewrite } from './extended-card.js';
import { callerAuthHook, jsonRpcRoutes, refuseJsonRpc, type JsonRpcRouteOptions, type RestHandover } from './jsonrpc.js';
import { registerLoadShedding } from './load-shed.js';
import { handleRestCall, httpJsonRoutes, isRestPostPath, refuseRest } from './http-json.js';
import type { RemoteMount } from './remote-mount.js';
import { reportDropped } from '../proxy/version-bridge.js';

export interface RemoteRoutesOptions {
  readonly ctx: GatewayContext;
  readonly mount: RemoteMount;
  /** `server.auth` in force (a getter: a reload may turn it on or off); every route of every form checks the caller first. */
  readonly callerAuth?: (() => CallerCheck | undefined) | undefined;
  /** Shared by all forms, so a card is fetched once whichever listener a caller uses. */
  readonly cardCache: CardCache<ValidCard>;
  /** The gateway's card fetch (its pools and the remote's policy); a standalone one when unset. */
  readonly fetchCard?: FetchCard;
  readonly onCardRequest?: AgentCardRouteOptions['onCardRequest'];
  readonly onInternalError?: AgentCardRouteOptions['onInternalError'];
  readonly grpcCard?: AgentCardRouteOptions['grpcCard'];
  /** Shared by all forms: the generations each remote's card said last (the version bridge). */
  readonly learnedVersions?: LearnedVersions;
  /** Told the JSON-RPC route's options once registered: the call front (routes/call-front.ts) serves the same path. */
  readonly onJsonRpcRoute?: (route: JsonRpcRouteOptions & { readonly mount: RemoteMount }) => void;
}

export async function remoteRoutes(app: FastifyInstance, opts: RemoteRoutesOptions): Promise<void> {
  const { ctx, mount } = opts;
  const callerAuth = opts.callerAuth;
  const restOptions = { ctx, mount };
  const rest: RestHandover = {
    owns: (request) => request.method === 'POST' && isRestPostPath(request.raw.url ?? ''),
    handle: (request, reply) => handleRestCall(request, reply, restOptions),
    refuse: (request, reply, reason, headers) => refuseRest(ctx, mount, request, reply, reason, headers),
  };
  if (callerAuth) {
    const check = callerAuthHook(ctx, (authorization) => callerAuth()?.(authorization) ?? true);
    app.addHook('onRequest', async (request, reply) => {
      const verdict = callerAuth();
      if (!verdict) return undefined;
      if (!isRestRequest(request, rest)) return check(request, reply);
      if (verdict(request.headers.authorization)) return undefined;
      refuseRest(ctx, mount, request, reply, 'UNAUTHENTICATED', { 'www-authenticate': 'Bearer realm="a2a-egress"' });
      return reply;
    });
  }
  // After caller auth, before any binding's routes: every call is shed the same way under pressure.
  await registerLoadShedding(app, ctx, {
    exempt: (request) => isCardRequest(request),
    refuse: (request, reply, reason, headers) =>
      isRestRequest(request, rest) ? refuseRest(ctx, mount, request, reply, reason, headers) : refuseJsonRpc(ctx, mount, request, reply, reason, headers),
  });
  // The version bridge reads a remote's generations from `versions`, else from its card once a caller fetched it
  // (clients do, first thing): a call never waits for a card fetch of its own.
  const learned = opts.learnedVersions;
  const remoteVersions = (remote: RemoteConfig) => remoteGenerations(remote.versions, learned?.get(remote.name));
  const jsonRpcRoute = { ctx, mount, cardResultRewrite: cardResultRewrite(ctx, mount), rest, remoteVersions };
  await app.register(jsonRpcRoutes, jsonRpcRoute);
  opts.onJsonRpcRoute?.(jsonRpcRoute);
  await app.register(httpJsonRoutes, restOptions);
  await app.register(agentCardRoutes, {
    config: () => ctx.config(),
    mount,
    cache: opts.cardCache,
    ...(opts.fetchCard ? { fetchCard: opts.fetchCard } : {}),
    ...(opts.onCardRequest ? { onCardRequest: opts.onCardRequest } : {}),
    ...(opts.onInternalError ? { onInternalError: opts.onInternalError } : {}),
    ...(opts.grpcCard ? { grpcCard: opts.grpcCard } : {}),
    ...(learned ? { onCardLoaded: (remote: string, card: ValidCard) => learned.learn(remote, card) } : {}),
    onBridgeDropped: (request, remote, labels) => reportDropped(ctx.metrics, request.log, request.id, remote, undefined, 'card', labels),
    redaction: {
      redactorFor: (name) => ctx.runtime(name)?.redactor(),
      count: (remote, n) => ctx.metrics.redactions.inc({ remote, path: 'card' }, n),
    },
  });
}

/** A request of the HTTP+JSON binding: its POSTs, and every GET or DELETE that is not a card. */
function isRestRequest(request: FastifyRequest, rest: RestHandover): boolean {
  if (request.method === 'GET' || request.method === 'DELETE') return !(request.raw.url ?? '').includes('/.well-known/');
  return rest.owns(request);
}

/** Agent card GETs: not calls, and not shed (cached, and what a caller reads to find a binding at all). */
function isCardRequest(request: FastifyRequest): boolean {
  return request.method === 'GET' && (request.raw.url ?? '').includes('/.well-known/');
}
