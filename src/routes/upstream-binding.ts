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
import type { CardInterfaces, GatewayContext } from '../proxy/context.js';
import type { CardInterface } from './remote-card-interfaces.js';

export interface UpstreamTarget {
  readonly codec: UpstreamCodec;
  readonly base: URL;
}

export type UpstreamChoice = { readonly ok: true; readonly target: UpstreamTarget } | { readonly ok: false; readonly error: ErrorOutcome };


/** The fixed choices, one object per remote config (not rebuilt per call). */
const fixedTargets = new WeakMap<RemoteConfig, { readonly rest: UpstreamChoice; readonly jsonrpc: UpstreamChoice }>();
/** The choice `auto` made from a card's interfaces, kept while the cache hands out the same card. */
const cardTargets = new WeakMap<RemoteConfig, { readonly interfaces: readonly CardInterface[]; readonly choice: UpstreamChoice }>();

function fixedFor(remote: RemoteConfig): { readonly rest: UpstreamChoice; readonly jsonrpc: UpstreamChoice } {
  let fixed = fixedTargets.get(remote);
  if (fixed === undefined) {
    fixed = {
      rest: { ok: true, target: { codec: httpJsonUpstreamCodec, base: remote.url } },
      jsonrpc: { ok: true, target: { codec: jsonRpcUpstreamCodec, base: remote.url } },
    };
    fixedTargets.set(remote, fixed);
  }
  return fixed;
}

/**
 * Synchronous unless the card must be asked for (`auto` with no fresh card in the cache): then a promise. A fixed
 * binding, JSON-RPC callers and `auto` with its card at hand cost no await, no microtask per call.
 */
export function upstreamTargetFor(ctx: GatewayContext, remote: RemoteConfig, caller: Binding): UpstreamChoice | Promise<UpstreamChoice> {
  const cardInterfaces = ctx.cardInterfaces;
  const fixed = fixedFor(remote);
  if (remote.binding === 'http+json') return fixed.rest;
  if (remote.binding === 'jsonrpc' || caller === 'jsonrpc' || cardInterfaces === undefined) return fixed.jsonrpc;
  const interfaces = cardInterfaces(remote);
  if (interfaces instanceof Promise) return interfaces.then((known) => fromCard(known, remote, fixed.jsonrpc), () => fixed.jsonrpc);
  return fromCard(interfaces, remote, fixed.jsonrpc);
}

function fromCard(interfaces: CardInterfaces, remote: RemoteConfig, fallback: UpstreamChoice): UpstreamChoice {
  if (interfaces === undefined) return fallback;
  const known = cardTargets.get(remote);
  if (known?.interfaces === interfaces) return known.choice;
  const choice = choose(remote, interfaces) ?? fallback;
  cardTargets.set(remote, { interfaces, choice });
  return choice;
}

/** The first interface of the card the gateway carries, on the remote's origin. */
function choose(remote: RemoteConfig, interfaces: readonly CardInterface[]): UpstreamChoice | undefined {
  for (const entry of interfaces) {
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
  return undefined;
}
