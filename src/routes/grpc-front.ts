/**
 * Everything gRPC the gateway assembles, in one place so server.ts only
 * starts, reloads and stops it: the listeners callers use
 * (./grpc-listeners.ts), the handler that runs each call through the
 * gateway's policy (proxy/grpc-call.ts), the remotes' gRPC clients
 * (proxy/grpc-upstreams.ts), and what the card routes need to keep a
 * remote's gRPC interfaces (pointing at its own gRPC listener).
 */
import type { Logger } from 'pino';
import type { CardCache, ValidCard } from '../a2a/card-cache.js';
import type { FetchCard } from '../cards/card-fetch.js';
import type { GrpcCardOptions } from '../bindings/grpc/card-interfaces.js';
import { parseGrpcTarget } from '../bindings/grpc/target.js';
import type { GatewayConfig, RemoteConfig } from '../config/schema.js';
import type { CallerCheck } from '../policy/caller-auth.js';
import type { RemoteRuntime } from '../policy/remote-runtime.js';
import type { GatewayContext } from '../proxy/context.js';
import { grpcCardRewrite } from '../proxy/grpc-card.js';
import { createGrpcCallHandler, type GrpcCallHandler } from '../proxy/grpc-call.js';
import { GrpcUpstreamClients, grpcInterfaceOf } from '../proxy/grpc-upstreams.js';
import { cardCacheKey } from './agent-card.js';
import { createGrpcTranscoder } from './grpc-transcode.js';
import { GrpcListeners, type GrpcAddresses } from './grpc-listeners.js';

export interface GrpcFrontOptions {
  readonly ctx: GatewayContext;
  readonly logger: Logger;
  readonly initial: GatewayConfig;
  readonly runtime: (remote: string) => RemoteRuntime | undefined;
  readonly callerAuth: () => CallerCheck | undefined;
  readonly cardCache: CardCache<ValidCard>;
  readonly fetchCard: FetchCard;
  /** The shared HTTP listener's base URL (for the JSON-RPC interfaces of an extended card), once it listens. */
  readonly httpBaseUrl: () => string;
}

export interface GrpcFront {
  /** Calls to remotes over gRPC with the gateway's policy, also for callers of the HTTP bindings (`binding: grpc`). */
  readonly calls: GrpcCallHandler;
  /** Binds the listeners the config asks for; undefined when it asks for none. */
  start(config: GatewayConfig): Promise<GrpcAddresses | undefined>;
  /** For the card routes: the remote's gRPC interfaces as the gateway serves them, or undefined. */
  cardOptions(remote: RemoteConfig, card: Record<string, unknown>): Omit<GrpcCardOptions, 'maxCardTextBytes'> | undefined;
  /** After a reload: clients of removed remotes are closed. */
  reloaded(next: GatewayConfig): void;
  /** GOAWAY to callers; calls in flight may run `graceMs`, then are cancelled. */
  close(graceMs: number): Promise<void>;
  /** After close: the remotes' connections go. */
  destroy(): void;
}

export function createGrpcFront(opts: GrpcFrontOptions): GrpcFront {
  const { ctx, logger } = opts;
  const upstreams = new GrpcUpstreamClients({ runtime: opts.runtime, cardCache: opts.cardCache, fetchCard: opts.fetchCard, cardKey: cardCacheKey });
  const rewriteCard = grpcCardRewrite({
    config: () => ctx.config(),
    gatewayTargetOf: (name): string | undefined => listeners?.cardTargetOf(name),
    jsonRpcBaseOf: (name) => `${ctx.config().server.publicBaseUrl?.replace(/\/+$/, '') ?? opts.httpBaseUrl()}/remotes/${encodeURIComponent(name)}/`,
  });
  const handler = createGrpcCallHandler({
    ctx,
    logger,
    upstreams,
    rewriteCard,
    // A remote without a gRPC endpoint is called over its JSON binding through the call runner.
    transcode: createGrpcTranscoder({ ctx, logger, rewriteCard }),
  });
  const listeners: GrpcListeners | undefined = GrpcListeners.wanted(opts.initial)
    ? new GrpcListeners({ ctx, logger, callerAuth: opts.callerAuth, handler })
    : undefined;
  return {
    calls: handler,
    start: async (config) => (listeners ? listeners.start(config) : undefined),
    cardOptions(remote, card) {
      const gatewayTarget = listeners?.cardTargetOf(remote.name);
      if (gatewayTarget === undefined) return undefined;
      const defaultTls = remote.url.protocol === 'https:';
      const target = remote.grpc?.target ?? grpcInterfaceOf(card, remote.url.hostname, defaultTls);
      // With advertiseBindings the gateway's gRPC listener is listed also for a remote without gRPC (transcoded).
      return { gatewayTarget, advertise: remote.advertiseBindings, ...(target !== undefined ? { remoteTarget: parseGrpcTarget(target, defaultTls) } : {}) };
    },
    reloaded: (next) => upstreams.retain(new Set(next.remotes.keys())),
    close: (graceMs) => listeners?.close(graceMs) ?? Promise.resolve(),
    destroy: () => upstreams.destroy(),
  };
}
