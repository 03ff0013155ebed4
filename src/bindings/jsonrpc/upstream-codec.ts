/**
 * JSON-RPC as an upstream codec for the call runner (src/core/upstream-codec.ts):
 * an A2ACall from any caller binding → a JSON-RPC request for the remote,
 * and the remote's reply or events → Outcomes, read by the JSON-RPC path's
 * own normalizer (src/envelope/normalize.ts, src/stream/event-normalize.ts),
 * so every rule it applies (id check, one of result/error, typed codes,
 * sanitized bounded text, kept details, A2A ErrorInfo) holds for transcoded
 * calls too. Its envelope is then read back into an Outcome: the result's
 * bytes as the remote sent them, the error's parts as the normalizer wrote
 * them. Pure.
 *
 * What a JSON-RPC remote's error loses for an HTTP+JSON caller: its HTTP
 * status (JSON-RPC errors travel with 200) — the caller's status comes from
 * the error code (spec §5.4).
 */
import type { A2ACall } from '../../core/call.js';
import { A2A_ERROR_DOMAIN, ERROR_INFO_TYPE, GATEWAY_ERROR_DOMAIN, type ErrorDetail, BytesResult, ParsedOnRead, type ErrorOutcome, type Outcome, type ResultOutcome, type StreamItem } from '../../core/outcome.js';
import type { CodecPolicy, UpstreamCodec } from '../../core/upstream-codec.js';
import type { Reason } from '../../envelope/codes.js';
import { normalizeReply, type Normalized } from '../../envelope/normalize.js';
import { normalizeEvent } from '../../stream/event-normalize.js';
import { gatewayErrorOutcome } from '../error-outcome.js';
import { describeJsonValue } from '../http-json/response-json.js';

/** The id of every request the gateway makes on a caller's behalf (the caller's own id, if any, is the caller codec's). */
const UPSTREAM_ID = 1;
const RESULT_PREFIX = `{"jsonrpc":"2.0","id":${UPSTREAM_ID},"result":`;

function requestBody(call: A2ACall, method: string): string {
  return `{"jsonrpc":"2.0","id":${UPSTREAM_ID},"method":${JSON.stringify(method)},"params":${call.paramsJson}}`;
}

/**
 * An envelope the normalizer wrote (gateway bytes, parsed safely) → the Outcome it means. A success's value is read
 * from the envelope (`normalized.result`) only when a stage looks inside: a plain success parses it then, and an
 * HTTP+JSON caller writes the result's text as it is.
 */
export function outcomeOfEnvelope(normalized: Normalized): Outcome {
  if (normalized.outcome === 'ok') {
    // Kept as bytes (the runner's codec policy has keepBytes): passed on as bytes, decoded only if a stage reads them.
    const resultWire = normalized.resultWire;
    if (resultWire !== undefined) return new BytesResult(resultWire);
    // The remote's result text as the normalizer kept it, rather than sliced back out of the envelope it made.
    if (normalized.resultJson !== undefined) return new EnvelopeResult(normalized.resultJson, normalized);
    if (normalized.json.startsWith(RESULT_PREFIX)) return new EnvelopeResult(normalized.json.slice(RESULT_PREFIX.length, -1), normalized);
    return { kind: 'result', json: JSON.stringify(normalized.result), value: normalized.result };
  }
  const envelope = JSON.parse(normalized.json) as { error: { code: number; message: string; data?: unknown } };
  const { code, message, data } = envelope.error;
  let metadata: Record<string, string> = {};
  let a2a: ErrorOutcome['a2a'];
  const details: ErrorDetail[] = [];
  for (const item of Array.isArray(data) ? (data as Record<string, unknown>[]) : []) {
    const isInfo = item['@type'] === ERROR_INFO_TYPE;
    if (isInfo && item.domain === GATEWAY_ERROR_DOMAIN) metadata = (item.metadata ?? {}) as Record<string, string>;
    else if (isInfo && item.domain === A2A_ERROR_DOMAIN && a2a === undefined) a2a = { reason: String(item.reason), metadata: (item.metadata ?? {}) as Record<string, string> };
    else details.push(item as ErrorDetail);
  }
  return { kind: 'error', code, message, reason: normalized.outcome as Reason | 'REMOTE_ERROR', metadata, ...(a2a ? { a2a } : {}), details };
}

/**
 * A result for a caller of another binding must be the operation's response message: a JSON object (an HTTP+JSON body
 * or event, a gRPC message). JSON-RPC callers never come here (their calls to JSON-RPC remotes keep the byte path), so
 * a bare `5` or `[]` result is refused as the HTTP+JSON normalizer refuses it. Empty responses (a delete) mean nothing.
 */
function notAMessage(call: A2ACall, result: ResultOutcome): string | undefined {
  // A 0.3 call is one the version bridge made: its result is translated next (and refused there if it is none); a
  // 0.3 tasks/pushNotificationConfig/list result is an array. The normalizer checked the text: it is JSON, and a
  // JSON value is an object exactly when it opens with a brace (so the value is not parsed to see it).
  if (call.generation === '0.3' || call.operation.responseType === 'google.protobuf.Empty' || opensObject(result.wire ?? result.json)) return undefined;
  return `"result" is ${describeJsonValue(result.value)}`;
}

function checked(call: A2ACall, outcome: Outcome, policy: CodecPolicy, httpStatus: number): Outcome {
  if (outcome.kind !== 'result') return outcome;
  const shape = notAMessage(call, outcome);
  if (shape !== undefined) return gatewayErrorOutcome('INVALID_RESPONSE_MESSAGE', { remote: policy.remote, httpStatus }, shape);
  if (!policy.checkResult) return outcome;
  const problem = policy.checkResult(call, outcome.value);
  return problem === undefined ? outcome : gatewayErrorOutcome('INVALID_RESULT', { remote: policy.remote, httpStatus }, problem);
}

export const jsonRpcUpstreamCodec: UpstreamCodec = {
  binding: 'jsonrpc',
  request(call, base) {
    const method = call.operation.jsonrpc[call.generation];
    if (method === undefined) {
      return { ok: false, error: gatewayErrorOutcome('UNSUPPORTED_BINDING_VERSION', { remote: call.remote }, `A2A ${call.generation} JSON-RPC has no ${call.operation.name}`) };
    }
    // Object.assign, not an object spread: the spread made each call promote more to old space (see the same copy in
    // bindings/http-json/upstream-request.ts). Same names, order and override.
    const headers: Record<string, string> = Object.assign({}, call.service.forwarded);
    headers['content-type'] = 'application/json';
    headers.accept = call.operation.streaming ? 'text/event-stream' : 'application/json';
    // A 1.0 method name means nothing to a server that reads a missing version as 0.3 (spec §3.6.2).
    const version = call.service.a2aVersion ?? (call.generation === '1.0' ? '1.0' : undefined);
    if (version !== undefined) headers['a2a-version'] = version;
    if (call.service.extensions !== undefined) headers['a2a-extensions'] = call.service.extensions;
    return { ok: true, request: { method: 'POST', path: base.pathname + base.search, headers, body: requestBody(call, method) } };
  },
  reply(call, reply, policy) {
    return checked(call, outcomeOfEnvelope(normalizeReply(reply, UPSTREAM_ID, policy)), policy, reply.status);
  },
  isEventStream: (status, contentType) =>
    status >= 200 && status <= 299 && /^\s*text\/event-stream\s*(;|$)/i.test(contentType ?? ''),
  // What the JSON-RPC path does (proxy/stream.ts): no stream started, so the one envelope is read as a unary reply.
  streamBody(call, reply, policy) {
    return this.reply(call, reply, policy);
  },
  event(call, event, policy, httpStatus, index): StreamItem {
    const check = policy.checkResult;
    const n = normalizeEvent(event, { callerId: UPSTREAM_ID, policy, httpStatus, checkResult: check ? (result) => check(call, result) : undefined }, index);
    if (n.outcome === 'ok') {
      const json = n.json.startsWith(RESULT_PREFIX) ? n.json.slice(RESULT_PREFIX.length, -1) : n.json;
      // Each event is a StreamResponse (an object), as normalizeRestEvent requires of an HTTP+JSON remote. The
      // normalizer checked the text: it is JSON, and a JSON value is an object exactly when it opens with a brace.
      if (!opensObject(json)) {
        return { outcome: gatewayErrorOutcome('INVALID_EVENT', { remote: policy.remote, httpStatus, metadata: { cause: 'INVALID_RESPONSE_MESSAGE', event: index } }), final: true };
      }
      // Parsed only if a stage looks inside: an HTTP+JSON caller of a JSON-RPC remote writes the text as it is.
      return { outcome: new ParsedOnRead(json), final: false };
    }
    return { outcome: outcomeOfEnvelope(n) as ErrorOutcome, final: true };
  },
};

function opensObject(json: string): boolean {
  return /^[ \t\r\n]*\{/.test(json);
}

/** A unary success's result: its text spliced out of the envelope, its value the envelope's (read on first use). */
class EnvelopeResult implements ResultOutcome {
  readonly kind = 'result' as const;
  readonly #envelope: Normalized;

  constructor(
    readonly json: string,
    envelope: Normalized,
  ) {
    this.#envelope = envelope;
  }

  get value(): unknown {
    return this.#envelope.result;
  }
}
