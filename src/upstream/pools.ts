/**
 * One undici connection pool per remote, built from that remote's policy:
 * connect timeout, the egress guard on every socket, TLS settings (every
 * request on them goes through the upstream exchange, exchange.ts, which
 * checks each response head's framing). A remote whose agent card lives on
 * another origin gets a second pool for that origin with the same settings
 * (never a bare client). Pools are created lazily and closed with the gateway.
 */
import { Pool, type Dispatcher } from 'undici';
import type { GatewayConfig, RemoteConfig } from '../config/schema.js';
import { guardedLookup, type LookupFunction } from './egress.js';

export interface PoolOptions {
  /** Replaces the system resolver (tests play a rebinding DNS with it). */
  readonly resolver?: LookupFunction;
}

interface PoolEntry {
  readonly remote: string;
  readonly origin: string;
  readonly pool: Dispatcher;
}

export class UpstreamPools {
  readonly #pools = new Map<string, PoolEntry>();

  constructor(private readonly options: PoolOptions = {}) {}

  /** The pool for `origin` (default: the remote's own) with the remote's connection settings. */
  get(remote: RemoteConfig, origin?: string): Dispatcher {
    // The remote's own pool is found by name alone: URL#origin makes a new string on every read (once per call).
    const own = origin === undefined || origin === remote.url.origin;
    const key = own ? remote.name : `${remote.name} ${origin}`;
    let entry = this.#pools.get(key);
    if (!entry) {
      const poolOrigin = own ? remote.url.origin : origin;
      const pool = new Pool(poolOrigin, {
        connect: {
          timeout: remote.timeouts.connectMs,
          lookup: guardedLookup(remote.allowPrivateNetwork, this.options.resolver),
          ...remote.tls,
        },
        // A backstop only: the call path keeps its own exact headers deadline.
        headersTimeout: remote.timeouts.headersMs + 1_000,
        // Body deadlines are the gateway's own (total deadline for unary, idle timers for streams).
        bodyTimeout: 0,
        connections: remote.maxUpstreamConnections,
        maxHeaderSize: 32 * 1024,
        keepAliveTimeout: 4_000,
      });
      entry = { remote: remote.name, origin: poolOrigin, pool };
      this.#pools.set(key, entry);
    }
    return entry.pool;
  }

  /**
   * After a reload: pools of remotes that are gone or whose connection
   * settings changed are removed (new calls get a fresh pool) and closed
   * gracefully, so requests already on them finish.
   */
  retire(previous: GatewayConfig, next: GatewayConfig): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const [key, { remote, origin, pool }] of this.#pools) {
      const before = previous.remotes.get(remote);
      const after = next.remotes.get(remote);
      // A card pool stays only while its origin is still where the remote's card is.
      const originKept = origin === after?.url.origin || origin === after?.agentCardUrl?.origin;
      if (after && before && originKept && connectionKey(before) === connectionKey(after)) continue;
      this.#pools.delete(key);
      closing.push(pool.close().catch(() => undefined));
    }
    return Promise.all(closing).then(() => undefined);
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.allSettled(pools.map((p) => p.pool.destroy()));
  }
}

function connectionKey(remote: RemoteConfig): string {
  const tls = remote.tls;
  return JSON.stringify([
    remote.url.origin,
    remote.allowPrivateNetwork,
    remote.maxUpstreamConnections,
    remote.timeouts.connectMs,
    remote.timeouts.headersMs,
    tls.minVersion,
    tls.ca?.toString('base64'),
    tls.cert?.toString('base64'),
    tls.key?.toString('base64'),
  ]);
}
