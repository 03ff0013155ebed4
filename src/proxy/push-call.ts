/**
 * Push notifications on the call paths: the caller's request and the
 * remote's reply in the shapes each path carries (the JSON-RPC path's
 * CallerRequest bytes and Normalized envelope; the call runner's A2ACall and
 * Outcome, for HTTP+JSON callers and transcoded calls) handed to the
 * binding-neutral push modules (src/push/outbound.ts, src/push/reply.ts)
 * and back.
 *
 * On the way out, a call that registers a push config (both generations'
 * create-config methods, and send/stream with a config in `configuration`)
 * leaves with the gateway's webhook and minted credential in place of the
 * caller's, or is refused (PUSH_NOT_ENABLED, PUSH_TARGET_NOT_ALLOWED, ...).
 * On the way back, create/get/list results show the caller its own config.
 * No bridge runs on this path yet: the remote speaks the caller's generation.
 */
import { operationForJsonRpcMethod, type Operation, type OperationName, type ProtocolGeneration } from '../a2a/operations.js';
import type { A2ACall } from '../core/call.js';
import type { ErrorOutcome, Outcome, ResultOutcome } from '../core/outcome.js';
import type { CallerGeneration } from '../envelope/codes.js';
import { gatewayErrors } from '../envelope/codes.js';
import { serializeResultJson } from '../envelope/envelope.js';
import { failureEnvelope, type Normalized } from '../envelope/normalize.js';
import type { CallerRequest } from '../jsonrpc/caller-request.js';
import type { PushSettings } from '../push/config.js';
import { restorePushReply, rewritePushRequest } from '../push/index.js';
import type { ResultRewrite } from './upstream-reply.js';

/** Operations whose request may carry a push config. */
const CARRIES_CONFIG: ReadonlySet<OperationName> = new Set(['CreateTaskPushNotificationConfig', 'SendMessage', 'SendStreamingMessage']);
const QUOTED_CONFIGURATION = Buffer.from('"configuration"');
/** Operations whose result holds push configs. */
const RETURNS_CONFIG: ReadonlySet<OperationName> = new Set(['CreateTaskPushNotificationConfig', 'GetTaskPushNotificationConfig', 'ListTaskPushNotificationConfigs']);

export type PushCallRewrite = { readonly ok: true; readonly call: CallerRequest } | { readonly ok: false; readonly normalized: Normalized };

/**
 * The request to forward: the caller's own (nothing to rewrite), one whose push config now names the gateway (new
 * bytes), or the refusal to answer with. `push`: undefined while `server.push` is not configured.
 */
export function rewritePushCall(
  push: PushSettings | undefined,
  remote: string,
  call: CallerRequest,
  caller: CallerGeneration,
  requestId: string,
  /** The generation the remote will push in, when the version bridge translates the call (default: the caller's). */
  remoteGeneration?: ProtocolGeneration,
): PushCallRewrite {
  const known = operationForJsonRpcMethod(call.method);
  if (!known || !CARRIES_CONFIG.has(known.operation.name)) return { ok: true, call };
  // A send whose params (read in one pass: member names unescaped, see CallerRequest.paramsHold) never spell
  // "configuration" has no configuration: decided without parsing the params, which usually go out unread.
  if (known.operation.name !== 'CreateTaskPushNotificationConfig' && call.paramsHold?.(QUOTED_CONFIGURATION) === false) return { ok: true, call };
  if (!isObject(call.params)) return { ok: true, call };
  // The common cases cost a few lookups: a send whose `configuration` names no push config in any spelling.
  if (known.operation.name !== 'CreateTaskPushNotificationConfig' && !namesPushConfig(call.params.configuration)) return { ok: true, call };
  const rewrite = rewritePushRequest(a2aCallOf(remote, known.operation, known.generation, call, requestId), { push, nowMs: Date.now(), ...(remoteGeneration ? { remoteGeneration } : {}) });
  if (rewrite.kind === 'unchanged') return { ok: true, call };
  if (rewrite.kind === 'refused') return { ok: false, normalized: envelopeOf(call, rewrite.error, remote, caller) };
  const params = rewrite.call.params;
  const raw = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: call.id, method: call.method, params }));
  return { ok: true, call: { id: call.id, method: call.method, raw, params } };
}

/** The ResultRewrite for a method whose result holds push configs (the caller's own shown again); undefined for others. */
export function pushResultRewrite(push: PushSettings | undefined, method: string): ResultRewrite | undefined {
  if (!push) return undefined;
  const known = operationForJsonRpcMethod(method);
  if (!known || !RETURNS_CONFIG.has(known.operation.name)) return undefined;
  const { operation, generation } = known;
  return (result, { remote, callerId, caller }) => {
    const restored = restorePushReply({ remote: remote.name, operation, generation }, { kind: 'result', json: '', value: result }, push);
    if (restored.kind === 'unchanged') return { json: serializeResultJson(callerId, JSON.stringify(result)), outcome: 'ok', result };
    if (restored.kind === 'refused') return failureEnvelope(callerId, gatewayReasonOf(restored.error), { remote: remote.name, httpStatus: 200, caller }, detailOf(restored.error));
    return { json: serializeResultJson(callerId, restored.outcome.json), outcome: 'ok', result: restored.outcome.value };
  };
}

/**
 * The same for a call already in the internal shape (HTTP+JSON callers, src/routes/http-json.ts): the call to run,
 * or the refusal (an ErrorOutcome for the caller's codec).
 */
export function rewritePushA2ACall(push: PushSettings | undefined, call: A2ACall): { readonly ok: true; readonly call: A2ACall } | { readonly ok: false; readonly error: ErrorOutcome } {
  if (!CARRIES_CONFIG.has(call.operation.name)) return { ok: true, call };
  if (call.operation.name !== 'CreateTaskPushNotificationConfig' && !namesPushConfig(call.params.configuration)) return { ok: true, call };
  const rewrite = rewritePushRequest(call, { push, nowMs: Date.now() });
  if (rewrite.kind === 'refused') return { ok: false, error: rewrite.error };
  return { ok: true, call: rewrite.kind === 'rewritten' ? rewrite.call : call };
}

/** The call runner's result rewrite for an operation whose result holds push configs (both caller paths of the runner). */
export function pushOutcomeRewrite(push: PushSettings | undefined, call: Pick<A2ACall, 'remote' | 'operation' | 'generation'>): ((result: ResultOutcome) => Outcome) | undefined {
  if (!push || !RETURNS_CONFIG.has(call.operation.name)) return undefined;
  return (result) => {
    const restored = restorePushReply(call, result, push);
    if (restored.kind === 'unchanged') return result;
    return restored.kind === 'refused' ? restored.error : restored.outcome;
  };
}

function a2aCallOf(remote: string, operation: Operation, generation: ProtocolGeneration, call: CallerRequest, requestId: string): A2ACall {
  const params = call.params as Readonly<Record<string, unknown>>;
  return {
    remote,
    operation,
    generation,
    // Read only if a rewrite happens.
    get paramsJson() {
      return JSON.stringify(params);
    },
    params,
    service: { forwarded: {} },
    caller: { binding: 'jsonrpc', jsonRpcId: call.id, requestId },
    rawJsonRpcBody: call.raw,
  };
}

function envelopeOf(call: CallerRequest, error: ErrorOutcome, remote: string, caller: CallerGeneration): Normalized {
  return failureEnvelope(call.id, gatewayReasonOf(error), { remote, caller }, detailOf(error));
}

/** The push modules refuse with catalogue reasons only. */
function gatewayReasonOf(error: ErrorOutcome): Exclude<ErrorOutcome['reason'], 'REMOTE_ERROR'> {
  return error.reason === 'REMOTE_ERROR' ? 'GATEWAY_ERROR' : error.reason;
}

/** The gateway-written detail after the catalogue sentence (`<message>: <detail>`), if any. */
function detailOf(error: ErrorOutcome): string | undefined {
  if (error.reason === 'REMOTE_ERROR') return undefined;
  const sentence = gatewayErrors[error.reason].message;
  return error.message.startsWith(`${sentence}: `) ? error.message.slice(sentence.length + 2) : undefined;
}

/** Spellings of a send's push config member, both generations, camelCase and snake_case (the module reads them all). */
const CONFIG_MEMBERS = ['taskPushNotificationConfig', 'task_push_notification_config', 'pushNotificationConfig', 'push_notification_config'] as const;

function namesPushConfig(configuration: unknown): boolean {
  if (configuration === undefined || configuration === null) return false;
  // Anything else odd (an array, a string) is for the module to refuse.
  if (!isObject(configuration)) return true;
  return CONFIG_MEMBERS.some((name) => Object.hasOwn(configuration, name));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
