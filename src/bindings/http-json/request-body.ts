/**
 * A caller's HTTP+JSON request body: its Content-Type, then its bytes, as
 * strictly as a remote's reply is read: bounded size and depth, valid UTF-8,
 * no lone surrogate escapes, no member twice in any object, no
 * `__proto__` / `constructor.prototype` keys, one JSON object. What passes is
 * what the remote receives, so every parser downstream reads the same
 * request the gateway checked. Pure.
 */
import type { IncomingHttpHeaders } from 'node:http';
import sjson from 'secure-json-parse';
import type { Reason } from '../../envelope/codes.js';
import { findDuplicateMember } from '../../envelope/duplicate-members.js';
import { recognizeStrictObject } from '../../envelope/json-recognizers.js';
import { scanJson } from '../../envelope/json-scan.js';
import { mediaTypeOf } from '../../http/media-type.js';

/** The media types the @a2a-js/sdk REST server accepts (its restContentTypeGuard), parameters ignored. */
const JSON_MEDIA_TYPES: ReadonlySet<string> = new Set(['application/json', 'application/a2a+json']);

/**
 * Undefined when the Content-Type is acceptable. A missing one is read as
 * JSON (the body is parsed as strictly either way); a different one is
 * refused, as the SDK server refuses it (ContentTypeNotSupported).
 */
export function contentTypeProblem(headers: IncomingHttpHeaders): string | undefined {
  const raw = headers['content-type'];
  if (raw === undefined) return undefined;
  return JSON_MEDIA_TYPES.has(mediaTypeOf(raw)) ? undefined : 'Content-Type is not a JSON media type';
}

export type BodyRead =
  /** `text` is the body decoded (a BOM dropped, surrounding whitespace trimmed); `value` is it parsed. */
  | { readonly ok: true; readonly text: string; readonly value: Record<string, unknown> }
  /** The body is empty or only whitespace. */
  | { readonly ok: true; readonly text: undefined; readonly value: undefined }
  | { readonly ok: false; readonly reason: Reason; readonly detail: string };

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

export function readRequestBody(body: Buffer | undefined, limits: { readonly maxRequestBytes: number; readonly maxJsonDepth: number }): BodyRead {
  if (body === undefined || body.length === 0) return { ok: true, text: undefined, value: undefined };
  if (body.length > limits.maxRequestBytes) return { ok: false, reason: 'REQUEST_TOO_LARGE', detail: `more than ${limits.maxRequestBytes} bytes` };
  let text: string;
  try {
    text = strictUtf8.decode(body).trim();
  } catch {
    return { ok: false, reason: 'PARSE_ERROR', detail: 'body is not valid UTF-8' };
  }
  if (text === '') return { ok: true, text: undefined, value: undefined };
  // The usual body is checked in one pass (plain member names, none special or twice, within the depth, no lone
  // surrogate escape): then JSON.parse reads it as secure-json-parse would. Anything else is checked in full below.
  // The pass reads the body's bytes, valid UTF-8 as the decoder just found; a byte-order mark (which the decoder
  // dropped) or whitespace JSON does not allow around it (which trim() dropped) leaves it not sure.
  if (recognizeStrictObject(body, limits.maxJsonDepth)) return { ok: true, text, value: JSON.parse(text) as Record<string, unknown> };
  return readInFull(text, limits);
}

/** The body's checks one by one (depth and surrogates, prototype keys, duplicates, an object): what the one pass is not sure of. */
export function readInFull(text: string, limits: { readonly maxJsonDepth: number }): BodyRead {
  const scan = scanJson(text, limits.maxJsonDepth);
  if (scan.problem === 'too-deep') return { ok: false, reason: 'INVALID_PARAMS', detail: `body is nested deeper than ${limits.maxJsonDepth} levels` };
  let value: unknown;
  try {
    value = sjson.parse(text, null, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    const forbidden = err instanceof SyntaxError && err.message.includes('forbidden prototype');
    return forbidden
      ? { ok: false, reason: 'INVALID_PARAMS', detail: 'body has a __proto__ or constructor.prototype key' }
      : { ok: false, reason: 'PARSE_ERROR' , detail: 'body is not valid JSON' };
  }
  if (scan.problem === 'lone-surrogate') return { ok: false, reason: 'INVALID_PARAMS', detail: 'body has a string with a lone surrogate escape' };
  const duplicate = findDuplicateMember(text, limits.maxJsonDepth);
  if (!duplicate.ok) {
    return duplicate.problem === 'too-deep'
      ? { ok: false, reason: 'INVALID_PARAMS', detail: `body is nested deeper than ${limits.maxJsonDepth} levels` }
      : { ok: false, reason: 'INVALID_PARAMS', detail: `member "${safeKey(duplicate.member)}" appears twice in ${where(duplicate.path)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'INVALID_PARAMS', detail: `body is ${Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`}, not a JSON object` };
  }
  return { ok: true, text, value: value as Record<string, unknown> };
}

/** The caller's own keys go into a gateway message: ASCII names pass, anything else is `*`. */
function safeKey(key: string): string {
  return /^[A-Za-z0-9_-]{1,64}$/.test(key) ? key : '*';
}

function where(path: readonly (string | number)[]): string {
  if (path.length === 0) return 'the body';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${safeKey(p)}`)).join('');
}
