/**
 * Rate per push config: one token bucket (src/policy/token-bucket.ts) per
 * config, keyed by the ticket's ref, so one noisy task cannot crowd out the
 * others. The buckets live in a map bounded to `maxConfigs` (least recently
 * used forgotten first: a forgotten config starts again with a full burst,
 * which is the bound's only cost).
 */
import { TokenBucket, type TakeResult, type TokenBucketOptions } from '../policy/token-bucket.js';

export class ConfigRateLimiter {
  readonly #buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly opts: TokenBucketOptions,
    private readonly maxConfigs: number,
    private readonly now?: () => number,
  ) {}

  take(configRef: string): TakeResult {
    let bucket = this.#buckets.get(configRef);
    if (bucket) this.#buckets.delete(configRef);
    else bucket = this.now ? new TokenBucket(this.opts, this.now) : new TokenBucket(this.opts);
    this.#buckets.set(configRef, bucket); // most recently used last
    while (this.#buckets.size > this.maxConfigs) this.#buckets.delete(this.#buckets.keys().next().value!);
    return bucket.tryTake();
  }

  get size(): number {
    return this.#buckets.size;
  }
}
