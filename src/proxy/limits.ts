/**
 * Turns a refusal by the gateway's own limits into an envelope and a Retry-After, and any other failure of a
 * JSON-RPC call before its answer into the envelope, headers and breaker verdict the unary and stream paths send.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { CallerGeneration } from '../envelope/codes.js';
import { failureEnvelope, type Normalized } from '../envelope/normalize.js';
import type { JsonRpcId } from '../envelope/envelope.js';
import { LimitError } from '../policy/limit-error.js';
import { breakerVerdict, type BreakerVerdict } from '../upstream/breaker-verdict.js';
import { classifyTransportError, describeForLog } from '../upstream/errors.js';

export interface LimitReply {
  readonly normalized: Normalized;
  readonly headers: Record<string, string>;
}

export function limitReply(id: JsonRpcId, remote: string, err: LimitError, caller?: CallerGeneration): LimitReply {
  const retryAfterMs = err.retryAfterMs !== undefined ? Math.max(1, Math.ceil(err.retryAfterMs)) : undefined;
  const metadata: Record<string, number> = retryAfterMs !== undefined ? { retryAfterMs } : {};
  const normalized = failureEnvelope(id, err.reason, { remote, metadata, caller });
  const headers: Record<string, string> = retryAfterMs !== undefined ? { 'retry-after': String(Math.ceil(retryAfterMs / 1000)) } : {};
  return { normalized, headers };
}

/**
 * A call that failed before it had an answer to send: a limit's refusal (with its Retry-After; no verdict: the remote
 * was not asked), or a transport failure with its reason and the breaker's verdict (a gateway bug reported as
 * internal, the rest logged at debug as `what`; the headers already taken from the remote stand).
 */
export function failedCallReply(
  err: unknown,
  call: { readonly id: JsonRpcId; readonly remote: string; readonly caller: CallerGeneration; readonly requestId: string },
  report: { readonly log: Pick<FastifyBaseLogger, 'debug'>; readonly onInternalError: (err: unknown) => void; readonly what: string },
): { readonly normalized: Normalized; readonly headers?: Record<string, string>; readonly verdict?: BreakerVerdict } {
  if (err instanceof LimitError) return limitReply(call.id, call.remote, err, call.caller);
  const reason = classifyTransportError(err);
  if (reason === 'GATEWAY_ERROR') report.onInternalError(err);
  else report.log.debug({ requestId: call.requestId, err: describeForLog(err) }, report.what);
  return { normalized: failureEnvelope(call.id, reason, { remote: call.remote, caller: call.caller }), verdict: breakerVerdict(undefined, reason) };
}
