/**
 * The JSON-RPC caller binding as a codec for the call runner: a checked
 * JSON-RPC request (src/jsonrpc/caller-request.ts) → an A2ACall; an Outcome
 * or a StreamItem → the JSON-RPC envelope (or SSE event) the caller reads,
 * with the caller's id, `error.data` in the gateway's order (A2A ErrorInfo
 * first for A2A codes and 1.0 callers, then the gateway's, then kept remote
 * details). Used when a JSON-RPC caller's call goes to a remote of another
 * binding (`remotes.<name>.binding: http+json`); calls to a JSON-RPC remote
 * keep their byte-forwarding path. Pure.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { operationForJsonRpcMethod, type ProtocolGeneration } from '../../a2a/operations.js';
import type { A2ACall } from '../../core/call.js';
import { GATEWAY_ERROR_DOMAIN, ERROR_INFO_TYPE, type ErrorOutcome, type Outcome, type StreamItem } from '../../core/outcome.js';
import { errorData, serializeError, serializeResultJson, type ErrorInfo, type JsonRpcId } from '../../envelope/envelope.js';
import type { CallerRequest } from '../../jsonrpc/caller-request.js';
import { oneLine } from '../../stream/event-normalize.js';
import { gatewayErrorOutcome } from '../error-outcome.js';
import { checkRequest } from '../http-json/request-schema.js';
import { serviceParamsOf } from '../http-json/service-params.js';

export interface JsonRpcCallerContext {
  readonly remote: string;
  readonly requestId: string;
  readonly headers: IncomingHttpHeaders;
  /** Caller headers policy forwards (header-policy.ts buildUpstreamHeaders). */
  readonly forwarded: Readonly<Record<string, string>>;
}

export type JsonRpcCallParse = { readonly ok: true; readonly call: A2ACall } | { readonly ok: false; readonly error: ErrorOutcome };

export function jsonRpcCallOf(request: CallerRequest, callerInfo: JsonRpcCallerContext): JsonRpcCallParse {
  const refuse = (reason: Parameters<typeof gatewayErrorOutcome>[0], detail?: string, metadata?: Record<string, string>): JsonRpcCallParse => ({
    ok: false,
    error: gatewayErrorOutcome(reason, { remote: callerInfo.remote, ...(metadata ? { metadata } : {}) }, detail),
  });
  const found = operationForJsonRpcMethod(request.method);
  if (found === undefined) return refuse('METHOD_NOT_ALLOWED', 'not an A2A method');
  const { operation, generation } = found;
  const params = request.params ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return refuse('INVALID_PARAMS', '"params" must be an object');
  const record = params as Record<string, unknown>;
  if (generation === '1.0') {
    const check = checkRequest(operation, record);
    if (!check.ok) return refuse('INVALID_PARAMS', check.problem, { field: check.field });
  }
  const service = serviceParamsOf(callerInfo.headers, [], callerInfo.forwarded);
  if (!service.ok) return refuse(service.reason, service.detail);
  const tenant = typeof record.tenant === 'string' && record.tenant !== '' ? record.tenant : undefined;
  return {
    ok: true,
    call: {
      remote: callerInfo.remote,
      operation,
      generation,
      paramsJson: JSON.stringify(record),
      params: record,
      ...(tenant === undefined ? {} : { tenant }),
      service: service.service,
      caller: { binding: 'jsonrpc', jsonRpcId: request.id, requestId: callerInfo.requestId },
      rawJsonRpcBody: request.raw,
    },
  };
}

/** An Outcome as the JSON-RPC envelope for the caller's id. */
export function encodeJsonRpcOutcome(id: JsonRpcId, outcome: Outcome, generation: ProtocolGeneration): string {
  if (outcome.kind === 'result') return serializeResultJson(id, outcome.json);
  const gateway: ErrorInfo = { '@type': ERROR_INFO_TYPE, reason: outcome.reason, domain: GATEWAY_ERROR_DOMAIN, metadata: { ...outcome.metadata } };
  const data = errorData(outcome.code, gateway, generation, outcome.a2a?.metadata, outcome.details);
  return serializeError(id, { code: outcome.code, message: outcome.message, data });
}

/** One stream item as the SSE event a JSON-RPC caller reads. */
export function encodeJsonRpcStreamItem(id: JsonRpcId, item: StreamItem, generation: ProtocolGeneration): string {
  return `data: ${oneLine(encodeJsonRpcOutcome(id, item.outcome, generation))}\n\n`;
}
