/**
 * The side-by-side per-call view of two profiles (bench/perf-compare.ts): its
 * numbers decide where the gateway's call path is cut next, so they are
 * checked on known samples, and on any samples for what must hold whatever
 * was recorded (every sample counted once where a view partitions them).
 */
import fc from 'fast-check';
import t from 'tap';
import { compareRuns, formatComparison, microsPerCall, VIEWS, type ProfiledRun } from '../../bench/perf-compare.js';
import type { Frame, Sample } from '../../bench/perf-summary.js';

const NODE = '/usr/bin/node';
const MAP = '/tmp/perf-1.map';
const LIBC = '/usr/lib/x86_64-linux-gnu/libc.so.6';
const KERNEL = '[kernel.kallsyms]';
const js = (name: string, script: string): Frame => ({ sym: `JS:*${name} ${script}:10:3`, dso: MAP });
const unaryCall = js('unaryCall', 'file:///srv/app/dist/proxy/unary.js');
const clearBuffer = js('clearBuffer', 'node:internal/streams/writable');
const execute = js('execute', 'file:///srv/app/node_modules/undici/lib/dispatcher/client-h1.js');
const writev: Frame[] = [{ sym: 'tcp_sendmsg', dso: KERNEL }, { sym: '__GI___writev', dso: LIBC }];
const sample = (frames: Frame[], period = 500_000, main = true): Sample => ({ thread: main ? 'node' : 'V8 DefaultWorke', main, period, frames });

// The gateway: 10 calls; 2 ms in a writev from clearBuffer under unaryCall, 1 ms of its own JS, 0.5 ms of GC helpers.
const gateway: ProfiledRun = {
  label: 'gateway',
  calls: 10,
  samples: [
    sample([...writev, clearBuffer, unaryCall], 1_000_000),
    sample([...writev, clearBuffer, unaryCall], 1_000_000),
    sample([unaryCall], 1_000_000),
    sample([{ sym: 'v8::internal::Scavenger::ScavengeObject()', dso: NODE }], 500_000, false),
  ],
};
// The hop: 20 calls; 2 ms in a writev from clearBuffer, 1 ms in undici.
const hop: ProfiledRun = {
  label: 'hop',
  calls: 20,
  samples: [sample([...writev, clearBuffer], 2_000_000), sample([execute], 1_000_000)],
};

t.test('known runs: totals and each view in µs per call, largest excess first', async (t) => {
  const c = compareRuns(gateway, hop);
  t.same(c.labels, ['gateway', 'hop']);
  t.same(c.total, [350, 150], '3.5 ms over 10 calls; 3 ms over 20');
  const rows = (view: (typeof VIEWS)[number]) => c.views[view].map((r) => [r.name, ...r.micros, r.diff]);
  t.same(rows('kind'), [
    ['JS', 100, 50, 50],
    ['kernel', 200, 100, 100],
    ['other threads (GC helpers, compiler, libuv pool)', 50, 0, 50],
  ].sort((a, b) => (b[3] as number) - (a[3] as number) || (a[0]! < b[0]! ? -1 : 1)));
  t.same(rows('cause'), [
    ['gateway proxy/unary', 100, 0, 100],
    ['node:streams', 200, 100, 100],
    ['(no JS frame: other threads)', 50, 0, 50],
    ['undici', 0, 50, -50],
  ].sort((a, b) => (b[3] as number) - (a[3] as number) || (a[0]! < b[0]! ? -1 : 1)));
  t.same(rows('kernel entry'), [['__GI___writev  libc.so.6', 200, 100, 100]], 'kernel time by the libc call that entered it');
  const inclusive = new Map(c.views.inclusive.map((r) => [r.name.split('  ')[0], r.micros]));
  t.same(inclusive.get('unaryCall'), [300, 0], 'on the stack of all three main-thread samples');
  t.same(inclusive.get('clearBuffer'), [200, 100]);
  t.same(inclusive.get('execute'), [0, 50]);
  const text = formatComparison(c);
  t.match(text, /gateway 350\.0, hop 150\.0 \(10 and 20 calls recorded\)/);
  t.match(text, /^\s+200\.0\s+100\.0\s+100\.0  node:streams$/m);
});

t.test('the report shows each view\'s `rows` largest differences, no more', async (t) => {
  const c = compareRuns(gateway, hop);
  const shown = (rows: number) => formatComparison(c, rows).split('\n').filter((l) => /^\s+-?\d+\.\d\s/.test(l));
  // kind has 3 rows, cause 4, kernel entry 1, inclusive 3.
  t.equal(shown(3).length, 3 + 3 + 1 + 3, 'at the bound of the largest view but one');
  t.equal(shown(4).length, 3 + 4 + 1 + 3, 'every row');
  t.equal(shown(1).length, 4, 'one per view');
  // Two causes differ by 100 µs: the tie goes by name, so the one shown is always the same.
  t.match(formatComparison(c, 1), /^\s+100\.0\s+0\.0\s+100\.0  gateway proxy\/unary$/m);
  t.notMatch(formatComparison(c, 1), /node:streams/);
});

t.test('no calls answered: per-call figures stay finite (divided by one)', async (t) => {
  const c = compareRuns({ ...gateway, calls: 0 }, { ...hop, calls: 0 });
  t.same(c.total, [3500, 3000]);
});

const frameArb: fc.Arbitrary<Frame> = fc.oneof(
  fc.constantFrom(unaryCall, clearBuffer, execute, ...writev),
  fc.record({ sym: fc.constantFrom('Builtins_LoadIC', 'malloc', 'v8::internal::Heap::Scavenge()'), dso: fc.constantFrom(NODE, LIBC) }),
);
const sampleArb: fc.Arbitrary<Sample> = fc
  .tuple(fc.array(frameArb, { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 10_000_000 }), fc.boolean())
  .map(([frames, period, main]) => sample(frames, period, main));
const runArb = (label: string): fc.Arbitrary<ProfiledRun> =>
  fc.record({ label: fc.constant(label), calls: fc.integer({ min: 1, max: 100_000 }), samples: fc.array(sampleArb, { maxLength: 30 }) });
const close = (x: number, y: number) => Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y));

t.test('any runs: kind and cause rows add up to the total; no row exceeds it; differences are a − b', async (t) => {
  fc.assert(
    fc.property(runArb('a'), runArb('b'), (a, b) => {
      const c = compareRuns(a, b);
      for (const view of ['kind', 'cause'] as const) {
        for (const side of [0, 1] as const) {
          const sum = c.views[view].reduce((n, r) => n + r.micros[side], 0);
          if (!close(sum, c.total[side])) return false;
        }
      }
      for (const view of VIEWS) {
        for (const r of c.views[view]) {
          if (!close(r.diff, r.micros[0] - r.micros[1])) return false;
          if (r.micros[0] > c.total[0] + 1e-9 || r.micros[1] > c.total[1] + 1e-9) return false;
        }
        for (let i = 1; i < c.views[view].length; i++) if (c.views[view][i]!.diff > c.views[view][i - 1]!.diff) return false;
      }
      const kernel = [...microsPerCall(a, 'kernel entry').values()].reduce((n, x) => n + x, 0);
      const kernelKind = microsPerCall(a, 'kind').get('kernel') ?? 0;
      // Main-thread kernel samples only in `kind`; kernel entry counts every kernel leaf.
      return kernel + 1e-9 >= kernelKind;
    }),
    { numRuns: 300 },
  );
  t.pass('300 random pairs of runs');
});
