/**
 * Validates what a local caller sent before anything goes upstream. Pure:
 * bytes in, a parsed request or the gateway's error out.
 *
 * The caller's bytes are forwarded as they came, so they must read the same
 * in the remote's parser as in the gateway's: a member named twice anywhere
 * (even through escapes) is refused (see ../envelope/strict-json.ts), and so
 * is a second spelling of a JSON-RPC member (`"Method"`, `"METHOD"`) that
 * case-insensitive decoders such as Go's encoding/json would read as the
 * member itself.
 */
import { isUtf8 } from 'node:buffer';
import type { Reason } from '../envelope/codes.js';
import type { JsonRpcId } from '../envelope/envelope.js';
import { describeDuplicate, parseStrictJson } from '../envelope/strict-json.js';
import { recognizeCallerRequest } from '../envelope/json-recognizers.js';

export interface CallerRequest {
  readonly id: JsonRpcId;
  readonly method: string;
  /** The caller's bytes, forwarded unchanged so nothing is lost in re-serialization. */
  readonly raw: Buffer;
  readonly params?: unknown;
  /**
   * Whether the params' bytes hold `quotedName` (a member name in its quotes), when the request was read in one pass
   * (recognizeCallerRequest, envelope/json-recognizers.ts): every member name in them is then written without
   * escapes, so a name they do not hold is no member anywhere in the params. Absent for a request checked in full.
   */
  paramsHold?(quotedName: Buffer): boolean;
}

export type CallerRequestCheck =
  | { readonly ok: true; readonly request: CallerRequest }
  | { readonly ok: false; readonly reason: Reason; readonly id: JsonRpcId; readonly detail?: string };

const MAX_ID_STRING_BYTES = 256;
const MAX_METHOD_LENGTH = 128;

export function checkCallerRequest(raw: Buffer, maxBytes: number): CallerRequestCheck {
  if (raw.length > maxBytes) return { ok: false, reason: 'REQUEST_TOO_LARGE', id: null, detail: `more than ${maxBytes} bytes` };
  // The usual request is read in one pass; whatever that pass is not sure of is parsed and checked in full.
  return recognized(raw) ?? checkCallerRequestInFull(raw);
}

/**
 * The request when the one-pass recognizer is sure of it and its id and method pass as they would in full. The
 * recognizer reads the bytes, checked as UTF-8 first (see json-recognizers.ts).
 */
function recognized(raw: Buffer): CallerRequestCheck | undefined {
  if (!isUtf8(raw)) return undefined;
  const found = recognizeCallerRequest(raw);
  if (found === undefined) return undefined;
  const id = found.idStart === -1 ? null : idAt(raw, found.idStart, found.idEnd);
  if (id === undefined) return undefined;
  const method = stringAt(raw, found.methodStart, found.methodEnd);
  if (method === '' || method.length > MAX_METHOD_LENGTH) return undefined;
  return { ok: true, request: new RecognizedRequest(id, method, raw, found.paramsStart, found.paramsEnd) };
}

/** A recognized id's value, as validId would take it from the parsed request; undefined when it would not. */
function idAt(raw: Buffer, start: number, end: number): JsonRpcId | undefined {
  const first = raw[start];
  if (first === 0x6e /* n(ull) */) return null;
  if (first === 0x22 /* " */) return validId(stringAt(raw, start, end));
  // A JSON number token: Number() reads it as JSON.parse does.
  return validId(Number(raw.toString('latin1', start, end)));
}

/** The value of the JSON string token [start, end): sliced when it is plain ASCII, else decoded and unescaped. */
function stringAt(raw: Buffer, start: number, end: number): string {
  for (let i = start + 1; i < end - 1; i++) {
    const c = raw[i]!;
    if (c === 0x5c /* backslash */ || c > 0x7f) return JSON.parse(raw.toString('utf8', start, end)) as string;
  }
  return raw.toString('latin1', start + 1, end - 1);
}

/** A request read in one pass: its params are parsed when something reads them (most calls forward them unread). */
class RecognizedRequest implements CallerRequest {
  #params: unknown = NOT_READ;

  constructor(
    readonly id: JsonRpcId,
    readonly method: string,
    readonly raw: Buffer,
    private readonly paramsStart: number,
    private readonly paramsEnd: number,
  ) {}

  get params(): unknown {
    // No member name in the text is __proto__ or constructor (the recognizer left those to the full check), so
    // JSON.parse reads it as secure-json-parse would.
    if (this.#params === NOT_READ) this.#params = this.paramsStart === -1 ? undefined : JSON.parse(this.raw.toString('utf8', this.paramsStart, this.paramsEnd));
    return this.#params;
  }

  paramsHold(quotedName: Buffer): boolean {
    if (this.paramsStart === -1) return false;
    // Searched in place (no text made of the params): a match must end within them.
    const at = this.raw.indexOf(quotedName, this.paramsStart);
    return at !== -1 && at + quotedName.length <= this.paramsEnd;
  }
}

const NOT_READ: unique symbol = Symbol('not read');

/** The check without the one-pass recognizer: every request it is not sure of (and the tests' oracle). */
export function checkCallerRequestInFull(raw: Buffer): CallerRequestCheck {
  const parsed = parseStrictJson(raw);
  if (!parsed.ok && parsed.problem !== 'duplicate-member') return { ok: false, reason: 'PARSE_ERROR', id: null };
  if (!parsed.ok) {
    // The id is echoed only when it is not itself the member named twice.
    const ambiguousId = parsed.member === 'id' && parsed.path === '$';
    const id = ambiguousId ? null : idOf(parseLoose(raw));
    return { ok: false, reason: 'DUPLICATE_MEMBER', id, detail: describeDuplicate(parsed) };
  }
  const value = parsed.value;
  if (Array.isArray(value)) return { ok: false, reason: 'BATCH_NOT_SUPPORTED', id: null };
  if (typeof value !== 'object' || value === null) {
    return { ok: false, reason: 'INVALID_REQUEST', id: null, detail: 'body is not an object' };
  }
  const req = value as Record<string, unknown>;
  // A2A defines no notifications: every A2A method has a response, so a request without an id is
  // answered like one with "id": null (as the A2A SDK servers answer it) and forwarded unchanged,
  // never left unanswered as JSON-RPC would for a notification.
  const id = Object.hasOwn(req, 'id') ? validId(req.id) : null;
  const variant = variantSpelling(req);
  if (variant) {
    const detail = `"${variant}" twice at $ (once in another spelling)`;
    return { ok: false, reason: 'DUPLICATE_MEMBER', id: variant === 'id' ? null : (id ?? null), detail };
  }
  const bad = (detail: string): CallerRequestCheck => ({ ok: false, reason: 'INVALID_REQUEST', id: id ?? null, detail });
  if (req.jsonrpc !== '2.0') return bad('"jsonrpc" must be "2.0"');
  if (id === undefined) return bad('"id" must be a string, an integer or null');
  if (typeof req.method !== 'string' || req.method === '' || req.method.length > MAX_METHOD_LENGTH) {
    return bad('"method" must be a non-empty string');
  }
  if (Object.hasOwn(req, 'params') && (typeof req.params !== 'object' || req.params === null)) {
    return bad('"params" must be an object or an array');
  }
  return { ok: true, request: { id, method: req.method, raw, params: req.params } };
}

const MEMBERS = ['jsonrpc', 'id', 'method', 'params'] as const;

/**
 * A top-level member that case-insensitive decoders read as a JSON-RPC
 * member the request also has. Folded with NFKC (the Kelvin sign K is K, the
 * long s ſ is s: Go folds those too) and lower case.
 */
function variantSpelling(req: Record<string, unknown>): (typeof MEMBERS)[number] | undefined {
  for (const key of Object.keys(req)) {
    if ((MEMBERS as readonly string[]).includes(key)) continue;
    const folded = key.normalize('NFKC').toLowerCase();
    const member = MEMBERS.find((m) => m === folded);
    if (member && Object.hasOwn(req, member)) return member;
  }
  return undefined;
}

/** The request's id for an error reply, when the body parses at all (last member wins: it is only echoed). */
function parseLoose(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function idOf(value: unknown): JsonRpcId {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  return validId((value as Record<string, unknown>).id) ?? null;
}

/** The id if it can be echoed exactly; undefined if it cannot. */
function validId(id: unknown): JsonRpcId | undefined {
  if (id === null) return null;
  if (typeof id === 'string') return Buffer.byteLength(id) <= MAX_ID_STRING_BYTES ? id : undefined;
  // Only integers that survive a round trip: 1e400 or 2^53+1 would come back changed.
  if (typeof id === 'number' && Number.isSafeInteger(id)) return id;
  return undefined;
}
