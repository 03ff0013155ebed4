/**
 * From a fetched card response to a validated card the cache can keep:
 * HTTP status, UTF-8, JSON (depth-bounded, no prototype keys), schema.
 * Every failure is a CardFetchError with a gateway Reason and a
 * gateway-written detail.
 */
import { createHash } from 'node:crypto';
import sjson from 'secure-json-parse';
import type { RemoteConfig } from '../config/schema.js';
import { scanJson } from '../envelope/json-scan.js';
import { CardFetchError, type FetchCard } from './card-fetch.js';
import { parseCacheControl, type CacheDirectives, type FetchedCard, type ValidCard } from '../a2a/card-cache.js';
import { validateCard } from '../a2a/card-validate.js';
import { headerValue } from '../upstream/read-body.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Parses card bytes; throws CardFetchError. */
export function parseCardBody(body: Buffer, maxJsonDepth: number, httpStatus?: number): unknown {
  const errorOptions = { httpStatus };
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new CardFetchError('INVALID_UTF8', errorOptions);
  }
  const trimmed = text.trimStart();
  if (trimmed === '') throw new CardFetchError('EMPTY_RESPONSE', errorOptions);
  if (!trimmed.startsWith('{')) throw new CardFetchError('NON_JSON_RESPONSE', { ...errorOptions, detail: 'a card must be a JSON object' });
  if (scanJson(text, maxJsonDepth).problem === 'too-deep') {
    throw new CardFetchError('JSON_TOO_DEEP', { ...errorOptions, detail: `deeper than ${maxJsonDepth} levels` });
  }
  try {
    return sjson.parse(text, null, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    const unsafe = err instanceof SyntaxError && err.message.includes('forbidden prototype');
    throw new CardFetchError(unsafe ? 'UNSAFE_JSON' : 'INVALID_JSON', errorOptions);
  }
}

/** Fetches, checks and validates a remote's card; the result is what CardCache stores. `signal` ends it sooner than `timeouts.cardMs`. */
export async function loadRemoteCard(
  remote: RemoteConfig,
  fetchCard: FetchCard,
  signal: AbortSignal | undefined,
  a2aVersion?: string,
  requestId?: string,
  trace: { readonly traceparent?: string | string[] | undefined; readonly tracestate?: string | string[] | undefined } = {},
): Promise<FetchedCard<ValidCard>> {
  const response = await fetchCard(remote, signal, { ...(a2aVersion ? { a2aVersion } : {}), ...(requestId ? { requestId } : {}), ...trace });
  const httpStatus = response.status;
  if (httpStatus < 200 || httpStatus > 299) {
    throw new CardFetchError('UPSTREAM_HTTP_ERROR', { httpStatus, detail: `card request answered HTTP ${httpStatus}` });
  }
  const parsed = parseCardBody(response.body, remote.limits.maxJsonDepth, httpStatus);
  const validated = validateCard(parsed);
  if (!validated.ok) throw new CardFetchError('INVALID_AGENT_CARD', { httpStatus, detail: validated.problem });
  const cacheControl = parseCacheControl(headerValue(response.headers['cache-control']));
  return {
    card: { generation: validated.generation, card: validated.card, cacheControl },
    ...cardFreshness(cacheControl),
    fingerprint: createHash('sha256').update(response.body).digest('base64url'),
  };
}

/**
 * How the gateway may keep a card, from the remote's directives. The gateway is
 * a shared cache (RFC 9111): it keeps nothing marked no-store, no-cache or
 * private; `s-maxage` wins over `max-age` for what it keeps. A private card is
 * still fresh for its own caller for `max-age`.
 */
export function cardFreshness(d: CacheDirectives): Pick<FetchedCard<unknown>, 'maxAgeMs' | 'store'> {
  if (d.noStore || d.noCache) return { maxAgeMs: 0, store: false };
  if (d.private) return { maxAgeMs: d.maxAgeMs, store: false };
  return { maxAgeMs: d.sharedMaxAgeMs ?? d.maxAgeMs, store: true };
}
