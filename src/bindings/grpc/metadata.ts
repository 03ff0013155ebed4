/**
 * gRPC metadata at both edges, pure. A2A service parameters travel as the
 * metadata keys `a2a-version` and `a2a-extensions` (spec §10.2); they and the
 * caller headers policy forwards are the only caller metadata that crosses,
 * and a remote's response metadata is cut to the §10.2 keys, validated like
 * the HTTP paths' A2A headers.
 */
import type { A2ACall, ServiceParams } from '../../core/call.js';
import { buildUpstreamHeaders, filterUpstreamResponseHeaders } from '../../policy/header-policy.js';

/** Metadata values as grpc-js hands them over (`Metadata.getMap()`): binary keys end in -bin. */
export type MetadataMap = Readonly<Record<string, string | Buffer | undefined>>;

/** Keys gRPC itself owns: never taken from a caller, a remote's config or a credential. */
const RESERVED = /^(:|grpc-)|^(content-type|te|user-agent|host|content-length|connection|x-a2a-extensions)$/;
const A2A_KEYS = new Set(['a2a-version', 'a2a-extensions']);

/** Service parameters and forwarded metadata from a gRPC caller, validated by the same rules as HTTP headers. */
export function serviceParamsFromMetadata(metadata: MetadataMap, forwardHeaders: readonly string[]): ServiceParams {
  const text: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata)) {
    if (typeof value === 'string' && !key.endsWith('-bin')) text[key.toLowerCase()] = value;
  }
  const a2a = filterUpstreamResponseHeaders({ 'a2a-version': text['a2a-version'], 'a2a-extensions': text['a2a-extensions'] });
  const forwarded: Record<string, string> = {};
  for (const [key, value] of Object.entries(buildUpstreamHeaders(text, { forwardHeaders }))) {
    if (!A2A_KEYS.has(key) && !RESERVED.test(key)) forwarded[key] = value;
  }
  return {
    ...(a2a['a2a-version'] !== undefined ? { a2aVersion: a2a['a2a-version'] } : {}),
    ...(a2a['a2a-extensions'] !== undefined ? { extensions: a2a['a2a-extensions'] } : {}),
    forwarded,
  };
}

/**
 * The request headers of one upstream gRPC call besides the pseudo-headers:
 * the protocol's own, the service parameters, forwarded caller headers, the
 * request id and the remote's credentials (credentials win over anything a
 * caller forwarded under the same name).
 */
export function upstreamRequestHeaders(call: A2ACall, credentials: Readonly<Record<string, string>>, timeoutMs: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(call.service.forwarded)) {
    if (!RESERVED.test(key) && !A2A_KEYS.has(key)) out[key] = value;
  }
  if (call.service.a2aVersion !== undefined) out['a2a-version'] = call.service.a2aVersion;
  if (call.service.extensions !== undefined) out['a2a-extensions'] = call.service.extensions;
  out['x-request-id'] = call.caller.requestId;
  for (const [key, value] of Object.entries(credentials)) {
    const lower = key.toLowerCase();
    if (!RESERVED.test(lower)) out[lower] = value;
  }
  out['content-type'] = 'application/grpc+proto';
  out.te = 'trailers';
  // The gateway decodes no compression: say so, and treat a compressed message as a protocol violation.
  out['grpc-accept-encoding'] = 'identity';
  out['grpc-timeout'] = grpcTimeout(timeoutMs);
  out['user-agent'] = 'a2a-egress';
  return out;
}

/** A remote's response metadata a caller may see: `a2a-version` and `a2a-extensions`, validated. */
export function allowedResponseMetadata(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
  const out = filterUpstreamResponseHeaders({ 'a2a-version': headers['a2a-version'], 'a2a-extensions': headers['a2a-extensions'] });
  return out;
}

/** grpc-timeout: at most 8 digits and a unit (gRPC over HTTP/2, "Timeout"). */
export function grpcTimeout(ms: number): string {
  const whole = Math.max(1, Math.ceil(ms));
  if (whole < 1e8) return `${whole}m`;
  const seconds = Math.ceil(whole / 1000);
  return seconds < 1e8 ? `${seconds}S` : `${Math.min(Math.ceil(seconds / 3600), 99_999_999)}H`;
}

/**
 * grpc-message is percent-encoded UTF-8 (gRPC over HTTP/2, "Status-Message");
 * an invalid escape is kept literally, as the protocol asks, rather than failing.
 */
export function decodeGrpcMessage(raw: string): string {
  if (!raw.includes('%')) return raw;
  const parts: Buffer[] = [];
  let last = 0;
  for (const match of raw.matchAll(/%[0-9A-Fa-f]{2}/g)) {
    parts.push(Buffer.from(raw.slice(last, match.index), 'utf8'), Buffer.from([parseInt(match[0].slice(1), 16)]));
    last = match.index + 3;
  }
  parts.push(Buffer.from(raw.slice(last), 'utf8'));
  return Buffer.concat(parts).toString('utf8');
}
