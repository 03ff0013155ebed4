/**
 * gRPC status codes and how they meet the gateway's binding-neutral error
 * identity (the JSON-RPC-numbered `code` of an ErrorOutcome and its reason).
 *
 * The A2A rows follow spec 1.0.1 §5.4; the gateway's reasons get the code a
 * gRPC client would expect for that kind of failure. This table stands in for
 * the gRPC column of src/bindings/status-map.ts (branch `rest`) until that one
 * is merged; then this file should read that table instead of keeping its own.
 */
import { Code, type Reason } from '../../envelope/codes.js';
import type { ErrorOutcome } from '../../core/outcome.js';

/** google.rpc.Code numbers (the gRPC status codes). */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcCode = (typeof GrpcCode)[keyof typeof GrpcCode];

export function isGrpcErrorCode(n: number): n is GrpcCode {
  return Number.isInteger(n) && n >= 1 && n <= 16;
}

/** A2A error types (spec §3.3.2) by JSON-RPC code, with their ErrorInfo reason (§10.6) and gRPC status (§5.4). */
export const A2A_ERRORS: Readonly<Record<number, { readonly reason: string; readonly grpc: GrpcCode }>> = {
  [Code.TaskNotFound]: { reason: 'TASK_NOT_FOUND', grpc: GrpcCode.NOT_FOUND },
  [Code.TaskNotCancelable]: { reason: 'TASK_NOT_CANCELABLE', grpc: GrpcCode.FAILED_PRECONDITION },
  [Code.PushNotificationNotSupported]: { reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED', grpc: GrpcCode.FAILED_PRECONDITION },
  [Code.UnsupportedOperation]: { reason: 'UNSUPPORTED_OPERATION', grpc: GrpcCode.FAILED_PRECONDITION },
  [Code.ContentTypeNotSupported]: { reason: 'CONTENT_TYPE_NOT_SUPPORTED', grpc: GrpcCode.INVALID_ARGUMENT },
  [Code.InvalidAgentResponse]: { reason: 'INVALID_AGENT_RESPONSE', grpc: GrpcCode.INTERNAL },
  [Code.ExtendedAgentCardNotConfigured]: { reason: 'EXTENDED_AGENT_CARD_NOT_CONFIGURED', grpc: GrpcCode.FAILED_PRECONDITION },
  [Code.ExtensionSupportRequired]: { reason: 'EXTENSION_SUPPORT_REQUIRED', grpc: GrpcCode.FAILED_PRECONDITION },
  [Code.VersionNotSupported]: { reason: 'VERSION_NOT_SUPPORTED', grpc: GrpcCode.FAILED_PRECONDITION },
};

const A2A_CODE_BY_REASON: ReadonlyMap<string, number> = new Map(Object.entries(A2A_ERRORS).map(([code, e]) => [e.reason, Number(code)]));

/** The JSON-RPC code of an A2A ErrorInfo reason, if it is one of A2A's. */
export function a2aCodeOfReason(reason: string): number | undefined {
  return A2A_CODE_BY_REASON.get(reason);
}

/** Standard JSON-RPC codes (architecture.md "Error mapping across bindings"). */
const STANDARD: Readonly<Record<number, GrpcCode>> = {
  [Code.ParseError]: GrpcCode.INVALID_ARGUMENT,
  [Code.InvalidRequest]: GrpcCode.INVALID_ARGUMENT,
  [Code.InvalidParams]: GrpcCode.INVALID_ARGUMENT,
  [Code.MethodNotFound]: GrpcCode.UNIMPLEMENTED,
  [Code.InternalError]: GrpcCode.INTERNAL,
};

/**
 * Gateway reasons whose gRPC status is more precise than their JSON-RPC
 * code's (a timeout is DEADLINE_EXCEEDED, not INTERNAL). A `Partial` because
 * every other reason takes its code's row; the REST branch's status map is a
 * full `Record<Reason, …>`.
 */
const BY_REASON: Readonly<Partial<Record<Reason, GrpcCode>>> = {
  REQUEST_TOO_LARGE: GrpcCode.RESOURCE_EXHAUSTED,
  UNKNOWN_REMOTE: GrpcCode.NOT_FOUND,
  METHOD_NOT_ALLOWED: GrpcCode.PERMISSION_DENIED,
  UNAUTHENTICATED: GrpcCode.UNAUTHENTICATED,
  STREAM_IDLE: GrpcCode.DEADLINE_EXCEEDED,
  STREAM_NO_DATA: GrpcCode.DEADLINE_EXCEEDED,
  STREAM_TOO_LONG: GrpcCode.DEADLINE_EXCEEDED,
  UPSTREAM_TIMEOUT: GrpcCode.DEADLINE_EXCEEDED,
  UPSTREAM_CONNECT_TIMEOUT: GrpcCode.DEADLINE_EXCEEDED,
  UPSTREAM_REFUSED: GrpcCode.UNAVAILABLE,
  UPSTREAM_UNREACHABLE: GrpcCode.UNAVAILABLE,
  UPSTREAM_DNS_FAILURE: GrpcCode.UNAVAILABLE,
  UPSTREAM_RESET: GrpcCode.UNAVAILABLE,
  UPSTREAM_STREAM_RESET: GrpcCode.UNAVAILABLE,
  UPSTREAM_GOAWAY: GrpcCode.UNAVAILABLE,
  UPSTREAM_TLS_ERROR: GrpcCode.UNAVAILABLE,
  EGRESS_DENIED: GrpcCode.PERMISSION_DENIED,
  GATEWAY_SHUTDOWN: GrpcCode.UNAVAILABLE,
  OVERLOADED: GrpcCode.UNAVAILABLE,
  GATEWAY_OVERLOADED: GrpcCode.UNAVAILABLE,
  CIRCUIT_OPEN: GrpcCode.UNAVAILABLE,
  RATE_LIMITED: GrpcCode.RESOURCE_EXHAUSTED,
  CALLER_CLOSED: GrpcCode.CANCELLED,
};

/**
 * The gRPC status a gRPC caller receives for an error outcome. A remote's own
 * status is kept where it is consistent with the error's identity: always for
 * errors A2A does not type (the remote said UNAVAILABLE, the caller sees
 * UNAVAILABLE), never against §5.4 (a TASK_NOT_FOUND is NOT_FOUND whatever
 * status the remote put beside it).
 */
export function grpcCodeOf(error: Pick<ErrorOutcome, 'code' | 'reason' | 'remoteStatus'>): GrpcCode {
  const a2a = A2A_ERRORS[error.code]?.grpc;
  if (error.reason !== 'REMOTE_ERROR') return BY_REASON[error.reason] ?? a2a ?? STANDARD[error.code] ?? GrpcCode.UNKNOWN;
  if (a2a !== undefined) return a2a;
  const remote = error.remoteStatus?.grpc;
  if (remote !== undefined && isGrpcErrorCode(remote)) return remote;
  return STANDARD[error.code] ?? GrpcCode.UNKNOWN;
}

/**
 * The binding-neutral code of a remote's gRPC status when it sent no A2A
 * ErrorInfo: NOT_FOUND is only ever TaskNotFound in A2A (§5.4), a bad
 * argument is invalid params, an unimplemented method is method-not-found;
 * every other status has no A2A meaning and is an internal error (the status
 * itself is kept in remoteStatus for gRPC callers).
 */
export function codeOfRemoteGrpcStatus(status: GrpcCode): number {
  switch (status) {
    case GrpcCode.NOT_FOUND:
      return Code.TaskNotFound;
    case GrpcCode.INVALID_ARGUMENT:
      return Code.InvalidParams;
    case GrpcCode.UNIMPLEMENTED:
      return Code.MethodNotFound;
    default:
      return Code.InternalError;
  }
}
