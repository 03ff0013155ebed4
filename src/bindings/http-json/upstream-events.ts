/**
 * A remote's answer to a streaming HTTP+JSON call (SendStreamingMessage,
 * SubscribeToTask; spec 1.0.1 §11.7), normalized. Pure: framing and the
 * byte, event and time bounds belong to the stream core that feeds these
 * functions one parsed event (src/stream/sse-parser.ts) at a time.
 *
 * - `streamReplyKind`: a 2xx `text/event-stream` is a stream; anything else
 *   is read whole (with the unary cap) and is one Outcome:
 * - `normalizeRestStreamBody`: the remote's typed error (a Status body
 *   before the stream, as the @a2a-js/sdk server sends for an unknown task),
 *   or a gateway reason; a 2xx body that is one valid StreamResponse is the
 *   remote's single result; any other 2xx body is `NOT_AN_EVENT_STREAM`.
 * - `normalizeRestEvent`: each `data` event must be one StreamResponse JSON
 *   object (read like a unary result); `event: error` carries the remote's
 *   Status (`{"error":{…}}`, as the SDK server writes it) and ends the stream.
 *   Anything else ends it with `INVALID_EVENT` (its `cause` says why).
 */
import type { Operation } from '../../a2a/operations.js';
import type { Outcome, StreamItem } from '../../core/outcome.js';
import type { Reason } from '../../envelope/codes.js';
import { mediaTypeOf } from '../../http/media-type.js';
import type { SseEvent } from '../../stream/sse-parser.js';
import { gatewayErrorOutcome } from '../error-outcome.js';
import { remoteErrorOutcome } from './remote-error.js';
import { isPlainObject, readRemoteJson } from './response-json.js';
import { normalizeRestReply, type RemoteReply, type RestNormalizePolicy } from './upstream-reply.js';

export function streamReplyKind(status: number, contentType: string | undefined): 'events' | 'body' {
  return status >= 200 && status <= 299 && contentType !== undefined && mediaTypeOf(contentType) === 'text/event-stream' ? 'events' : 'body';
}

/**
 * A streaming call answered with something other than an event stream: one Outcome. A 2xx body that is one valid
 * StreamResponse is the remote's single result (as the JSON-RPC path passes a single result on); any other 2xx body
 * is `NOT_AN_EVENT_STREAM`, its `cause` saying why it is no result.
 */
export function normalizeRestStreamBody(operation: Operation, reply: RemoteReply, policy: RestNormalizePolicy): Outcome {
  if (reply.status >= 200 && reply.status <= 299) {
    const single = normalizeRestReply(operation, reply, policy);
    if (single.kind === 'result') return single;
    return gatewayErrorOutcome('NOT_AN_EVENT_STREAM', { remote: policy.remote, httpStatus: reply.status, metadata: { cause: single.reason } });
  }
  const outcome = normalizeRestReply(operation, reply, policy);
  // A non-2xx reply never normalizes to a result; the guard keeps the type honest.
  return outcome.kind === 'error' ? outcome : gatewayErrorOutcome('UPSTREAM_HTTP_ERROR', { remote: policy.remote, httpStatus: reply.status }, `HTTP ${reply.status}`);
}

export interface RestEventContext {
  readonly policy: RestNormalizePolicy;
  /** The stream's HTTP status (200), reported in ErrorInfo metadata. */
  readonly httpStatus: number;
}

/** `index` is the 1-based position of the event in the remote's stream, for ErrorInfo metadata. */
export function normalizeRestEvent(operation: Operation, event: SseEvent, eventRules: RestEventContext, index: number): StreamItem {
  const invalid = (cause: Reason): StreamItem => ({
    outcome: gatewayErrorOutcome('INVALID_EVENT', { remote: eventRules.policy.remote, httpStatus: eventRules.httpStatus, metadata: { cause, event: index } }),
    final: true,
  });
  if (event.invalidUtf8) return invalid('INVALID_UTF8');
  const text = event.data.trim();
  if (text === '') return invalid('EMPTY_RESPONSE');
  if (event.type === 'error') return errorEvent(text, eventRules, invalid);

  const read = readRemoteJson(text, eventRules.policy.maxJsonDepth);
  if (!read.ok) return invalid(read.reason);
  if (!isPlainObject(read.value) || (Object.hasOwn(read.value, 'error') && Object.keys(read.value).length === 1)) return invalid('INVALID_RESPONSE_MESSAGE');
  if (eventRules.policy.checkResult?.(operation, read.value) !== undefined) return invalid('INVALID_RESULT');
  return { outcome: { kind: 'result', json: text, value: read.value }, final: false };
}

/**
 * `event: error` data: the SDK's `{"error":{Status}}`, a bare Status object,
 * any other error shape remote-error.ts reads, or plain text (read as the
 * message, as the JSON-RPC stream path reads it). It is mapped with the
 * Status's own `code` as HTTP status when that is an error status.
 */
function errorEvent(text: string, eventRules: RestEventContext, invalid: (cause: Reason) => StreamItem): StreamItem {
  const read = readRemoteJson(text, eventRules.policy.maxJsonDepth, 2);
  let value: unknown;
  if (read.ok) value = read.value;
  else if (read.reason === 'INVALID_JSON' && !/^[[{"]/.test(text)) value = text;
  else return invalid(read.reason);
  if (typeof value === 'string') value = { error: value };
  if (!isPlainObject(value)) return invalid('INVALID_RESPONSE_MESSAGE');
  const body = errorEventBody(value);
  const code = isPlainObject(body.error) ? body.error.code : undefined;
  const httpStatus = typeof code === 'number' && Number.isInteger(code) && code >= 400 && code <= 599 ? code : undefined;
  const error = remoteErrorOutcome(body, httpStatus, eventRules.policy);
  if (error === undefined) return invalid('INVALID_RESPONSE_MESSAGE');
  // metadata.httpStatus is the stream's HTTP status, as on the JSON-RPC stream path; the Status code stays in remoteStatus.
  return { outcome: { ...error, metadata: { ...error.metadata, httpStatus: String(eventRules.httpStatus) } }, final: true };
}

function errorEventBody(value: Record<string, unknown>): Record<string, unknown> {
  if (Object.hasOwn(value, 'error')) return value;
  // A2A 0.3's {code, message, data} (a JSON-RPC code) and problem details are read as they are.
  if (typeof value.code === 'number' && value.code < 0) return value;
  if (['type', 'title', 'detail'].some((k) => typeof value[k] === 'string')) return value;
  return { error: value };
}
