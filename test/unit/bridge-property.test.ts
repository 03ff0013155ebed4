/**
 * Properties of the version bridge (fast-check):
 * - valid 0.3 messages, tasks, events, params, push configs and cards go to
 *   1.0 and back unchanged, with nothing dropped, each step valid for its
 *   target schema; the same from 1.0 for what 0.3 can carry;
 * - arbitrary junk (plain JSON, and objects of the member names the bridge
 *   reads holding anything) never throws, and whatever comes out validates;
 *   drop labels are a bounded vocabulary that never quotes input names.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { OPERATION_LIST, OPERATIONS, type OperationName, type ProtocolGeneration } from '../../src/a2a/operations.js';
import { bridgeCard, bridgeError, bridgeEvent, bridgeParams, bridgeResult, MAX_DROP_LABELS, type Bridged } from '../../src/a2a/bridge/index.js';
import { schemaProblem } from '../support/bridge-schemas.js';
import { card03, event03, event10, junk, message03, sendParams03, task03, task10, taskPushConfig03, taskPushConfig10 } from '../support/bridge-arbitraries.js';

const RUNS = { numRuns: 200 };
const other = (g: ProtocolGeneration): ProtocolGeneration => (g === '0.3' ? '1.0' : '0.3');
/** JSON text equality: what a caller would receive (prototypes and -0 are not wire facts). */
const json = (v: unknown): unknown => JSON.parse(JSON.stringify(v) ?? 'null');

type Step = (from: ProtocolGeneration, to: ProtocolGeneration, value: unknown) => Bridged<unknown>;
type SchemaOf = [kind: 'params' | 'result' | 'error', op: OperationName | undefined];

/** from → other → from: each step ok, nothing dropped, each output valid; the round trip equals `expected` (default: the input). */
function roundTrip(t: Test, name: string, from: ProtocolGeneration, arb: fc.Arbitrary<unknown>, step: Step, schema: SchemaOf, expected: (v: unknown) => unknown = (v) => v): void {
  fc.assert(
    fc.property(arb, (value) => {
      const there = step(from, other(from), value);
      if (!there.ok) throw new Error(`${name} → ${other(from)}: ${there.problem}`);
      if (there.dropped.length > 0) throw new Error(`${name} → ${other(from)} dropped ${there.dropped.join(', ')}`);
      const p1 = schemaProblem(other(from), schema[0], schema[1], there.value);
      if (p1) throw new Error(`${name} → ${other(from)} invalid: ${p1}`);
      const back = step(other(from), from, there.value);
      if (!back.ok) throw new Error(`${name} back: ${back.problem}`);
      if (back.dropped.length > 0) throw new Error(`${name} back dropped ${back.dropped.join(', ')}`);
      const p2 = schemaProblem(from, schema[0], schema[1], back.value);
      if (p2) throw new Error(`${name} back invalid: ${p2}`);
      assert.deepStrictEqual(json(back.value), json(expected(value)), name);
    }),
    RUNS,
  );
  t.pass(`${name}: ${from} → ${other(from)} → ${from}`);
}

const params = (op: OperationName): Step => (from, to, v) => bridgeParams(OPERATIONS[op], from, to, v);
const result = (op: OperationName): Step => (from, to, v) => bridgeResult(OPERATIONS[op], from, to, v);

t.test('valid 0.3 values keep their meaning through 1.0', async (t) => {
  roundTrip(t, 'stream event', '0.3', event03, bridgeEvent, ['result', 'SendStreamingMessage']);
  roundTrip(t, 'GetTask result', '0.3', task03, result('GetTask'), ['result', 'GetTask']);
  roundTrip(t, 'SendMessage result (message)', '0.3', message03, result('SendMessage'), ['result', 'SendMessage']);
  roundTrip(t, 'SendMessage params', '0.3', sendParams03, params('SendMessage'), ['params', 'SendMessage']);
  roundTrip(t, 'push config result', '0.3', taskPushConfig03, result('GetTaskPushNotificationConfig'), ['result', 'GetTaskPushNotificationConfig']);
  roundTrip(t, 'push config list', '0.3', fc.array(taskPushConfig03, { maxLength: 3 }), result('ListTaskPushNotificationConfigs'), ['result', 'ListTaskPushNotificationConfigs']);
  // A config set without an id comes back with its task's id: that is where 0.3 servers keep it.
  roundTrip(t, 'push config set params', '0.3', taskPushConfig03, params('CreateTaskPushNotificationConfig'), ['params', 'CreateTaskPushNotificationConfig'], (v) => {
    const c = v as { taskId: string; pushNotificationConfig: Record<string, unknown> };
    return { ...c, pushNotificationConfig: { id: c.taskId, ...c.pushNotificationConfig } };
  });
  roundTrip(t, 'agent card', '0.3', card03, bridgeCard, ['result', 'GetExtendedAgentCard']);
});

t.test('valid 1.0 values that 0.3 can carry keep their meaning through 0.3', async (t) => {
  roundTrip(t, 'stream event', '1.0', event10, bridgeEvent, ['result', 'SubscribeToTask']);
  roundTrip(t, 'CancelTask result', '1.0', task10, result('CancelTask'), ['result', 'CancelTask']);
  roundTrip(t, 'push config result', '1.0', taskPushConfig10, result('CreateTaskPushNotificationConfig'), ['result', 'CreateTaskPushNotificationConfig']);
  roundTrip(t, 'push config set params', '1.0', taskPushConfig10, params('CreateTaskPushNotificationConfig'), ['params', 'CreateTaskPushNotificationConfig'], (v) => ({
    id: (v as { taskId: string }).taskId,
    ...(v as object),
  }));
});

/** Every entry point, with its schema, for one direction. */
const ENTRY_POINTS: { name: string; run: (from: ProtocolGeneration, to: ProtocolGeneration, v: unknown) => Bridged<unknown>; schema: SchemaOf }[] = [
  ...OPERATION_LIST.flatMap((op) => [
    { name: `params ${op.name}`, run: params(op.name), schema: ['params', op.name] as SchemaOf },
    { name: `result ${op.name}`, run: result(op.name), schema: ['result', op.name] as SchemaOf },
  ]),
  { name: 'event', run: bridgeEvent, schema: ['result', 'SendStreamingMessage'] },
  { name: 'card', run: bridgeCard, schema: ['result', 'GetExtendedAgentCard'] },
  { name: 'error', run: bridgeError, schema: ['error', undefined] },
];

const LABEL = /^[A-Za-z0-9.*[\]]{1,120}$/;

t.test('junk never throws; what comes out validates; labels are bounded and quote no input', async (t) => {
  let translated = 0;
  fc.assert(
    fc.property(fc.constantFrom(...ENTRY_POINTS), fc.constantFrom<ProtocolGeneration>('0.3', '1.0'), junk, (entry, from, value) => {
      const r = entry.run(from, other(from), value);
      if (r.dropped.length > MAX_DROP_LABELS) throw new Error(`${r.dropped.length} labels`);
      for (const label of r.dropped) {
        if (!LABEL.test(label) || label.includes('zq') || label.includes('proto')) throw new Error(`label ${JSON.stringify(label)}`);
      }
      if (!r.ok) return;
      translated++;
      if (entry.schema[1] === 'ListTasks') throw new Error('ListTasks translated');
      const problem = schemaProblem(other(from), entry.schema[0], entry.schema[1], r.value);
      if (problem) throw new Error(`${entry.name} ${from} → ${other(from)}: ${problem} for ${JSON.stringify(value)} → ${JSON.stringify(r.value)}`);
    }),
    { numRuns: 3000 },
  );
  t.ok(translated > 1000, `${translated} junk inputs were translated, not refused`);
});
