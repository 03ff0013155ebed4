/**
 * A failure inside the gateway itself (a bug, not a remote, a caller or a
 * limit) must be findable from the log alone: one error-level line with the
 * error's class, its message and its stack frames, and a counter an alert can
 * watch (`a2a_egress_internal_errors_total{where}`).
 *
 * Only the gateway's own text is written. A stack is code locations; a
 * message is what the gateway's code (or V8 about that code) said, sanitized
 * and bounded. The one message that quotes its input is JSON.parse's
 * SyntaxError ("Unexpected token '<', "<html>..." is not valid JSON"), and the
 * input may be remote bytes, so a SyntaxError's message is withheld.
 */
import { sanitizeText } from '../envelope/sanitize.js';

/** Where the failure happened; a bounded label set for the metric. */
export type InternalErrorSite = 'call' | 'stream' | 'card' | 'reload' | 'process';

export interface InternalErrorDescription {
  readonly name: string;
  readonly message: string;
  /** Stack frames ("at fn (file:line:col)"), innermost first, at most MAX_FRAMES. */
  readonly stack: readonly string[];
}

const MAX_MESSAGE_BYTES = 300;
const MAX_FRAMES = 20;

export function describeInternal(err: unknown): InternalErrorDescription {
  if (!(err instanceof Error)) return { name: typeof err, message: 'a non-Error value was thrown', stack: [] };
  const name = sanitizeText(err.name, 64).text || 'Error';
  const message = err instanceof SyntaxError ? '(withheld: a SyntaxError may quote its input)' : sanitizeText(String(err.message), MAX_MESSAGE_BYTES).text;
  const stack = String(err.stack ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('at '))
    .slice(0, MAX_FRAMES)
    .map((line) => sanitizeText(line, 512).text);
  return { name, message, stack };
}

export interface ErrorLog {
  error(obj: Record<string, unknown>, msg: string): void;
}

export interface InternalErrorCounter {
  inc(labels: { where: InternalErrorSite }): void;
}

/** Logs one internal failure at error level and counts it. `context` adds request ids, remote names... */
export function reportInternalError(
  log: ErrorLog,
  counter: InternalErrorCounter,
  where: InternalErrorSite,
  err: unknown,
  context: Record<string, unknown> = {},
): void {
  counter.inc({ where });
  log.error({ ...context, where, err: describeInternal(err) }, 'internal error');
}
