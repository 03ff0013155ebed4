/**
 * The native search behind the JSON recognizers' long strings (src/envelope/plain-runs.ts, plain-run.wat): it finds
 * exactly what a byte-by-byte search finds, at every place a byte can sit against its sixteen-byte blocks and its
 * page-long windows; it never reads a window kept from another text; the committed module is what the text compiles
 * to; and without WebAssembly (node --jitless) the recognizers give the same verdicts byte by byte.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { compileWat, generatedSource, OUT_FILE, WAT_FILE } from '../../scripts/gen-wasm.js';
import { recognizeCallerRequest, recognizeResultEnvelope } from '../../src/envelope/json-recognizers.js';
import { loadPlainRuns, PLAIN_RUN_PAGE, plainRuns, type PlainRuns, type WebAssemblyApi } from '../../src/envelope/plain-runs.js';

const numRuns = Number.parseInt(process.env.FUZZ_RUNS ?? '', 10) || 2000;

/** The answer byte by byte: the first index from `i` of a quote, a backslash or a control byte, else the length. */
function expectedEnd(bytes: Uint8Array, i: number): number {
  for (; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b < 0x20 || b === 0x22 || b === 0x5c) return i;
  }
  return bytes.length;
}

/** `length` plain bytes (ASCII letters and UTF-8 of é), with `byte` at each of `at`. */
function textWith(length: number, at: readonly number[], byte: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let k = 0; k < length; k++) bytes[k] = k % 7 === 3 ? 0xc3 : k % 7 === 4 ? 0xa9 : 0x61 + (k % 26);
  for (const a of at) bytes[a] = byte;
  return bytes;
}

function finder(t: Test): PlainRuns {
  const runs = loadPlainRuns((globalThis as { WebAssembly?: WebAssemblyApi }).WebAssembly);
  if (runs === undefined) t.fail('WebAssembly with SIMD is there on every Node this project supports');
  return runs!;
}

t.test('the committed module is what plain-run.wat compiles to', async (t) => {
  const source = generatedSource(await compileWat(readFileSync(WAT_FILE, 'utf8')));
  t.equal(readFileSync(OUT_FILE, 'utf8'), source, 'run: npx tsx scripts/gen-wasm.ts');
});

t.test('the recognizers use it here', async (t) => {
  t.ok(plainRuns, 'Node 20 has WebAssembly SIMD');
});

t.test('a byte of interest at every place against the sixteen-byte blocks, from every start before it', async (t) => {
  const runs = finder(t);
  let checked = 0;
  for (const byte of [0x22, 0x5c, 0x00, 0x0a, 0x1f]) {
    for (let at = 0; at < 40; at++) {
      const bytes = textWith(48, [at], byte);
      for (let start = 0; start <= at; start++) {
        runs.newText();
        if (runs.end(bytes, start) !== at) t.fail(`byte ${byte} at ${at}, start ${start}: ${runs.end(bytes, start)}`);
        checked++;
      }
    }
  }
  // Just outside what it looks for: the byte after a control character, the bytes beside a quote and a backslash.
  for (const byte of [0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xff]) {
    const bytes = textWith(40, [5, 17, 33], byte);
    runs.newText();
    t.equal(runs.end(bytes, 0), 40, `0x${byte.toString(16)} is plain`);
  }
  t.ok(checked > 4000);
});

t.test('property: the same index as byte by byte, for any bytes and start', async (t) => {
  const runs = finder(t);
  const byteArb = fc.oneof(
    { weight: 12, arbitrary: fc.integer({ min: 0x20, max: 0xff }) },
    { weight: 1, arbitrary: fc.constantFrom(0x22, 0x5c, 0x00, 0x09, 0x0a, 0x0d, 0x1f) },
  );
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.array(byteArb, { maxLength: 300 }), fc.nat(), (noise, plain, start) => {
      const bytes = Buffer.from(plain.length > 0 ? plain : [...noise]);
      const i = bytes.length === 0 ? 0 : start % bytes.length;
      runs.newText();
      return runs.end(bytes, i) === expectedEnd(bytes, i);
    }),
    { numRuns },
  );
});

t.test('texts longer than a page: runs found across windows, just under, at and just over each page edge', async (t) => {
  const runs = finder(t);
  const P = PLAIN_RUN_PAGE;
  t.equal(P, 65536, 'one WebAssembly page');
  for (const length of [P - 1, P, P + 1, 3 * P + 7]) {
    for (const at of [P - 2, P - 1, P, P + 1, 2 * P + 3, undefined]) {
      if (at !== undefined && at >= length) continue;
      const bytes = textWith(length, at === undefined ? [] : [at], 0x22);
      const want = at ?? length;
      for (const start of [0, 1, P - 17, P - 1]) {
        if (start > want) continue;
        runs.newText();
        t.equal(runs.end(bytes, start), want, `length ${length}, quote at ${at}, from ${start}`);
      }
    }
  }
  // One text, many searches in any order: each window is taken where its search starts, backward included.
  const bytes = textWith(3 * P, [10, P + 5, 2 * P + 100], 0x5c);
  runs.newText();
  t.equal(runs.end(bytes, 2 * P + 1), 2 * P + 100);
  t.equal(runs.end(bytes, 11), P + 5);
  t.equal(runs.end(bytes, 0), 10);
  t.equal(runs.end(bytes, 2 * P + 101), 3 * P);
});

t.test('a new text is never read through a window kept from the last one', async (t) => {
  const runs = finder(t);
  const bytes = textWith(100, [], 0);
  runs.newText();
  t.equal(runs.end(bytes, 20), 100);
  bytes[60] = 0x0a;
  runs.newText();
  t.equal(runs.end(bytes, 20), 60, 'the same buffer, changed: read again');
  // Through the recognizers: a reply recognized, then the same buffer changed in its long string.
  const reply = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"text":"${'x'.repeat(80)}"}}`);
  t.ok(recognizeResultEnvelope(reply, 64), 'recognized');
  reply[reply.indexOf('x') + 50] = 0x01;
  t.equal(recognizeResultEnvelope(reply, 64), undefined, 'a raw control character is refused the second time');
  reply[reply.indexOf('x') + 50] = 0x22;
  t.equal(recognizeResultEnvelope(reply, 64), undefined, 'a quote that ends the string early');
});

t.test("the recognizers' hand-over (a run's first 16 bytes here, the rest natively): a byte of interest just before, at and after it", async (t) => {
  // Each piece at offset k of a string's run: the run's first, or the one after an escape (handed over again).
  const pieces = [
    { piece: '\\n', valid: true },
    { piece: '\\"', valid: true },
    { piece: '\u0001', valid: false },
    { piece: '\\q', valid: false },
    { piece: '"', valid: false },
  ];
  for (const { piece, valid } of pieces) {
    for (let k = 0; k <= 40; k++) {
      for (const before of ['', `${'w'.repeat(20)}\\t`]) {
        const text = `${before}${'x'.repeat(k)}${piece}${'y'.repeat(30)}`;
        const reply = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"text":"${text}"}}`);
        const found = recognizeResultEnvelope(reply, 64);
        if ((found !== undefined) !== valid) t.fail(`${JSON.stringify(piece)} at ${k} after ${JSON.stringify(before)}: ${found ? 'recognized' : 'refused'}`);
        if (found && reply.toString('utf8', found.resultStart, found.resultEnd) !== `{"text":"${text}"}`) t.fail(`result of ${JSON.stringify(text)}`);
      }
    }
  }
  t.pass("every piece at every offset from 0 to 40, in a string's first run and in a run after an escape");
});

t.test('no WebAssembly, or a module that does not compile: no finder', async (t) => {
  t.equal(loadPlainRuns(undefined), undefined);
  const failing = {
    Module: class {
      constructor() {
        throw new Error('CompileError: no SIMD');
      }
    },
    Instance: class {
      exports = {};
    },
  };
  t.equal(loadPlainRuns(failing), undefined);
});

t.test('node --jitless (no WebAssembly): the same verdicts and places for texts with long strings', async (t) => {
  const texts = [
    `{"jsonrpc":"2.0","id":7,"result":{"text":"${'long plain text, é and — too; '.repeat(20)}"}}`,
    `{"jsonrpc":"2.0","id":7,"result":{"text":"${'a line\\n'.repeat(40)}\\"quoted\\" \\ud83d\\ude00"}}`,
    `{"jsonrpc":"2.0","id":7,"result":{"text":"${'x'.repeat(40)}\u0001${'y'.repeat(40)}"}}`,
    `{"jsonrpc":"2.0","id":7,"result":{"text":"${'x'.repeat(40)}\\q"}}`,
    `{"jsonrpc":"2.0","id":7,"result":{"text":"${'x'.repeat(40)}\\ud800 lone"}}`,
    `{"jsonrpc":"2.0","id":7,"result":{"text":"${'x'.repeat(40)}`,
    `{"jsonrpc":"2.0","id":"${'i'.repeat(70000)}","result":{"text":"${'z'.repeat(70000)}"}}`,
    `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"parts":[{"text":"${'p'.repeat(100)}\\n${'q'.repeat(100)}"}]}}}`,
  ];
  const verdicts = (list: readonly string[]) =>
    list.map((text) => {
      const bytes = Buffer.from(text);
      return JSON.stringify([recognizeResultEnvelope(bytes, 64) ?? null, recognizeCallerRequest(bytes) ?? null]);
    });
  const here = verdicts(texts);
  t.ok(here.some((v) => v.startsWith('[{')), 'some texts are recognized');
  t.ok(here.some((v) => v.startsWith('[null')), 'some are refused');
  const script = `
    import { recognizeCallerRequest, recognizeResultEnvelope } from ${JSON.stringify(new URL('../../src/envelope/json-recognizers.js', import.meta.url).href)};
    import { createRequire } from 'node:module';
    const require = createRequire(import.meta.url);
    import { plainRuns } from ${JSON.stringify(new URL('../../src/envelope/plain-runs.js', import.meta.url).href)};
    const texts = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
    const out = texts.map((text) => { const bytes = Buffer.from(text); return JSON.stringify([recognizeResultEnvelope(bytes, 64) ?? null, recognizeCallerRequest(bytes) ?? null]); });
    process.stdout.write(JSON.stringify({ finder: plainRuns !== undefined, out }));`;
  const args = ['--jitless', '--no-warnings', ...process.execArgv, '--input-type=module', '-e', script];
  const answer = JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8', input: JSON.stringify(texts), stdio: ['pipe', 'pipe', 'ignore'] })) as { finder: boolean; out: string[] };
  t.equal(answer.finder, false, 'no finder without WebAssembly');
  t.same(answer.out, here);
});
