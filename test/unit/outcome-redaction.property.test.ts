/**
 * Redaction of Outcomes (src/core/redact-outcome.ts), the binding-neutral
 * step every call path of a non-JSON-RPC caller uses (gRPC, HTTP+JSON): whatever a remote puts in a result or an
 * error, the credential never comes out, and an outcome without it comes out
 * as the same object.
 */
import t from 'tap';
import fc from 'fast-check';
import type { ErrorOutcome, Outcome, ResultOutcome } from '../../src/core/outcome.js';
import { Redactor } from '../../src/envelope/redact.js';
import { redactOutcome as redactWith } from '../../src/core/redact-outcome.js';

const redactOutcome = (r: Redactor, outcome: Outcome, refused: (where: string) => ErrorOutcome) => {
  const { outcome: value, redactions: count } = redactWith(outcome, r, refused);
  return { value, count };
};

const SECRET = 'sk-live-7f3a9c2e5b1d4f60';
const redactor = new Redactor([SECRET]);
const refuse = (where: string): ErrorOutcome => ({ kind: 'error', code: -32006, message: `refused ${where}`, reason: 'CREDENTIAL_ECHOED', metadata: {}, details: [] });

// Strings that may hold the secret anywhere, plain or among other text.
const text = fc.oneof(fc.string({ maxLength: 20 }), fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })).map(([a, b]) => `${a}${SECRET}${b}`));
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 6 }).filter((k) => !k.includes('sk-')), tie('value'), { maxKeys: 4 })),
})).value;

const result = json.map((value): ResultOutcome => ({ kind: 'result', json: JSON.stringify(value), value }));
const error = fc
  .record({ message: text, meta: fc.dictionary(fc.string({ maxLength: 6 }), text, { maxKeys: 3 }), a2aMeta: fc.dictionary(fc.string({ maxLength: 6 }), text, { maxKeys: 3 }), detail: json })
  .map(({ message, meta, a2aMeta, detail }): ErrorOutcome => ({
    kind: 'error',
    code: -32001,
    message,
    reason: 'REMOTE_ERROR',
    metadata: meta,
    a2a: { reason: 'TASK_NOT_FOUND', metadata: a2aMeta },
    details: [{ '@type': 'type.googleapis.com/x.Detail', value: detail }],
  }));

t.test('no outcome carries the credential out, and one without it is returned as it was', async (t) => {
  fc.assert(
    fc.property(fc.oneof(result, error), (outcome: Outcome) => {
      const { value, count } = redactOutcome(redactor, outcome, refuse);
      if (JSON.stringify(value).includes(SECRET)) return false;
      const held = JSON.stringify(outcome).includes(SECRET);
      if (!held) return value === outcome && count === 0;
      return count > 0;
    }),
    { numRuns: 500 },
  );
});

t.test('a result keeps its json and value in step', async (t) => {
  fc.assert(
    fc.property(result, (outcome) => {
      const { value } = redactOutcome(redactor, outcome, refuse);
      return value.kind !== 'result' || JSON.stringify(value.value) === value.json;
    }),
    { numRuns: 300 },
  );
});

t.test('a credential in a member name or a number cannot be cut out: the result is refused', async (t) => {
  const inName: ResultOutcome = { kind: 'result', json: `{"${SECRET}":1}`, value: { [SECRET]: 1 } };
  t.match(redactOutcome(redactor, inName, refuse), { value: { reason: 'CREDENTIAL_ECHOED', message: 'refused in a member name of the result' }, count: 1 });
  const digits = new Redactor(['12345678901234']);
  const inNumber: ResultOutcome = { kind: 'result', json: '{"n":12345678901234}', value: { n: 12345678901234 } };
  t.match(redactOutcome(digits, inNumber, refuse), { value: { reason: 'CREDENTIAL_ECHOED' } });
});
