/**
 * GET /remotes/:name/.well-known/agent-card.json (and the 0.2-era agent.json;
 * at the root of a remote's own listener: /.well-known/...): the remote's
 * card, validated, cached, and rewritten so that every interface a caller
 * finds points back at this gateway, served with validators of its own
 * (card-caching.ts). Failures are small problem+json bodies the gateway
 * writes itself; no remote bytes or headers are passed on.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayConfig, RemoteConfig } from '../config/schema.js';
import { withGrpcInterfaces, type GrpcCardOptions } from '../bindings/grpc/card-interfaces.js';
import { grpcInterfaceOf } from '../proxy/grpc-upstreams.js';
import { gatewayErrors, type Reason } from '../envelope/codes.js';
import { CardCache, type CachedCard, type ValidCard } from '../a2a/card-cache.js';
import { CardFetchError, createCardFetcher, type FetchCard } from '../cards/card-fetch.js';
import { CardProblemError, rewriteCard } from '../a2a/card-rewrite.js';
import { loadRemoteCard } from '../cards/card-source.js';
import { DEFAULT_A2A_VERSION, a2aVersionOf } from '../a2a/version.js';
import { cardForCaller } from '../a2a/card-for-caller.js';
import type { Redactor } from '../envelope/redact.js';
import { classifyTransportError, describeForLog } from '../upstream/errors.js';
import { UpstreamPools } from '../upstream/pools.js';
import { cardCacheControl, cardEtag, cardVary, notModified } from './card-caching.js';
import { cardRewriteOptions } from './card-interfaces.js';
import { sharedMount, type RemoteMount } from './remote-mount.js';

export type { FetchCard, FetchedCardResponse } from '../cards/card-fetch.js';

export interface AgentCardRouteOptions {
  /** The config, or a getter so a reloaded config applies to the next request. */
  readonly config: GatewayConfig | (() => GatewayConfig);
  /** Does the capped read of the card; the gateway passes one over its pools and policies (cards/card-fetch.ts). */
  readonly fetchCard?: FetchCard;
  /** Shared cache (the gateway's, so a reload can drop changed remotes' cards; tests inject one with a fake clock). */
  readonly cache?: CardCache<ValidCard>;
  /** Where the routes are mounted (default: /remotes/:name on the shared listener). */
  readonly mount?: RemoteMount;
  /** Keeps a remote's credentials out of its card (remotes with `auth`); `count` feeds the metric each time it acts. */
  readonly redaction?: {
    readonly redactorFor: (remote: string) => Redactor | undefined;
    readonly count: (remote: string, redactions: number) => void;
  };
  /**
   * The remote's gRPC interfaces as the gateway serves them (its own gRPC listener), from the remote's card;
   * undefined = the card gets no gRPC interface.
   */
  readonly grpcCard?: (remote: RemoteConfig, card: Record<string, unknown>) => Omit<GrpcCardOptions, 'maxCardTextBytes'> | undefined;
  /** Every card loaded (fetched or from the cache) for a remote: the version bridge learns its generations. */
  readonly onCardLoaded?: (remote: string, card: ValidCard) => void;
  /** The version bridge dropped members of a card (no counterpart in the caller's generation): count and log. */
  readonly onBridgeDropped?: (request: FastifyRequest, remote: string, labels: readonly string[]) => void;
  /** One call per card request answered: the gateway logs and counts it. */
  readonly onCardRequest?: (request: FastifyRequest, record: CardRequestRecord) => void;
  /** A bug in the card path (answered 500 GATEWAY_ERROR): the gateway logs its stack and counts it. */
  readonly onInternalError?: (request: FastifyRequest, err: unknown) => void;
}

/** How one card request was answered. */
export interface CardRequestRecord {
  readonly remote: string;
  /** 'ok', 'stale' (the last good card while the remote fails), 'not-modified' (304), or the gateway reason of the failure. */
  readonly outcome: 'ok' | 'stale' | 'not-modified' | Reason;
  readonly status: number;
  /** This request caused an upstream fetch (false: cached, or joined a fetch already running). */
  readonly fetched: boolean;
  readonly a2aVersion: string;
  readonly totalMs: number;
}

/** The card cache key: the remote and the Major.Minor version asked for. */
export const cardCacheKey = (remote: string, version: string): string => `${remote}\u0000${version}`;
/** True for every cache key of `remote` (a reload drops them all when the remote changes). */
export const isCardCacheKeyOf = (remote: string, key: string): boolean => key.startsWith(`${remote}\u0000`);

export interface ProblemBody {
  readonly type: 'about:blank';
  readonly title: string;
  readonly status: number;
  readonly reason: Reason;
  readonly detail?: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';
const CARD_PATHS = ['/.well-known/agent-card.json', '/.well-known/agent.json'];

export async function agentCardRoutes(app: FastifyInstance, opts: AgentCardRouteOptions): Promise<void> {
  const config = typeof opts.config === 'function' ? opts.config : () => opts.config as GatewayConfig;
  let fetchCard = opts.fetchCard;
  if (!fetchCard) {
    // Standalone use (tests, embedders): pools of its own, with the same guards, closed with the app.
    const pools = new UpstreamPools();
    app.addHook('onClose', () => pools.close());
    fetchCard = createCardFetcher({ pools });
  }
  const fetcher = fetchCard;
  const cache = opts.cache ?? new CardCache<ValidCard>();
  const mount = opts.mount ?? sharedMount;
  // The A2A schemas are compiled on the first card request (~150 ms once), not at start-up:
  // a gateway whose callers never ask for cards keeps ~12 MiB less resident.
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const started = performance.now();
    let served: Served;
    try {
      served = await serveCard(request, reply, config(), { fetchCard: fetcher, cache, mount, redaction: opts.redaction, onInternalError: opts.onInternalError, grpcCard: opts.grpcCard, onBridgeDropped: opts.onBridgeDropped, onCardLoaded: opts.onCardLoaded });
    } catch (err) {
      opts.onInternalError?.(request, err);
      if (!reply.sent) await sendProblem(reply, 500, 'GATEWAY_ERROR');
      const name = mount.remoteName(request);
      const remote = name !== undefined && config().remotes.has(name) ? name : 'unknown';
      served = { remote, outcome: 'GATEWAY_ERROR', fetched: false, a2aVersion: DEFAULT_A2A_VERSION };
    }
    opts.onCardRequest?.(request, { ...served, status: reply.statusCode, totalMs: Math.round((performance.now() - started) * 1000) / 1000 });
  };
  for (const path of CARD_PATHS) app.get(`${mount.prefix}${path}`, handler);
}

type Served = Omit<CardRequestRecord, 'status' | 'totalMs'>;

interface CardRouteParts {
  readonly fetchCard: FetchCard;
  readonly cache: CardCache<ValidCard>;
  readonly mount: RemoteMount;
  readonly redaction: AgentCardRouteOptions['redaction'];
  readonly onInternalError: AgentCardRouteOptions['onInternalError'];
  readonly grpcCard: AgentCardRouteOptions['grpcCard'];
  readonly onBridgeDropped: AgentCardRouteOptions['onBridgeDropped'];
  readonly onCardLoaded: AgentCardRouteOptions['onCardLoaded'];
}

/** When the gateway first served with a config: a reload may change a rewritten card without the remote changing it. */
const configSeenAt = new WeakMap<GatewayConfig, number>();

async function serveCard(
  request: FastifyRequest,
  reply: FastifyReply,
  config: GatewayConfig,
  { fetchCard, cache, mount, redaction, onInternalError, grpcCard, onBridgeDropped, onCardLoaded }: CardRouteParts,
): Promise<Served> {
  // A remote may serve each protocol generation its own card: ask in the caller's version, cache per
  // Major.Minor (spellings of one version share an entry; missing, empty or invalid mean 0.3).
  const version = a2aVersionOf(request.headers['a2a-version']) ?? DEFAULT_A2A_VERSION;
  let fetched = false;
  const remote = config.remotes.get(mount.remoteName(request) ?? '');
  if (!remote) {
    await sendProblem(reply, 404, 'UNKNOWN_REMOTE');
    return { remote: 'unknown', outcome: 'UNKNOWN_REMOTE', fetched, a2aVersion: version };
  }
  const failed = async (status: number, reason: Reason, detail?: string): Promise<Served> => {
    await sendProblem(reply, status, reason, detail);
    return { remote: remote.name, outcome: reason, fetched, a2aVersion: version };
  };
  const redactor = redaction?.redactorFor(remote.name);
  const noteRedacted = (redactions: number): void => {
    redaction?.count(remote.name, redactions);
    // The event, never the value.
    request.log.warn({ requestId: request.id, remote: remote.name, path: 'card', redactions }, 'remote sent back a credential of this gateway; removed before the caller saw it');
  };

  let cached: CachedCard<ValidCard>;
  try {
    const forwarded = version === DEFAULT_A2A_VERSION ? undefined : version;
    const load = () => {
      fetched = true;
      // The fetch's own deadline is the remote's cardMs (cards/card-fetch.ts): UPSTREAM_TIMEOUT "no card within N ms".
      return loadRemoteCard(remote, fetchCard, undefined, forwarded, request.id, { traceparent: request.headers.traceparent, tracestate: request.headers.tracestate });
    };
    cached = await cache.get(cardCacheKey(remote.name, version), load, {
      ttlMs: remote.timeouts.cardCacheTtlMs,
      staleMs: remote.timeouts.cardCacheStaleMs,
    });
  } catch (err) {
    const failure = describeFailure(err);
    if (failure.reason === 'GATEWAY_ERROR') onInternalError?.(request, err instanceof CardFetchError && err.cause !== undefined ? err.cause : err);
    request.log.warn({ requestId: request.id, remote: remote.name, reason: failure.reason, httpStatus: failure.httpStatus, err: describeForLog(err) }, 'agent card fetch failed');
    // A schema problem names member names, and a member name can be a credential the remote echoed.
    const detail = failure.detail !== undefined && redactor ? redactor.text(failure.detail) : undefined;
    if (detail?.count) noteRedacted(detail.count);
    // The gateway's own limits (breaker, rate, slots, budget) are "try later", not a bad remote.
    const limited = LIMIT_REASONS.has(failure.reason);
    if (limited) void reply.header('retry-after', '1');
    return failed(limited ? 503 : failure.reason === 'GATEWAY_ERROR' ? 500 : 502, failure.reason, detail ? detail.text : failure.detail);
  }
  if (cached.stale) request.log.warn({ requestId: request.id, remote: remote.name }, 'serving a stale agent card: refresh failed');
  onCardLoaded?.(remote.name, cached.card);

  // Before the rewrite: it cuts long texts, and a credential must go whole, not be cut in half.
  let source = cached.card.card;
  if (redactor) {
    const redacted = redactor.value(source);
    if (!redacted.ok || redacted.count > 0) noteRedacted(redacted.ok ? redacted.count : 1);
    if (!redacted.ok) return failed(502, 'CREDENTIAL_ECHOED', `in a ${redacted.where} of the card`);
    source = redacted.value as Record<string, unknown>;
  }

  // Version bridge (issue 17): the card of the generation the caller asked in (a2a/card-for-caller.ts).
  const chosen = cardForCaller(source, cached.card.generation, explicitA2aVersion(request.headers['a2a-version']), remote.unversionedCard);
  if (!chosen.ok) return failed(502, 'INVALID_AGENT_CARD', chosen.problem);
  if (chosen.dropped.length > 0) onBridgeDropped?.(request, remote.name, chosen.dropped);
  source = chosen.card;
  const generation = chosen.generation;

  let card: Record<string, unknown>;
  try {
    const bridged = generation !== cached.card.generation;
    // gRPC is A2A 1.0's binding here (lf.a2a.v1): a 0.3 card's gRPC means 0.3's service, which the gateway does not serve.
    // The version bridge speaks JSON-RPC to the remote: a card bridged to 0.3 offers JSON-RPC only; one bridged to
    // 1.0 offers HTTP+JSON too (1.0 REST callers are bridged on the call runner, routes/bridged-call.ts) unless the
    // remote is reached over HTTP+JSON (not bridged). No gRPC interface on a bridged card (issue 17).
    const grpc = generation === '1.0' && !bridged ? grpcCard?.(remote, source) : undefined;
    const options = cardRewriteOptions(remote, mount.baseUrl(request, config.server, remote), config.server.push !== undefined);
    const jsonRpcOnly = bridged && (generation === '0.3' || remote.binding === 'http+json');
    card = rewriteCard(source, generation, {
      ...(jsonRpcOnly ? { ...options, httpJsonUrl: undefined, advertise: undefined } : options),
      // A remote the gateway calls over gRPC (binding: grpc) is served to the HTTP bindings by transcoding.
      ...(grpc || (!bridged && servedOverGrpc(remote, source)) ? { jsonRpcOptional: true } : {}),
    });
    if (grpc) card = withGrpcInterfaces(source, card, generation, { ...grpc, maxCardTextBytes: remote.limits.maxCardTextBytes });
    if (generation === '1.0' && Array.isArray(card.supportedInterfaces) && card.supportedInterfaces.length === 0) {
      throw new CardProblemError('supportedInterfaces: card offers no interface on the remote’s origin the gateway carries, and no gRPC interface on its gRPC target');
    }
  } catch (err) {
    if (!(err instanceof CardProblemError)) throw err;
    request.log.warn({ requestId: request.id, remote: remote.name, reason: err.reason }, 'agent card cannot be served');
    return failed(502, err.reason, err.problem);
  }
  const body = JSON.stringify(card);
  const etag = cardEtag(body);
  if (!configSeenAt.has(config)) configSeenAt.set(config, Date.now());
  const lastModified = Math.max(cached.modifiedAt, configSeenAt.get(config) ?? 0);
  reply
    .header('etag', etag)
    .header('last-modified', new Date(lastModified).toUTCString())
    .header('cache-control', cardCacheControl(cached.card.cacheControl, cached.remainingMs))
    .header('vary', cardVary(config.server))
    .header('x-content-type-options', 'nosniff');
  const served: Served = { remote: remote.name, outcome: cached.stale ? 'stale' : 'ok', fetched, a2aVersion: version };
  if (notModified(request.headers, etag, lastModified)) {
    await reply.code(304).send();
    return cached.stale ? served : { ...served, outcome: 'not-modified' };
  }
  await reply.code(200).type(JSON_TYPE).send(body);
  return served;
}

/** The caller's A2A-Version as Major.Minor; undefined when it sent none (or an empty one). */
function explicitA2aVersion(header: string | string[] | undefined): string | undefined {
  const present = Array.isArray(header) ? header.length > 0 : header !== undefined && header.trim() !== '';
  return present ? (a2aVersionOf(header) ?? DEFAULT_A2A_VERSION) : undefined;
}

const LIMIT_REASONS: ReadonlySet<Reason> = new Set(['CIRCUIT_OPEN', 'RATE_LIMITED', 'OVERLOADED', 'GATEWAY_OVERLOADED']);

function describeFailure(err: unknown): { reason: Reason; detail?: string | undefined; httpStatus?: number | undefined } {
  if (err instanceof CardFetchError) return { reason: err.reason, detail: err.detail, httpStatus: err.httpStatus };
  // A fetchCard supplied by the gateway may throw its own typed errors carrying a catalogue reason.
  const reason = (err as { reason?: unknown } | null)?.reason;
  if (typeof reason === 'string' && Object.hasOwn(gatewayErrors, reason)) return { reason: reason as Reason };
  return { reason: classifyTransportError(err) };
}

function sendProblem(reply: FastifyReply, status: number, reason: Reason, detail?: string): FastifyReply {
  const body: ProblemBody = { type: 'about:blank', title: gatewayErrors[reason].message, status, reason, ...(detail ? { detail } : {}) };
  return reply.code(status).type(PROBLEM_TYPE).header('cache-control', 'no-store').send(JSON.stringify(body));
}

/**
 * A remote the gateway calls over gRPC for the HTTP bindings (routes/grpc-upstream-call.ts): `binding: grpc`, or
 * `auto` with a gRPC interface on the host of its url (HTTP+JSON callers go there when it is the card's first).
 */
function servedOverGrpc(remote: RemoteConfig, card: Record<string, unknown>): boolean {
  if (remote.binding === 'grpc') return true;
  return remote.binding === 'auto' && grpcInterfaceOf(card, remote.url.hostname, remote.url.protocol === 'https:') !== undefined;
}
