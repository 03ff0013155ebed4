/**
 * One undici connection pool per remote, built from that remote's policy:
 * connect timeout, the egress guard on every socket, TLS settings. Pools are
 * created lazily and closed with the gateway.
 */
import { Pool, type Dispatcher } from 'undici';
import type { RemoteConfig } from '../config/schema.js';
import { guardedLookup, type LookupFunction } from './egress.js';

export interface PoolOptions {
  /** Replaces the system resolver (tests play a rebinding DNS with it). */
  readonly resolver?: LookupFunction;
}

export class UpstreamPools {
  readonly #pools = new Map<string, Pool>();

  constructor(private readonly options: PoolOptions = {}) {}

  get(remote: RemoteConfig): Dispatcher {
    let pool = this.#pools.get(remote.name);
    if (!pool) {
      pool = new Pool(remote.url.origin, {
        connect: {
          timeout: remote.timeouts.connectMs,
          lookup: guardedLookup(remote.allowPrivateNetwork, this.options.resolver),
          ...remote.tls,
        },
        headersTimeout: remote.timeouts.headersMs,
        // Body deadlines are the gateway's own (total deadline for unary, idle timers for streams).
        bodyTimeout: 0,
        connections: remote.maxConnections,
        maxHeaderSize: 32 * 1024,
        keepAliveTimeout: 4_000,
      });
      this.#pools.set(remote.name, pool);
    }
    return pool;
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.allSettled(pools.map((p) => p.destroy()));
  }
}
