/**
 * The version bridge (issue 17) on the binding-neutral call runner: a caller
 * of one A2A generation (an HTTP+JSON or gRPC caller speaks 1.0) calling a
 * remote whose JSON-RPC speaks only the other. The A2ACall is translated
 * before the runner sees it (operation kept; generation, params and the
 * A2A-Version service parameter become the remote's, so the upstream codec
 * writes the remote's method name and header), and each result or stream
 * item is translated back after normalization, validateResults and
 * redaction (RunTarget.rewriteResult / rewriteItem), within the same byte
 * bounds the remote's reply had to meet. Errors need no step: an
 * ErrorOutcome is binding- and generation-neutral (the codes are the same
 * numbers in both generations; the caller's codec writes its own shape).
 *
 * The translators and the refusal rules are the JSON-RPC path's
 * (proxy/version-bridge.ts, a2a/bridge/): one bridge, two entry points.
 * Pure: the caller hands in how errors are built and where drops are told.
 */
import { bridgeParams } from '../a2a/bridge/index.js';
import type { ProtocolGeneration } from '../a2a/operations.js';
import { BRIDGED_GENERATIONS } from '../a2a/remote-versions.js';
import { a2aVersionOf } from '../a2a/version.js';
import { Code, type Reason } from '../envelope/codes.js';
import { translateResult, type BridgedGenerations } from '../a2a/bridge/translate-result.js';
import type { A2ACall } from './call.js';
import type { ErrorOutcome, Outcome, ResultOutcome, StreamItem } from './outcome.js';

/** What a bridged call crosses: the shape translateResult and reportDropped read. */
export interface CallBridge extends BridgedGenerations {
  /** What the request translation dropped (labels: member paths, never values). */
  readonly dropped: readonly string[];
}

export type CallBridgePlan =
  | { readonly kind: 'direct' }
  | { readonly kind: 'bridge'; readonly bridge: CallBridge; readonly call: A2ACall }
  | { readonly kind: 'refuse'; readonly reason: Reason; readonly detail: string };

const DIRECT: CallBridgePlan = { kind: 'direct' };

/**
 * `remoteVersions`: what the remote speaks over JSON-RPC (config, else its card); undefined or empty: unknown,
 * the call goes as it is. Same decisions as planVersionBridge: an A2A-Version neither side serves is
 * VERSION_NOT_SUPPORTED naming the supported ones; an operation the remote's generation lacks is NO_COUNTERPART
 * (nothing is sent upstream); params that cannot be translated are INVALID_PARAMS.
 */
export function planCallBridge(call: A2ACall, remoteVersions: readonly ProtocolGeneration[] | undefined): CallBridgePlan {
  if (remoteVersions === undefined || remoteVersions.length === 0) return DIRECT;
  const asked = a2aVersionOf(call.service.a2aVersion);
  if (asked === undefined || !(BRIDGED_GENERATIONS as readonly string[]).includes(asked)) {
    const supported = [...new Set([...BRIDGED_GENERATIONS, ...remoteVersions])].join(', ');
    const what = asked === undefined ? 'A2A-Version is not one Major.Minor version' : `A2A-Version ${asked}`;
    return { kind: 'refuse', reason: 'VERSION_NOT_SUPPORTED', detail: `${what}; supported: ${supported}` };
  }
  const caller = call.generation;
  if (remoteVersions.includes(caller)) return DIRECT;
  const remote = remoteVersions[0]!;
  const { operation } = call;
  const params = bridgeParams(operation, caller, remote, call.params);
  if (!params.ok || operation.jsonrpc[remote] === undefined) {
    const problem = params.ok ? `${operation.name} does not exist in A2A ${remote}` : params.problem;
    return { kind: 'refuse', reason: params.ok || params.code === Code.UnsupportedOperation ? 'NO_COUNTERPART' : 'INVALID_PARAMS', detail: problem };
  }
  // The caller's raw JSON-RPC body (if any) is of the caller's generation: the codec must build the remote's.
  const { rawJsonRpcBody: _caller, ...rest } = call;
  const translated: A2ACall = {
    ...rest,
    generation: remote,
    params: params.value,
    paramsJson: JSON.stringify(params.value),
    service: { ...call.service, a2aVersion: remote },
  };
  return { kind: 'bridge', bridge: { operation, caller, remote, dropped: params.dropped }, call: translated };
}

export interface BridgeStageContext {
  /** A gateway error for this call (remote and upstream status filled in by the caller). */
  readonly gatewayError: (reason: Reason, detail?: string) => ErrorOutcome;
  /** Told what a translation dropped (count and log; labels only). */
  readonly onDropped: (direction: 'response' | 'event', labels: readonly string[]) => void;
}

/** A unary result in the caller's generation; it must fit `maxBytes` (the remote's maxResponseBytes) as the remote's had to. */
export function bridgeResultOutcome(bridge: CallBridge, result: ResultOutcome, maxBytes: number, bridging: BridgeStageContext): Outcome {
  const translated = translateResult(bridge, result.value, bridging, 'response');
  if (!translated.ok) return bridging.gatewayError(translated.reason, translated.detail);
  const json = JSON.stringify(translated.result);
  if (Buffer.byteLength(json) > maxBytes) return bridging.gatewayError('RESPONSE_TOO_LARGE', `more than ${maxBytes} bytes once translated to A2A ${bridge.caller}`);
  return { kind: 'result', json, value: translated.result };
}

/**
 * One stream event in the caller's generation. One the bridge cannot translate, or that outgrows `maxBytes`
 * (the remote's maxEventBytes), ends the stream with INVALID_EVENT naming the cause, as on the JSON-RPC path.
 * `invalidEvent` builds that error (with the event's index).
 */
export function bridgeStreamItem(
  bridge: CallBridge,
  item: StreamItem,
  maxBytes: number,
  bridging: Pick<BridgeStageContext, 'onDropped'> & { readonly invalidEvent: (cause: Reason, detail?: string) => ErrorOutcome },
): StreamItem {
  if (item.final) return item;
  const translated = translateResult(bridge, item.outcome.value, bridging, 'event');
  if (!translated.ok) return { outcome: bridging.invalidEvent(translated.reason, translated.detail), final: true };
  const json = JSON.stringify(translated.result);
  if (Buffer.byteLength(json) > maxBytes) return { outcome: bridging.invalidEvent('EVENT_TOO_LARGE', `more than ${maxBytes} bytes once translated to A2A ${bridge.caller}`), final: true };
  return { outcome: { kind: 'result', json, value: translated.result }, final: false };
}
