/**
 * The heart of the gateway: whatever a remote sent, the caller gets one valid
 * JSON-RPC 2.0 envelope with its own id, exactly one of result/error, and
 * error text that is sanitized and bounded. Pure: bytes and policy in,
 * serialized envelope out; no Fastify, no network, no clock.
 */
import sjson from 'secure-json-parse';
import { Code, standardMessages, type Reason } from './codes.js';
import {
  gatewayError,
  remoteError,
  serializeError,
  serializeResultJson,
  type ErrorDetail,
  type JsonRpcErrorObject,
  type JsonRpcId,
} from './envelope.js';
import { scanJson } from './json-scan.js';
import { sanitizeText } from './sanitize.js';

export interface NormalizePolicy {
  readonly remote: string;
  readonly maxErrorMessageBytes: number;
  readonly maxJsonDepth: number;
  readonly keepRemoteErrorData: boolean;
}

/** The normalizer's view of a remote's config (unary replies and stream events alike). */
export function normalizePolicyOf(remote: {
  readonly name: string;
  readonly keepRemoteErrorData: boolean;
  readonly limits: { readonly maxErrorMessageBytes: number; readonly maxJsonDepth: number };
}): NormalizePolicy {
  return {
    remote: remote.name,
    maxErrorMessageBytes: remote.limits.maxErrorMessageBytes,
    maxJsonDepth: remote.limits.maxJsonDepth,
    keepRemoteErrorData: remote.keepRemoteErrorData,
  };
}

/** What the normalizer decided: the body to send, and a label for logs and metrics. */
export interface Normalized {
  readonly json: string;
  /** 'ok', 'REMOTE_ERROR' (the remote's own typed error), or a gateway Reason. */
  readonly outcome: 'ok' | 'REMOTE_ERROR' | Reason;
  /** Set when the remote sent a success; lets later stages (card rewrite, schema checks) look at it. */
  readonly result?: unknown;
}

export interface UpstreamReply {
  readonly status: number;
  readonly body: Buffer;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Normalizes a complete (already size-capped and decoded) unary reply. */
export function normalizeReply(reply: UpstreamReply, callerId: JsonRpcId, policy: NormalizePolicy): Normalized {
  const ok = reply.status >= 200 && reply.status < 300;
  const ctx = { remote: policy.remote, httpStatus: reply.status };
  const httpError = (): Normalized => fail(callerId, 'UPSTREAM_HTTP_ERROR', ctx, `HTTP ${reply.status}`);

  // Decide "is this JSON at all" on the raw bytes first: random garbage is a
  // non-JSON body, not a JSON body with bad UTF-8.
  const first = firstNonSpaceByte(reply.body);
  if (first === -1) return ok ? fail(callerId, 'EMPTY_RESPONSE', ctx) : httpError();
  if (!looksLikeJson(reply.body[first]!)) return ok ? fail(callerId, 'NON_JSON_RESPONSE', ctx) : httpError();
  let text: string;
  try {
    text = utf8.decode(reply.body);
  } catch {
    return ok ? fail(callerId, 'INVALID_UTF8', ctx) : httpError();
  }
  return normalizeJsonText(text, callerId, policy, reply.status);
}

/**
 * Normalizes JSON text that claims to be a JSON-RPC response: a unary body
 * after decoding, or one SSE event's `data`.
 */
export function normalizeJsonText(
  text: string,
  callerId: JsonRpcId,
  policy: NormalizePolicy,
  httpStatus = 200,
): Normalized {
  const ok = httpStatus >= 200 && httpStatus < 300;
  const ctx = { remote: policy.remote, httpStatus };
  const scan = scanJson(text, policy.maxJsonDepth);
  if (scan.problem === 'too-deep') return fail(callerId, 'JSON_TOO_DEEP', ctx, `deeper than ${policy.maxJsonDepth} levels`);

  let body: unknown;
  try {
    body = sjson.parse(text, null, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    if (!ok) return fail(callerId, 'UPSTREAM_HTTP_ERROR', ctx, `HTTP ${httpStatus}`);
    const forbidden = err instanceof SyntaxError && err.message.includes('forbidden prototype');
    return fail(callerId, forbidden ? 'UNSAFE_JSON' : 'INVALID_JSON', ctx);
  }
  if (scan.problem === 'lone-surrogate') return fail(callerId, 'INVALID_JSON', ctx, 'string with a lone surrogate escape');
  if (scan.problem === 'duplicate-member') return fail(callerId, 'INVALID_RESPONSE', ctx, `duplicate "${scan.member}" member`);

  const shape = describeNonObject(body);
  if (shape) return ok ? fail(callerId, 'INVALID_RESPONSE', ctx, `body is ${shape}`) : fail(callerId, 'UPSTREAM_HTTP_ERROR', ctx, `HTTP ${httpStatus}`);
  const envelope = body as Record<string, unknown>;

  const idProblem = checkUpstreamId(envelope);
  if (idProblem) return fail(callerId, 'INVALID_RESPONSE', ctx, idProblem);

  const error = envelope.error;
  if (error) return normalizeRemoteError(error, callerId, policy, ctx);
  if (!ok) return fail(callerId, 'UPSTREAM_HTTP_ERROR', ctx, `HTTP ${httpStatus}`);
  if (!Object.hasOwn(envelope, 'result')) {
    const detail = Object.hasOwn(envelope, 'error')
      ? `"error" is ${describeValue(error)} and there is no "result"`
      : 'neither "result" nor "error" is present';
    return fail(callerId, 'INVALID_RESPONSE', ctx, detail);
  }
  const resultJson = scan.resultStart >= 0 ? text.slice(scan.resultStart, scan.resultEnd) : JSON.stringify(envelope.result);
  return { json: serializeResultJson(callerId, resultJson), outcome: 'ok', result: envelope.result };
}

/** A failure the gateway itself describes (transport, limits, malformed replies). */
export function fail(
  callerId: JsonRpcId,
  reason: Reason,
  ctx: { remote?: string | undefined; httpStatus?: number | undefined; metadata?: Record<string, string | number | boolean> },
  detail?: string,
): Normalized {
  return { json: serializeError(callerId, gatewayError(reason, ctx, detail)), outcome: reason };
}

function normalizeRemoteError(
  error: unknown,
  callerId: JsonRpcId,
  policy: NormalizePolicy,
  ctx: { remote: string; httpStatus: number },
): Normalized {
  if (typeof error === 'string') {
    const message = boundedMessage(error, Code.InternalError, policy);
    return remote(callerId, Code.InternalError, message, ctx);
  }
  if (typeof error !== 'object' || Array.isArray(error) || error === null) {
    return fail(callerId, 'INVALID_RESPONSE', ctx, `"error" is ${describeValue(error)}, neither an object nor a string`);
  }
  const { code, message, data } = error as { code?: unknown; message?: unknown; data?: unknown };
  // A code outside the safe integer range cannot be a JSON-RPC code; keep the text, not the number.
  const typed = typeof code === 'number' && Number.isSafeInteger(code);
  const finalCode = typed ? code : Code.InternalError;
  const text = boundedMessage(typeof message === 'string' ? message : '', finalCode, policy);
  const details = policy.keepRemoteErrorData ? keepTypedDetails(data, policy.maxErrorMessageBytes) : [];
  const metadata = typed ? undefined : { remoteCode: 'missing' };
  return remote(callerId, finalCode, text, { ...ctx, ...(metadata ? { metadata } : {}) }, details);
}

function remote(
  callerId: JsonRpcId,
  code: number,
  message: { text: string; truncated: boolean },
  ctx: { remote: string; httpStatus: number; metadata?: Record<string, string> },
  details: ErrorDetail[] = [],
): Normalized {
  const metadata = message.truncated ? { ...ctx.metadata, messageTruncated: 'true' } : ctx.metadata;
  const err: JsonRpcErrorObject = remoteError(code, message.text, { ...ctx, metadata }, details);
  return { json: serializeError(callerId, err), outcome: 'REMOTE_ERROR' };
}

function boundedMessage(message: string, code: number, policy: NormalizePolicy): { text: string; truncated: boolean } {
  const cleaned = sanitizeText(message, policy.maxErrorMessageBytes);
  if (cleaned.text !== '') return cleaned;
  return sanitizeText(standardMessages[code] ?? 'Remote error', policy.maxErrorMessageBytes);
}

const MAX_REMOTE_DETAILS = 4;

/** Only `@type` objects pass, each one's strings sanitized, the whole bounded (the HTTP+JSON normalizer keeps details by the same rule). */
export function keepTypedDetails(data: unknown, maxTextBytes: number): ErrorDetail[] {
  if (!Array.isArray(data)) return [];
  const kept: ErrorDetail[] = [];
  let budget = 4 * maxTextBytes + 1024;
  for (const item of data) {
    if (kept.length >= MAX_REMOTE_DETAILS) break;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) continue;
    if (typeof (item as { '@type'?: unknown })['@type'] !== 'string') continue;
    const cleaned = sanitizeDeep(item, maxTextBytes, 0) as ErrorDetail;
    const size = JSON.stringify(cleaned).length;
    if (size > budget) break;
    budget -= size;
    kept.push(cleaned);
  }
  return kept;
}

function sanitizeDeep(value: unknown, maxTextBytes: number, depth: number): unknown {
  if (typeof value === 'string') return sanitizeText(value, maxTextBytes).text;
  if (depth > 4 || value === null || typeof value !== 'object') return typeof value === 'object' ? null : value;
  if (Array.isArray(value)) return value.slice(0, 16).map((v) => sanitizeDeep(v, maxTextBytes, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value).slice(0, 16)) {
    const key = sanitizeText(k, 64).text;
    // "__pro\u200bto__" sanitizes into a key the parser rejected; never re-create one.
    if (key === '__proto__' || key === 'prototype') continue;
    out[key] = sanitizeDeep(v, maxTextBytes, depth + 1);
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
  return `${typeof value === 'number' ? 'the number' : typeof value === 'boolean' ? 'the boolean' : typeof value} ${String(value)}`;
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
