/**
 * The extended agent card a gRPC caller gets (GetExtendedAgentCard): the
 * same rewrite and bounds as the public card (a2a/card-rewrite.ts), with
 * the remote's gRPC interfaces pointing at the gateway's gRPC listener for
 * that remote (bindings/grpc/card-interfaces.ts). A card that cannot be
 * served becomes the catalogue's error, as on the JSON-RPC path.
 */
import type { GatewayConfig, RemoteConfig } from '../config/schema.js';
import type { ErrorOutcome, ResultOutcome } from '../core/outcome.js';
import { rewriteExtendedCardResult } from '../a2a/card-rewrite.js';
import { withGrpcInterfaces } from '../bindings/grpc/card-interfaces.js';
import { gatewayFailure } from '../bindings/grpc/response-reader.js';
import { parseGrpcTarget } from '../bindings/grpc/target.js';
import { grpcInterfaceOf } from './grpc-upstreams.js';

export interface GrpcCardRewriteOptions {
  readonly config: () => GatewayConfig;
  /** `host:port` of the remote's own gRPC listener (as cards advertise it), if it has one. */
  readonly gatewayTargetOf: (remote: string) => string | undefined;
  /** The remote's JSON-RPC base URL on the gateway (for the card's JSON-RPC interfaces). */
  readonly jsonRpcBaseOf: (remote: string) => string;
}

export function grpcCardRewrite(opts: GrpcCardRewriteOptions) {
  return (remote: RemoteConfig, result: ResultOutcome): ResultOutcome | ErrorOutcome => {
    const gatewayTarget = opts.gatewayTargetOf(remote.name);
    const original = result.value as Record<string, unknown>;
    const rewritten = rewriteExtendedCardResult(original, {
      remoteUrl: remote.url,
      gatewayRemoteUrl: opts.jsonRpcBaseOf(remote.name),
      maxCardTextBytes: remote.limits.maxCardTextBytes,
      jsonRpcOptional: gatewayTarget !== undefined || remote.binding === 'grpc',
      // A remote called over gRPC is served to the HTTP bindings by transcoding: the card says so.
      ...(remote.advertiseBindings ? { httpJsonUrl: opts.jsonRpcBaseOf(remote.name).replace(/\/+$/, ''), advertise: { jsonrpc: remote.binding === 'grpc', httpJson: true } } : {}),
      pushNotifications: opts.config().server.push !== undefined,
    });
    if (!rewritten.ok) return gatewayFailure(rewritten.reason, remote.name, {}, rewritten.problem);
    let card = rewritten.card;
    if (gatewayTarget !== undefined) {
      const defaultTls = remote.url.protocol === 'https:';
      const target = remote.grpc?.target ?? grpcInterfaceOf(original, remote.url.hostname, defaultTls);
      card = withGrpcInterfaces(original, card, rewritten.generation, {
        gatewayTarget,
        advertise: remote.advertiseBindings,
        maxCardTextBytes: remote.limits.maxCardTextBytes,
        ...(target !== undefined ? { remoteTarget: parseGrpcTarget(target, defaultTls) } : {}),
      });
    }
    if (Array.isArray(card.supportedInterfaces) && card.supportedInterfaces.length === 0) {
      return gatewayFailure('NO_USABLE_INTERFACE', remote.name, {}, 'the extended card offers no interface the gateway carries');
    }
    return { kind: 'result', json: JSON.stringify(card), value: card };
  };
}
