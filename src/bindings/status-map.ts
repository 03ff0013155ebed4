/**
 * One table for how every error looks in each binding: the HTTP status (the
 * HTTP+JSON binding) and the gRPC status code (the gRPC binding) of each
 * gateway reason and of each A2A / standard JSON-RPC code, and the way back
 * (a remote's ErrorInfo reason or HTTP status → the JSON-RPC-numbered code
 * an ErrorOutcome carries). Pure data and lookups.
 *
 * A2A codes follow spec 1.0.1 §5.4. Gateway reasons are the gateway's own
 * decisions, made once here (see REASON_STATUS). `Record<Reason, …>` makes the
 * compiler reject a reason added to the catalogue without a mapping.
 */
import { Code, type Reason } from '../envelope/codes.js';
import type { ErrorOutcome } from '../core/outcome.js';

/** google.rpc.Code, by name (the `status` member of a google.rpc.Status JSON body). */
export const GRPC_CODE = {
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

export type GrpcCodeName = keyof typeof GRPC_CODE;

const GRPC_NAME_BY_NUMBER: ReadonlyMap<number, GrpcCodeName> = new Map(
  (Object.entries(GRPC_CODE) as [GrpcCodeName, number][]).map(([name, n]) => [n, name]),
);

export function grpcCodeName(code: number): GrpcCodeName | undefined {
  return GRPC_NAME_BY_NUMBER.get(code);
}

export function isGrpcCodeName(name: string): name is GrpcCodeName {
  return Object.hasOwn(GRPC_CODE, name);
}

export interface StatusPair {
  readonly http: number;
  readonly grpc: GrpcCodeName;
}

const pair = (http: number, grpc: GrpcCodeName): StatusPair => Object.freeze({ http, grpc });

/**
 * The A2A-specific errors (spec §3.3.2, §5.4): JSON-RPC code → the ErrorInfo
 * `reason` (§9.5, §10.6, §11.6: UPPER_SNAKE_CASE without "Error", domain
 * a2a-protocol.org) and the HTTP / gRPC status of §5.4.
 */
export const A2A_ERRORS: ReadonlyMap<number, { readonly reason: string; readonly status: StatusPair }> = new Map([
  [Code.TaskNotFound, { reason: 'TASK_NOT_FOUND', status: pair(404, 'NOT_FOUND') }],
  [Code.TaskNotCancelable, { reason: 'TASK_NOT_CANCELABLE', status: pair(400, 'FAILED_PRECONDITION') }],
  [Code.PushNotificationNotSupported, { reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED', status: pair(400, 'FAILED_PRECONDITION') }],
  [Code.UnsupportedOperation, { reason: 'UNSUPPORTED_OPERATION', status: pair(400, 'FAILED_PRECONDITION') }],
  [Code.ContentTypeNotSupported, { reason: 'CONTENT_TYPE_NOT_SUPPORTED', status: pair(400, 'INVALID_ARGUMENT') }],
  [Code.InvalidAgentResponse, { reason: 'INVALID_AGENT_RESPONSE', status: pair(500, 'INTERNAL') }],
  [Code.ExtendedAgentCardNotConfigured, { reason: 'EXTENDED_AGENT_CARD_NOT_CONFIGURED', status: pair(400, 'FAILED_PRECONDITION') }],
  [Code.ExtensionSupportRequired, { reason: 'EXTENSION_SUPPORT_REQUIRED', status: pair(400, 'FAILED_PRECONDITION') }],
  [Code.VersionNotSupported, { reason: 'VERSION_NOT_SUPPORTED', status: pair(400, 'FAILED_PRECONDITION') }],
]);

/**
 * The standard JSON-RPC codes. -32601 is 404 / UNIMPLEMENTED: each binding's
 * own "there is no such operation here" (what a REST server without the route
 * answers, what a gRPC server without the method answers).
 */
const STANDARD_CODES: ReadonlyMap<number, StatusPair> = new Map([
  [Code.ParseError, pair(400, 'INVALID_ARGUMENT')],
  [Code.InvalidRequest, pair(400, 'INVALID_ARGUMENT')],
  [Code.MethodNotFound, pair(404, 'UNIMPLEMENTED')],
  [Code.InvalidParams, pair(400, 'INVALID_ARGUMENT')],
  [Code.InternalError, pair(500, 'INTERNAL')],
]);

/** Any other code a remote sent (-32000, 42, ...): the remote failed in a way no table names. */
const UNKNOWN_CODE = pair(500, 'UNKNOWN');

/** The binding-specific status of a JSON-RPC-numbered code (A2A §5.4, standard codes, else 500/UNKNOWN). */
export function statusOfCode(code: number): StatusPair {
  return A2A_ERRORS.get(code)?.status ?? STANDARD_CODES.get(code) ?? UNKNOWN_CODE;
}

/** The A2A ErrorInfo reason of an A2A-specific code; undefined for standard and unknown codes. */
export function a2aReasonOfCode(code: number): string | undefined {
  return A2A_ERRORS.get(code)?.reason;
}

/**
 * A remote's A2A ErrorInfo reason → code. Besides the A2A-specific reasons,
 * `INVALID_PARAMS` is what @a2a-js/sdk servers send for a malformed request
 * (its RequestMalformedError), which is JSON-RPC's -32602.
 */
const CODE_BY_A2A_REASON: ReadonlyMap<string, number> = new Map([
  ...[...A2A_ERRORS].map(([code, { reason }]) => [reason, code] as const),
  ['INVALID_PARAMS', Code.InvalidParams],
]);

export function codeOfA2aReason(reason: string): number | undefined {
  return CODE_BY_A2A_REASON.get(reason);
}

/**
 * A remote's error with no A2A ErrorInfo → a code, from its HTTP status (and
 * the Status `status` name when it sent one). Only the exact equivalents are
 * mapped: without the ErrorInfo §11.6 requires for every A2A error, the
 * remote did not say which A2A error it meant, so none is invented; the rest
 * is -32603 and a caller of the same binding still sees the remote's status
 * (ErrorOutcome.remoteStatus).
 */
export function codeOfRemoteStatus(http: number, statusName?: string): number {
  if (statusName === 'INVALID_ARGUMENT' || statusName === 'OUT_OF_RANGE') return Code.InvalidParams;
  if (statusName === 'UNIMPLEMENTED') return Code.MethodNotFound;
  if (statusName !== undefined && isGrpcCodeName(statusName) && statusName !== 'UNKNOWN') return Code.InternalError;
  if (http === 400) return Code.InvalidParams;
  if (http === 405 || http === 501) return Code.MethodNotFound;
  return Code.InternalError;
}

/**
 * Every gateway reason's HTTP status and gRPC code. The decisions:
 * - the caller's own mistakes are 4xx / INVALID_ARGUMENT (413 for size, 401,
 *   403 for a method or address policy refuses, 404 for no such remote or
 *   path, 405 for a verb the path does not take, 415 for a Content-Type);
 * - a malformed reply of the remote is 502 / INTERNAL: RFC 9110 §15.6.3's
 *   "invalid response from an inbound server"; spec §5.4's 500 is for an
 *   agent describing itself, and a 500 would tell the caller the gateway
 *   failed (the A2A ErrorInfo still says INVALID_AGENT_RESPONSE, which is
 *   what typed clients key on);
 * - the remote not answering in time is 504 / DEADLINE_EXCEEDED, streams
 *   ended by a timer too (a REST stream already has its 200; gRPC uses it);
 * - the remote unreachable is 502 / UNAVAILABLE (gRPC's retryable code, the
 *   one grpc-js itself reports for refused, reset and TLS failures);
 * - a rate limit is 429 / RESOURCE_EXHAUSTED (a quota); the gateway or remote
 *   out of capacity, an open breaker or a shutdown is 503 / UNAVAILABLE (try
 *   later, elsewhere);
 * - the gateway's own bug is 500 / INTERNAL; a caller that left 499 / CANCELLED
 *   (never sent; for logs and metrics).
 */
export const REASON_STATUS: Readonly<Record<Reason, StatusPair>> = {
  PARSE_ERROR: pair(400, 'INVALID_ARGUMENT'),
  INVALID_REQUEST: pair(400, 'INVALID_ARGUMENT'),
  BATCH_NOT_SUPPORTED: pair(400, 'INVALID_ARGUMENT'),
  DUPLICATE_MEMBER: pair(400, 'INVALID_ARGUMENT'),
  REQUEST_TIMEOUT: pair(408, 'DEADLINE_EXCEEDED'),
  REQUEST_TOO_LARGE: pair(413, 'RESOURCE_EXHAUSTED'),
  UNKNOWN_REMOTE: pair(404, 'NOT_FOUND'),
  INVALID_PATH: pair(400, 'INVALID_ARGUMENT'),
  METHOD_NOT_ALLOWED: pair(403, 'PERMISSION_DENIED'),
  UNAUTHENTICATED: pair(401, 'UNAUTHENTICATED'),

  UPSTREAM_HTTP_ERROR: pair(502, 'INTERNAL'),
  NON_JSON_RESPONSE: pair(502, 'INTERNAL'),
  EMPTY_RESPONSE: pair(502, 'INTERNAL'),
  INVALID_UTF8: pair(502, 'INTERNAL'),
  INVALID_JSON: pair(502, 'INTERNAL'),
  JSON_TOO_DEEP: pair(502, 'INTERNAL'),
  UNSAFE_JSON: pair(502, 'INTERNAL'),
  INVALID_RESPONSE: pair(502, 'INTERNAL'),
  RESPONSE_TOO_LARGE: pair(502, 'INTERNAL'),
  TRUNCATED_RESPONSE: pair(502, 'INTERNAL'),
  UNSUPPORTED_ENCODING: pair(502, 'INTERNAL'),
  INVALID_ENCODING: pair(502, 'INTERNAL'),
  INVALID_RESULT: pair(502, 'INTERNAL'),
  INVALID_AGENT_CARD: pair(502, 'INTERNAL'),
  NO_USABLE_INTERFACE: pair(502, 'INTERNAL'),
  CREDENTIAL_ECHOED: pair(502, 'INTERNAL'),
  WRONG_CONTENT_TYPE: pair(502, 'INTERNAL'),
  INVALID_STATUS: pair(502, 'INTERNAL'),

  INVALID_EVENT: pair(502, 'INTERNAL'),
  EVENT_TOO_LARGE: pair(502, 'INTERNAL'),
  STREAM_TOO_LARGE: pair(502, 'INTERNAL'),
  STREAM_TOO_MANY_EVENTS: pair(502, 'INTERNAL'),
  STREAM_IDLE: pair(504, 'DEADLINE_EXCEEDED'),
  STREAM_NO_DATA: pair(504, 'DEADLINE_EXCEEDED'),
  STREAM_TOO_LONG: pair(504, 'DEADLINE_EXCEEDED'),
  STREAM_TRUNCATED: pair(502, 'INTERNAL'),
  GATEWAY_SHUTDOWN: pair(503, 'UNAVAILABLE'),

  UNKNOWN_OPERATION: pair(404, 'NOT_FOUND'),
  HTTP_METHOD_NOT_ALLOWED: pair(405, 'UNIMPLEMENTED'),
  INVALID_PARAMS: pair(400, 'INVALID_ARGUMENT'),
  UNSUPPORTED_CONTENT_TYPE: pair(415, 'INVALID_ARGUMENT'),
  INVALID_VERSION: pair(400, 'FAILED_PRECONDITION'),
  INVALID_EXTENSIONS: pair(400, 'INVALID_ARGUMENT'),
  UNSUPPORTED_BINDING_VERSION: pair(400, 'FAILED_PRECONDITION'),
  VERSION_NOT_SUPPORTED: pair(400, 'FAILED_PRECONDITION'),
  NO_COUNTERPART: pair(400, 'UNIMPLEMENTED'),
  INVALID_RESPONSE_MESSAGE: pair(502, 'INTERNAL'),
  NOT_AN_EVENT_STREAM: pair(502, 'INTERNAL'),

  PUSH_NOT_ENABLED: pair(400, 'FAILED_PRECONDITION'),
  PUSH_TARGET_NOT_ALLOWED: pair(403, 'PERMISSION_DENIED'),
  PUSH_CONFIG_TOO_LARGE: pair(400, 'INVALID_ARGUMENT'),
  PUSH_CONFIG_UNREADABLE: pair(502, 'INTERNAL'),

  UPSTREAM_TIMEOUT: pair(504, 'DEADLINE_EXCEEDED'),
  UPSTREAM_CONNECT_TIMEOUT: pair(504, 'DEADLINE_EXCEEDED'),
  UPSTREAM_REFUSED: pair(502, 'UNAVAILABLE'),
  UPSTREAM_UNREACHABLE: pair(502, 'UNAVAILABLE'),
  UPSTREAM_DNS_FAILURE: pair(502, 'UNAVAILABLE'),
  UPSTREAM_RESET: pair(502, 'UNAVAILABLE'),
  UPSTREAM_TLS_ERROR: pair(502, 'UNAVAILABLE'),
  UPSTREAM_STREAM_RESET: pair(502, 'UNAVAILABLE'),
  UPSTREAM_GOAWAY: pair(502, 'UNAVAILABLE'),
  UPSTREAM_PROTOCOL_ERROR: pair(502, 'INTERNAL'),
  EGRESS_DENIED: pair(403, 'PERMISSION_DENIED'),

  OVERLOADED: pair(503, 'UNAVAILABLE'),
  GATEWAY_OVERLOADED: pair(503, 'UNAVAILABLE'),
  RATE_LIMITED: pair(429, 'RESOURCE_EXHAUSTED'),
  CIRCUIT_OPEN: pair(503, 'UNAVAILABLE'),
  GATEWAY_ERROR: pair(500, 'INTERNAL'),
  CALLER_CLOSED: pair(499, 'CANCELLED'),
};

/**
 * The status an error is shown with in a binding. A gateway reason has its
 * fixed pair; a remote's error follows its code, except that a caller of the
 * remote's own binding keeps the remote's status where it is a valid error
 * status of the same kind (HTTP: same class, 4xx or 5xx — a REST remote's 409
 * for TaskNotCancelable stays 409; gRPC: any non-OK code), with the gRPC name
 * still from the code so `status` and ErrorInfo agree.
 */
export function statusOfError(error: Pick<ErrorOutcome, 'reason' | 'code' | 'remoteStatus'>, binding: 'http+json' | 'grpc'): StatusPair {
  if (error.reason !== 'REMOTE_ERROR') return REASON_STATUS[error.reason];
  const mapped = statusOfCode(error.code);
  if (binding === 'http+json') {
    const http = error.remoteStatus?.http;
    if (http !== undefined && http >= 400 && http <= 599 && Math.floor(http / 100) === Math.floor(mapped.http / 100)) {
      return http === mapped.http ? mapped : pair(http, mapped.grpc);
    }
    return mapped;
  }
  const grpc = error.remoteStatus?.grpc;
  const name = grpc === undefined || grpc === 0 ? undefined : grpcCodeName(grpc);
  return name === undefined ? mapped : pair(mapped.http, name);
}
