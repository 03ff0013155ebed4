/**
 * Keeps a remote's credentials out of an Outcome, whatever binding it came
 * from or goes to: a result's strings (a credential in a member name or a
 * number cannot be cut out, so that result becomes CREDENTIAL_ECHOED), an
 * error's message, metadata and kept details, and response metadata.
 * Binding-neutral (Outcome in, Outcome out), so a call runner for any binding
 * can use it; the JSON-RPC path redacts its envelope bytes itself.
 */
import type { ErrorDetail, ErrorOutcome, Outcome, ResultOutcome } from '../core/outcome.js';
import type { Redactor } from '../envelope/redact.js';

export interface Redacted<T> {
  readonly value: T;
  /** Places replaced (or 1 for a result refused as a whole). */
  readonly count: number;
}

/** `outcome` without the remote's credentials; `refuse` builds the error that replaces a result that cannot be redacted. */
export function redactOutcome(redactor: Redactor, outcome: Outcome, refuse: (where: string) => ErrorOutcome): Redacted<Outcome> {
  return outcome.kind === 'result' ? redactResult(redactor, outcome, refuse) : redactError(redactor, outcome);
}

export function redactResult(redactor: Redactor, outcome: ResultOutcome, refuse: (where: string) => ErrorOutcome): Redacted<ResultOutcome | ErrorOutcome> {
  // Cheap test on the text first: almost every result holds no credential at all.
  if (!redactor.mayHold(outcome.json)) return { value: outcome, count: 0 };
  const redacted = redactor.value(outcome.value);
  if (!redacted.ok) return { value: refuse(`in a ${redacted.where} of the result`), count: 1 };
  if (redacted.count === 0) return { value: outcome, count: 0 };
  return { value: { kind: 'result', json: JSON.stringify(redacted.value), value: redacted.value }, count: redacted.count };
}

export function redactError(redactor: Redactor, outcome: ErrorOutcome): Redacted<ErrorOutcome> {
  let count = 0;
  const text = (value: string): string => {
    const r = redactor.text(value);
    count += r.count;
    return r.text;
  };
  const record = (values: Readonly<Record<string, string>>): Record<string, string> =>
    Object.fromEntries(Object.entries(values).map(([key, value]) => [key, text(value)]));
  const details: ErrorDetail[] = [];
  for (const detail of outcome.details) {
    const r = redactor.value(detail);
    // A detail that cannot be redacted is dropped: details are optional, the error still stands.
    if (!r.ok) {
      count++;
      continue;
    }
    count += r.count;
    details.push(r.value as ErrorDetail);
  }
  const value: ErrorOutcome = {
    ...outcome,
    message: text(outcome.message),
    metadata: record(outcome.metadata),
    ...(outcome.a2a ? { a2a: { reason: outcome.a2a.reason, metadata: record(outcome.a2a.metadata) } } : {}),
    details,
  };
  return count === 0 ? { value: outcome, count } : { value, count };
}
