/**
 * The normalizer of the HTTP+JSON binding: a remote's complete reply (status
 * and body, already size-capped and decoded by the transport) → one Outcome.
 * Pure: no sockets, no clock; remote headers are not read (only the A2A ones
 * pass, through src/policy/header-policy.ts, in the wiring).
 *
 * - 2xx: the body must be one JSON object (the operation's response message),
 *   read as every normalizer reads remote JSON (response-json.ts); it is the
 *   result, its bytes kept as they are. `validateResults` is the caller's
 *   `checkResult`. DeleteTaskPushNotificationConfig answers 204 / empty (or
 *   an empty object): its result is `{}` (ProtoJSON of google.protobuf.Empty).
 * - Anything else: the remote's typed error when the body is one the gateway
 *   reads (remote-error.ts), else `UPSTREAM_HTTP_ERROR` naming only the
 *   status: nothing of an HTML page, a text or a stack trace passes.
 */
import { isUtf8 } from 'node:buffer';
import type { Operation } from '../../a2a/operations.js';
import { BytesResult, type Outcome } from '../../core/outcome.js';
import type { Reason } from '../../envelope/codes.js';
import type { NormalizePolicy } from '../../envelope/normalize.js';
import { recognizeMessageObject } from '../../envelope/json-recognizers.js';
import { gatewayErrorOutcome } from '../error-outcome.js';
import { remoteErrorOutcome } from './remote-error.js';
import { describeJsonValue, isPlainObject, readRemoteJson } from './response-json.js';

export interface RestNormalizePolicy extends NormalizePolicy {
  /** `limits.validateResults`: a problem text for a result that does not match the schema, else undefined. */
  readonly checkResult?: ((operation: Operation, result: unknown) => string | undefined) | undefined;
}

export interface RemoteReply {
  readonly status: number;
  readonly body: Buffer;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The JSON text of an Empty result. */
export const EMPTY_RESULT = '{}';

export function normalizeRestReply(operation: Operation, reply: RemoteReply, policy: RestNormalizePolicy): Outcome {
  const ok = reply.status >= 200 && reply.status <= 299;
  const errorFacts = { remote: policy.remote, httpStatus: reply.status };
  const replyError = (reason: Reason, detail?: string, metadata?: Record<string, string>): Outcome =>
    gatewayErrorOutcome(reason, { ...errorFacts, ...(metadata ? { metadata } : {}) }, detail);
  const httpError = (cause?: Reason): Outcome => replyError('UPSTREAM_HTTP_ERROR', `HTTP ${reply.status}`, cause ? { cause } : undefined);
  const isEmpty = operation.responseType === 'google.protobuf.Empty';

  // "Is this JSON at all" is decided on the raw bytes: garbage is a non-JSON body, not JSON with bad UTF-8.
  const first = firstNonSpaceByte(reply.body);
  if (first === -1) {
    if (!ok) return httpError();
    return isEmpty ? result(EMPTY_RESULT, {}) : replyError('EMPTY_RESPONSE', reply.status === 204 ? 'HTTP 204' : undefined);
  }
  if (!looksLikeJson(reply.body[first]!)) return ok ? replyError('NON_JSON_RESPONSE') : httpError();
  if (ok && !isEmpty && policy.checkResult === undefined) {
    const kept = messageBytes(reply.body, first, policy.maxJsonDepth);
    if (kept) return kept;
  }
  let text: string;
  try {
    text = strictUtf8.decode(reply.body).trim();
  } catch {
    return ok ? replyError('INVALID_UTF8') : httpError('INVALID_UTF8');
  }

  // An error body's own members (code, message, details) are checked for repeats too.
  const read = readRemoteJson(text, policy.maxJsonDepth, ok ? 1 : 2);
  if (!read.ok) return ok ? replyError(read.reason, read.detail) : httpError(read.reason);
  const value = read.value;

  if (!ok) {
    const error = isPlainObject(value) ? remoteErrorOutcome(value, reply.status, policy) : undefined;
    return error ?? httpError('INVALID_RESPONSE_MESSAGE');
  }
  if (!isPlainObject(value)) return replyError('INVALID_RESPONSE_MESSAGE', `body is ${describeJsonValue(value)}`);
  // A success status around a Status body is a remote contradicting itself; neither reading is safe.
  if (Object.hasOwn(value, 'error') && Object.keys(value).length === 1) return replyError('INVALID_RESPONSE_MESSAGE', 'a success status with an error body');
  if (isEmpty) return result(EMPTY_RESULT, {});
  const problem = policy.checkResult?.(operation, value);
  if (problem !== undefined) return replyError('INVALID_RESULT', problem);
  return result(text, value);
}

/**
 * The usual success kept as its bytes: valid UTF-8 (what the decoder requires; no byte-order mark, which the decoder
 * drops), recognized in one pass without building it (recognizeMessageObject reads UTF-8 bytes), kept as a latin1
 * string of its bytes, one character per byte, without the JSON whitespace around it (the text path trims it); its
 * value is parsed only if a later stage looks inside. Undefined: the full reader decides, exactly as before (a body
 * the recognizer is not sure of, or one with a byte-order mark).
 */
function messageBytes(body: Buffer, first: number, maxJsonDepth: number): Outcome | undefined {
  if (body[0] === UTF8_BOM[0] || !isUtf8(body) || !recognizeMessageObject(body, maxJsonDepth)) return undefined;
  let end = body.length;
  while (end > first && isJsonSpace(body[end - 1]!)) end--;
  return new BytesResult(body.toString('latin1', first, end));
}

function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function result(json: string, value: unknown): Outcome {
  return { kind: 'result', json, value };
}

const UTF8_BOM = [0xef, 0xbb, 0xbf] as const;

function firstNonSpaceByte(body: Buffer): number {
  let i = body[0] === UTF8_BOM[0] && body[1] === UTF8_BOM[1] && body[2] === UTF8_BOM[2] ? 3 : 0;
  for (; i < body.length; i++) {
    const c = body[i]!;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return i;
  }
  return -1;
}

/** JSON values start with one of: { [ " - 0-9 t f n. Anything else is not JSON. */
function looksLikeJson(c: number): boolean {
  return c === 0x7b || c === 0x5b || c === 0x22 || c === 0x2d || (c >= 0x30 && c <= 0x39) || c === 0x74 || c === 0x66 || c === 0x6e;
}
