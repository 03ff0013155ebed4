/**
 * The live policy state of each remote: its concurrency slots, rate bucket,
 * circuit breaker and credential source. Built from a GatewayConfig; a
 * reload builds a new set in which each part is carried over while the
 * settings it depends on are unchanged: a breaker keeps its state (an open
 * circuit stays open) unless `circuitBreaker` or the remote's origin changed,
 * slots and queue unless maxConcurrent, maxQueued or queueTimeoutMs changed,
 * the bucket unless `rateLimit` changed. Credentials are rebuilt on every
 * reload (env and token files are read again, a missing one refuses the
 * reload) without touching the rest.
 */
import type { GatewayConfig, RemoteConfig } from '../config/schema.js';
import { CircuitBreaker, type CircuitState } from './circuit-breaker.js';
import { ConcurrencyLimiter, type Release } from './concurrency.js';
import { Redactor } from '../envelope/redact.js';
import { createCredentialSource, type CredentialSource } from './credentials.js';
import { LimitError } from './limit-error.js';
import { RedisTokenBucket, type RedisClients } from './redis-bucket.js';
import { TokenBucket, type TakeResult } from './token-bucket.js';

export interface RuntimeHooks {
  readonly onBreakerChange?: (remote: string, state: CircuitState) => void;
  readonly onCredentialError?: (remote: string, err: Error) => void;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Redis clients for shared rate limits (`rateLimit.store`); the gateway owns and closes them. */
  readonly rateStores?: RedisClients;
  /** A shared rate-limit store failed (once per outage); calls are being allowed meanwhile. */
  readonly onRateStoreError?: (remote: string, store: string, err: Error) => void;
}

/** What each carried-over part was built from. */
interface PartKeys {
  readonly limiter: string;
  readonly bucket: string;
  readonly breaker: string;
}

function partKeysOf(remote: RemoteConfig): PartKeys {
  return {
    limiter: JSON.stringify([remote.limits.maxConcurrent, remote.limits.maxQueued, remote.timeouts.queueTimeoutMs]),
    // rateLimit includes its store: switching store, url or prefix builds a new bucket.
    bucket: JSON.stringify(remote.rateLimit ?? null),
    breaker: JSON.stringify([remote.circuitBreaker, remote.url.origin]),
  };
}

export class RemoteRuntime {
  readonly limiter: ConcurrencyLimiter;
  readonly bucket: TokenBucket | RedisTokenBucket | undefined;
  readonly breaker: CircuitBreaker;
  readonly credentials: CredentialSource | undefined;
  readonly #keys: PartKeys;

  /** `previous`: this remote's runtime before a reload, whose unchanged parts are kept. */
  constructor(remote: RemoteConfig, hooks: RuntimeHooks, previous?: RemoteRuntime) {
    const keys = partKeysOf(remote);
    const keep = (part: keyof PartKeys) => previous !== undefined && previous.#keys[part] === keys[part];
    // Credentials first: a missing secret throws before anything else is built.
    this.credentials = remote.auth
      ? createCredentialSource(remote.auth, hooks.env ?? process.env, {
          remote: remote.name,
          onError: (err) => hooks.onCredentialError?.(remote.name, err),
        })
      : undefined;
    this.limiter = keep('limiter')
      ? previous!.limiter
      : new ConcurrencyLimiter({
          maxConcurrent: remote.limits.maxConcurrent,
          maxQueued: remote.limits.maxQueued,
          queueTimeoutMs: remote.timeouts.queueTimeoutMs,
        });
    this.bucket = keep('bucket') ? previous!.bucket : remote.rateLimit ? bucketFor(remote, hooks) : undefined;
    this.breaker = keep('breaker')
      ? previous!.breaker
      : new CircuitBreaker({
          ...remote.circuitBreaker,
          onStateChange: (change) => hooks.onBreakerChange?.(remote.name, change.to),
        });
    this.#keys = keys;
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
   * `signal` may be a function that makes it: called only if the call has to wait.
   *
   * Decided at once when it can be (the usual case: the circuit closed, an
   * in-process bucket, a free slot): the Release is returned, or the
   * LimitError thrown, with no promise made. Only a wait for a slot or the
   * shared store's bucket makes it a promise. Callers `await` it either way
   * (an await of a Release costs a tick, so the hot path looks first:
   * `typeof admitted === 'function'`).
   */
  admit(signal?: AbortSignal | (() => AbortSignal)): Release | Promise<Release> {
    if (!this.breaker.canPass()) throw new LimitError('CIRCUIT_OPEN', 'circuit open', this.breaker.retryAfterMs);
    if (this.bucket) {
      const take = this.bucket.tryTake();
      // Only the shared store is asynchronous: the in-process bucket costs no extra tick.
      return take instanceof Promise ? take.then((taken) => this.#afterBucket(taken, signal)) : this.#afterBucket(take, signal);
    }
    return this.limiter.acquireNow(signal);
  }

  #afterBucket(taken: TakeResult, signal: AbortSignal | (() => AbortSignal) | undefined): Release | Promise<Release> {
    if (!taken.ok) throw new LimitError('RATE_LIMITED', 'bucket empty', taken.retryAfterMs);
    return this.limiter.acquireNow(signal);
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

/** Builds runtimes for `config`, carrying over the unchanged parts of `previous` entries. Throws CredentialError. */
export function buildRuntimes(
  config: GatewayConfig,
  hooks: RuntimeHooks,
  previous?: ReadonlyMap<string, RemoteRuntime>,
): Map<string, RemoteRuntime> {
  const out = new Map<string, RemoteRuntime>();
  for (const remote of config.remotes.values()) out.set(remote.name, new RemoteRuntime(remote, hooks, previous?.get(remote.name)));
  return out;
}
