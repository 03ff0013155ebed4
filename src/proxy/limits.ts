/** Turns a refusal by the gateway's own limits into an envelope and a Retry-After. */
import type { CallerGeneration } from '../envelope/codes.js';
import { failureEnvelope, type Normalized } from '../envelope/normalize.js';
import type { JsonRpcId } from '../envelope/envelope.js';
import type { LimitError } from '../policy/limit-error.js';

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
