/**
 * HTTP caching of the card the gateway serves (A2A 1.0 §8.6: Cache-Control and
 * ETag SHOULD be sent; RFC 9110 §13 and RFC 9111). The validators describe
 * the bytes actually served — the rewritten card, which depends on the
 * caller's base URL and A2A-Version — never the remote's. Pure.
 */
import { createHash } from 'node:crypto';
import type { CacheDirectives } from '../a2a/card-cache.js';
import type { ServerConfig } from '../config/schema.js';

/** A strong ETag of the served bytes: the same bytes always get the same tag, any change a new one. */
export function cardEtag(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/**
 * What callers are told: the remote's no-store / no-cache / private kept as
 * they were, and a max-age that is what is left of the gateway's own
 * freshness (the remote's max-age capped by `cardCacheTtlMs`; 0 for no-store
 * and no-cache, and for a stale card served while the remote fails).
 */
export function cardCacheControl(remote: CacheDirectives | undefined, remainingMs: number): string {
  const directives: string[] = [];
  if (remote?.private) directives.push('private');
  if (remote?.noCache) directives.push('no-cache');
  if (remote?.noStore) directives.push('no-store');
  const seconds = remote?.noStore || remote?.noCache ? 0 : Math.max(0, Math.floor(remainingMs / 1000));
  directives.push(`max-age=${seconds}`);
  return directives.join(', ');
}

/**
 * Request headers the served card depends on besides its URL: the caller's
 * A2A-Version (the remote is asked in it) and, when the gateway believes a
 * proxy in front of it, the forwarded scheme and host written into the card.
 */
export function cardVary(server: Readonly<Pick<ServerConfig, 'trustProxy'>>): string {
  return server.trustProxy ? 'A2A-Version, X-Forwarded-Proto, X-Forwarded-Host' : 'A2A-Version';
}

/**
 * RFC 9110 §13.2.2 for a GET: If-None-Match decides when present (weak
 * comparison, `*` matches); only without it is If-Modified-Since read, and a
 * card not modified after that date (second resolution) is not sent again.
 */
export function notModified(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  etag: string,
  lastModifiedMs: number,
): boolean {
  const ifNoneMatch = joined(headers['if-none-match']);
  if (ifNoneMatch !== undefined) return matchesAny(ifNoneMatch, etag);
  const ifModifiedSince = joined(headers['if-modified-since']);
  if (ifModifiedSince === undefined) return false;
  const since = Date.parse(ifModifiedSince);
  if (Number.isNaN(since)) return false;
  return Math.floor(lastModifiedMs / 1000) <= Math.floor(since / 1000);
}

function joined(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

// One list element: optional empty elements and spaces, an entity-tag (W/ optional), spaces, then a comma or the end.
const ELEMENT = /[\s,]*(?:W\/)?("[^"]*")\s*(?:,|$)/y;
// Nothing but empty elements left (sticky: tried where the last element ended, so the scan stays linear).
const ONLY_SEPARATORS = /[\s,]*$/y;

function matchesAny(list: string, etag: string): boolean {
  if (list.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  ELEMENT.lastIndex = 0;
  for (;;) {
    ONLY_SEPARATORS.lastIndex = ELEMENT.lastIndex;
    if (ONLY_SEPARATORS.test(list)) return false;
    const match = ELEMENT.exec(list);
    // Empty elements are allowed (RFC 9110 §5.6.1.2); an element that is not an entity-tag ends the scan:
    // a malformed list matches nothing from there on, and the card is sent in full, the safe answer.
    if (!match) return false;
    if (match[1] === opaque) return true;
  }
}
