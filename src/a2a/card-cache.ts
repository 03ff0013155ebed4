/**
 * Per-remote cache of agent cards. Cards change rarely and callers fetch them
 * often (every client start), so the gateway asks the remote at most once per
 * TTL: the remote's own Cache-Control max-age, capped by the configured TTL.
 * Concurrent misses share one fetch; when a refresh fails, the last good card
 * is served for a bounded stale window instead of failing every caller.
 * A card the remote forbids a shared cache to keep (no-store, no-cache,
 * private) is fetched for each request and never served stale.
 */
import type { ProtocolGeneration } from './methods.js';

export const DEFAULT_CARD_TTL_MS = 300_000;
export const DEFAULT_CARD_STALE_MS = 3_600_000;

export interface CardCachePolicy {
  /** Upper bound on how long a card is fresh, whatever the remote says. */
  readonly ttlMs: number;
  /** How long past expiry the last good card may still be served when a refresh fails. */
  readonly staleMs: number;
}

export interface CardCacheOptions extends Partial<CardCachePolicy> {
  /** Injectable clock (ms since epoch), for tests. */
  readonly now?: () => number;
}

export interface FetchedCard<T> {
  readonly card: T;
  /** Freshness the remote asked for (Cache-Control); capped by ttlMs. */
  readonly maxAgeMs?: number | undefined;
  /** False when the remote forbids a shared cache to keep the card: it is neither reused nor served stale. */
  readonly store?: boolean | undefined;
  /** Identifies the card's content; a refetched card with the same fingerprint keeps its `modifiedAt`. */
  readonly fingerprint?: string | undefined;
}

export interface CachedCard<T> {
  readonly card: T;
  /** When this card stops being fresh (clock of the cache). */
  readonly expiresAt: number;
  /** True when the refresh failed and this is the last good card, past its expiry. */
  readonly stale: boolean;
  /** Freshness left when this was returned (0 when stale): what a caller may be told as max-age. */
  readonly remainingMs: number;
  /** When this content was first fetched (clock of the cache): the card's Last-Modified. */
  readonly modifiedAt: number;
}

interface Entry<T> {
  readonly card: T;
  readonly expiresAt: number;
  readonly modifiedAt: number;
  readonly fingerprint?: string | undefined;
}

export class CardCache<T = Record<string, unknown>> {
  readonly #entries = new Map<string, Entry<T>>();
  readonly #inflight = new Map<string, Promise<CachedCard<T>>>();
  /** Bumped by deleteWhere(); a fetch that started before it does not fill the cache. */
  #generation = 0;
  readonly #policy: CardCachePolicy;
  readonly #now: () => number;

  constructor(options: CardCacheOptions = {}) {
    this.#policy = { ttlMs: options.ttlMs ?? DEFAULT_CARD_TTL_MS, staleMs: options.staleMs ?? DEFAULT_CARD_STALE_MS };
    this.#now = options.now ?? Date.now;
  }

  /** The fresh card for `remote`, fetching it (once, however many callers ask) when missing or expired. */
  get(remote: string, fetcher: () => Promise<FetchedCard<T>>, policy: Partial<CardCachePolicy> = {}): Promise<CachedCard<T>> {
    const entry = this.#entries.get(remote);
    const now = this.#now();
    if (entry && now < entry.expiresAt) return Promise.resolve(this.#view(entry, false, entry.expiresAt - now));
    const pending = this.#inflight.get(remote);
    if (pending) return pending;
    const load = this.#load(remote, fetcher, { ...this.#policy, ...policy });
    this.#inflight.set(remote, load);
    // Attached after set(): even a fetcher that throws synchronously settles later than this line.
    load
      .finally(() => {
        if (this.#inflight.get(remote) === load) this.#inflight.delete(remote);
      })
      .catch(() => undefined);
    return load;
  }

  /**
   * The card for `remote` if the cache holds it fresh now, else undefined (nothing is fetched): for lookups on a call's
   * path that answer synchronously while the card is fresh and fall back to get() otherwise.
   */
  fresh(remote: string): T | undefined {
    const entry = this.#entries.get(remote);
    return entry !== undefined && this.#now() < entry.expiresAt ? entry.card : undefined;
  }

  /** Forgets a remote's card (config reload, remote removed). */
  delete(remote: string): void {
    this.#entries.delete(remote);
  }

  /**
   * Forgets every card whose key matches (a reload drops all versions of a changed remote's card).
   * A fetch already running for such a key still answers its callers but no longer fills the cache.
   */
  deleteWhere(matches: (key: string) => boolean): void {
    for (const key of [...this.#entries.keys()]) if (matches(key)) this.#entries.delete(key);
    for (const key of [...this.#inflight.keys()]) if (matches(key)) this.#inflight.delete(key);
    this.#generation++;
  }

  async #load(remote: string, fetcher: () => Promise<FetchedCard<T>>, policy: CardCachePolicy): Promise<CachedCard<T>> {
    const generation = this.#generation;
    try {
      const fetched = await fetcher();
      const ttl = Math.max(0, Math.min(fetched.maxAgeMs ?? policy.ttlMs, policy.ttlMs));
      const now = this.#now();
      const last = this.#entries.get(remote);
      const unchanged = last !== undefined && fetched.fingerprint !== undefined && last.fingerprint === fetched.fingerprint;
      // A changed card is always newer by at least a second, the resolution of Last-Modified.
      const modifiedAt = unchanged ? last.modifiedAt : last ? Math.max(now, last.modifiedAt + 1000) : now;
      const entry: Entry<T> = { card: fetched.card, expiresAt: now + ttl, modifiedAt, fingerprint: fetched.fingerprint };
      // A reload dropped cards while this fetch ran: it may have used a config no longer in force.
      if (fetched.store === false) this.#entries.delete(remote);
      else if (generation === this.#generation) this.#entries.set(remote, entry);
      return this.#view(entry, false, ttl);
    } catch (err) {
      const last = this.#entries.get(remote);
      if (last && this.#now() <= last.expiresAt + policy.staleMs) return this.#view(last, true, 0);
      throw err;
    }
  }

  #view(entry: Entry<T>, stale: boolean, remainingMs: number): CachedCard<T> {
    return { card: entry.card, expiresAt: entry.expiresAt, modifiedAt: entry.modifiedAt, stale, remainingMs };
  }
}

/** A card that passed its generation's schema, not yet rewritten (the rewrite depends on the caller's base URL): what the cache keeps. */
export interface ValidCard {
  readonly generation: ProtocolGeneration;
  readonly card: Record<string, unknown>;
  /** The remote's Cache-Control, whose meaning the served card keeps (no-store, no-cache, private). */
  readonly cacheControl?: CacheDirectives;
}

/** The Cache-Control directives of a remote's card response that the gateway acts on. */
export interface CacheDirectives {
  readonly noStore: boolean;
  readonly noCache: boolean;
  readonly private: boolean;
  /** `max-age` (what a private cache may use), in ms. */
  readonly maxAgeMs?: number | undefined;
  /** `s-maxage` (what a shared cache, like this gateway, uses before max-age), in ms. */
  readonly sharedMaxAgeMs?: number | undefined;
}

/**
 * Parses the directives the gateway acts on; unknown directives and malformed
 * values are ignored, and a repeated directive is believed at its shortest
 * lifetime. `no-cache="field"` and `private="field"` (qualified forms) are
 * read as the whole response, the safe side.
 */
export function parseCacheControl(header: string | readonly string[] | undefined): CacheDirectives {
  let noStore = false;
  let noCache = false;
  let isPrivate = false;
  let maxAgeMs: number | undefined;
  let sharedMaxAgeMs: number | undefined;
  if (header === undefined) return { noStore, noCache, private: isPrivate };
  for (const directive of (typeof header === 'string' ? header : header.join(',')).split(',')) {
    const [rawName = '', ...rest] = directive.split('=');
    const name = rawName.trim().toLowerCase();
    if (name === 'no-store') noStore = true;
    else if (name === 'no-cache') noCache = true;
    else if (name === 'private') isPrivate = true;
    if (name !== 'max-age' && name !== 's-maxage') continue;
    const value = rest.join('=').trim().replace(/^"(.*)"$/, '$1');
    if (!/^\d{1,10}$/.test(value)) continue;
    const ms = Number(value) * 1000;
    if (name === 'max-age') maxAgeMs = Math.min(maxAgeMs ?? ms, ms);
    else sharedMaxAgeMs = Math.min(sharedMaxAgeMs ?? ms, ms);
  }
  return { noStore, noCache, private: isPrivate, maxAgeMs, sharedMaxAgeMs };
}

/**
 * Freshness in milliseconds from a Cache-Control header, or undefined when it
 * sets none. The gateway is a shared cache, so `s-maxage` wins over `max-age`;
 * `no-store` and `no-cache` mean "do not reuse" (0). Malformed values are ignored.
 */
export function parseMaxAge(header: string | readonly string[] | undefined): number | undefined {
  const d = parseCacheControl(header);
  if (d.noStore || d.noCache) return 0;
  return d.sharedMaxAgeMs ?? d.maxAgeMs;
}
