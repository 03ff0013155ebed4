/**
 * The gRPC client of each remote, kept while the settings it was built from
 * hold. The remote's gRPC endpoint is `remotes.<name>.grpc.target`, or else
 * the GRPC interface its A2A 1.0 card lists on the host of `url` (the card
 * comes from the gateway's card cache, so it is fetched once, with the
 * remote's policy, like the card callers get). A reload that changes what a
 * client depends on (target, TLS, timeouts, limits, connections, private
 * network, error data) builds a new client and closes the old one gracefully
 * (calls in flight finish on it); a remote removed by a reload loses its client.
 */
import type { RemoteConfig } from '../config/schema.js';
import type { ErrorOutcome } from '../core/outcome.js';
import type { CachedCard, CardCache, ValidCard } from '../a2a/card-cache.js';
import { CardFetchError, type FetchCard } from '../cards/card-fetch.js';
import { loadRemoteCard } from '../cards/card-source.js';
import { GrpcRemoteClient } from '../bindings/grpc/client.js';
import { gatewayFailure } from '../bindings/grpc/response-reader.js';
import { GrpcTargetError, parseGrpcTarget, type GrpcTarget } from '../bindings/grpc/target.js';
import type { RemoteRuntime } from '../policy/remote-runtime.js';
import { classifyTransportError } from '../upstream/errors.js';
import type { GrpcUpstreams } from './grpc-call.js';

export interface GrpcUpstreamOptions {
  readonly runtime: (remote: string) => RemoteRuntime | undefined;
  /** The gateway's card cache and fetch, shared with the card routes. */
  readonly cardCache: CardCache<ValidCard>;
  readonly fetchCard: FetchCard;
  /** Cache key of a remote's card asked for in a version (routes/agent-card.ts cardCacheKey). */
  readonly cardKey: (remote: string, version: string) => string;
}

interface Entry {
  readonly config: RemoteConfig;
  readonly target: string;
  readonly fingerprint: string;
  readonly client: GrpcRemoteClient;
}

// Per config object (a reload makes new ones): TLS files can be large, serialize them once.
const settingsOf = new WeakMap<RemoteConfig, string>();

/** The remote settings a client is built from: a change to any of them builds a new one. */
function fingerprintOf(remote: RemoteConfig, target: string): string {
  let settings = settingsOf.get(remote);
  if (settings === undefined) {
    const { timeouts, limits } = remote;
    settings = JSON.stringify([remote.tls, remote.allowPrivateNetwork, remote.keepRemoteErrorData, remote.maxUpstreamConnections, timeouts, limits, remote.url.protocol]);
    settingsOf.set(remote, settings);
  }
  return `${target}\u0000${settings}`;
}

/** The GRPC interface of a card on `host` (1.0 supportedInterfaces; 0.3 preferredTransport/additionalInterfaces). */
export function grpcInterfaceOf(card: Record<string, unknown>, host: string, defaultTls: boolean): string | undefined {
  const candidates: unknown[] = [];
  const supported = card.supportedInterfaces ?? card.supported_interfaces;
  if (Array.isArray(supported)) {
    for (const entry of supported) {
      const e = entry as Record<string, unknown> | null;
      if (e && (e.protocolBinding ?? e.protocol_binding) === 'GRPC') candidates.push(e.url);
    }
  }
  if (card.preferredTransport === 'GRPC') candidates.push(card.url);
  if (Array.isArray(card.additionalInterfaces)) {
    for (const entry of card.additionalInterfaces) {
      const e = entry as Record<string, unknown> | null;
      if (e?.transport === 'GRPC') candidates.push(e.url);
    }
  }
  for (const url of candidates) {
    if (typeof url !== 'string') continue;
    try {
      // Same host as the remote's configured url: a card must not send the gateway somewhere else.
      if (parseGrpcTarget(url, defaultTls).host.toLowerCase() === host.toLowerCase()) return url;
    } catch (err) {
      if (!(err instanceof GrpcTargetError)) throw err;
    }
  }
  return undefined;
}

export class GrpcUpstreamClients implements GrpcUpstreams {
  readonly #entries = new Map<string, Entry>();

  constructor(private readonly opts: GrpcUpstreamOptions) {}

  /** The target a remote's gRPC calls go to (configured, or from its card), parsed; or why there is none. */
  async targetOf(remote: RemoteConfig, signal: AbortSignal, requestId?: string): Promise<string | ErrorOutcome> {
    if (remote.grpc?.target !== undefined) return remote.grpc.target;
    let cached: CachedCard<ValidCard>;
    try {
      cached = await this.cardOf(remote, signal, requestId);
    } catch (err) {
      const reason = err instanceof CardFetchError ? err.reason : classifyTransportError(err);
      return gatewayFailure(reason, remote.name, {}, 'while reading its agent card for its gRPC interface');
    }
    const found = grpcInterfaceOf(cached.card.card, remote.url.hostname, remote.url.protocol === 'https:');
    return found ?? gatewayFailure('NO_USABLE_INTERFACE', remote.name, {}, 'its agent card lists no gRPC interface on the host of its url, and grpc.target is not set');
  }

  /**
   * Whether a gRPC caller's call to `remote` goes to the remote over gRPC: `binding: grpc` always (no endpoint is
   * then NO_USABLE_INTERFACE); `jsonrpc` or `http+json` never; `auto` when `grpc.target` is set or the remote's
   * card lists a gRPC interface on the host of its url (no transcoding when the remote speaks gRPC itself). A card
   * that cannot be had means no gRPC endpoint is known: the call is transcoded like an HTTP+JSON caller's.
   */
  async speaksGrpc(remote: RemoteConfig, signal: AbortSignal, requestId?: string): Promise<boolean> {
    if (remote.binding === 'grpc') return true;
    if (remote.binding !== 'auto') return false;
    if (remote.grpc?.target !== undefined) return true;
    return typeof (await this.targetOf(remote, signal, requestId)) === 'string';
  }

  async clientFor(remote: RemoteConfig, signal: AbortSignal, requestId?: string): Promise<GrpcRemoteClient | ErrorOutcome> {
    const entry = this.#entries.get(remote.name);
    // The common case costs one comparison: the same config object and a configured target.
    if (entry && entry.config === remote && remote.grpc?.target === entry.target) return entry.client;
    const target = await this.targetOf(remote, signal, requestId);
    if (typeof target !== 'string') return target;
    const fingerprint = fingerprintOf(remote, target);
    const current = this.#entries.get(remote.name);
    if (current && current.fingerprint === fingerprint) {
      if (current.config !== remote) this.#entries.set(remote.name, { ...current, config: remote });
      return current.client;
    }
    let parsed: GrpcTarget;
    try {
      parsed = parseGrpcTarget(target, remote.url.protocol === 'https:');
    } catch {
      return gatewayFailure('NO_USABLE_INTERFACE', remote.name, {}, 'its gRPC target is not host:port');
    }
    const client = new GrpcRemoteClient({
      remote: remote.name,
      target: parsed,
      tls: remote.tls,
      allowPrivateNetwork: remote.allowPrivateNetwork,
      keepRemoteErrorData: remote.keepRemoteErrorData,
      maxSessions: remote.maxUpstreamConnections,
      timeouts: remote.timeouts,
      limits: remote.limits,
      // Read per call from the runtime in force: a reload or a rotated token file takes effect at once.
      credentials: () => this.opts.runtime(remote.name)?.credentials?.headers() ?? {},
    });
    current?.client.close();
    this.#entries.set(remote.name, { config: remote, target, fingerprint, client });
    return client;
  }

  /** After a reload: remotes no longer configured lose their client (calls in flight finish). */
  retain(names: ReadonlySet<string>): void {
    for (const [name, entry] of this.#entries) {
      if (names.has(name)) continue;
      entry.client.close();
      this.#entries.delete(name);
    }
  }

  close(): void {
    for (const entry of this.#entries.values()) entry.client.close();
  }

  destroy(): void {
    for (const entry of this.#entries.values()) entry.client.destroy();
    this.#entries.clear();
  }

  private async cardOf(remote: RemoteConfig, signal: AbortSignal, requestId?: string): Promise<CachedCard<ValidCard>> {
    // gRPC is A2A 1.0's binding: the card is asked for (and cached) as version 1.0.
    return this.opts.cardCache.get(
      this.opts.cardKey(remote.name, '1.0'),
      // The fetch's own deadline is the remote's cardMs (cards/card-fetch.ts); the caller's signal ends it sooner.
      () => loadRemoteCard(remote, this.opts.fetchCard, signal, '1.0', requestId),
      { ttlMs: remote.timeouts.cardCacheTtlMs, staleMs: remote.timeouts.cardCacheStaleMs },
    );
  }
}
