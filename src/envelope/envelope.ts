/**
 * The shapes a caller receives and the builders for them. Every reply the
 * gateway writes is made here, so the wire contract lives in one file.
 */
import {
  ERROR_DOMAIN,
  ERROR_INFO_TYPE,
  REMOTE_ERROR_REASON,
  gatewayErrors,
  type Reason,
} from './codes.js';

export type JsonRpcId = string | number | null;

export interface ErrorInfo {
  '@type': typeof ERROR_INFO_TYPE;
  reason: string;
  domain: typeof ERROR_DOMAIN;
  metadata: Record<string, string>;
}

export type ErrorDetail = ErrorInfo | ({ '@type': string } & Record<string, unknown>);

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
}

export function errorInfo(reason: string, ctx: ErrorContext): ErrorInfo {
  const metadata: Record<string, string> = {};
  if (ctx.remote !== undefined) metadata.remote = ctx.remote;
  if (ctx.httpStatus !== undefined) metadata.httpStatus = String(ctx.httpStatus);
  if (ctx.metadata) for (const [k, v] of Object.entries(ctx.metadata)) metadata[k] = String(v);
  return { '@type': ERROR_INFO_TYPE, reason, domain: ERROR_DOMAIN, metadata };
}

/** An error the gateway itself decided on, from the catalogue. */
export function gatewayError(reason: Reason, ctx: ErrorContext = {}, detail?: string): JsonRpcErrorObject {
  const spec = gatewayErrors[reason];
  // `detail` is always gateway-written text (e.g. "body is an array"), never remote bytes.
  const message = detail ? `${spec.message}: ${detail}` : spec.message;
  return { code: spec.code, message, data: [errorInfo(reason, ctx)] };
}

/** A typed error the remote sent, already sanitized by the normalizer. */
export function remoteError(
  code: number,
  message: string,
  ctx: ErrorContext,
  remoteDetails: readonly ErrorDetail[] = [],
): JsonRpcErrorObject {
  return { code, message, data: [errorInfo(REMOTE_ERROR_REASON, ctx), ...remoteDetails] };
}

/** Serializes an error envelope. `id` is always the caller's. */
export function serializeError(id: JsonRpcId, error: JsonRpcErrorObject): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":${JSON.stringify(error)}}`;
}

/** Serializes a success envelope around an already-serialized result. */
export function serializeResultJson(id: JsonRpcId, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`;
}
