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
import type { Reason } from '../envelope/codes.js';
import type { JsonRpcId } from '../envelope/envelope.js';
import { describeDuplicate, parseStrictJson } from '../envelope/strict-json.js';

export interface CallerRequest {
  readonly id: JsonRpcId;
  readonly method: string;
  /** The caller's bytes, forwarded unchanged so nothing is lost in re-serialization. */
  readonly raw: Buffer;
  readonly params?: unknown;
}

export type CallerRequestCheck =
  | { readonly ok: true; readonly request: CallerRequest }
  | { readonly ok: false; readonly reason: Reason; readonly id: JsonRpcId; readonly detail?: string };

const MAX_ID_STRING_BYTES = 256;
const MAX_METHOD_LENGTH = 128;

export function checkCallerRequest(raw: Buffer, maxBytes: number): CallerRequestCheck {
  if (raw.length > maxBytes) return { ok: false, reason: 'REQUEST_TOO_LARGE', id: null, detail: `more than ${maxBytes} bytes` };
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
