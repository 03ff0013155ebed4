/**
 * A caller's HTTP+JSON body is checked in one pass when it can be (recognizeStrictObject in
 * src/envelope/json-recognizers.ts, used by readRequestBody): whatever the body, the verdict (its text and parsed
 * value, or the refusal's reason and detail) is what the full checks give, at every depth bound.
 */
import fc from 'fast-check';
import t from 'tap';
import { readInFull, readRequestBody } from '../../src/bindings/http-json/request-body.js';
import { MAX_RECOGNIZED_DEPTH, recognizeStrictObject } from '../../src/envelope/json-recognizers.js';
import { writtenValueArb } from '../support/json-text.js';

const numRuns = Number.parseInt(process.env.FUZZ_RUNS ?? '', 10) || 3000;

function sameVerdict(text: string, maxJsonDepth: number): void {
  const limits = { maxRequestBytes: 1 << 20, maxJsonDepth };
  const bytes = Buffer.from(text);
  const fast = readRequestBody(bytes, limits);
  // The text as the bytes carry it (a lone surrogate in the string became U+FFFD in UTF-8).
  const trimmed = bytes.toString('utf8').trim();
  const full = trimmed === '' ? fast : readInFull(trimmed, limits);
  if (JSON.stringify(fast) !== JSON.stringify(full)) throw new Error(`verdicts differ at depth ${maxJsonDepth} for ${JSON.stringify(text)}:\n fast ${JSON.stringify(fast)}\n full ${JSON.stringify(full)}`);
}

/** A body as written, or damaged: cut short, a character changed, something after it. */
const bodyArb = fc
  .tuple(fc.oneof({ weight: 4, arbitrary: writtenValueArb.filter((v) => v.startsWith('{')) }, { weight: 1, arbitrary: writtenValueArb }), fc.constantFrom('none', 'none', 'none', 'cut', 'change', 'after'), fc.nat(), fc.constantFrom('}', ']', 'x', ',', '{}', '"', ' 1'))
  .map(([text, how, at, extra]) => {
    const pos = text.length === 0 ? 0 : at % text.length;
    if (how === 'cut') return text.slice(0, pos);
    if (how === 'change') return text.slice(0, pos) + extra + text.slice(pos + 1);
    if (how === 'after') return text + extra;
    return text;
  });

t.test("whatever the body and depth bound, the verdict is the full checks'", async (t) => {
  let recognized = 0;
  fc.assert(
    fc.property(bodyArb, fc.integer({ min: 1, max: 6 }), fc.constantFrom('', ' ', '\n'), (text, depth, pad) => {
      if (recognizeStrictObject(Buffer.from(text), depth)) recognized++;
      sameVerdict(`${pad}${text}${pad}`, depth);
    }),
    { numRuns },
  );
  t.ok(recognized > numRuns / 20, `the one pass decided ${recognized} of ${numRuns}`);
});

t.test('depth: just under the bound is recognized, just over goes to the full checks and is refused there', async (t) => {
  const nested = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
  t.ok(recognizeStrictObject(Buffer.from(nested(5)), 5));
  t.notOk(recognizeStrictObject(Buffer.from(nested(6)), 5));
  t.match(readRequestBody(Buffer.from(nested(6)), { maxRequestBytes: 1 << 20, maxJsonDepth: 5 }), { ok: false, reason: 'INVALID_PARAMS', detail: 'body is nested deeper than 5 levels' });
  // A bound past the recognizer's own: deeper bodies go the full way, and pass there.
  t.ok(recognizeStrictObject(Buffer.from(nested(MAX_RECOGNIZED_DEPTH)), 64));
  t.notOk(recognizeStrictObject(Buffer.from(nested(MAX_RECOGNIZED_DEPTH + 1)), 64));
  t.match(readRequestBody(Buffer.from(nested(MAX_RECOGNIZED_DEPTH + 1)), { maxRequestBytes: 1 << 20, maxJsonDepth: 64 }), { ok: true });
  for (const depth of [4, 5, 6, MAX_RECOGNIZED_DEPTH, MAX_RECOGNIZED_DEPTH + 1]) sameVerdict(nested(depth), depth === MAX_RECOGNIZED_DEPTH + 1 ? 64 : 5);
});

t.test('what the one pass leaves to the full checks is refused there as before', async (t) => {
  const limits = { maxRequestBytes: 1 << 20, maxJsonDepth: 8 };
  for (const [body, detail] of [
    ['{"message":{"a":1,"a":2}}', 'member "a" appears twice in'],
    ['{"__proto__":{"x":1}}', 'body has a __proto__ or constructor.prototype key'],
    ['{"message":{"text":"\\ud800"}}', 'body has a string with a lone surrogate escape'],
    ['[{}]', 'body is an array, not a JSON object'],
  ] as const) {
    t.notOk(recognizeStrictObject(Buffer.from(body), 8), body);
    const read = readRequestBody(Buffer.from(body), limits);
    t.ok(!read.ok && read.detail.startsWith(detail), `${body}: ${JSON.stringify(read)}`);
  }
});
