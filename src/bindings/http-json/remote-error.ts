/**
 * A remote's HTTP+JSON error body (already parsed) → the remote's typed
 * error as an ErrorOutcome, sanitized and bounded; undefined when the body is
 * no error shape the gateway reads (the caller then reports the HTTP status
 * alone, never the body). Shapes read:
 *
 * - google.rpc.Status JSON (spec 1.0.1 §11.6, normative):
 *   `{"error":{"code","status","message","details"}}`;
 * - RFC 9457 problem details (§6.4's example): `{"type","title","status","detail"}`,
 *   an A2A `type` (`https://a2a-protocol.org/errors/version-not-supported`) naming the error;
 * - A2A 0.3's REST error body: `{"code":<JSON-RPC code>,"message","data"}`;
 * - `{"error":"text"}`, read like a JSON-RPC string error.
 *
 * The code comes from the A2A ErrorInfo (domain a2a-protocol.org) when the
 * remote sent one, else from the HTTP status (status-map.ts). Extra members
 * are dropped; a missing message becomes the code's standard message; the
 * A2A ErrorInfo's metadata and (with keepRemoteErrorData) other typed
 * details are kept, sanitized and bounded; ErrorInfos in the gateway's or
 * A2A's domain never pass as details (the gateway writes those). Pure.
 */
import { A2A_ERROR_DOMAIN, ERROR_INFO_TYPE, GATEWAY_ERROR_DOMAIN, type ErrorDetail, type ErrorOutcome } from '../../core/outcome.js';
import { Code, standardMessages } from '../../envelope/codes.js';
import { keepTypedDetails, type NormalizePolicy } from '../../envelope/normalize.js';
import { sanitizeText } from '../../envelope/sanitize.js';
import { a2aReasonOfCode, codeOfA2aReason, codeOfRemoteStatus, statusOfCode } from '../status-map.js';

/** At most this many A2A ErrorInfo metadata entries are kept. */
export const MAX_A2A_METADATA_ENTRIES = 8;
/** Each kept metadata key, after sanitizing, in UTF-8 bytes; longer keys are dropped, not cut. */
export const MAX_A2A_METADATA_KEY_BYTES = 64;

const A2A_PROBLEM_TYPE = /^https?:\/\/a2a-protocol\.org\/errors\/([a-z]+(?:-[a-z]+)*)$/;

interface ErrorParts {
  readonly code: number;
  readonly message: string;
  readonly a2a?: { readonly reason: string; readonly metadata: Record<string, string> };
  readonly details: unknown;
  readonly remoteCode?: 'missing';
}

/**
 * `httpStatus` is the status the error was sent with (for an SSE `event:
 * error`, the Status's own `code` when it is an HTTP error status).
 */
export function remoteErrorOutcome(body: Record<string, unknown>, httpStatus: number | undefined, policy: NormalizePolicy): ErrorOutcome | undefined {
  const parts = readStatus(body, httpStatus, policy) ?? readProblem(body, httpStatus) ?? readLegacy(body, httpStatus);
  if (parts === undefined) return undefined;

  const cleaned = sanitizeText(parts.message, policy.maxErrorMessageBytes);
  const message = cleaned.text !== '' ? cleaned : sanitizeText(standardMessages[parts.code] ?? 'Remote error', policy.maxErrorMessageBytes);
  const metadata: Record<string, string> = { remote: policy.remote };
  if (httpStatus !== undefined) metadata.httpStatus = String(httpStatus);
  if (message.truncated) metadata.messageTruncated = 'true';
  if (parts.remoteCode) metadata.remoteCode = parts.remoteCode;
  const a2aReason = parts.a2a?.reason ?? a2aReasonOfCode(parts.code);
  // keepTypedDetails keeps only objects with a string `@type`, which is what an outcome's detail is.
  const details = (policy.keepRemoteErrorData && Array.isArray(parts.details)
    ? keepTypedDetails(parts.details.filter((d) => !isReservedErrorInfo(d)), policy)
    : []) as unknown as ErrorDetail[];
  return {
    kind: 'error',
    code: parts.code,
    message: message.text,
    reason: 'REMOTE_ERROR',
    metadata,
    ...(a2aReason === undefined ? {} : { a2a: { reason: a2aReason, metadata: parts.a2a?.metadata ?? {} } }),
    details,
    ...(httpStatus === undefined ? {} : { remoteStatus: { http: httpStatus } }),
  };
}

/** google.rpc.Status JSON: `error` is an object (or, loosely, a string). */
function readStatus(body: Record<string, unknown>, httpStatus: number | undefined, policy: NormalizePolicy): ErrorParts | undefined {
  if (!Object.hasOwn(body, 'error')) return undefined;
  const error = body.error;
  if (typeof error === 'string') return { code: codeOfStatus(httpStatus), message: error, details: undefined };
  if (!isPlainObject(error)) return undefined;
  const { status, message, details } = error;
  const a2a = findA2aErrorInfo(details, policy.maxErrorMessageBytes);
  const statusName = typeof status === 'string' ? status : undefined;
  const code = a2a?.code ?? codeOfStatus(httpStatus, statusName);
  return {
    code,
    message: typeof message === 'string' ? message : '',
    ...(a2a === undefined ? {} : { a2a: { reason: a2a.reason, metadata: a2a.metadata } }),
    details,
  };
}

/** RFC 9457 problem details: at least one of its string members, and no `error`. */
function readProblem(body: Record<string, unknown>, httpStatus: number | undefined): ErrorParts | undefined {
  const { type, title, detail, message: plain } = body;
  if (typeof type !== 'string' && typeof title !== 'string' && typeof detail !== 'string') return undefined;
  const m = typeof type === 'string' ? A2A_PROBLEM_TYPE.exec(type) : null;
  const a2aCode = m ? codeOfA2aReason(m[1]!.toUpperCase().replaceAll('-', '_')) : undefined;
  const message = [detail, title, plain].find((v): v is string => typeof v === 'string' && v.trim() !== '') ?? '';
  return { code: a2aCode ?? codeOfStatus(httpStatus), message, details: undefined };
}

/** A2A 0.3's REST error: `{code, message, data}` with a JSON-RPC code. */
function readLegacy(body: Record<string, unknown>, httpStatus: number | undefined): ErrorParts | undefined {
  const { code, message } = body;
  if (typeof message !== 'string' && typeof code !== 'number') return undefined;
  const known = typeof code === 'number' && (a2aReasonOfCode(code) !== undefined || statusOfCode(code).grpc !== 'UNKNOWN');
  return {
    code: known ? (code as number) : codeOfStatus(httpStatus),
    message: typeof message === 'string' ? message : '',
    details: undefined,
    ...(typeof code === 'number' ? {} : { remoteCode: 'missing' as const }),
  };
}

function codeOfStatus(httpStatus: number | undefined, statusName?: string): number {
  return httpStatus === undefined ? (statusName === undefined ? Code.InternalError : codeOfRemoteStatus(500, statusName)) : codeOfRemoteStatus(httpStatus, statusName);
}

/** The first A2A ErrorInfo with a reason the gateway knows, its metadata sanitized and bounded. */
function findA2aErrorInfo(details: unknown, maxValueBytes: number): { code: number; reason: string; metadata: Record<string, string> } | undefined {
  if (!Array.isArray(details)) return undefined;
  for (const item of details.slice(0, 16)) {
    if (!isErrorInfo(item) || item.domain !== A2A_ERROR_DOMAIN || typeof item.reason !== 'string') continue;
    const code = codeOfA2aReason(item.reason);
    if (code === undefined) continue;
    return { code, reason: item.reason, metadata: cleanMetadata(item.metadata, maxValueBytes) };
  }
  return undefined;
}

/** ErrorInfo metadata is a map of strings: keys and values sanitized, values cut, at most 8 entries. */
export function cleanMetadata(metadata: unknown, maxValueBytes: number): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isPlainObject(metadata)) return out;
  let count = 0;
  for (const [rawKey, rawValue] of Object.entries(metadata)) {
    if (count >= MAX_A2A_METADATA_ENTRIES) break;
    if (typeof rawValue !== 'string' && typeof rawValue !== 'number' && typeof rawValue !== 'boolean') continue;
    const key = sanitizeText(rawKey, MAX_A2A_METADATA_KEY_BYTES);
    // "__pro\u200bto__" sanitizes into a key the JSON parser refused; never re-create one.
    if (key.truncated || key.text === '' || key.text === '__proto__' || key.text === 'prototype' || Object.hasOwn(out, key.text)) continue;
    Object.defineProperty(out, key.text, { value: sanitizeText(String(rawValue), maxValueBytes).text, enumerable: true, writable: true, configurable: true });
    count++;
  }
  return out;
}

/** An ErrorInfo in a domain whose meaning the gateway owns or writes itself. */
export function isReservedErrorInfo(item: unknown): boolean {
  return isErrorInfo(item) && (item.domain === GATEWAY_ERROR_DOMAIN || item.domain === A2A_ERROR_DOMAIN);
}

function isErrorInfo(item: unknown): item is Record<string, unknown> {
  return isPlainObject(item) && item['@type'] === ERROR_INFO_TYPE;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
