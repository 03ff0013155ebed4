/**
 * Span names and attribute keys. OpenTelemetry semantic-convention names
 * where one exists (RPC and HTTP conventions, stable in semconv 1.45; the
 * GenAI agent conventions, still in development), `a2a.*` for what the A2A
 * protocol and this gateway add. The strings are written out here rather
 * than imported, so the gateway loads no OpenTelemetry code while traces are
 * off; test/unit/trace-span-attributes.test.ts checks each convention name
 * against @opentelemetry/semantic-conventions.
 */
import type { Binding } from '../core/call.js';
import type { Operation } from '../a2a/operations.js';

/** Names from the OpenTelemetry semantic conventions. */
export const SEMCONV = {
  /** stable (RPC): the system the span's side speaks — jsonrpc, grpc (for A2A's HTTP+JSON binding: `http+json`). */
  RPC_SYSTEM_NAME: 'rpc.system.name',
  /** stable (RPC): fully-qualified method, `lf.a2a.v1.A2AService/SendMessage`; `_OTHER` when not recognized. */
  RPC_METHOD: 'rpc.method',
  /** stable (RPC): the error's code as a string (JSON-RPC numbering, `-32001`; a gRPC remote's code name). */
  RPC_STATUS_CODE: 'rpc.status_code',
  /** stable (general): low-cardinality error class: the gateway reason, REMOTE_ERROR, or an HTTP status. */
  ERROR_TYPE: 'error.type',
  /** stable (HTTP client). */
  HTTP_REQUEST_METHOD: 'http.request.method',
  HTTP_RESPONSE_STATUS_CODE: 'http.response.status_code',
  /** stable (HTTP client): set on retries only (1 on the second attempt). */
  HTTP_REQUEST_RESEND_COUNT: 'http.request.resend_count',
  SERVER_ADDRESS: 'server.address',
  SERVER_PORT: 'server.port',
  /** stable (URL): origin and path, the query string left out (it may carry a key). */
  URL_FULL: 'url.full',
  /** development (GenAI agents): `invoke_agent` on SendMessage and SendStreamingMessage. */
  GEN_AI_OPERATION_NAME: 'gen_ai.operation.name',
  /** development (GenAI agents): the remote's configured name, on invoke_agent spans. */
  GEN_AI_AGENT_NAME: 'gen_ai.agent.name',
  /** stable (resource). */
  SERVICE_NAME: 'service.name',
  SERVICE_VERSION: 'service.version',
  SERVICE_INSTANCE_ID: 'service.instance.id',
} as const;

/** The gateway's own names: no convention covers them. */
export const A2A_ATTR = {
  /** The configured remote's name. */
  REMOTE: 'a2a.remote',
  /** The A2A operation, binding-neutral: SendMessage, GetTask, ... */
  OPERATION: 'a2a.operation',
  /** The caller's binding (server span) or the one spoken to the remote (client span): jsonrpc, http+json, grpc. */
  BINDING: 'a2a.binding',
  /** The A2A generation the caller speaks: 0.3 or 1.0. */
  PROTOCOL_VERSION: 'a2a.protocol.version',
  /** How it ended: ok, REMOTE_ERROR or the gateway reason (the `outcome` of logs and metrics). */
  OUTCOME: 'a2a.outcome',
  /** The gateway's request id (x-request-id), to find the call's log line. */
  REQUEST_ID: 'a2a.request_id',
  /** Id of the task the result (or the last stream event naming one) is about, sanitized and bounded. */
  TASK_ID: 'a2a.task.id',
  /** Its state as the 1.0 enum name (TASK_STATE_COMPLETED...), whichever generation the remote spoke. */
  TASK_STATE: 'a2a.task.state',
  /** Stream spans: events relayed, bytes written to the caller. */
  STREAM_EVENTS: 'a2a.stream.events',
  STREAM_BYTES: 'a2a.stream.bytes',
} as const;

/** The event a stream span records when its first event is relayed (time to first event). */
export const FIRST_EVENT = 'a2a.stream.first_event';

/** A2A's service, as a2a.proto names it: the fully-qualified prefix of every rpc.method. */
export const A2A_SERVICE = 'lf.a2a.v1.A2AService';

/** Longest text attribute value (characters); the exporter's span limits enforce it too. */
export const MAX_ATTRIBUTE_LENGTH = 256;
/** Longest span status description (UTF-8 bytes): the sanitized error message, cut. */
export const MAX_STATUS_MESSAGE_BYTES = 256;
/** Longest task id kept (UTF-8 bytes). */
export const MAX_TASK_ID_BYTES = 128;

export function rpcMethodOf(operation: Operation | undefined): string {
  return operation ? `${A2A_SERVICE}/${operation.name}` : '_OTHER';
}

/** RPC convention: the span is named by its method; one not recognized is named by its system. */
export function callSpanName(operation: Operation | undefined, binding: Binding): string {
  return operation ? rpcMethodOf(operation) : binding;
}

/** Operations that are an agent invocation in the GenAI conventions' sense. */
export function invokesAgent(operation: Operation | undefined): boolean {
  return operation?.name === 'SendMessage' || operation?.name === 'SendStreamingMessage';
}

/** gRPC status code names, by number (rpc.status_code for a gRPC remote). */
export const GRPC_CODE_NAMES: readonly string[] = [
  'OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED', 'NOT_FOUND', 'ALREADY_EXISTS', 'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION', 'ABORTED', 'OUT_OF_RANGE', 'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE',
  'DATA_LOSS', 'UNAUTHENTICATED',
];

/** `url.full` without query, fragment or userinfo, bounded. */
export function safeUrl(url: URL | string): string {
  const parsed = typeof url === 'string' ? (URL.canParse(url) ? new URL(url) : undefined) : url;
  if (!parsed) return '';
  const text = `${parsed.origin}${parsed.pathname}`;
  return text.length > MAX_ATTRIBUTE_LENGTH ? text.slice(0, MAX_ATTRIBUTE_LENGTH) : text;
}

/** `server.port` as the URL implies it (the scheme's default when none is written). */
export function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}
