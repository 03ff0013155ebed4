/**
 * The one error the gateway's own limits throw. `reason` is a key of the
 * error catalogue, so the route can turn it into an envelope without a
 * mapping table of its own.
 */
import type { Reason } from '../envelope/codes.js';

export type LimitReason = Extract<Reason, 'OVERLOADED' | 'RATE_LIMITED' | 'CIRCUIT_OPEN'>;

export class LimitError extends Error {
  override readonly name = 'LimitError';
  readonly reason: LimitReason;
  /** Short, fixed text for logs (never shown to callers as-is): 'queue full', 'queue timeout', ... */
  readonly detail: string;
  /** When known, how long until trying again could succeed (feeds a Retry-After). */
  readonly retryAfterMs: number | undefined;

  constructor(reason: LimitReason, detail: string, retryAfterMs?: number) {
    super(`${reason}: ${detail}`);
    this.reason = reason;
    this.detail = detail;
    this.retryAfterMs = retryAfterMs;
  }
}
