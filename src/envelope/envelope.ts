/**
 * The shapes a caller receives and the builders for them. Every reply the
 * gateway writes is made here, so the wire contract lives in one file.
 */
import {
  A2A_ERROR_DOMAIN,
  ERROR_DOMAIN,
  ERROR_INFO_TYPE,
  REMOTE_ERROR_REASON,
  a2aErrorReasons,
  gatewayErrors,
  type CallerGeneration,
  type Reason,
} from './codes.js';

export type JsonRpcId = string | number | null;

export interface ErrorInfo {
  '@type': typeof ERROR_INFO_TYPE;
  reason: string;
  domain: typeof ERROR_DOMAIN;
  metadata: Record<string, string>;
}

/** A2A 1.0's own ErrorInfo for an A2A-specific code (metadata only when there is some). */
export interface A2aErrorInfo {
  '@type': typeof ERROR_INFO_TYPE;
  reason: string;
  domain: typeof A2A_ERROR_DOMAIN;
  metadata?: Record<string, string>;
}

export type ErrorDetail = ErrorInfo | A2aErrorInfo | ({ '@type': string } & Record<string, unknown>);

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data: ErrorDetail[];
}

/** What the gateway knows about a call when it has to describe a failure. */
export interface ErrorContext {
  readonly remote?: string | undefined;
  readonly httpStatus?: number | undefined;
  /** Extra metadata values; ErrorInfo metadata values are always strings. */
  readonly metadata?: Readonly<Record<string, string | number | boolean>> | undefined;
  /** The caller's A2A generation (default 1.0): 1.0 callers get A2A's ErrorInfo first for A2A codes. */
  readonly caller?: CallerGeneration | undefined;
}

export function errorInfo(reason: string, errorFacts: ErrorContext): ErrorInfo {
  const metadata: Record<string, string> = {};
  if (errorFacts.remote !== undefined) metadata.remote = errorFacts.remote;
  if (errorFacts.httpStatus !== undefined) metadata.httpStatus = String(errorFacts.httpStatus);
  if (errorFacts.metadata) for (const [k, v] of Object.entries(errorFacts.metadata)) metadata[k] = String(v);
  return { '@type': ERROR_INFO_TYPE, reason, domain: ERROR_DOMAIN, metadata };
}

/**
 * `error.data`, in one order for every error: for an A2A-specific code and a
 * 1.0 caller, A2A's ErrorInfo first (where the spec and typed 1.0 clients look:
 * the first ErrorInfo), then the gateway's; otherwise the gateway's alone.
 * Kept remote details (keepRemoteErrorData) always come last.
 */
export function errorData(
  code: number,
  gateway: ErrorInfo,
  caller: CallerGeneration | undefined,
  a2aMetadata?: Readonly<Record<string, string>>,
  remoteDetails: readonly ErrorDetail[] = [],
): ErrorDetail[] {
  const reason = a2aErrorReasons[code];
  if (reason === undefined || caller === '0.3') return [gateway, ...remoteDetails];
  const a2a: A2aErrorInfo = { '@type': ERROR_INFO_TYPE, reason, domain: A2A_ERROR_DOMAIN };
  if (a2aMetadata && Object.keys(a2aMetadata).length > 0) a2a.metadata = { ...a2aMetadata };
  return [a2a, gateway, ...remoteDetails];
}

/** An error the gateway itself decided on, from the catalogue. */
export function gatewayError(reason: Reason, errorFacts: ErrorContext = {}, detail?: string): JsonRpcErrorObject {
  const spec = gatewayErrors[reason];
  // `detail` is always gateway-written text (e.g. "body is an array"), never remote bytes.
  const message = detail ? `${spec.message}: ${detail}` : spec.message;
  return { code: spec.code, message, data: errorData(spec.code, errorInfo(reason, errorFacts), errorFacts.caller) };
}

/** A typed error the remote sent, already sanitized by the normalizer. */
export function remoteError(
  code: number,
  message: string,
  errorFacts: ErrorContext,
  remoteDetails: readonly ErrorDetail[] = [],
  /** Metadata of the remote's own A2A ErrorInfo for this code, sanitized and bounded. */
  a2aMetadata?: Readonly<Record<string, string>>,
): JsonRpcErrorObject {
  return { code, message, data: errorData(code, errorInfo(REMOTE_ERROR_REASON, errorFacts), errorFacts.caller, a2aMetadata, remoteDetails) };
}

/**
 * The gateway's own ErrorInfo in an error's `data`, found by its domain
 * (`a2a-egress`) wherever it sits: the way a program reads the gateway's
 * `reason`. Undefined when there is none (a success, or another server's error).
 */
export function findGatewayErrorInfo(data: unknown): ErrorInfo | undefined {
  if (!Array.isArray(data)) return undefined;
  return data.find(
    (item): item is ErrorInfo =>
      typeof item === 'object' && item !== null && (item as ErrorInfo)['@type'] === ERROR_INFO_TYPE && (item as ErrorInfo).domain === ERROR_DOMAIN,
  );
}

/** Serializes an error envelope. `id` is always the caller's. */
export function serializeError(id: JsonRpcId, error: JsonRpcErrorObject): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":${JSON.stringify(error)}}`;
}

/** Serializes a success envelope around an already-serialized result. */
export function serializeResultJson(id: JsonRpcId, resultJson: string): string {
  return `${resultEnvelopeHead(id)}${resultJson}}`;
}

/** A success envelope up to its result: the result's JSON and `}` complete it. */
export function resultEnvelopeHead(id: JsonRpcId): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`;
}
