/**
 * One undici connection pool per remote, built from that remote's policy:
 * connect timeout, the egress guard on every socket, TLS settings. Pools are
 * created lazily and closed with the gateway.
 */
import { Pool, type Dispatcher } from 'undici';
import type { GatewayConfig, RemoteConfig } from '../config/schema.js';
import { guardedLookup, type LookupFunction } from './egress.js';
import { refuseUntrustedFraming } from './framing.js';

export interface PoolOptions {
  /** Replaces the system resolver (tests play a rebinding DNS with it). */
  readonly resolver?: LookupFunction;
}

export class UpstreamPools {
  readonly #pools = new Map<string, Dispatcher>();

  constructor(private readonly options: PoolOptions = {}) {}

  get(remote: RemoteConfig): Dispatcher {
    let pool = this.#pools.get(remote.name);
    if (!pool) {
      // compose() returns a proxy over the pool: close/destroy still reach it, every request passes the framing check.
      pool = new Pool(remote.url.origin, {
        connect: {
          timeout: remote.timeouts.connectMs,
          lookup: guardedLookup(remote.allowPrivateNetwork, this.options.resolver),
          ...remote.tls,
        },
        // A backstop only: the call path keeps its own exact headers deadline.
        headersTimeout: remote.timeouts.headersMs + 1_000,
        // Body deadlines are the gateway's own (total deadline for unary, idle timers for streams).
        bodyTimeout: 0,
        connections: remote.maxConnections,
        maxHeaderSize: 32 * 1024,
        keepAliveTimeout: 4_000,
      }).compose(refuseUntrustedFraming);
      this.#pools.set(remote.name, pool);
    }
    return pool;
  }

  /**
   * After a reload: pools of remotes that are gone or whose connection
   * settings changed are removed (new calls get a fresh pool) and closed
   * gracefully, so requests already on them finish.
   */
  retire(previous: GatewayConfig, next: GatewayConfig): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const [name, pool] of this.#pools) {
      const before = previous.remotes.get(name);
      const after = next.remotes.get(name);
      if (after && before && connectionKey(before) === connectionKey(after)) continue;
      this.#pools.delete(name);
      closing.push(pool.close().catch(() => undefined));
    }
    return Promise.all(closing).then(() => undefined);
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.allSettled(pools.map((p) => p.destroy()));
  }
}

function connectionKey(remote: RemoteConfig): string {
  const tls = remote.tls;
  return JSON.stringify([
    remote.url.origin,
    remote.allowPrivateNetwork,
    remote.maxConnections,
    remote.timeouts.connectMs,
    remote.timeouts.headersMs,
    tls.minVersion,
    tls.ca?.toString('base64'),
    tls.cert?.toString('base64'),
    tls.key?.toString('base64'),
  ]);
}
