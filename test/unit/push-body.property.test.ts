/**
 * Properties of the push validator (bytes → verdict): it never throws;
 * every refusal has a catalogued reason; whatever it lets through is one
 * valid A2A push of the config's generation, about the config's task,
 * with no control or format character (line breaks and tabs only in text),
 * no credential of the gateway, and is a fixed point (checking it again
 * changes nothing).
 */
import t from 'tap';
import fc from 'fast-check';
import { checkResult } from '../../src/a2a/result-validate.js';
import { Redactor } from '../../src/envelope/redact.js';
import { checkPushBody, type PushBodyPolicy } from '../../src/push/push-body.js';
import { pushRefusals } from '../../src/push/reasons.js';
import { hostileTextArb } from '../support/envelope-invariants.js';
import { fuzzParams, holdsWith } from '../support/fuzz.js';

const params = fuzzParams(1000);

const holds = holdsWith(params);

const MINTED = 'uAb9A2F7DADyf1B0er0uXVdNzW85cBRq8rwPmR7I7-s';
const policy = (generation: '0.3' | '1.0', taskId: string | undefined): PushBodyPolicy => ({
  generation,
  deliverAs: generation,
  maxBytes: 64 * 1024,
  maxJsonDepth: 12,
  taskId,
  redactors: [new Redactor([MINTED])],
});

/** Text that sometimes carries the gateway's credential. */
const textArb = fc.oneof(
  { weight: 4, arbitrary: hostileTextArb },
  { weight: 1, arbitrary: fc.tuple(hostileTextArb, hostileTextArb).map(([a, b]) => `${a}${MINTED}${b}`) },
);
const idArb = fc.oneof(fc.constant('task-1'), fc.constant('task-2'), hostileTextArb);
const stateArb = fc.constantFrom('TASK_STATE_WORKING', 'TASK_STATE_COMPLETED', 'working', 'bogus');
const metadataArb = fc.dictionary(textArb, fc.oneof(textArb, fc.integer(), fc.boolean()), { maxKeys: 3 });
const messageArb = fc.record({ messageId: idArb, role: fc.constantFrom('ROLE_AGENT', 'agent'), parts: fc.array(fc.record({ text: textArb }), { maxLength: 3 }) }, { requiredKeys: ['messageId', 'role'] });

/** 1.0 StreamResponses (and near misses). */
const push10Arb = fc.oneof(
  fc.record({ statusUpdate: fc.record({ taskId: idArb, contextId: idArb, status: fc.record({ state: stateArb, message: messageArb }, { requiredKeys: ['state'] }), metadata: metadataArb }, { requiredKeys: ['taskId', 'status'] }) }),
  fc.record({ task: fc.record({ id: idArb, contextId: idArb, status: fc.record({ state: stateArb }), history: fc.array(messageArb, { maxLength: 2 }) }, { requiredKeys: ['id', 'status'] }) }),
  fc.record({ artifactUpdate: fc.record({ taskId: idArb, artifact: fc.record({ artifactId: idArb, parts: fc.array(fc.record({ text: textArb }), { maxLength: 2 }) }) }) }),
  fc.record({ message: messageArb }),
);
/** 0.3 kind-tagged events (and near misses). */
const push03Arb = fc.oneof(
  fc.record({ kind: fc.constant('task'), id: idArb, contextId: idArb, status: fc.record({ state: stateArb }) }),
  fc.record({ kind: fc.constant('status-update'), taskId: idArb, contextId: idArb, final: fc.boolean(), status: fc.record({ state: stateArb }) }),
);

/** Bytes around the JSON: the value as sent, cut, spliced with garbage, or nothing like JSON. */
const bytesOf = (valueArb: fc.Arbitrary<unknown>) =>
  fc.oneof(
    { weight: 5, arbitrary: valueArb.map((v) => Buffer.from(JSON.stringify(v))) },
    { weight: 1, arbitrary: fc.tuple(valueArb, fc.nat()).map(([v, n]) => { const b = Buffer.from(JSON.stringify(v)); return b.subarray(0, n % (b.length + 1)); }) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)) },
    { weight: 1, arbitrary: fc.tuple(valueArb, fc.uint8Array({ minLength: 1, maxLength: 8 }), fc.nat()).map(([v, junk, at]) => { const b = Buffer.from(JSON.stringify(v)); const i = at % (b.length + 1); return Buffer.concat([b.subarray(0, i), Buffer.from(junk), b.subarray(i)]); }) },
  );

const ANY_CONTROL = /[\p{Cc}\p{Cf}]/u;
const CONTROL_BUT_LF_TAB = /[^\P{Cc}\n\t]|\p{Cf}/u;
const ONE_LINE = new Set(['id', 'taskId', 'contextId', 'messageId', 'artifactId', 'kind', 'role', 'state']);

function strings(node: unknown, key: string, out: [string, string][]): [string, string][] {
  if (typeof node === 'string') out.push([key, node]);
  else if (Array.isArray(node)) for (const item of node) strings(item, key, out);
  else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      out.push(['(member name)', k]);
      strings(v, k, out);
    }
  }
  return out;
}

function verdictHolds(body: Buffer, generation: '0.3' | '1.0', taskId: string | undefined): boolean {
  const v = checkPushBody(body, policy(generation, taskId));
  if (!v.ok) return Object.hasOwn(pushRefusals, v.reason);
  const value: unknown = JSON.parse(v.json);
  if (!checkResult(generation === '1.0' ? 'SendStreamingMessage' : 'message/stream', value).ok) return false;
  if (taskId !== undefined && v.taskId !== taskId) return false;
  if (v.json.includes(MINTED)) return false;
  for (const [key, text] of strings(value, '', [])) {
    if ((key === '(member name)' || ONE_LINE.has(key) ? ANY_CONTROL : CONTROL_BUT_LF_TAB).test(text)) return false;
    if (/[\uD800-\uDFFF]/u.test(text.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''))) return false;
  }
  // A fixed point: what the gateway sends passes again, unchanged.
  const again = checkPushBody(Buffer.from(v.json), policy(generation, taskId));
  return again.ok && again.json === v.json && again.cleaned === 0 && again.redacted === 0;
}

t.test('1.0: any bytes → a catalogued refusal, or a clean valid StreamResponse about the config task', async (t) => {
  holds(t, fc.property(bytesOf(push10Arb), fc.constantFrom('task-1', undefined), (body, taskId) => verdictHolds(body, '1.0', taskId)));
});

t.test('0.3: the same for kind-tagged events', async (t) => {
  holds(t, fc.property(bytesOf(push03Arb), fc.constantFrom('task-1', undefined), (body, taskId) => verdictHolds(body, '0.3', taskId)));
});

t.test('the property can fail: a verdict that kept a bidi override would be caught', async (t) => {
  const v = checkPushBody(Buffer.from(JSON.stringify({ message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'a\u202eb' }] } })), policy('1.0', undefined));
  t.ok(v.ok);
  t.notOk(v.ok && v.json.includes('\u202e'));
  t.ok(CONTROL_BUT_LF_TAB.test('a\u202eb') && !CONTROL_BUT_LF_TAB.test('a\nb\tc'), 'the oracle sees what it must');
});
