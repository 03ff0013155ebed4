/**
 * The version bridge on the JSON-RPC call path (issue 17): a caller of one A2A
 * generation calling a remote that speaks only the other is translated both
 * ways with the pure translators of src/a2a/bridge/. This module decides
 * (planVersionBridge), rewrites the request (method, params, A2A-Version
 * upstream) and the reply (results, stream events). Errors need no step here:
 * the normalizer already shapes every error for the caller's generation
 * (error.data with A2A's ErrorInfo for 1.0 callers only; the codes are the
 * same numbers in both generations).
 *
 * Same generation (or nothing known about the remote): no plan, the fast path
 * forwards the caller's bytes unchanged. Translation runs on normalized
 * (sanitized, redacted) values only, and its output meets the same byte bounds
 * as the remote's reply would: it never adds remote text, so redaction holds.
 */
import { bridgeParams } from '../a2a/bridge/index.js';
import { translateResult, type BridgedGenerations, type TranslatedResult } from '../a2a/bridge/translate-result.js';
import { operationForJsonRpcMethod, type ProtocolGeneration } from '../a2a/operations.js';
import { BRIDGED_GENERATIONS } from '../a2a/remote-versions.js';
import { a2aVersionOf } from '../a2a/version.js';
import { Code, type CallerGeneration, type Reason } from '../envelope/codes.js';
import { serializeResultJson } from '../envelope/envelope.js';
import { failureEnvelope, type Normalized } from '../envelope/normalize.js';
import type { CallerRequest } from '../jsonrpc/caller-request.js';

/** The A2A-Version header the gateway sends a remote it translates for. */
const UPSTREAM_VERSION: Readonly<Record<ProtocolGeneration, string>> = { '0.3': '0.3', '1.0': '1.0' };

/** A call that crosses generations. */
export interface VersionBridge extends BridgedGenerations {
  /** The translated request: the caller's id, the remote's method name, new bytes. */
  readonly call: CallerRequest;
  /** What the request translation dropped (labels: member paths, never values). */
  readonly dropped: readonly string[];
}

export type BridgePlan =
  | { readonly kind: 'direct' }
  | { readonly kind: 'bridge'; readonly bridge: VersionBridge }
  | { readonly kind: 'refuse'; readonly reason: Reason; readonly detail: string };

const DIRECT: BridgePlan = { kind: 'direct' };

/**
 * `a2aVersion`: the caller's A2A-Version (header, else the query parameter).
 * `remoteVersions`: what the remote speaks (config or card); undefined: unknown, the call goes through unchanged.
 */
export function planVersionBridge(
  call: CallerRequest,
  a2aVersion: string | string[] | undefined,
  remoteVersions: readonly ProtocolGeneration[] | undefined,
  maxRequestBytes: number,
): BridgePlan {
  if (remoteVersions === undefined || remoteVersions.length === 0) return DIRECT;
  const resolved = operationForJsonRpcMethod(call.method);
  if (!resolved) return DIRECT;
  // The method name says the caller's generation; the header may only ask for a version someone here serves.
  const asked = a2aVersionOf(a2aVersion);
  if (asked === undefined || !(BRIDGED_GENERATIONS as readonly string[]).includes(asked)) {
    // Built only here: the common path reads no more than the version.
    const supported = [...new Set([...BRIDGED_GENERATIONS, ...remoteVersions])].join(', ');
    const what = asked === undefined ? 'A2A-Version is not one Major.Minor version' : `A2A-Version ${asked}`;
    return { kind: 'refuse', reason: 'VERSION_NOT_SUPPORTED', detail: `${what}; supported: ${supported}` };
  }
  const caller = resolved.generation;
  if (remoteVersions.includes(caller)) return DIRECT;
  const remote = remoteVersions[0]!;
  const method = resolved.operation.jsonrpc[remote];
  const params = bridgeParams(resolved.operation, caller, remote, call.params);
  if (!params.ok || method === undefined) {
    const problem = params.ok ? `${resolved.operation.name} does not exist in A2A ${remote}` : params.problem;
    return { kind: 'refuse', reason: params.ok || params.code === Code.UnsupportedOperation ? 'NO_COUNTERPART' : 'INVALID_PARAMS', detail: problem };
  }
  const raw = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: call.id, method, params: params.value }));
  // The remote's request bound holds for what the gateway sends it, not only for what the caller sent.
  if (raw.length > maxRequestBytes) return { kind: 'refuse', reason: 'REQUEST_TOO_LARGE', detail: `more than ${maxRequestBytes} bytes once translated to A2A ${remote}` };
  return {
    kind: 'bridge',
    bridge: { operation: resolved.operation, caller, remote, call: { id: call.id, method, raw, params: params.value }, dropped: params.dropped },
  };
}

/** The upstream request headers with A2A-Version set to what the remote speaks. */
export function withUpstreamVersion(headers: Record<string, string>, bridge: VersionBridge | undefined): Record<string, string> {
  if (bridge === undefined) return headers;
  headers['a2a-version'] = UPSTREAM_VERSION[bridge.remote];
  return headers;
}

export interface BridgeReplyContext {
  readonly remote: string;
  readonly caller: CallerGeneration;
  /** The byte bound the translated envelope must meet (the remote's maxResponseBytes). */
  readonly maxBytes: number;
  /** Told what a translation dropped (count and log; labels only). */
  readonly onDropped: (direction: 'response' | 'event', labels: readonly string[]) => void;
}

/** A unary reply (or a streaming call's one envelope) as the caller's generation writes it. */
export function bridgeReply(bridge: VersionBridge, normalized: Normalized, bridging: BridgeReplyContext): Normalized {
  if (normalized.outcome !== 'ok') return normalized;
  const translated = translateResult(bridge, normalized.result, bridging, 'response');
  const failCtx = { remote: bridging.remote, httpStatus: 200, caller: bridging.caller };
  if (!translated.ok) return keepRedactions(failureEnvelope(bridge.call.id, translated.reason, failCtx, translated.detail), normalized);
  const json = serializeResultJson(bridge.call.id, JSON.stringify(translated.result));
  if (Buffer.byteLength(json) > bridging.maxBytes) {
    return keepRedactions(failureEnvelope(bridge.call.id, 'RESPONSE_TOO_LARGE', failCtx, `more than ${bridging.maxBytes} bytes once translated to A2A ${bridge.caller}`), normalized);
  }
  return keepRedactions({ json, outcome: 'ok', result: translated.result }, normalized);
}

// Shared with the binding runner (core/call-bridge.ts), so it lives beside the translators.
export { translateResult, type TranslatedResult };

function keepRedactions(next: Normalized, before: Normalized): Normalized {
  return before.redactions ? { ...next, redactions: before.redactions } : next;
}

const LABEL_CHARS = /[^A-Za-z0-9_.[\]*@-]/g;
const MAX_LABEL_LENGTH = 64;

/**
 * Counts what a translation dropped (`a2a_egress_bridge_dropped_total{remote,direction}`) and logs it: member
 * paths only, never values; a member name is caller or remote text, so each label is bounded and reduced to
 * name characters.
 */
export function reportDropped(
  metrics: { readonly bridgeDropped: { inc(labels: { remote: string; direction: string }, value: number): void } },
  log: { info(obj: object, msg: string): void },
  requestId: string,
  remote: string,
  /** Undefined for a card (no request side; the log names the direction only). */
  bridge: Pick<VersionBridge, 'caller' | 'remote'> | undefined,
  direction: 'request' | 'response' | 'event' | 'card',
  labels: readonly string[],
): void {
  if (labels.length === 0) return;
  metrics.bridgeDropped.inc({ remote, direction }, labels.length);
  const dropped = labels.map((label) => label.slice(0, MAX_LABEL_LENGTH).replace(LABEL_CHARS, '?'));
  const generations = bridge === undefined ? {} : direction === 'request' ? { from: bridge.caller, to: bridge.remote } : { from: bridge.remote, to: bridge.caller };
  log.info({ requestId, remote, bridge: { ...generations, direction, dropped } }, 'version bridge dropped members without a counterpart');
}

/**
 * A 0.3 caller of a streaming method whose 1.0 remote answered one JSON-RPC error instead of a stream: A2A 0.3
 * servers send such errors as an event of the stream (the @a2a-js/sdk 0.3 server runs tasks/resubscribe as a
 * generator, so TaskNotFound arrives after the stream opened; the a2a-tck 0.3 expects text/event-stream, and the
 * 0.3 SDK client reads a JSON body to message/stream as a transport failure and loses the code). True when the
 * envelope is to go as a one-event stream.
 */
export function errorAsEventStream(bridge: VersionBridge | undefined, answeredUpstream: boolean, normalized: Normalized): boolean {
  return bridge !== undefined && bridge.caller === '0.3' && bridge.operation.streaming && answeredUpstream && normalized.outcome !== 'ok';
}
