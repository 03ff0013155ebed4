/**
 * The one rule by which an upstream call feeds its remote's circuit breaker,
 * the same for unary calls, streams (relayed or answered with one reply),
 * every binding's runner and card fetches on the remote's origin:
 *
 * 1. the call ended with a failure of the remote or of the way to it
 *    (BREAKER_FAILURES: refused, reset, unreachable, DNS, connect or
 *    response timeout, TLS, a protocol violation, a truncated reply or a
 *    stream cut mid-event) → failure;
 * 2. else a response head arrived with a 5xx status → failure;
 * 3. else a response head arrived → success (a 4xx, an A2A error, a reply
 *    the gateway refused for its size or shape: the remote is up);
 * 4. else (no head: the caller left, the gateway shut down or refused the
 *    call itself, a bug of the gateway's own) → none: the remote was not
 *    asked, or not answered for a reason of its own.
 */
import { BREAKER_FAILURES } from './errors.js';

export type BreakerVerdict = 'success' | 'failure' | 'none';

/**
 * `status`: the response head's status, undefined when none arrived;
 * `ended`: how the call ended: 'ok', an outcome or a gateway Reason.
 */
export function breakerVerdict(status: number | undefined, ended: string | undefined): BreakerVerdict {
  if (ended !== undefined && BREAKER_FAILURES.has(ended)) return 'failure';
  if (status === undefined) return 'none';
  return status >= 500 ? 'failure' : 'success';
}

/** A breaker as the verdict feeds it (policy/circuit-breaker.ts). */
export interface VerdictSink {
  onSuccess(): void;
  onFailure(): void;
}

/** Feeds `verdict` to `breaker` ('none' feeds nothing). */
export function applyVerdict(breaker: VerdictSink, verdict: BreakerVerdict): void {
  if (verdict === 'failure') breaker.onFailure();
  else if (verdict === 'success') breaker.onSuccess();
}
