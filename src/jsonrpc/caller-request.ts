/**
 * Validates what a local caller sent before anything goes upstream. Pure:
 * bytes in, a parsed request or the gateway's error out.
 */
import sjson from 'secure-json-parse';
import type { Reason } from '../envelope/codes.js';
import type { JsonRpcId } from '../envelope/envelope.js';

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

const utf8 = new TextDecoder('utf-8', { fatal: true });
const MAX_ID_STRING_BYTES = 256;
const MAX_METHOD_LENGTH = 128;

export function checkCallerRequest(raw: Buffer, maxBytes: number): CallerRequestCheck {
  if (raw.length > maxBytes) return { ok: false, reason: 'REQUEST_TOO_LARGE', id: null, detail: `more than ${maxBytes} bytes` };
  let value: unknown;
  try {
    value = sjson.parse(utf8.decode(raw), null, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    return { ok: false, reason: 'PARSE_ERROR', id: null };
  }
  if (Array.isArray(value)) return { ok: false, reason: 'BATCH_NOT_SUPPORTED', id: null };
  if (typeof value !== 'object' || value === null) {
    return { ok: false, reason: 'INVALID_REQUEST', id: null, detail: 'body is not an object' };
  }
  const req = value as Record<string, unknown>;
  // A2A defines no notifications: every A2A method has a response, so a request without an id is
  // answered like one with "id": null (as the A2A SDK servers answer it) and forwarded unchanged,
  // never left unanswered as JSON-RPC would for a notification.
  const id = Object.hasOwn(req, 'id') ? validId(req.id) : null;
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

/** The id if it can be echoed exactly; undefined if it cannot. */
function validId(id: unknown): JsonRpcId | undefined {
  if (id === null) return null;
  if (typeof id === 'string') return Buffer.byteLength(id) <= MAX_ID_STRING_BYTES ? id : undefined;
  // Only integers that survive a round trip: 1e400 or 2^53+1 would come back changed.
  if (typeof id === 'number' && Number.isSafeInteger(id)) return id;
  return undefined;
}
