/**
 * Per-remote rate limit: a token bucket refilled continuously (not in ticks),
 * so a rate of 0.5/s admits one call every 2 s rather than none for a second
 * and then a burst. Pure apart from the injected clock.
 */

export interface TokenBucketOptions {
  /** Tokens added per second; may be fractional (0.2 = one call every 5 s). */
  readonly perSecond: number;
  /** Bucket capacity: how many calls may pass back to back after a quiet period. */
  readonly burst: number;
}

export type TakeResult = { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number };

// Monotonic by default: wall-clock steps must not mint or destroy tokens.
const monotonicNow = (): number => performance.now();

// Refill arithmetic is floating point (249 ms at 4/s is 0.996 tokens, give or
// take 1e-16): a tolerance keeps "due at t" from turning into "due at t+1 ms".
const EPSILON = 1e-9;

const TAKEN: TakeResult = Object.freeze({ ok: true });

export class TokenBucket {
  readonly #perMs: number;
  readonly #burst: number;
  readonly #now: () => number;
  #tokens: number;
  #updatedAt: number;

  constructor(opts: TokenBucketOptions, now: () => number = monotonicNow) {
    if (!Number.isFinite(opts.perSecond) || opts.perSecond <= 0) {
      throw new RangeError('TokenBucket: perSecond must be a finite number > 0');
    }
    if (!Number.isFinite(opts.burst) || opts.burst < 1) {
      throw new RangeError('TokenBucket: burst must be a finite number >= 1');
    }
    this.#perMs = opts.perSecond / 1000;
    this.#burst = opts.burst;
    this.#now = now;
    this.#tokens = opts.burst;
    this.#updatedAt = now();
  }

  /** Takes one token if there is one; otherwise says how long until there will be. */
  tryTake(): TakeResult {
    this.#refill();
    if (this.#tokens >= 1 - EPSILON) {
      this.#tokens = Math.max(0, this.#tokens - 1);
      return TAKEN;
    }
    // At least 1 ms: a caller told "retry after 0" would spin.
    const retryAfterMs = Math.max(1, Math.ceil((1 - this.#tokens) / this.#perMs - EPSILON));
    return { ok: false, retryAfterMs };
  }

  /** Tokens available now (for metrics and tests). */
  get available(): number {
    this.#refill();
    return this.#tokens;
  }

  #refill(): void {
    const now = this.#now();
    // A clock that steps backwards (NTP) must not drain the bucket.
    const elapsed = Math.max(0, now - this.#updatedAt);
    this.#updatedAt = now;
    this.#tokens = Math.min(this.#burst, this.#tokens + elapsed * this.#perMs);
  }
}
