/**
 * Fetching a remote's agent card: one GET through the gateway's upstream
 * exchange (upstream/exchange.ts, the one module of calls, streams and card
 * fetches) on the remote's pools, under the remote's policy, with a byte cap
 * on the decoded body and the remote's `timeouts.cardMs` deadline on the
 * fetch's own abort point (upstream/call-abort.ts); the caller's AbortSignal
 * can end it sooner. Failures become a CardFetchError carrying a gateway
 * Reason; nothing the remote sent is ever put in an error message.
 */
import { VERSION } from '../version.js';
import type { RemoteConfig } from '../config/schema.js';
import type { Reason } from '../envelope/codes.js';
import { LimitError } from '../policy/limit-error.js';
import type { BufferBudget } from '../upstream/buffer-budget.js';
import { applyVerdict, breakerVerdict, type BreakerVerdict } from '../upstream/breaker-verdict.js';
import { CallAbort } from '../upstream/call-abort.js';
import { literalHostDenied } from '../upstream/egress.js';
import { CallAborted, classifyTransportError } from '../upstream/errors.js';
import type { UpstreamPools } from '../upstream/pools.js';
import { sendUnary } from '../upstream/unary-exchange.js';
import type { Telemetry } from '../telemetry/tracing.js';

export interface FetchedCardResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The decoded body, at most `limits.maxCardBytes` bytes. */
  readonly body: Buffer;
}

/**
 * What the card route calls. `a2aVersion`: the caller's A2A-Version (Major.Minor), forwarded so a remote
 * serving both generations answers in the caller's; `requestId`: the caller's request that caused the fetch.
 */
export type FetchCard = (
  remote: RemoteConfig,
  /** Ends the fetch sooner (its own deadline is the remote's `timeouts.cardMs`). */
  signal?: AbortSignal | undefined,
  opts?: {
    readonly a2aVersion?: string | undefined;
    readonly requestId?: string | undefined;
    /** The W3C trace context of the caller whose request caused the fetch (the fetch's span continues it). */
    readonly traceparent?: string | string[] | undefined;
    readonly tracestate?: string | string[] | undefined;
  },
) => Promise<FetchedCardResponse>;

export interface CardFetchErrorOptions {
  readonly cause?: unknown;
  /** Gateway-written explanation (a key path, a status), never remote bytes. */
  readonly detail?: string | undefined;
  readonly httpStatus?: number | undefined;
}

/** Why the gateway could not get a usable card; `reason` is from the error catalogue. */
export class CardFetchError extends Error {
  override readonly name = 'CardFetchError';
  readonly detail: string | undefined;
  readonly httpStatus: number | undefined;
  constructor(
    readonly reason: Reason,
    options: CardFetchErrorOptions = {},
  ) {
    super(options.detail ? `${reason}: ${options.detail}` : reason, { cause: options.cause });
    this.detail = options.detail;
    this.httpStatus = options.httpStatus;
  }
}

/** `remotes.<name>.agentCardUrl`, else the well-known path on the remote's origin. */
export function cardUrlFor(remote: RemoteConfig): URL {
  return remote.agentCardUrl ?? new URL('/.well-known/agent-card.json', remote.url.origin);
}

/** Admission and verdict of the remote's live policy; RemoteRuntime has this shape. */
export interface CardFetchPolicy {
  admit(signal?: AbortSignal): (() => void) | Promise<() => void>;
  readonly breaker: { onSuccess(): void; onFailure(): void };
}

/** One card fetch, for the log line and the metrics. */
export interface CardFetchRecord {
  readonly remote: string;
  /** The card URL's origin is the remote's own ('remote') or another one ('other'). */
  readonly origin: 'remote' | 'other';
  readonly outcome: 'ok' | Reason;
  readonly httpStatus?: number;
  /** Decoded body bytes read. */
  readonly bytes: number;
  readonly upstreamMs: number;
  readonly a2aVersion?: string;
  readonly requestId?: string;
}

export interface CardFetcherDeps {
  /** The gateway's upstream pools: the remote's own pool, or one with the same guards for another origin. */
  readonly pools: UpstreamPools;
  /** The remote's breaker, rate bucket and concurrency slots; applied when the card is on the remote's origin. */
  readonly policy?: (remote: string) => CardFetchPolicy | undefined;
  /** The gateway-wide buffer budget the card body is read into. */
  readonly budget?: BufferBudget;
  readonly onFetch?: (record: CardFetchRecord) => void;
  readonly userAgent?: string;
  /** A client span (and card:* channel messages) per fetch, while telemetry is active. */
  readonly telemetry?: Telemetry;
}

/**
 * Card fetches go through the same upstream machinery as calls: the pool
 * (egress guard on every connect, TLS settings, framing guard, header size
 * cap, no redirects: a 3xx arrives as a non-2xx status), the capped decoded
 * read counted in the buffer budget, and the remote's card deadline
 * (`timeouts.cardMs`, admission included) or the caller's signal, whichever
 * ends first.
 *
 * On the remote's own origin a card fetch is a request to the remote like
 * any other, so it takes a rate token and a concurrency slot, is refused
 * while the breaker is open, and its transport failures and 5xx count
 * against the breaker. A card on another origin (agentCardUrl elsewhere) is a
 * different service: the remote's breaker and limits describe the remote, not
 * that host, so they are neither consulted nor fed. Either way the card cache
 * (one fetch per TTL per remote and version, concurrent misses shared) bounds
 * how often this runs.
 */
export function createCardFetcher(deps: CardFetcherDeps): FetchCard {
  const userAgent = deps.userAgent ?? `a2a-egress/${VERSION}`;
  return async (remote, signal, opts = {}) => {
    const url = cardUrlFor(remote);
    const sameOrigin = url.origin === remote.url.origin;
    const started = performance.now();
    let outcome: 'ok' | Reason = 'ok';
    let httpStatus: number | undefined;
    let bytes = 0;
    const policy = sameOrigin ? deps.policy?.(remote.name) : undefined;
    const lease = deps.budget?.lease();
    let release: (() => void) | undefined;
    let verdict: BreakerVerdict = 'none';
    // One abort point: the card deadline (a shared timer queue) and the caller's signal.
    const abort = new CallAbort();
    abort.startTotal(remote.timeouts.cardMs);
    let callerAborted = false;
    const onCallerAbort = () => {
      callerAborted = true;
      // The callers' signals are deadlines of theirs; a CallAborted carries its own reason.
      abort.abort(signal?.reason instanceof CallAborted ? signal.reason.reason : 'UPSTREAM_TIMEOUT');
    };
    if (signal?.aborted) onCallerAbort();
    else signal?.addEventListener('abort', onCallerAbort, { once: true });
    /** The card deadline's own expiry says so (the caller's signal says what it likes). */
    const detailOf = (reason: Reason) => (reason === 'UPSTREAM_TIMEOUT' && abort.aborted && !callerAborted ? `no card within ${remote.timeouts.cardMs} ms` : undefined);
    const trace = deps.telemetry?.cardsActive ? deps.telemetry.startCardFetch({ remote: remote.name, url, traceparent: opts.traceparent, tracestate: opts.tracestate }) : undefined;
    try {
      if (literalHostDenied(url, remote.allowPrivateNetwork)) throw new CardFetchError('EGRESS_DENIED');
      if (policy) release = await policy.admit(abort.signal);
      const headers: Record<string, string> = {
        accept: 'application/json',
        'user-agent': userAgent,
        ...(opts.a2aVersion ? { 'a2a-version': opts.a2aVersion } : {}),
        ...(opts.requestId ? { 'x-request-id': opts.requestId } : {}),
        ...(trace?.traceparent ? { traceparent: trace.traceparent } : {}),
        ...(trace?.tracestate ? { tracestate: trace.tracestate } : {}),
      };
      const response = await sendUnary(deps.pools.get(remote, url.origin), { path: `${url.pathname}${url.search}`, method: 'GET', headers, body: null }, { maxBytes: remote.limits.maxCardBytes, hold: lease }, abort);
      httpStatus = response.statusCode;
      const read = await response.readBody();
      if (!read.ok) throw new CardFetchError(read.reason, { cause: read.error, httpStatus, detail: detailOf(read.reason) });
      bytes = read.body.length;
      verdict = breakerVerdict(httpStatus, 'ok');
      if (httpStatus < 200 || httpStatus > 299) outcome = 'UPSTREAM_HTTP_ERROR';
      return { status: httpStatus, headers: response.headers, body: read.body };
    } catch (err) {
      const failure =
        err instanceof CardFetchError ? err
        : err instanceof LimitError ? new CardFetchError(err.reason, { cause: err, detail: err.retryAfterMs !== undefined ? `retry after ${Math.ceil(err.retryAfterMs)} ms` : undefined })
        : new CardFetchError(classifyTransportError(err), { cause: err, detail: detailOf(classifyTransportError(err)) });
      outcome = failure.reason;
      verdict = breakerVerdict(httpStatus, failure.reason);
      throw failure;
    } finally {
      abort.finish();
      signal?.removeEventListener('abort', onCallerAbort);
      release?.();
      lease?.release();
      if (policy) applyVerdict(policy.breaker, verdict);
      trace?.end({ status: httpStatus, reason: outcome === 'ok' ? undefined : outcome });
      deps.onFetch?.({
        remote: remote.name,
        origin: sameOrigin ? 'remote' : 'other',
        outcome,
        ...(httpStatus !== undefined ? { httpStatus } : {}),
        bytes,
        upstreamMs: Math.round((performance.now() - started) * 1000) / 1000,
        ...(opts.a2aVersion ? { a2aVersion: opts.a2aVersion } : {}),
        ...(opts.requestId ? { requestId: opts.requestId } : {}),
      });
    }
  };
}
