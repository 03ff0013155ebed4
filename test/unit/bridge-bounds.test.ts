/**
 * The bridge's bounds:
 * - output size: the JSON text of any output is at most OUTPUT_GROWTH_FACTOR
 *   times the input's plus OUTPUT_GROWTH_CONSTANT bytes — checked on valid and
 *   junk inputs of every entry point, and on the tightest inputs known (whose
 *   ratio comes within a small margin of the factor);
 * - drop labels: at most MAX_DROP_LABELS distinct per translation.
 */
import fc from 'fast-check';
import t from 'tap';
import { OPERATION_LIST, OPERATIONS, type ProtocolGeneration } from '../../src/a2a/operations.js';
import {
  bridgeCard,
  bridgeError,
  bridgeEvent,
  bridgeParams,
  bridgeResult,
  MAX_DROP_LABELS,
  OUTPUT_GROWTH_CONSTANT,
  OUTPUT_GROWTH_FACTOR,
  type Bridged,
} from '../../src/a2a/bridge/index.js';
import { Drops } from '../../src/a2a/bridge/json.js';
import { card03, event03, event10, junk, sendParams03, task10 } from '../support/bridge-arbitraries.js';

const bytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');
const other = (g: ProtocolGeneration): ProtocolGeneration => (g === '0.3' ? '1.0' : '0.3');

const ALL: ((from: ProtocolGeneration, to: ProtocolGeneration, v: unknown) => Bridged<unknown>)[] = [
  ...OPERATION_LIST.flatMap((op) => [
    (from: ProtocolGeneration, to: ProtocolGeneration, v: unknown) => bridgeParams(op, from, to, v),
    (from: ProtocolGeneration, to: ProtocolGeneration, v: unknown) => bridgeResult(op, from, to, v),
  ]),
  bridgeEvent,
  bridgeCard,
  bridgeError,
];

function within(input: unknown, output: unknown): boolean {
  return bytes(output) <= OUTPUT_GROWTH_FACTOR * bytes(input) + OUTPUT_GROWTH_CONSTANT;
}

t.test('no output outgrows its input beyond the stated bound (valid and junk input, every entry point)', async (t) => {
  const input = fc.oneof(junk, event03, event10, card03, sendParams03, task10);
  fc.assert(
    fc.property(fc.constantFrom(...ALL), fc.constantFrom<ProtocolGeneration>('0.3', '1.0'), input, (run, from, value) => {
      const r = run(from, other(from), value);
      if (r.ok && !within(value, r.value)) throw new Error(`${bytes(value)} bytes became ${bytes(r.value)}`);
    }),
    { numRuns: 3000 },
  );
  t.pass();
});

t.test('the tightest inputs known stay within the factor, and come close to it', async (t) => {
  const N = 5000;
  // A 1.0 data part holding a bare number: 0.3 data is an object, so it travels wrapped and flagged.
  const parts = { message: { messageId: 'm', role: 'ROLE_USER', parts: Array.from({ length: N }, () => ({ data: 0 })) } };
  const skills = { supportedInterfaces: [], skills: Array.from({ length: N }, () => ({ id: '' })) };
  const configs = { configs: Array.from({ length: N }, () => ({ url: '' })) };
  const requirements = { url: 'u', security: Array.from({ length: N }, () => ({ a: [] })) };
  const cases: [string, () => Bridged<unknown>, unknown, number][] = [
    ['1.0 data parts → 0.3', () => bridgeParams(OPERATIONS.SendMessage, '1.0', '0.3', parts), parts, 6],
    ['1.0 bare skills → 0.3', () => bridgeCard('1.0', '0.3', skills), skills, 4],
    ['1.0 bare push configs → 0.3 list', () => bridgeResult(OPERATIONS.ListTaskPushNotificationConfigs, '1.0', '0.3', configs), configs, 4],
    ['0.3 security requirements → 1.0', () => bridgeCard('0.3', '1.0', requirements), requirements, 3],
  ];
  for (const [name, run, input, atLeast] of cases) {
    const r = run();
    if (!r.ok) return void t.fail(name);
    const ratio = bytes(r.value) / bytes(input);
    t.ok(within(input, r.value), `${name}: ${ratio.toFixed(2)}x is within ${OUTPUT_GROWTH_FACTOR}x + ${OUTPUT_GROWTH_CONSTANT}`);
    t.ok(ratio >= atLeast, `${name}: ${ratio.toFixed(2)}x (the bound is not loose)`);
  }
});

t.test('the constant covers the largest skeleton written for an empty input', async (t) => {
  let largest = 0;
  for (const run of ALL) {
    for (const from of ['0.3', '1.0'] as const) {
      for (const input of [{}, null, [], { code: -32007 }]) {
        const r = run(from, other(from), input);
        if (r.ok) largest = Math.max(largest, bytes(r.value) - OUTPUT_GROWTH_FACTOR * bytes(input));
      }
    }
  }
  t.ok(largest > 0 && largest <= OUTPUT_GROWTH_CONSTANT, `largest skeleton beyond the factor: ${largest} bytes`);
});

t.test(`drop labels: at most ${MAX_DROP_LABELS} distinct, each once`, async (t) => {
  const just = new Drops();
  for (let i = 0; i < MAX_DROP_LABELS; i++) just.add(`l${i}`);
  just.add('l0');
  t.equal(just.list().length, MAX_DROP_LABELS, 'just at the bound: all kept, duplicates once');
  const over = new Drops();
  for (let i = 0; i <= MAX_DROP_LABELS; i++) over.add(`l${i}`);
  t.equal(over.list().length, MAX_DROP_LABELS, 'one over: the extra one is not recorded');
  t.notOk(over.list().includes(`l${MAX_DROP_LABELS}`));
});
