/**
 * An ErrorOutcome as the HTTP+JSON binding's error body: google.rpc.Status
 * JSON (spec 1.0.1 §11.6, AIP-193):
 *
 *   {"error":{"code":<http>,"status":"<gRPC code name>","message":"...","details":[...]}}
 *
 * `details`, in the order the JSON-RPC binding uses for `error.data`: for an
 * A2A error, A2A's ErrorInfo (domain a2a-protocol.org) first — §11.6 makes it
 * a MUST, and typed clients take the first ErrorInfo whose reason they know —
 * then the gateway's ErrorInfo (domain a2a-egress, its stable `reason` and
 * metadata; found by its domain), then any remote details kept by
 * `keepRemoteErrorData`. A 0.3 caller gets the body A2A 0.3 REST servers
 * send instead: `{"code":<JSON-RPC code>,"message":"...","data":[gateway ErrorInfo]}`.
 * Pure.
 */
import type { ProtocolGeneration } from '../../a2a/operations.js';
import { A2A_ERROR_DOMAIN, ERROR_INFO_TYPE, GATEWAY_ERROR_DOMAIN, type ErrorDetail, type ErrorOutcome } from '../../core/outcome.js';
import { a2aReasonOfCode, statusOfError } from '../status-map.js';

export interface StatusBody {
  /** The HTTP status to answer with (also `error.code`). */
  readonly status: number;
  readonly json: string;
}

export function errorDetails(error: ErrorOutcome, generation: ProtocolGeneration): ErrorDetail[] {
  const gateway: ErrorDetail = { '@type': ERROR_INFO_TYPE, reason: error.reason, domain: GATEWAY_ERROR_DOMAIN, metadata: error.metadata };
  if (generation === '0.3') return [gateway, ...error.details];
  const a2aReason = error.a2a?.reason ?? a2aReasonOfCode(error.code);
  if (a2aReason === undefined) return [gateway, ...error.details];
  const metadata = error.a2a?.metadata;
  const a2a: ErrorDetail = {
    '@type': ERROR_INFO_TYPE,
    reason: a2aReason,
    domain: A2A_ERROR_DOMAIN,
    ...(metadata !== undefined && Object.keys(metadata).length > 0 ? { metadata } : {}),
  };
  return [a2a, gateway, ...error.details];
}

export function statusBodyOf(error: ErrorOutcome, generation: ProtocolGeneration = '1.0'): StatusBody {
  const { http, grpc } = statusOfError(error, 'http+json');
  if (generation === '0.3') {
    return { status: http, json: JSON.stringify({ code: error.code, message: error.message, data: errorDetails(error, '0.3') }) };
  }
  return {
    status: http,
    json: JSON.stringify({ error: { code: http, status: grpc, message: error.message, details: errorDetails(error, generation) } }),
  };
}
