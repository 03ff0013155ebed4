/**
 * Per-remote cache of agent cards. Cards change rarely and callers fetch them
 * often (every client start), so the gateway asks the remote at most once per
 * TTL: the remote's own Cache-Control max-age, capped by the configured TTL.
 * Concurrent misses share one fetch; when a refresh fails, the last good card
 * is served for a bounded stale window instead of failing every caller.
 */

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
}

export interface CachedCard<T> {
  readonly card: T;
  /** When this card stops being fresh (clock of the cache). */
  readonly expiresAt: number;
  /** True when the refresh failed and this is the last good card, past its expiry. */
  readonly stale: boolean;
  /** Freshness left when this was returned (0 when stale): what a caller may be told as max-age. */
  readonly remainingMs: number;
}

interface Entry<T> {
  readonly card: T;
  readonly expiresAt: number;
}

export class CardCache<T = Record<string, unknown>> {
  readonly #entries = new Map<string, Entry<T>>();
  readonly #inflight = new Map<string, Promise<CachedCard<T>>>();
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
    if (entry && now < entry.expiresAt) return Promise.resolve({ ...entry, stale: false, remainingMs: entry.expiresAt - now });
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

  /** Forgets a remote's card (config reload, remote removed). */
  delete(remote: string): void {
    this.#entries.delete(remote);
  }

  async #load(remote: string, fetcher: () => Promise<FetchedCard<T>>, policy: CardCachePolicy): Promise<CachedCard<T>> {
    try {
      const fetched = await fetcher();
      const ttl = Math.max(0, Math.min(fetched.maxAgeMs ?? policy.ttlMs, policy.ttlMs));
      const entry: Entry<T> = { card: fetched.card, expiresAt: this.#now() + ttl };
      this.#entries.set(remote, entry);
      return { ...entry, stale: false, remainingMs: ttl };
    } catch (err) {
      const last = this.#entries.get(remote);
      if (last && this.#now() <= last.expiresAt + policy.staleMs) return { ...last, stale: true, remainingMs: 0 };
      throw err;
    }
  }
}

/**
 * Freshness in milliseconds from a Cache-Control header, or undefined when it
 * sets none. The gateway is a shared cache, so `s-maxage` wins over `max-age`;
 * `no-store` and `no-cache` mean "do not reuse" (0). Malformed values are ignored.
 */
export function parseMaxAge(header: string | readonly string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const directives = (typeof header === 'string' ? header : header.join(',')).split(',');
  let maxAge: number | undefined;
  let sharedMaxAge: number | undefined;
  for (const directive of directives) {
    const [rawName = '', ...rest] = directive.split('=');
    const name = rawName.trim().toLowerCase();
    if (name === 'no-store' || name === 'no-cache') return 0;
    if (name !== 'max-age' && name !== 's-maxage') continue;
    const value = rest.join('=').trim().replace(/^"(.*)"$/, '$1');
    if (!/^\d{1,10}$/.test(value)) continue;
    const ms = Number(value) * 1000;
    // A header repeating a directive is ambiguous: believe the shorter lifetime.
    if (name === 'max-age') maxAge = Math.min(maxAge ?? ms, ms);
    else sharedMaxAge = Math.min(sharedMaxAge ?? ms, ms);
  }
  return sharedMaxAge ?? maxAge;
}
