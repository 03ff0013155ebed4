/**
 * Per-remote rate limit shared by every gateway replica: the token bucket of
 * ./token-bucket.ts, kept in a Redis hash and updated by one Lua script so
 * that concurrent replicas never both spend the last token.
 *
 * Failure policy: when Redis is unreachable, or slower than timeoutMs, the
 * call is ALLOWED (fail open) and the problem is reported once per outage.
 * The limit exists to protect the remote from us; turning an outage of the
 * limiter into an outage of every remote behind it would do more harm than a
 * short spell of unlimited calls (which the remote's own limits still bound).
 */
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type { RateLimitStore } from '../config/schema.js';
import type { TakeResult } from './token-bucket.js';

export const DEFAULT_KEY_PREFIX = 'a2a-egress:';
export const DEFAULT_STORE_TIMEOUT_MS = 200;

// KEYS[1]: the bucket hash. ARGV: perSecond, burst, ttlMs.
// Replies { 1, 0 } when a token was taken, { 0, retryAfterMs } when not.
// The server's clock (TIME) is the only clock: replicas whose clocks disagree
// still see one timeline. Time is kept in whole microseconds, which a Lua
// double holds exactly; the epsilon matches token-bucket.ts.
const TAKE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local perUs = tonumber(ARGV[1]) / 1000000
local burst = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
local elapsed = now - at
if elapsed < 0 then elapsed = 0 end
tokens = math.min(burst, tokens + elapsed * perUs)
local ok = 0
local wait = 0
if tokens >= 1 - 1e-9 then
  tokens = math.max(0, tokens - 1)
  ok = 1
else
  wait = math.ceil((1 - tokens) / perUs / 1000 - 1e-9)
  if wait < 1 then wait = 1 end
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'at', string.format('%.0f', now))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return { ok, wait }
`;

const COMMAND = 'a2aEgressTakeToken';
type TakeCommand = Record<typeof COMMAND, (key: string, perSecond: string, burst: string, ttlMs: string) => Promise<[number, number]>>;

export class RateStoreError extends Error {
  override readonly name = 'RateStoreError';
}

/** The url with any user name or password removed, for logs and state. */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username || parsed.password) {
      parsed.username = '';
      parsed.password = '';
    }
    return parsed.toString();
  } catch {
    return '[unparsable redis url]';
  }
}

/**
 * ioredis, loaded when a config first names a Redis store: most gateways have none, and loading it costs every start
 * (about 0.09 s of CPU and its modules' heap). It is CommonJS, so a synchronous require serves the connection's
 * constructor.
 */
let ioredis: typeof import('ioredis') | undefined;
function redisClient(): typeof Redis {
  return (ioredis ??= createRequire(import.meta.url)('ioredis') as typeof import('ioredis')).Redis;
}

/** One Redis connection, shared by every bucket that names its url, plus its outage state. */
class StoreConnection {
  readonly redis: Redis;
  readonly description: string;
  /** Set while calls fail; cleared by the first success, so each outage is reported once. */
  failing = false;
  #everReady = false;
  #firstConnect: Promise<void> | undefined;

  constructor(url: string) {
    this.description = redactRedisUrl(url);
    this.redis = new (redisClient())(url, {
      lazyConnect: true,
      // A dead Redis must refuse at once, never hold calls in a queue.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 2_000,
      // Keep trying in the background, at most once a second, so recovery is noticed quickly.
      retryStrategy: (times) => Math.min(times * 100, 1_000),
    });
    this.redis.defineCommand(COMMAND, { numberOfKeys: 1, lua: TAKE_SCRIPT });
    this.redis.on('ready', () => {
      this.#everReady = true;
    });
    // Connection errors surface as failed calls (reported once per outage); without a
    // listener ioredis would print each reconnect attempt to the console.
    this.redis.on('error', () => {});
  }

  /**
   * Resolves when commands can be sent. Only the very first connection is
   * waited for (bounded by the caller's deadline); a client that is
   * reconnecting fails the call at once rather than add latency to every
   * call of an outage.
   */
  async whenUsable(): Promise<void> {
    const status = this.redis.status;
    if (status === 'ready') return;
    if (status === 'wait') {
      this.#firstConnect = this.redis.connect();
      this.#firstConnect.catch(() => {});
    }
    const firstAttempt = status === 'wait' || status === 'connecting' || status === 'connect';
    if (this.#firstConnect && !this.#everReady && firstAttempt) return this.#firstConnect;
    throw new RateStoreError(`redis not connected (${status})`);
  }
}

/** One ioredis client per distinct url, created on first use; owned by one gateway. */
export class RedisClients {
  readonly #byUrl = new Map<string, StoreConnection>();
  #closed = false;

  connection(url: string): StoreConnection {
    let conn = this.#byUrl.get(url);
    if (!conn) {
      if (this.#closed) throw new RateStoreError('redis clients already closed');
      conn = new StoreConnection(url);
      this.#byUrl.set(url, conn);
    }
    return conn;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#byUrl.values()];
    this.#byUrl.clear();
    await Promise.all(
      all.map(async (conn) => {
        // quit() waits for Redis to answer; a dead server would hold shutdown, so disconnect then.
        if (conn.redis.status === 'ready') await conn.redis.quit().catch(() => conn.redis.disconnect());
        else conn.redis.disconnect();
      }),
    );
  }
}

export interface RedisBucketOptions {
  readonly perSecond: number;
  readonly burst: number;
  readonly store: Readonly<RateLimitStore>;
  /** The remote's name: the bucket key is keyPrefix + remote. */
  readonly remote: string;
  /** Called once at the start of each outage (the call was allowed anyway). */
  readonly onError?: (err: Error, store: string) => void;
}

const TAKEN: TakeResult = Object.freeze({ ok: true });

export class RedisTokenBucket {
  readonly #conn: StoreConnection;
  readonly #key: string;
  readonly #args: readonly [string, string, string];
  readonly #timeoutMs: number;
  readonly #onError: ((err: Error, store: string) => void) | undefined;

  constructor(opts: RedisBucketOptions, clients: RedisClients) {
    if (!Number.isFinite(opts.perSecond) || opts.perSecond <= 0) throw new RangeError('RedisTokenBucket: perSecond must be a finite number > 0');
    if (!Number.isFinite(opts.burst) || opts.burst < 1) throw new RangeError('RedisTokenBucket: burst must be a finite number >= 1');
    this.#conn = clients.connection(opts.store.url);
    this.#key = (opts.store.keyPrefix ?? DEFAULT_KEY_PREFIX) + opts.remote;
    // After a full refill the hash says nothing a missing key would not: let Redis drop it then.
    const ttlMs = Math.ceil((opts.burst / opts.perSecond) * 1000) + 1_000;
    this.#args = [String(opts.perSecond), String(opts.burst), String(ttlMs)];
    this.#timeoutMs = opts.store.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
    this.#onError = opts.onError;
  }

  /** The store's url without credentials. */
  get description(): string {
    return this.#conn.description;
  }

  /** Takes one token from the shared bucket; allows the call if the store cannot answer in time. */
  async tryTake(): Promise<TakeResult> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RateStoreError(`redis did not answer within ${this.#timeoutMs} ms`)), this.#timeoutMs);
    });
    try {
      const [ok, retryAfterMs] = await Promise.race([this.#take(), deadline]);
      this.#conn.failing = false;
      return ok === 1 ? TAKEN : { ok: false, retryAfterMs: Math.max(1, retryAfterMs) };
    } catch (err) {
      if (!this.#conn.failing) {
        this.#conn.failing = true;
        this.#onError?.(err instanceof Error ? err : new RateStoreError(String(err)), this.#conn.description);
      }
      return TAKEN;
    } finally {
      clearTimeout(timer);
    }
  }

  async #take(): Promise<[number, number]> {
    await this.#conn.whenUsable();
    const [perSecond, burst, ttlMs] = this.#args;
    return (this.#conn.redis as unknown as TakeCommand)[COMMAND](this.#key, perSecond, burst, ttlMs);
  }
}
