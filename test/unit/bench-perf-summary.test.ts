/**
 * The bench's reader of `perf script` output (bench/perf-summary.ts): what it
 * says about a profile decides where the call-path work goes next, so each
 * view is checked on a known set of samples, and the reader on any samples
 * written the way perf writes them.
 */
import fc from 'fast-check';
import t from 'tap';
import { areaOfScript, kindOf, parsePerfScript, summarizePerf, type Sample } from '../../bench/perf-summary.js';

/** Renders samples as `perf script -F comm,pid,tid,period,ip,sym,dso` does. */
function render(samples: readonly Sample[], pid = 4242): string {
  return samples
    .map((s, i) => {
      const tid = s.main ? pid : pid + 1 + (i % 3);
      const frames = s.frames.map((f, j) => `\t${(0x7f0000 + j).toString(16).padStart(16)} ${f.sym} (${f.dso})`);
      return [`${s.thread.padEnd(16)} ${pid}/${tid}    ${s.period} `, ...frames, ''].join('\n');
    })
    .join('\n');
}

const NODE = '/usr/bin/node';
const MAP = '/tmp/perf-4242.map';
const unaryCall = { sym: 'JS:*unaryCall file:///srv/app/dist/proxy/unary.js:11:3', dso: MAP };
const ticks = { sym: 'JS:~processTicksAndRejections node:internal/process/task_queues:67:1', dso: MAP };
const KNOWN: Sample[] = [
  { thread: 'node', main: true, period: 500_250, frames: [{ sym: 'Builtins_LoadIC', dso: NODE }, unaryCall, ticks] },
  {
    thread: 'node',
    main: true,
    period: 500_250,
    frames: [
      { sym: 'tcp_sendmsg', dso: '[kernel.kallsyms]' },
      { sym: '__writev', dso: '/usr/lib/x86_64-linux-gnu/libc.so.6' },
      { sym: 'JS:*clearBuffer node:internal/streams/writable:744:5', dso: MAP },
      unaryCall,
    ],
  },
  { thread: 'V8 DefaultWorke', main: false, period: 1_000_000, frames: [{ sym: 'v8::internal::compiler::GraphReducer::ReduceTop(v8::internal::compiler::Node*)', dso: NODE }] },
  {
    thread: 'node',
    main: true,
    period: 500_250,
    frames: [
      { sym: 'JS:wasm-function[20]-20-turbofan', dso: MAP },
      { sym: 'JS:^execute /srv/app/node_modules/undici/lib/dispatcher/client-h1.js:320:3', dso: MAP },
    ],
  },
];

t.test('a known profile: threads, kinds, causes and inclusive shares', async (t) => {
  const s = summarizePerf(parsePerfScript(render(KNOWN)));
  t.equal(s.samples, 4);
  t.same(
    s.threads.map((x) => [x.name.split(' (')[0], x.pct]),
    [
      ['node', 75],
      ['V8 DefaultWorke', 25],
    ],
  );
  t.same(Object.fromEntries(s.kinds.map((k) => [k.name, k.pct])), { 'V8 builtin': 25, kernel: 25, 'V8/Node C++': 25, WebAssembly: 25 });
  t.same(Object.fromEntries(s.causes.map((c) => [c.name, c.pct])), {
    'gateway proxy/unary': 25,
    'node:streams': 25,
    undici: 25,
    '(no JS frame: other threads)': 25,
  });
  t.same(
    s.inclusive.slice(0, 1).map((f) => [f.name, f.where, f.pct]),
    [['unaryCall', 'dist/proxy/unary.js:11', 50]],
  );
  t.ok(s.self.some((f) => f.name === 'v8::internal::compiler::GraphReducer::ReduceTop' && f.where === 'node'), 'C++ names lose their parameter list');
  t.same(
    s.causeFunctions.map((f) => f.name).sort(),
    ['clearBuffer', 'execute', 'unaryCall'],
  );
});

t.test('frame kinds and script areas', async (t) => {
  t.equal(kindOf({ sym: 'JS:+foo file:///a/b.js:1:1', dso: MAP }), 'JS');
  t.equal(kindOf({ sym: 'Builtin:ArrayMap', dso: MAP }), 'V8 builtin');
  t.equal(kindOf({ sym: 'Bytecode:LdaZero', dso: MAP }), 'V8 generated code');
  t.equal(kindOf({ sym: 'malloc', dso: '/usr/lib/x86_64-linux-gnu/libc.so.6' }), 'libc and loader');
  t.equal(kindOf({ sym: '[unknown]', dso: '[unknown]' }), 'unknown');
  t.equal(areaOfScript('file:///srv/app/node_modules/@fastify/reply-from/index.js'), '@fastify/reply-from');
  t.equal(areaOfScript('node:_http_server'), 'node:_http_server');
  t.equal(areaOfScript('file:///srv/app/dist/envelope/normalize.js'), 'gateway envelope/normalize');
});

const frameArb = fc.record({
  sym: fc.oneof(
    fc.constantFrom('Builtins_LoadIC', '[unknown]', 'v8::internal::Heap::Scavenge()', 'JS:*a b.js:1:1'),
    fc.stringMatching(/^[A-Za-z_:~<>*^ .0-9-]{1,30}$/).filter((s) => s.trim() === s && !s.includes('  ')),
  ),
  dso: fc.constantFrom(NODE, MAP, '[kernel.kallsyms]', '[unknown]', '/usr/lib/x86_64-linux-gnu/libc.so.6'),
});
const sampleArb: fc.Arbitrary<Sample> = fc.record({
  thread: fc.constantFrom('node', 'V8 DefaultWorke', 'libuv-worker'),
  main: fc.boolean(),
  frames: fc.array(frameArb, { minLength: 1, maxLength: 6 }),
  period: fc.integer({ min: 1, max: 1_000_000_000 }),
});

t.test('the reader gives back every sample perf wrote, frames in order', async (t) => {
  fc.assert(
    fc.property(fc.array(sampleArb, { maxLength: 20 }), (samples) => JSON.stringify(parsePerfScript(render(samples))) === JSON.stringify(samples)),
    { numRuns: 300 },
  );
  t.pass('300 random profiles read back whole');
});
