/**
 * The heart of the gateway: whatever a remote sent, the caller gets one valid
 * JSON-RPC 2.0 envelope with its own id, exactly one of result/error, and
 * error text that is sanitized and bounded. With a redactor in the policy
 * (a remote with `auth`), none of the remote's credentials reach the caller
 * either: not in the message, the kept data or the result. Pure: bytes and
 * policy in, serialized envelope out; no Fastify, no network, no clock.
 */
import { isUtf8 } from 'node:buffer';
import sjson from 'secure-json-parse';
import { isReservedErrorInfo, remoteA2aMetadata, type TextCleaner } from './a2a-error-info.js';
import { Code, a2aErrorReasons, standardMessages, type CallerGeneration, type Reason } from './codes.js';
import {
  gatewayError,
  remoteError,
  resultEnvelopeHead,
  serializeError,
  serializeResultJson,
  type ErrorDetail,
  type JsonRpcErrorObject,
  type JsonRpcId,
} from './envelope.js';
import { scanJson } from './json-scan.js';
import type { Redactor } from './redact.js';
import { recognizeResultEnvelope, textBetween, utf8Of } from './json-recognizers.js';
import { cleanText, truncateUtf8, type SanitizedText } from './sanitize.js';

export interface NormalizePolicy {
  readonly remote: string;
  readonly maxErrorMessageBytes: number;
  readonly maxJsonDepth: number;
  readonly keepRemoteErrorData: boolean;
  /** The caller's A2A generation; decides the shape of error.data (see envelope.ts errorData). Default 1.0. */
  readonly caller?: CallerGeneration;
  /** The remote's credentials to keep from the caller; absent for a remote without `auth`. */
  readonly redactor?: Redactor | undefined;
  /**
   * Nothing reads the envelope's text after this unless it asks (a JSON-RPC caller of a JSON-RPC remote with nothing
   * to translate, rewrite or check after; the call runner's codecs, whose Outcomes decode on use): a plain success may
   * then be kept as bytes (`wire`) and never decoded.
   */
  readonly keepBytes?: boolean;
}

/** The normalizer's view of a remote's config (unary replies and stream events alike). */
export function normalizePolicyOf(
  remote: {
    readonly name: string;
    readonly keepRemoteErrorData: boolean;
    readonly limits: { readonly maxErrorMessageBytes: number; readonly maxJsonDepth: number };
  },
  caller: CallerGeneration = '1.0',
  redactor?: Redactor,
  keepBytes = false,
): NormalizePolicy {
  return {
    remote: remote.name,
    maxErrorMessageBytes: remote.limits.maxErrorMessageBytes,
    maxJsonDepth: remote.limits.maxJsonDepth,
    keepRemoteErrorData: remote.keepRemoteErrorData,
    caller,
    ...(redactor ? { redactor } : {}),
    ...(keepBytes ? { keepBytes } : {}),
  };
}

/** What the normalizer decided: the body to send, and a label for logs and metrics. */
export interface Normalized {
  readonly json: string;
  /** 'ok', 'REMOTE_ERROR' (the remote's own typed error), or a gateway Reason. */
  readonly outcome: 'ok' | 'REMOTE_ERROR' | Reason;
  /** Set when the remote sent a success; lets later stages (card rewrite, schema checks) look at it. */
  readonly result?: unknown;
  /** A success's result JSON exactly as spliced into `json` (absent where a stage made the envelope anew). */
  readonly resultJson?: string;
  /** Credentials of the remote removed (or, for CREDENTIAL_ECHOED, refused); for the metric and the log. */
  readonly redactions?: number;
  /**
   * The same envelope as `json`, as its UTF-8 bytes one character per byte (a latin1 string: written with the
   * latin1 encoding, its length is its byte count). Present only on a plain success kept as the remote's bytes
   * (policy `keepBytes`); anything that makes a new envelope from one makes it without `wire`.
   */
  readonly wire?: string;
  /** The result's part of `wire` (its bytes as the remote sent them), where there is a `wire`. */
  readonly resultWire?: string;
}

export interface UpstreamReply {
  readonly status: number;
  readonly body: Buffer;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Normalizes a complete (already size-capped and decoded) unary reply. */
export function normalizeReply(reply: UpstreamReply, callerId: JsonRpcId, policy: NormalizePolicy): Normalized {
  const ok = reply.status >= 200 && reply.status < 300;
  const errorFacts = { remote: policy.remote, httpStatus: reply.status, caller: policy.caller };
  const httpError = (): Normalized => failureEnvelope(callerId, 'UPSTREAM_HTTP_ERROR', errorFacts, `HTTP ${reply.status}`);

  // Decide "is this JSON at all" on the raw bytes first: random garbage is a
  // non-JSON body, not a JSON body with bad UTF-8.
  const first = firstNonSpaceByte(reply.body);
  if (first === -1) return ok ? failureEnvelope(callerId, 'EMPTY_RESPONSE', errorFacts) : httpError();
  if (!looksLikeJson(reply.body[first]!)) return ok ? failureEnvelope(callerId, 'NON_JSON_RESPONSE', errorFacts) : httpError();
  if (policy.keepBytes && ok && policy.redactor === undefined) {
    const kept = plainResultBytes(reply.body, callerId, policy);
    if (kept) return kept;
  }
  let text: string;
  try {
    text = utf8.decode(reply.body);
  } catch {
    return ok ? failureEnvelope(callerId, 'INVALID_UTF8', errorFacts) : httpError();
  }
  // Without a byte-order mark (which the decoder dropped) the body is the text's UTF-8 as the recognizer reads it.
  return normalizeJsonText(text, callerId, policy, reply.status, reply.body[0] === UTF8_BOM[0] ? undefined : reply.body);
}

/**
 * Normalizes JSON text that claims to be a JSON-RPC response: a unary body
 * after decoding, or one SSE event's `data`. A plain success (see
 * plainResult) is spliced without being built; everything else takes the
 * full path, which decides it exactly as before. `bytes`: the text's UTF-8
 * encoding, when the caller has it (else it is made when needed).
 */
export function normalizeJsonText(
  text: string,
  callerId: JsonRpcId,
  policy: NormalizePolicy,
  httpStatus = 200,
  bytes?: Buffer,
): Normalized {
  return plainResult(text, bytes, callerId, policy, httpStatus) ?? normalizeJsonTextFully(text, callerId, policy, httpStatus);
}

/**
 * The common reply, a 2xx success with a plain `result` (result-envelope.ts
 * checks the whole text in one pass: grammar, depth, no `error`, no member
 * named twice among id/jsonrpc/result, no `__proto__`/`constructor` names, no
 * lone surrogate), answered with the remote's result bytes spliced behind
 * the caller's id — what the full path writes for it, without building the
 * value (JSON.parse, the depth/duplicate scan and the garbage were most of a
 * unary reply's normalizing CPU). The value is parsed only if a later stage
 * reads `result` (a result check, the card rewrite, the version bridge,
 * trace attributes). Undefined: not certainly plain, take the full path.
 * Pinned to the full path by test/unit/result-envelope.property.test.ts.
 */
function plainResult(text: string, bytes: Buffer | undefined, callerId: JsonRpcId, policy: NormalizePolicy, httpStatus: number): Normalized | undefined {
  if (httpStatus < 200 || httpStatus > 299) return undefined;
  const resultJson = plainResultJson(text, bytes, policy.maxJsonDepth);
  if (resultJson === undefined) return undefined;
  // Anything the redactor's probe flags is redacted from the parsed value: the full path does that.
  if (policy.redactor?.mayHold(resultJson)) return undefined;
  return new PlainSuccess(serializeResultJson(callerId, resultJson), resultJson);
}

/**
 * The result's JSON text when `text` is certainly a plain success envelope (recognizeResultEnvelope: its id one the
 * full path takes as it is), else undefined. `bytes`: the text's UTF-8 when the caller has it (a body, an SSE event's
 * data), else made here; a text with a lone surrogate has none, and goes the full way.
 */
export function plainResultJson(text: string, bytes: Buffer | undefined, maxJsonDepth: number): string | undefined {
  const json = bytes ?? utf8Of(text);
  if (json === undefined) return undefined;
  const found = recognizeResultEnvelope(json, maxJsonDepth);
  return found === undefined ? undefined : textBetween(text, json, found.resultStart, found.resultEnd);
}

/**
 * plainResult on the body's bytes, for a caller written the bytes as they are: valid UTF-8 (what the decoder
 * requires), then recognized (json-recognizers.ts reads UTF-8 bytes), and the result's bytes go out as they came, as
 * a latin1 string, one character per byte: the 1 KiB reply is never decoded into a string, scanned as two-byte text,
 * measured and encoded back (about 4 µs of a call, most of it the decode). A body with a byte-order mark is left to
 * the decoder, which drops the mark. No redactor: its probe reads decoded text (the caller checks).
 */
function plainResultBytes(body: Buffer, callerId: JsonRpcId, policy: NormalizePolicy): Normalized | undefined {
  if (body[0] === UTF8_BOM[0] || !isUtf8(body)) return undefined;
  const found = recognizeResultEnvelope(body, policy.maxJsonDepth);
  if (!found) return undefined;
  return new WireSuccess(callerId, body.toString('latin1', found.resultStart, found.resultEnd));
}

/** `{"jsonrpc":"2.0","id":<id>,"result":` as UTF-8 bytes, one character per byte (a latin1 string). */
function resultEnvelopeHeadBytes(callerId: JsonRpcId): string {
  const head = resultEnvelopeHead(callerId);
  // The caller's id is text (a string id may hold any character): its UTF-8 bytes go in the envelope. Only a string
  // id can hold a character past ASCII, and the id is what is tested: the head is a fresh concatenation, which the
  // regular expression would first have to flatten, through the runtime.
  return typeof callerId === 'string' && NON_ASCII.test(callerId) ? Buffer.from(head).toString('latin1') : head;
}

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * A plain success kept as bytes: `wire` is what a JSON-RPC caller is written, `resultWire` the remote's result bytes
 * in it; the envelope (`wire`), its text (`json`) and the result value are made only if something reads them: a
 * JSON-RPC caller reads the envelope, a codec's caller (HTTP+JSON, gRPC) only the result bytes, so it never has the
 * caller's envelope made and taken apart again. A class with getters on its prototype (see PlainSuccess).
 */
class WireSuccess implements Normalized {
  readonly outcome = 'ok' as const;
  readonly #callerId: JsonRpcId;
  #wire: string | undefined = undefined;
  #json: string | undefined = undefined;
  #parsed = false;
  #value: unknown = undefined;

  constructor(
    callerId: JsonRpcId,
    readonly resultWire: string,
  ) {
    this.#callerId = callerId;
  }

  get wire(): string {
    this.#wire ??= `${resultEnvelopeHeadBytes(this.#callerId)}${this.resultWire}}`;
    return this.#wire;
  }

  get json(): string {
    this.#json ??= Buffer.from(this.wire, 'latin1').toString('utf8');
    return this.#json;
  }

  get result(): unknown {
    if (!this.#parsed) {
      // As PlainSuccess: the recognizer refused `__proto__` and `constructor` member names.
      const resultBytes = Buffer.from(this.resultWire, 'latin1');
      this.#value = JSON.parse(resultBytes.toString('utf8')) as unknown;
      this.#parsed = true;
    }
    return this.#value;
  }
}

/**
 * A plain success whose result value is parsed on first read. A class with the getter on its prototype, not an
 * object literal with a getter: V8 stores a literal's own getter in an AccessorPair it allocates in old space, so
 * every call left an old object pointing at its getter closure, and through it at the result text and the reply's
 * text, keeping them alive through every young-generation collection until the next full one. Measured under unary
 * load: 2.6 KB of each call promoted to old space with the literal, 90 bytes with the class (node --trace-gc-nvp,
 * `promoted`).
 */
class PlainSuccess implements Normalized {
  readonly outcome = 'ok' as const;
  readonly resultJson: string;
  #parsed = false;
  #value: unknown = undefined;

  constructor(
    readonly json: string,
    resultJson: string,
  ) {
    this.resultJson = resultJson;
  }

  get result(): unknown {
    if (!this.#parsed) {
      // The recognizer refused `__proto__` and `constructor` member names, so a plain JSON.parse is safe here.
      this.#value = JSON.parse(this.resultJson) as unknown;
      this.#parsed = true;
    }
    return this.#value;
  }
}

/**
 * The envelope with its count of removed credentials. A plain success's result is a getter on its prototype, which
 * a spread would not copy, so it is carried over by name.
 */
export function withRedactionCount(normalized: Normalized, redactions: number): Normalized {
  // Named member by member: a spread would also copy `wire`, the bytes before anything was removed.
  const { json, outcome } = normalized;
  return 'result' in normalized ? { json, outcome, result: normalized.result, redactions } : { json, outcome, redactions };
}

/** normalizeJsonText without the plain-result shortcut: the reference every reply shape is decided by. */
export function normalizeJsonTextFully(
  text: string,
  callerId: JsonRpcId,
  policy: NormalizePolicy,
  httpStatus = 200,
): Normalized {
  const ok = httpStatus >= 200 && httpStatus < 300;
  const errorFacts = { remote: policy.remote, httpStatus, caller: policy.caller };
  const scan = scanJson(text, policy.maxJsonDepth);
  if (scan.problem === 'too-deep') return failureEnvelope(callerId, 'JSON_TOO_DEEP', errorFacts, `deeper than ${policy.maxJsonDepth} levels`);

  let body: unknown;
  try {
    body = sjson.parse(text, null, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    if (!ok) return failureEnvelope(callerId, 'UPSTREAM_HTTP_ERROR', errorFacts, `HTTP ${httpStatus}`);
    const forbidden = err instanceof SyntaxError && err.message.includes('forbidden prototype');
    return failureEnvelope(callerId, forbidden ? 'UNSAFE_JSON' : 'INVALID_JSON', errorFacts);
  }
  if (scan.problem === 'lone-surrogate') return failureEnvelope(callerId, 'INVALID_JSON', errorFacts, 'string with a lone surrogate escape');
  if (scan.problem === 'duplicate-member') return failureEnvelope(callerId, 'INVALID_RESPONSE', errorFacts, `duplicate "${scan.member}" member`);

  const shape = describeNonObject(body);
  if (shape) return ok ? failureEnvelope(callerId, 'INVALID_RESPONSE', errorFacts, `body is ${shape}`) : failureEnvelope(callerId, 'UPSTREAM_HTTP_ERROR', errorFacts, `HTTP ${httpStatus}`);
  const envelope = body as Record<string, unknown>;

  const idProblem = checkUpstreamId(envelope);
  if (idProblem) return failureEnvelope(callerId, 'INVALID_RESPONSE', errorFacts, idProblem);

  const error = envelope.error;
  if (error) return normalizeRemoteError(error, callerId, policy, errorFacts);
  if (!ok) return failureEnvelope(callerId, 'UPSTREAM_HTTP_ERROR', errorFacts, `HTTP ${httpStatus}`);
  if (!Object.hasOwn(envelope, 'result')) {
    const detail = Object.hasOwn(envelope, 'error')
      ? `"error" is ${describeValue(error)} and there is no "result"`
      : 'neither "result" nor "error" is present';
    return failureEnvelope(callerId, 'INVALID_RESPONSE', errorFacts, detail);
  }
  const resultJson = scan.resultStart >= 0 ? text.slice(scan.resultStart, scan.resultEnd) : JSON.stringify(envelope.result);
  if (policy.redactor?.mayHold(resultJson)) return redactedResult(envelope.result, callerId, policy.redactor, errorFacts);
  return { json: serializeResultJson(callerId, resultJson), outcome: 'ok', result: envelope.result, resultJson };
}

/**
 * A result the redactor's probe flagged: every string redacted, then
 * re-serialized from the parsed value, so the bytes that were flagged are
 * not passed on as they came (a duplicate member or a long number the parse
 * dropped cannot carry a credential past it). A credential in a member name
 * or a number cannot be replaced without changing the result: refused.
 */
function redactedResult(result: unknown, callerId: JsonRpcId, redactor: Redactor, errorFacts: { remote: string; httpStatus: number }): Normalized {
  const redacted = redactor.value(result);
  if (!redacted.ok) return { ...failureEnvelope(callerId, 'CREDENTIAL_ECHOED', errorFacts, `in a ${redacted.where} of the result`), redactions: 1 };
  const json = serializeResultJson(callerId, JSON.stringify(redacted.value));
  return { json, outcome: 'ok', result: redacted.value, ...(redacted.count > 0 ? { redactions: redacted.count } : {}) };
}

/** A failure the gateway itself describes (transport, limits, malformed replies). */
export function failureEnvelope(
  callerId: JsonRpcId,
  reason: Reason,
  errorFacts: {
    remote?: string | undefined;
    httpStatus?: number | undefined;
    metadata?: Record<string, string | number | boolean>;
    caller?: CallerGeneration | undefined;
  },
  detail?: string,
): Normalized {
  return { json: serializeError(callerId, gatewayError(reason, errorFacts, detail)), outcome: reason };
}

function normalizeRemoteError(
  error: unknown,
  callerId: JsonRpcId,
  policy: NormalizePolicy,
  errorFacts: { remote: string; httpStatus: number; caller?: CallerGeneration | undefined },
): Normalized {
  const seen: Seen = { redactions: 0 };
  if (typeof error === 'string') {
    const message = boundedMessage(error, Code.InternalError, policy, seen);
    return withRedactions(remote(callerId, Code.InternalError, message, errorFacts), seen);
  }
  if (typeof error !== 'object' || Array.isArray(error) || error === null) {
    return failureEnvelope(callerId, 'INVALID_RESPONSE', errorFacts, `"error" is ${describeValue(error)}, neither an object nor a string`);
  }
  const { code, message, data } = error as { code?: unknown; message?: unknown; data?: unknown };
  // A code outside the safe integer range cannot be a JSON-RPC code; keep the text, not the number.
  let typed = typeof code === 'number' && Number.isSafeInteger(code);
  // A credential made of digits can come back as the code itself.
  if (typed && policy.redactor && !policy.redactor.value(code).ok) {
    typed = false;
    seen.redactions++;
  }
  const finalCode = typed ? (code as number) : Code.InternalError;
  const text = boundedMessage(typeof message === 'string' ? message : '', finalCode, policy, seen);
  const details = policy.keepRemoteErrorData ? keepTypedDetails(data, policy, seen) : [];
  const metadata = typed ? undefined : { remoteCode: 'missing' };
  // A2A's own ErrorInfo for this code: the remote's metadata carries over (1.0 callers only; see errorData).
  const a2aReason = a2aErrorReasons[finalCode];
  const a2aMetadata =
    a2aReason !== undefined && policy.caller !== '0.3'
      ? remoteA2aMetadata(data, a2aReason, policy.maxErrorMessageBytes, cleanerFor(policy.redactor, seen))
      : undefined;
  return withRedactions(remote(callerId, finalCode, text, { ...errorFacts, ...(metadata ? { metadata } : {}) }, details, a2aMetadata), seen);
}

/** Counts what the redactor removed while one reply is normalized. */
interface Seen {
  redactions: number;
}

function withRedactions(normalized: Normalized, seen: Seen): Normalized {
  return seen.redactions > 0 ? { ...normalized, redactions: seen.redactions } : normalized;
}

/**
 * Remote text for the caller: sanitized whole, then redacted, then cut to
 * the bound, so a credential the bound would cut in half is already gone.
 */
function cleanBounded(text: string, maxBytes: number, redactor: Redactor | undefined, seen: Seen): SanitizedText {
  const cleaned = cleanText(text);
  if (!redactor) return truncateUtf8(cleaned, maxBytes);
  const redacted = redactor.text(cleaned);
  seen.redactions += redacted.count;
  return truncateUtf8(redacted.text, maxBytes);
}

/** cleanBounded as a TextCleaner that also says whether it redacted (a2a-error-info.ts drops such keys). */
function cleanerFor(redactor: Redactor | undefined, seen: Seen): TextCleaner {
  return (text, maxBytes) => {
    const before = seen.redactions;
    const cleaned = cleanBounded(text, maxBytes, redactor, seen);
    return seen.redactions === before ? cleaned : { ...cleaned, redacted: true };
  };
}

function remote(
  callerId: JsonRpcId,
  code: number,
  message: { text: string; truncated: boolean },
  errorFacts: { remote: string; httpStatus: number; metadata?: Record<string, string>; caller?: CallerGeneration | undefined },
  details: ErrorDetail[] = [],
  a2aMetadata?: Record<string, string>,
): Normalized {
  const metadata = message.truncated ? { ...errorFacts.metadata, messageTruncated: 'true' } : errorFacts.metadata;
  const err: JsonRpcErrorObject = remoteError(code, message.text, { ...errorFacts, metadata }, details, a2aMetadata);
  return { json: serializeError(callerId, err), outcome: 'REMOTE_ERROR' };
}

function boundedMessage(message: string, code: number, policy: NormalizePolicy, seen: Seen): { text: string; truncated: boolean } {
  const cleaned = cleanBounded(message, policy.maxErrorMessageBytes, policy.redactor, seen);
  if (cleaned.text !== '') return cleaned;
  return truncateUtf8(standardMessages[code] ?? 'Remote error', policy.maxErrorMessageBytes);
}

const MAX_REMOTE_DETAILS = 4;

/** Only `@type` objects pass, each one's strings sanitized (and redacted), the whole bounded (the HTTP+JSON normalizer keeps details by the same rule). */
export function keepTypedDetails(data: unknown, policy: NormalizePolicy, seen: Seen = { redactions: 0 }): ErrorDetail[] {
  const maxTextBytes = policy.maxErrorMessageBytes;
  if (!Array.isArray(data)) return [];
  const kept: ErrorDetail[] = [];
  let budget = 4 * maxTextBytes + 1024;
  for (const item of data) {
    if (kept.length >= MAX_REMOTE_DETAILS) break;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) continue;
    if (typeof (item as { '@type'?: unknown })['@type'] !== 'string') continue;
    // Counted only if the detail is kept: a dropped one shows the caller nothing.
    const itemSeen: Seen = { redactions: 0 };
    const cleaned = sanitizeDeep(item, maxTextBytes, 0, policy.redactor, itemSeen) as ErrorDetail;
    // ErrorInfos in the gateway's or A2A's domain are written by the gateway itself, never passed on.
    if (isReservedErrorInfo(cleaned)) continue;
    const size = JSON.stringify(cleaned).length;
    if (size > budget) break;
    budget -= size;
    kept.push(cleaned);
    seen.redactions += itemSeen.redactions;
  }
  return kept;
}

function sanitizeDeep(value: unknown, maxTextBytes: number, depth: number, redactor: Redactor | undefined, seen: Seen): unknown {
  if (typeof value === 'string') return cleanBounded(value, maxTextBytes, redactor, seen).text;
  if (typeof value === 'number' && redactor && !redactor.value(value).ok) {
    seen.redactions++;
    return null;
  }
  if (depth > 4 || value === null || typeof value !== 'object') return typeof value === 'object' ? null : value;
  if (Array.isArray(value)) return value.slice(0, 16).map((v) => sanitizeDeep(v, maxTextBytes, depth + 1, redactor, seen));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value).slice(0, 16)) {
    // These details are a lossy copy already: a member whose name carries a credential is dropped.
    const before = seen.redactions;
    const key = cleanBounded(k, 64, redactor, seen).text;
    if (seen.redactions !== before) continue;
    // "__pro\u200bto__" sanitizes into a key the parser rejected; never re-create one.
    if (key === '__proto__' || key === 'prototype') continue;
    out[key] = sanitizeDeep(v, maxTextBytes, depth + 1, redactor, seen);
  }
  return out;
}

function checkUpstreamId(envelope: Record<string, unknown>): string | undefined {
  if (!Object.hasOwn(envelope, 'id')) return undefined;
  const id = envelope.id;
  if (id === null || typeof id === 'string') return undefined;
  if (typeof id === 'number') {
    if (!Number.isFinite(id)) return '"id" is a number out of range';
    if (Number.isInteger(id) && !Number.isSafeInteger(id)) return '"id" is a number that does not survive a round trip';
    return undefined;
  }
  return `"id" is ${describeValue(id)}`;
}

function describeNonObject(body: unknown): string | undefined {
  if (Array.isArray(body)) return 'an array';
  if (body === null) return 'null';
  if (typeof body !== 'object') return `a ${typeof body}`;
  return undefined;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value === '' ? 'an empty string' : 'a string';
  if (typeof value === 'object') return 'an object';
  // A long number may be a credential made of digits that the remote echoes: only short ones are shown.
  if (typeof value === 'number') return String(value).length < 8 ? `the number ${String(value)}` : 'a number';
  return `${typeof value === 'boolean' ? 'the boolean' : typeof value} ${String(value)}`;
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
