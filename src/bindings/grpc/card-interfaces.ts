/**
 * The gRPC interfaces of a card the gateway serves. `rewriteCard`
 * (src/a2a/card-rewrite.ts) keeps only JSON-RPC interfaces; the wiring calls
 * `withGrpcInterfaces` on its output with the remote's original card, which
 * puts back every gRPC interface the gateway carries, pointing at the
 * gateway's gRPC endpoint for that remote. Pure.
 *
 * A card entry is all a stock gRPC client gets, and grpc-js clients (the
 * @a2a-js/sdk one too) use its `url` verbatim as their channel target: so the
 * gateway's entry is a bare `host:port` (the remote's own listener port, see
 * server.ts), never a URL with a path.
 *
 * Kept: 1.0 `supportedInterfaces[]` entries with protocolBinding GRPC, 0.3
 * `additionalInterfaces[]` (and a `preferredTransport` of GRPC) with transport
 * GRPC — only those whose target is the remote's configured gRPC target (the
 * same-origin rule of the JSON-RPC interfaces: another endpoint would be a
 * way around the gateway). `advertise` adds the gateway's gRPC interface
 * even when the remote has none (transcoding: the gateway serves gRPC callers
 * for any remote).
 */
import type { ProtocolGeneration } from '../../a2a/operations.js';
import { cleanText, isRecord } from '../../a2a/card-text.js';
import { MAX_INTERFACES } from '../../a2a/card-rewrite.js';
import { parseGrpcTarget, type GrpcTarget } from './target.js';

export const GRPC = 'GRPC';

export interface GrpcCardOptions {
  /** The remote's gRPC endpoint as configured (or discovered); undefined = the remote has none the gateway calls. */
  readonly remoteTarget?: GrpcTarget;
  /** Where callers reach this remote over gRPC through the gateway: `host:port`. */
  readonly gatewayTarget: string;
  /** Also advertise gRPC when the remote's card has no (usable) gRPC interface. */
  readonly advertise: boolean;
  /** The protocolVersion of an advertised interface (1.0 cards). */
  readonly protocolVersion?: string;
  readonly maxCardTextBytes: number;
}

const sameTarget = (url: unknown, remote: GrpcTarget | undefined): boolean => {
  if (remote === undefined || typeof url !== 'string') return false;
  try {
    const t = parseGrpcTarget(url, remote.tls);
    return t.host.toLowerCase() === remote.host.toLowerCase() && t.port === remote.port;
  } catch {
    return false;
  }
};

/** `rewritten` (rewriteCard's output) with the gRPC interfaces of `original` put back, rewritten to the gateway. */
export function withGrpcInterfaces(
  original: Record<string, unknown>,
  rewritten: Record<string, unknown>,
  generation: ProtocolGeneration,
  opts: GrpcCardOptions,
): Record<string, unknown> {
  return generation === '1.0' ? withV10(original, rewritten, opts) : withV03(original, rewritten, opts);
}

function withV10(original: Record<string, unknown>, rewritten: Record<string, unknown>, opts: GrpcCardOptions): Record<string, unknown> {
  const source = (original.supportedInterfaces ?? original.supported_interfaces) as unknown;
  const entries = Array.isArray(source) ? source.filter(isRecord) : [];
  const grpc = new Map<string, Record<string, unknown>>();
  let grpcRank = -1;
  entries.forEach((raw, index) => {
    const binding = raw.protocolBinding ?? raw.protocol_binding;
    if (binding !== GRPC || !sameTarget(raw.url, opts.remoteTarget)) return;
    if (grpcRank < 0) grpcRank = index;
    const entry: Record<string, unknown> = { url: opts.gatewayTarget, protocolBinding: GRPC };
    const version = cleanText(raw.protocolVersion ?? raw.protocol_version, 32);
    if (version) entry.protocolVersion = version;
    const tenant = cleanText(raw.tenant, opts.maxCardTextBytes);
    if (tenant) entry.tenant = tenant;
    grpc.set(JSON.stringify(entry), entry);
  });
  if (grpc.size === 0 && opts.advertise) {
    const entry: Record<string, unknown> = { url: opts.gatewayTarget, protocolBinding: GRPC, protocolVersion: opts.protocolVersion ?? '1.0' };
    grpc.set(JSON.stringify(entry), entry);
    grpcRank = entries.length;
  }
  if (grpc.size === 0) return rewritten;
  const others = Array.isArray(rewritten.supportedInterfaces) ? (rewritten.supportedInterfaces as unknown[]) : [];
  // The remote's preference order between bindings is kept: gRPC goes where its first entry was.
  const firstOtherRank = entries.findIndex((e) => (e.protocolBinding ?? e.protocol_binding) !== GRPC);
  const grpcFirst = firstOtherRank < 0 || (grpcRank >= 0 && grpcRank < firstOtherRank);
  const kept = [...grpc.values()].slice(0, MAX_INTERFACES);
  return { ...rewritten, supportedInterfaces: grpcFirst ? [...kept, ...others] : [...others, ...kept] };
}

function withV03(original: Record<string, unknown>, rewritten: Record<string, unknown>, opts: GrpcCardOptions): Record<string, unknown> {
  const additional = Array.isArray(original.additionalInterfaces) ? original.additionalInterfaces.filter(isRecord) : [];
  const usable =
    (original.preferredTransport === GRPC && sameTarget(original.url, opts.remoteTarget)) ||
    additional.some((i) => i.transport === GRPC && sameTarget(i.url, opts.remoteTarget));
  if (!usable && !opts.advertise) return rewritten;
  const entry = { url: opts.gatewayTarget, transport: GRPC };
  const list = Array.isArray(rewritten.additionalInterfaces) ? (rewritten.additionalInterfaces as unknown[]) : [];
  // 0.3 `url` stays the JSON-RPC one the rewrite chose; gRPC is listed among the additional interfaces.
  const jsonrpc = typeof rewritten.url === 'string' ? [{ url: rewritten.url, transport: rewritten.preferredTransport ?? 'JSONRPC' }] : [];
  const others = list.length > 0 ? list : jsonrpc;
  return { ...rewritten, additionalInterfaces: [...others, entry] };
}
