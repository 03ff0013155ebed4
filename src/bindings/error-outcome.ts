/**
 * Builds the ErrorOutcome of a failure the gateway itself describes, from the
 * reason catalogue: fixed text (plus a gateway-written detail, never remote
 * bytes), the catalogue's code, the gateway ErrorInfo metadata, and for an
 * A2A-specific code the A2A ErrorInfo it implies. Shared by every codec.
 */
import { gatewayErrors, type Reason } from '../envelope/codes.js';
import type { ErrorOutcome } from '../core/outcome.js';
import { a2aReasonOfCode } from './status-map.js';

export interface GatewayErrorContext {
  readonly remote?: string | undefined;
  /** The remote's HTTP status, when it answered. */
  readonly httpStatus?: number | undefined;
  readonly metadata?: Readonly<Record<string, string | number | boolean>> | undefined;
  /** Response headers that belong to the error (allow, retry-after). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

export function gatewayErrorOutcome(reason: Reason, errorFacts: GatewayErrorContext = {}, detail?: string): ErrorOutcome {
  const spec = gatewayErrors[reason];
  const metadata: Record<string, string> = {};
  if (errorFacts.remote !== undefined) metadata.remote = errorFacts.remote;
  if (errorFacts.httpStatus !== undefined) metadata.httpStatus = String(errorFacts.httpStatus);
  if (errorFacts.metadata) for (const [k, v] of Object.entries(errorFacts.metadata)) metadata[k] = String(v);
  const a2aReason = a2aReasonOfCode(spec.code);
  return {
    kind: 'error',
    code: spec.code,
    message: detail ? `${spec.message}: ${detail}` : spec.message,
    reason,
    metadata,
    ...(a2aReason === undefined ? {} : { a2a: { reason: a2aReason, metadata: {} } }),
    details: [],
    ...(errorFacts.headers === undefined ? {} : { headers: errorFacts.headers }),
  };
}
