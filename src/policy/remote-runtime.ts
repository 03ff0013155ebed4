/**
 * The live policy state of each remote: its concurrency slots, rate bucket,
 * circuit breaker and credential source. Built from a GatewayConfig; a
 * reload builds a new set, carrying over the state of remotes whose policy
 * did not change (so a reload does not reset a breaker or a bucket).
 */
import type { GatewayConfig, RemoteConfig } from '../config/schema.js';
import { CircuitBreaker, type CircuitState } from './circuit-breaker.js';
import { ConcurrencyLimiter, type Release } from './concurrency.js';
import { Redactor } from '../envelope/redact.js';
import { createCredentialSource, type CredentialSource } from './credentials.js';
import { LimitError } from './limit-error.js';
import { RedisTokenBucket, type RedisClients } from './redis-bucket.js';
import { TokenBucket } from './token-bucket.js';

export interface RuntimeHooks {
  readonly onBreakerChange?: (remote: string, state: CircuitState) => void;
  readonly onCredentialError?: (remote: string, err: Error) => void;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Redis clients for shared rate limits (`rateLimit.store`); the gateway owns and closes them. */
  readonly rateStores?: RedisClients;
  /** A shared rate-limit store failed (once per outage); calls are being allowed meanwhile. */
  readonly onRateStoreError?: (remote: string, store: string, err: Error) => void;
}

export class RemoteRuntime {
  readonly limiter: ConcurrencyLimiter;
  readonly bucket: TokenBucket | RedisTokenBucket | undefined;
  readonly breaker: CircuitBreaker;
  readonly credentials: CredentialSource | undefined;
  /** What the state above was built from, to decide whether a reload can keep it. */
  readonly fingerprint: string;

  constructor(remote: RemoteConfig, hooks: RuntimeHooks) {
    this.limiter = new ConcurrencyLimiter({
      maxConcurrent: remote.limits.maxConcurrent,
      maxQueued: remote.limits.maxQueued,
      queueTimeoutMs: remote.timeouts.queueTimeoutMs,
    });
    this.bucket = remote.rateLimit ? bucketFor(remote, hooks) : undefined;
    this.breaker = new CircuitBreaker({
      ...remote.circuitBreaker,
      onStateChange: (change) => hooks.onBreakerChange?.(remote.name, change.to),
    });
    this.credentials = remote.auth
      ? createCredentialSource(remote.auth, hooks.env ?? process.env, {
          remote: remote.name,
          onError: (err) => hooks.onCredentialError?.(remote.name, err),
        })
      : undefined;
    this.fingerprint = fingerprintOf(remote);
  }

  #redactor: { readonly from: readonly string[]; readonly redactor: Redactor } | undefined;

  /**
   * Keeps this remote's credentials out of what callers receive; undefined
   * for a remote without `auth` (which then pays nothing). Rebuilt when the
   * credential values change (a token file rotated), which the source
   * signals by handing out a new array.
   */
  redactor(): Redactor | undefined {
    if (!this.credentials) return undefined;
    const values = this.credentials.secrets();
    if (this.#redactor?.from !== values) this.#redactor = { from: values, redactor: new Redactor(values) };
    return this.#redactor.redactor;
  }

  /**
   * Admission for one call, cheapest check first: an open circuit or an
   * empty bucket refuse at once; then wait (bounded) for a concurrency slot.
   */
  async admit(signal?: AbortSignal): Promise<Release> {
    if (!this.breaker.canPass()) throw new LimitError('CIRCUIT_OPEN', 'circuit open', this.breaker.retryAfterMs);
    if (this.bucket) {
      const take = this.bucket.tryTake();
      // Only the shared store is asynchronous: the in-process bucket costs no extra tick.
      const taken = take instanceof Promise ? await take : take;
      if (!taken.ok) throw new LimitError('RATE_LIMITED', 'bucket empty', taken.retryAfterMs);
    }
    return this.limiter.acquire(signal);
  }

  state(): Record<string, unknown> {
    return {
      circuit: this.breaker.state,
      inFlight: this.limiter.inFlight,
      queued: this.limiter.queued,
      ...(this.credentials ? { credential: this.credentials.description } : {}),
      ...(this.bucket instanceof RedisTokenBucket ? { rateLimitStore: this.bucket.description } : {}),
    };
  }
}

function bucketFor(remote: RemoteConfig, hooks: RuntimeHooks): TokenBucket | RedisTokenBucket {
  const { perSecond, burst, store } = remote.rateLimit!;
  if (store?.type !== 'redis') return new TokenBucket({ perSecond, burst });
  if (!hooks.rateStores) throw new Error(`remote ${remote.name}: rateLimit.store needs the gateway's Redis clients`);
  return new RedisTokenBucket(
    { perSecond, burst, store, remote: remote.name, onError: (err, where) => hooks.onRateStoreError?.(remote.name, where, err) },
    hooks.rateStores,
  );
}

// remote.rateLimit includes its store: switching store, url or prefix builds a new bucket.
function fingerprintOf(remote: RemoteConfig): string {
  return JSON.stringify([remote.limits.maxConcurrent, remote.limits.maxQueued, remote.timeouts.queueTimeoutMs, remote.rateLimit, remote.circuitBreaker, remote.auth]);
}

/** Builds runtimes for `config`, reusing `previous` entries whose policy is unchanged. Throws CredentialError. */
export function buildRuntimes(
  config: GatewayConfig,
  hooks: RuntimeHooks,
  previous?: ReadonlyMap<string, RemoteRuntime>,
): Map<string, RemoteRuntime> {
  const out = new Map<string, RemoteRuntime>();
  for (const remote of config.remotes.values()) {
    const old = previous?.get(remote.name);
    const fresh = old && old.fingerprint === fingerprintOf(remote) && !remote.auth ? old : new RemoteRuntime(remote, hooks);
    out.set(remote.name, fresh);
  }
  return out;
}
