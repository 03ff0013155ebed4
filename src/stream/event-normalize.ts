/**
 * One upstream SSE event → one caller event, through the same normalizer as
 * unary replies. Pure: no I/O, no clock.
 */
import type { Reason } from '../envelope/codes.js';
import type { JsonRpcId } from '../envelope/envelope.js';
import { scanJson } from '../envelope/json-scan.js';
import { findDuplicateMember } from '../envelope/strict-json.js';
import { serializeResultJson } from '../envelope/envelope.js';
import { failureEnvelope, normalizeJsonTextFully, plainResultJson, type NormalizePolicy, type Normalized } from '../envelope/normalize.js';
import type { SseEvent } from './sse-parser.js';

export type EventOutcome = Normalized['outcome'];

export interface NormalizedEvent {
  /** One-line JSON-RPC envelope with the caller's id. */
  readonly json: string;
  readonly outcome: EventOutcome;
  /** The stream ends after this event (an error: A2A streams end on error). */
  readonly final: boolean;
  /** Credentials of the remote removed from (or refused in) this event. */
  readonly redactions?: number | undefined;
}

export interface EventContext {
  readonly callerId: JsonRpcId;
  readonly policy: NormalizePolicy;
  /** The upstream's HTTP status, reported in ErrorInfo metadata. */
  readonly httpStatus: number;
  /** `limits.validateResults`: a problem text for a result that does not match the schema, else undefined. */
  readonly checkResult?: ((result: unknown) => string | undefined) | undefined;
  /**
   * The version bridge (issue 17): each normalized, checked result as the caller's generation writes it, or
   * the reason it cannot be (the stream then ends with INVALID_EVENT naming that cause).
   */
  /** With translateResult: the bound on a translated event's envelope (the remote's maxEventBytes). */
  readonly maxEventBytes?: number | undefined;
  readonly translateResult?: ((result: unknown) => { readonly ok: true; readonly result: unknown } | { readonly ok: false; readonly reason: Reason }) | undefined;
}

/** `index` is the 1-based position of the event in the upstream stream, for ErrorInfo metadata. */
export function normalizeEvent(event: SseEvent, eventRules: EventContext, index: number): NormalizedEvent {
  if (event.invalidUtf8) return invalidEvent(eventRules, index, 'INVALID_UTF8');
  if (event.type === 'error') return normalizeErrorEvent(event.data, eventRules, index);
  const plain = plainResultEvent(event.data, event.dataBytes, eventRules);
  if (plain) return plain;
  // Not a plain result (plainResultEvent already asked): straight to the full path.
  const n = normalizeJsonTextFully(event.data, eventRules.callerId, eventRules.policy, eventRules.httpStatus);
  // Validated results go on as the remote's bytes: a member named twice would let the caller read what was not checked.
  if (n.outcome === 'ok' && eventRules.checkResult && (findDuplicateMember(n.json) || eventRules.checkResult(n.result) !== undefined)) {
    return invalidEvent(eventRules, index, 'INVALID_RESULT', n.redactions);
  }
  if (n.outcome === 'ok' && eventRules.translateResult) return translatedEvent(n.result, n.redactions, eventRules, index);
  if (n.outcome === 'ok') return { json: oneLine(n.json), outcome: 'ok', final: false, redactions: n.redactions };
  if (n.outcome === 'REMOTE_ERROR') return { json: oneLine(n.json), outcome: 'REMOTE_ERROR', final: true, redactions: n.redactions };
  return invalidEvent(eventRules, index, n.outcome, n.redactions);
}

/**
 * The common event, a plain success nobody needs the value of (no result
 * check, no version bridge, nothing a credential could hide in), spliced
 * without building it: exactly what normalizeJsonText writes for it, at a
 * fraction of the CPU (see result-envelope.ts). Undefined sends the event
 * through the full normalizer.
 */
function plainResultEvent(data: string, dataBytes: Buffer | undefined, eventRules: EventContext): NormalizedEvent | undefined {
  if (eventRules.checkResult || eventRules.translateResult || eventRules.httpStatus < 200 || eventRules.httpStatus > 299) return undefined;
  const resultJson = plainResultJson(data, dataBytes, eventRules.policy.maxJsonDepth);
  if (resultJson === undefined) return undefined;
  if (eventRules.policy.redactor?.mayHold(resultJson)) return undefined;
  // serializeResultJson's text, its head kept for the stream's id: no JSON.stringify of the id per event.
  return { json: `${resultHead(eventRules.callerId)}${oneLine(resultJson)}}`, outcome: 'ok', final: false, redactions: undefined };
}

let headId: JsonRpcId | undefined;
let head = '';

/** `{"jsonrpc":"2.0","id":<id>,"result":` for the last id asked (a stream asks for the same one each event). */
function resultHead(id: JsonRpcId): string {
  if (id !== headId || head === '') {
    head = serializeResultJson(id, '');
    head = head.slice(0, -1);
    headId = id;
  }
  return head;
}

/** A result in the caller's generation; it meets the event byte bound as the remote's event had to. */
function translatedEvent(result: unknown, redactions: number | undefined, eventRules: EventContext, index: number): NormalizedEvent {
  const translated = eventRules.translateResult!(result);
  if (!translated.ok) return invalidEvent(eventRules, index, translated.reason, redactions);
  const json = serializeResultJson(eventRules.callerId, JSON.stringify(translated.result));
  if (eventRules.maxEventBytes !== undefined && Buffer.byteLength(json) > eventRules.maxEventBytes) return invalidEvent(eventRules, index, 'EVENT_TOO_LARGE', redactions);
  return { json, outcome: 'ok', final: false, redactions };
}

/**
 * `event: error` data comes in three shapes in the wild: a JSON-RPC error
 * response, a bare error object ({code, message, ...}), or plain text. Each
 * goes through the unary normalizer's error rules (typed code kept, extra
 * members dropped, text sanitized and bounded); anything else is unusable.
 */
function normalizeErrorEvent(data: string, eventRules: EventContext, index: number): NormalizedEvent {
  const text = data.trim();
  if (text === '') return invalidEvent(eventRules, index, 'EMPTY_RESPONSE');
  // Depth first: classifying must not cost more than the normalizer's own guard allows.
  if (scanJson(text, eventRules.policy.maxJsonDepth).problem === 'too-deep') return invalidEvent(eventRules, index, 'JSON_TOO_DEEP');
  let parsed: unknown;
  let isJson = true;
  try {
    parsed = JSON.parse(text);
  } catch {
    isJson = false;
  }
  let envelopeText: string;
  if (!isJson) envelopeText = wrapError(JSON.stringify(text));
  else if (typeof parsed === 'string') envelopeText = wrapError(text);
  else if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return invalidEvent(eventRules, index, 'INVALID_RESPONSE');
  else if (Object.hasOwn(parsed, 'error')) envelopeText = text;
  else if (Object.hasOwn(parsed, 'code') || Object.hasOwn(parsed, 'message')) envelopeText = wrapError(text);
  else return invalidEvent(eventRules, index, 'INVALID_RESPONSE');

  const n = normalizeJsonTextFully(envelopeText, eventRules.callerId, eventRules.policy, eventRules.httpStatus);
  if (n.outcome === 'REMOTE_ERROR') return { json: oneLine(n.json), outcome: 'REMOTE_ERROR', final: true, redactions: n.redactions };
  // An `error` event that normalizes to a success is not an error we can describe.
  return invalidEvent(eventRules, index, n.outcome === 'ok' ? 'INVALID_RESPONSE' : n.outcome, n.redactions);
}

/** `errorJson` is valid JSON text (checked by the caller), so the wrapper is too. */
function wrapError(errorJson: string): string {
  return `{"jsonrpc":"2.0","id":null,"error":${errorJson}}`;
}

function invalidEvent(eventRules: EventContext, index: number, cause: Reason, redactions?: number): NormalizedEvent {
  const n = failureEnvelope(eventRules.callerId, 'INVALID_EVENT', {
    remote: eventRules.policy.remote,
    httpStatus: eventRules.httpStatus,
    metadata: { cause, event: index },
    caller: eventRules.policy.caller,
  });
  return { json: n.json, outcome: n.outcome, final: true, redactions };
}

/**
 * A `data:` line ends at the first CR or LF, so the envelope must be one line.
 * In valid JSON, CR and LF can only be whitespace between tokens (never raw
 * inside a string), so turning them into spaces keeps the meaning.
 */
export function oneLine(json: string): string {
  return json.includes('\n') || json.includes('\r') ? json.replace(/[\r\n]/g, ' ') : json;
}
