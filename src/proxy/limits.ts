/** Turns a refusal by the gateway's own limits into an envelope and a Retry-After. */
import { fail, type Normalized } from '../envelope/normalize.js';
import type { JsonRpcId } from '../envelope/envelope.js';
import type { LimitError } from '../policy/limit-error.js';

export function limitReply(id: JsonRpcId, remote: string, err: LimitError): { normalized: Normalized; headers: Record<string, string> } {
  const retryAfterMs = err.retryAfterMs !== undefined ? Math.max(1, Math.ceil(err.retryAfterMs)) : undefined;
  const normalized = fail(id, err.reason, { remote, ...(retryAfterMs !== undefined ? { metadata: { retryAfterMs } } : {}) });
  const headers: Record<string, string> = retryAfterMs !== undefined ? { 'retry-after': String(Math.ceil(retryAfterMs / 1000)) } : {};
  return { normalized, headers };
}
