/**
 * The caller codec of the gRPC binding: a request message and its metadata
 * become an A2ACall; an Outcome becomes a response message or a gRPC status
 * with `grpc-status-details-bin`. Pure apart from grpc-js's Metadata class.
 */
import type { JsonValue } from '@bufbuild/protobuf';
import type * as grpc from '@grpc/grpc-js';
import { grpcJs } from './grpc-js.js';
import type { Operation } from '../../a2a/operations.js';
import type { A2ACall } from '../../core/call.js';
import type { ErrorOutcome, ResultOutcome } from '../../core/outcome.js';
import { newRequestId, requestIdOf } from '../../policy/request-id.js';
import { serviceParamsFromMetadata, type MetadataMap } from './metadata.js';
import { binaryToJson, jsonToBinary, ProtoConversionError } from './proto-json.js';
import { gatewayFailure } from './response-reader.js';
import { encodeStatusDetails } from './status-details.js';
import { grpcCodeOf } from './status-codes.js';

export interface CallerCodecOptions {
  /** Whether a remote of that name is configured (shared listeners take the name from metadata). */
  readonly remoteExists: (remote: string) => boolean;
  /** The remote's forwardHeaders allowlist (caller metadata that may travel upstream besides A2A's). */
  readonly forwardHeadersOf: (remote: string) => readonly string[];
  /** The gateway's request id for a call the caller gave none (or several) x-request-id for; default a random UUID. */
  readonly newRequestId?: () => string;
}

const EMPTY = new Uint8Array(0);

/** The internal call for one gRPC request, or the error that answers it. */
export function buildCall(op: Operation, remote: string, request: Buffer, metadata: grpc.Metadata, opts: CallerCodecOptions): A2ACall | ErrorOutcome {
  let decoded;
  try {
    decoded = binaryToJson(op.requestType, request);
  } catch (err) {
    if (err instanceof ProtoConversionError) return gatewayFailure('INVALID_PARAMS', remote);
    throw err;
  }
  const params = decoded.value as Record<string, unknown>;
  // The caller's x-request-id metadata when it is short and plain (as on the HTTP paths), so one id follows the call.
  const given = metadata.get('x-request-id');
  const requestId = given.length === 1 && typeof given[0] === 'string' ? requestIdOf(given[0]) : (opts.newRequestId?.() ?? newRequestId());
  const tenant = typeof params.tenant === 'string' && params.tenant !== '' ? params.tenant : undefined;
  return {
    remote,
    operation: op,
    // The gRPC binding is A2A 1.0's (package lf.a2a.v1); 0.3's gRPC service is another package.
    generation: '1.0',
    paramsJson: decoded.json,
    params,
    ...(tenant !== undefined ? { tenant } : {}),
    service: serviceParamsFromMetadata(metadata.getMap() as MetadataMap, opts.forwardHeadersOf(remote)),
    caller: { binding: 'grpc', requestId },
  };
}

/** A result as the operation's response message; a result that is not one becomes INVALID_RESULT. */
export function encodeResult(op: Operation, result: ResultOutcome, remote: string): Buffer | ErrorOutcome {
  // google.protobuf.Empty has nothing to carry: JSON-RPC remotes answer a delete with null or {}, both mean it.
  if (op.responseType === 'google.protobuf.Empty') return Buffer.from(EMPTY);
  try {
    return Buffer.from(jsonToBinary(op.responseType, result.value as JsonValue));
  } catch (err) {
    if (err instanceof ProtoConversionError) return gatewayFailure('INVALID_RESULT', remote, {}, `not a ${op.responseType}`);
    throw err;
  }
}

/** An error outcome as the grpc-js status of the call. */
export function encodeError(error: ErrorOutcome): Partial<grpc.StatusObject> & { code: grpc.status; details: string } {
  const code = grpcCodeOf(error);
  const metadata = new (grpcJs().Metadata)();
  metadata.set('grpc-status-details-bin', encodeStatusDetails(error, code));
  for (const [key, value] of Object.entries(error.headers ?? {})) {
    if (/^[a-z0-9_.-]+$/.test(key) && !key.startsWith('grpc-') && !key.endsWith('-bin')) metadata.set(key, value);
  }
  return { code: code as unknown as grpc.status, details: error.message, metadata };
}
