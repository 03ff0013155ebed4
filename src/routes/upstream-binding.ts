/**
 * Which binding the gateway speaks to a remote, and at what URL
 * (`remotes.<name>.binding`):
 *  - `jsonrpc`, `http+json`: that binding at the configured `url`;
 *  - `auto`: for HTTP+JSON callers, the first interface in the remote card's
 *    order (1.0 supportedInterfaces; 0.3 url/preferredTransport then
 *    additionalInterfaces) that the gateway carries and that is on the origin
 *    of `url` (the pool and the egress guard are per origin); JSON-RPC at
 *    `url` when the card cannot be had or offers neither. JSON-RPC callers
 *    keep JSON-RPC at `url` (their fast path: no card fetch before a call).
 */
import type { Binding } from '../core/call.js';
import type { ErrorOutcome } from '../core/outcome.js';
import type { UpstreamCodec } from '../core/upstream-codec.js';
import type { RemoteConfig } from '../config/schema.js';
import { httpJsonUpstreamCodec } from '../bindings/http-json/upstream-codec.js';
import { jsonRpcUpstreamCodec } from '../bindings/jsonrpc/upstream-codec.js';
import type { GatewayContext } from '../proxy/context.js';

export interface UpstreamTarget {
  readonly codec: UpstreamCodec;
  readonly base: URL;
}

export type UpstreamChoice = { readonly ok: true; readonly target: UpstreamTarget } | { readonly ok: false; readonly error: ErrorOutcome };


export async function upstreamTargetFor(ctx: GatewayContext, remote: RemoteConfig, caller: Binding): Promise<UpstreamChoice> {
  const cardInterfaces = ctx.cardInterfaces;
  if (remote.binding === 'http+json') return { ok: true, target: { codec: httpJsonUpstreamCodec, base: remote.url } };
  if (remote.binding === 'jsonrpc' || caller === 'jsonrpc' || cardInterfaces === undefined) return { ok: true, target: { codec: jsonRpcUpstreamCodec, base: remote.url } };
  const interfaces = await cardInterfaces(remote).catch(() => undefined);
  for (const entry of interfaces ?? []) {
    if (entry.binding !== 'JSONRPC' && entry.binding !== 'HTTP+JSON') continue;
    let url: URL;
    try {
      url = new URL(entry.url);
    } catch {
      continue;
    }
    if (url.origin !== remote.url.origin) continue;
    return { ok: true, target: { codec: entry.binding === 'HTTP+JSON' ? httpJsonUpstreamCodec : jsonRpcUpstreamCodec, base: entry.binding === 'JSONRPC' ? remote.url : url } };
  }
  return { ok: true, target: { codec: jsonRpcUpstreamCodec, base: remote.url } };
}
