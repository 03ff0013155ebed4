/**
 * Keeps a remote's credentials (remotes with `auth`) out of an Outcome,
 * whatever binding produced it: every string of a result, the error
 * message, metadata values and kept details. A credential where it cannot be
 * replaced (a member name, a number) makes the result CREDENTIAL_ECHOED,
 * as on the JSON-RPC path (src/envelope/normalize.ts). Pure.
 */
import type { Redactor } from '../envelope/redact.js';
import type { ErrorDetail, ErrorOutcome, Outcome } from './outcome.js';

export interface RedactedOutcome {
  readonly outcome: Outcome;
  /** Credentials removed (or refused): for the metric and the log. */
  readonly redactions: number;
}

/** `refused` builds the CREDENTIAL_ECHOED error (handed in: core does not build binding errors itself). */
export function redactOutcome(outcome: Outcome, redactor: Redactor | undefined, refused: (where: string) => ErrorOutcome): RedactedOutcome {
  if (!redactor) return { outcome, redactions: 0 };
  if (outcome.kind === 'result') {
    if (!redactor.mayHold(outcome.json)) return { outcome, redactions: 0 };
    const redacted = redactor.value(outcome.value);
    if (!redacted.ok) return { outcome: refused(`in a ${redacted.where} of the result`), redactions: 1 };
    if (redacted.count === 0) return { outcome, redactions: 0 };
    return { outcome: { kind: 'result', json: JSON.stringify(redacted.value), value: redacted.value }, redactions: redacted.count };
  }
  let count = 0;
  const text = (s: string): string => {
    const r = redactor.text(s);
    count += r.count;
    return r.text;
  };
  const strings = (record: Readonly<Record<string, string>>): Record<string, string> =>
    Object.fromEntries(Object.entries(record).map(([k, v]) => [k, text(v)]));
  const details: ErrorDetail[] = [];
  for (const detail of outcome.details) {
    const r = redactor.value(detail);
    // A detail that cannot be redacted is dropped: details are optional, the error still stands.
    if (!r.ok) count++;
    else {
      count += r.count;
      details.push(r.value as ErrorDetail);
    }
  }
  const error: ErrorOutcome = {
    ...outcome,
    message: text(outcome.message),
    metadata: strings(outcome.metadata),
    ...(outcome.a2a === undefined ? {} : { a2a: { reason: outcome.a2a.reason, metadata: strings(outcome.a2a.metadata) } }),
    details,
  };
  return count === 0 ? { outcome, redactions: 0 } : { outcome: error, redactions: count };
}
