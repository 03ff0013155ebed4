/**
 * `grpc-status-details-bin` (a serialized google.rpc.Status, spec §10.6) both
 * ways, pure:
 * - reduce what a remote sent to the A2A ErrorInfo (sanitized, bounded) and,
 *   only when the remote's config keeps error data, a few bounded google.rpc
 *   details; everything else (the remote's claims in the gateway's own domain,
 *   unknown types, oversized blobs) is dropped;
 * - encode an ErrorOutcome for a gRPC caller: the A2A ErrorInfo first (the
 *   @a2a-js/sdk client types its error from the first ErrorInfo with an A2A
 *   reason), then the gateway's own ErrorInfo (domain a2a-egress), then kept details.
 */
import { create, fromBinary, fromJson, toBinary, toJson, type JsonValue } from '@bufbuild/protobuf';
import { AnySchema, anyPack, type Any } from '@bufbuild/protobuf/wkt';
import { A2A_ERROR_DOMAIN, ERROR_INFO_TYPE, GATEWAY_ERROR_DOMAIN, type ErrorDetail, type ErrorOutcome } from '../../core/outcome.js';
import { sanitizeText } from '../../envelope/sanitize.js';
import { ErrorInfoSchema } from './gen/google/rpc/error_details_pb.js';
import { StatusSchema } from './gen/google/rpc/status_pb.js';
import { REGISTRY } from './proto-json.js';
import { A2A_ERRORS, type GrpcCode } from './status-codes.js';

/** A details blob larger than this is ignored whole (grpc-js caps all metadata at 8 KiB by default anyway). */
export const MAX_STATUS_DETAILS_BYTES = 16 * 1024;
export const MAX_ERROR_INFO_METADATA = 16;
export const MAX_KEPT_DETAILS = 4;

const REASON = /^[A-Z][A-Z0-9_]{0,62}[A-Z0-9]$/;
// google.rpc.ErrorInfo: metadata keys match [a-z][a-zA-Z0-9-_]+ and are at most 64 characters; accept camelCase starts too.
const METADATA_KEY = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
const ERROR_INFO_NAME = 'google.rpc.ErrorInfo';

export interface ReducedDetails {
  /** The remote's A2A ErrorInfo (domain a2a-protocol.org), sanitized. */
  readonly a2a?: { readonly reason: string; readonly metadata: Readonly<Record<string, string>> };
  /** Further google.rpc details as ProtoJSON `Any` objects (only with keepRemoteErrorData). */
  readonly kept: readonly ErrorDetail[];
  /** Why the blob was not used at all, for logs. */
  readonly ignored?: 'too-large' | 'undecodable' | 'code-mismatch';
}

export interface ReduceOptions {
  /** Bound for each text value (UTF-8 bytes after sanitizing): the remote's limits.maxErrorMessageBytes. */
  readonly maxTextBytes: number;
  readonly keepRemoteErrorData: boolean;
}

/** What a remote's grpc-status-details-bin may contribute to an ErrorOutcome. */
export function reduceStatusDetails(bin: Uint8Array | undefined, statusCode: number, opts: ReduceOptions): ReducedDetails {
  if (bin === undefined || bin.length === 0) return { kept: [] };
  if (bin.length > MAX_STATUS_DETAILS_BYTES) return { kept: [], ignored: 'too-large' };
  let status;
  try {
    status = fromBinary(StatusSchema, bin, { readUnknownFields: false, recursionLimit: 16 });
  } catch {
    return { kept: [], ignored: 'undecodable' };
  }
  // gRPC requires the details' code to equal the call's status; a blob that disagrees describes some other error.
  if (status.code !== statusCode) return { kept: [], ignored: 'code-mismatch' };
  let a2a: ReducedDetails['a2a'];
  const kept: ErrorDetail[] = [];
  for (const any of status.details) {
    const typeName = typeNameOf(any);
    if (typeName === ERROR_INFO_NAME) {
      const info = unpack(any, ErrorInfoSchema);
      if (a2a === undefined && info?.domain === A2A_ERROR_DOMAIN && REASON.test(info.reason)) {
        a2a = { reason: info.reason, metadata: cleanMetadata(info.metadata, opts.maxTextBytes) };
      }
      continue; // ErrorInfo of any other domain (including a remote's "a2a-egress") is never passed on
    }
    if (!opts.keepRemoteErrorData || kept.length >= MAX_KEPT_DETAILS || !typeName.startsWith('google.rpc.')) continue;
    const detail = keptDetail(any, opts.maxTextBytes);
    if (detail) kept.push(detail);
  }
  return a2a ? { a2a, kept } : { kept };
}

/** The serialized google.rpc.Status a gRPC caller receives in grpc-status-details-bin. */
export function encodeStatusDetails(error: ErrorOutcome, code: GrpcCode): Buffer {
  const details: Any[] = [];
  const a2a = error.a2a ?? synthesizedA2a(error.code);
  if (a2a) details.push(anyPack(ErrorInfoSchema, create(ErrorInfoSchema, { reason: a2a.reason, domain: A2A_ERROR_DOMAIN, metadata: { ...a2a.metadata } })));
  details.push(anyPack(ErrorInfoSchema, create(ErrorInfoSchema, { reason: error.reason, domain: GATEWAY_ERROR_DOMAIN, metadata: { ...error.metadata } })));
  for (const detail of error.details) {
    if (detail['@type'] === ERROR_INFO_TYPE) continue;
    try {
      details.push(fromJson(AnySchema, detail as unknown as JsonValue, { registry: REGISTRY, ignoreUnknownFields: true }));
    } catch {
      // A detail type the gateway has no descriptor for cannot be packed: leave it out rather than fail the reply.
    }
  }
  return Buffer.from(toBinary(StatusSchema, create(StatusSchema, { code, message: error.message, details })));
}

function synthesizedA2a(code: number): ErrorOutcome['a2a'] {
  const known = A2A_ERRORS[code];
  return known ? { reason: known.reason, metadata: {} } : undefined;
}

function typeNameOf(any: Any): string {
  const slash = any.typeUrl.lastIndexOf('/');
  return slash >= 0 ? any.typeUrl.slice(slash + 1) : any.typeUrl;
}

function unpack<T extends typeof ErrorInfoSchema>(any: Any, schema: T) {
  try {
    return fromBinary(schema, any.value, { readUnknownFields: false, recursionLimit: 8 });
  } catch {
    return undefined;
  }
}

function cleanMetadata(metadata: Readonly<Record<string, string>>, maxTextBytes: number): Record<string, string> {
  const out: Record<string, string> = {};
  let n = 0;
  for (const [key, value] of Object.entries(metadata)) {
    if (n >= MAX_ERROR_INFO_METADATA) break;
    if (!METADATA_KEY.test(key) || key === '__proto__') continue;
    out[key] = sanitizeText(value, maxTextBytes).text;
    n++;
  }
  return out;
}

/** A google.rpc detail as ProtoJSON with every string sanitized and bounded; undefined when it is not one we know. */
function keptDetail(any: Any, maxTextBytes: number): ErrorDetail | undefined {
  try {
    const json = toJson(AnySchema, any, { registry: REGISTRY });
    const cleaned = cleanStrings(json, maxTextBytes, 0);
    if (cleaned === undefined || JSON.stringify(cleaned).length > 4 * maxTextBytes) return undefined;
    return cleaned as ErrorDetail;
  } catch {
    return undefined;
  }
}

function cleanStrings(value: JsonValue, maxTextBytes: number, depth: number): JsonValue | undefined {
  if (depth > 8) return undefined;
  if (typeof value === 'string') return sanitizeText(value, maxTextBytes).text;
  if (Array.isArray(value)) return value.slice(0, 16).map((v) => cleanStrings(v, maxTextBytes, depth + 1) ?? null);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const [key, item] of Object.entries(value).slice(0, 32)) {
      if (key === '__proto__') continue;
      const cleaned = cleanStrings(item, maxTextBytes, depth + 1);
      if (cleaned !== undefined) out[key] = cleaned;
    }
    return out;
  }
  return value;
}
