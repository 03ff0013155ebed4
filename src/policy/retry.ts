/**
 * Retries with full-jitter exponential backoff, bounded three ways: a number
 * of attempts, a per-error decision (`isRetryable`) and an absolute deadline
 * that no retry may cross. Clock and sleep are injectable so tests need no
 * real waiting.
 */
import { setTimeout as sleepFor } from 'node:timers/promises';

export interface BackoffOptions {
  /** Total calls, the first one included (>= 1). */
  readonly attempts: number;
  /** Cap of the first delay; each later cap doubles. */
  readonly baseMs: number;
  /** No delay is ever longer than this. */
  readonly maxMs: number;
}

export interface RetryInfo {
  /** The attempt that just failed (1-based). */
  readonly attempt: number;
  readonly delayMs: number;
  readonly error: unknown;
}

export interface RetryOptions extends BackoffOptions {
  /** Epoch ms (same clock as `now`): no retry starts at or after it. */
  readonly deadline: number;
  readonly isRetryable: (err: unknown) => boolean;
  readonly now?: () => number;
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly signal?: AbortSignal;
  readonly random?: () => number;
  /** Called before each wait, for metrics and logs. */
  readonly onRetry?: (info: RetryInfo) => void;
}

/**
 * The waits between attempts: `attempts - 1` of them. Delay i is uniform in
 * [0, min(maxMs, baseMs * 2^i)) ("full jitter"), which spreads the retries of
 * many callers that failed together instead of bunching them.
 */
export function retryDelays(opts: BackoffOptions, random: () => number = Math.random): number[] {
  validateBackoff(opts);
  const delays: number[] = [];
  for (let i = 0; i < opts.attempts - 1; i++) {
    const cap = Math.min(opts.maxMs, opts.baseMs * 2 ** i);
    delays.push(Math.floor(random() * cap));
  }
  return delays;
}

const defaultSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  sleepFor(ms, undefined, signal === undefined ? undefined : { signal });

/**
 * Calls `fn(attempt)` (attempt is 1-based) until it resolves. Gives up and
 * rethrows the last error when the error is not retryable, the attempts are
 * used up or the next wait would reach the deadline; rejects with the
 * signal's reason when `signal` aborts before an attempt or during a wait.
 * The first attempt always runs: enforcing a deadline on a single call is the
 * caller's transport timeout's job.
 */
export async function withRetries<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? defaultSleep;
  const delays = retryDelays(opts, opts.random);
  for (let attempt = 1; ; attempt++) {
    opts.signal?.throwIfAborted();
    try {
      return await fn(attempt);
    } catch (err) {
      const delayMs = delays[attempt - 1];
      if (delayMs === undefined || !opts.isRetryable(err)) throw err;
      if (opts.signal?.aborted) throw err;
      if (now() + delayMs >= opts.deadline) throw err;
      opts.onRetry?.({ attempt, delayMs, error: err });
      try {
        await sleep(delayMs, opts.signal);
      } catch (sleepErr) {
        // Report an abort as the caller's own reason, whatever the sleep implementation threw.
        if (opts.signal?.aborted) throw opts.signal.reason;
        throw sleepErr;
      }
    }
  }
}

function validateBackoff(opts: BackoffOptions): void {
  if (!Number.isInteger(opts.attempts) || opts.attempts < 1) {
    throw new RangeError('retry: attempts must be an integer >= 1');
  }
  if (!Number.isFinite(opts.baseMs) || opts.baseMs < 0) throw new RangeError('retry: baseMs must be >= 0');
  if (!Number.isFinite(opts.maxMs) || opts.maxMs < 0) throw new RangeError('retry: maxMs must be >= 0');
}
