/**
 * The fast paths (src/envelope/result-envelope.ts, used by normalizeEvent for
 * stream events and by normalizeJsonText for unary replies) must change
 * nothing a caller sees: whatever the text, an event's output and a reply's
 * envelope are exactly what the full normalizer writes for them, and the
 * recognizer only ever accepts text JSON.parse accepts, finding the same
 * `result` bytes as the depth/duplicate scan.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import t from 'tap';
import type { JsonRpcId } from '../../src/envelope/envelope.js';
import { scanJson } from '../../src/envelope/json-scan.js';
import { failureEnvelope, normalizeJsonText, normalizeJsonTextFully, normalizeReply, withRedactionCount, type NormalizePolicy } from '../../src/envelope/normalize.js';
import { Redactor } from '../../src/envelope/redact.js';
import { plainIdPasses, recognizeResultEnvelope, textBetween, utf8Of } from '../../src/envelope/json-recognizers.js';
import { normalizeEvent, oneLine, type EventContext } from '../../src/stream/event-normalize.js';
import type { SseEvent } from '../../src/stream/sse-parser.js';
import { callerIdArb, hostileTextArb, nearValidBodyArb, policyArb } from '../support/envelope-invariants.js';
import { rawStringArb } from '../support/json-text.js';
import { sseEvent } from '../support/sse-events.js';

const numRuns = Number.parseInt(process.env.FUZZ_RUNS ?? '', 10) || 3000;
const SECRET = 'sk-live-0123456789abcdef';

/** Envelopes as remotes write them: compact or pretty, members in any order, ids of every kind. */
const envelopeArb = fc
  .record({
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null), fc.double(), fc.constant(2 ** 53 + 2)),
    result: fc.jsonValue({ maxDepth: 5 }),
    extra: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }),
    order: fc.constantFrom('rpc-first', 'result-first', 'no-id', 'no-jsonrpc'),
    indent: fc.constantFrom(undefined, 0, 2, '\t'),
    secret: fc.boolean(),
  })
  .map(({ id, result, extra, order, indent, secret }) => {
    const r = secret ? { note: `token ${SECRET}`, result } : result;
    const base: Record<string, unknown> =
      order === 'result-first' ? { result: r, ...extra, id, jsonrpc: '2.0' }
      : order === 'no-id' ? { jsonrpc: '2.0', result: r }
      : order === 'no-jsonrpc' ? { id, result: r, ...extra }
      : { jsonrpc: '2.0', id, result: r, ...extra };
    return JSON.stringify(base, null, indent);
  });

/** One character inserted, removed or replaced: text that is almost, or just barely, JSON. */
const mutatedArb = fc
  .tuple(envelopeArb, fc.nat(), fc.constantFrom('insert', 'delete', 'replace'), fc.constantFrom('"', '\\', ',', ':', '{', '}', '[', ']', ' ', '\n', '\t', '\u0001', 'u', 'e', '-', '0', '.', 'x', '\ud800', '\ufeff'))
  .map(([text, at, how, ch]) => {
    const i = at % (text.length + 1);
    if (how === 'insert') return text.slice(0, i) + ch + text.slice(i);
    if (how === 'delete') return text.slice(0, i) + text.slice(i + 1);
    return text.slice(0, i) + ch + text.slice(i + 1);
  });

const dataArb = fc.oneof(
  { weight: 6, arbitrary: envelopeArb },
  { weight: 6, arbitrary: mutatedArb },
  { weight: 4, arbitrary: nearValidBodyArb.map((b) => b.toString('utf8')) },
  { weight: 1, arbitrary: hostileTextArb },
  // Long strings written raw, valid or not at any place: the recognizer's native search (plain-runs.ts) meets them.
  { weight: 3, arbitrary: fc.tuple(rawStringArb, rawStringArb).map(([a, b]) => `{"jsonrpc":"2.0","id":1,"result":{"text":${a},"parts":[${b}]}}`) },
  { weight: 1, arbitrary: fc.constantFrom('{"result":"\\ud83d\\ude00"}', '{"result":"\\ud83d"}', '{"result":"\\ude00\\ud83d"}', '{"result":"\\\\ud800"}', '{"result":1e400}', '{"result":-0.5E+3,"id":-0}') },
);

/** What normalizeEvent wrote before the fast path existed, for a context without result checks or bridge. */
function fullPathJson(data: string, ctx: EventContext, index: number): string {
  const n = normalizeJsonTextFully(data, ctx.callerId, ctx.policy, ctx.httpStatus);
  if (n.outcome === 'ok' || n.outcome === 'REMOTE_ERROR') return oneLine(n.json);
  return failureEnvelope(ctx.callerId, 'INVALID_EVENT', {
    remote: ctx.policy.remote,
    httpStatus: ctx.httpStatus,
    metadata: { cause: n.outcome, event: index },
    caller: ctx.policy.caller,
  }).json;
}

// Events as the parser makes them (the data's bytes beside it), and without the bytes (the readers encode the text).
const event = (data: string, withBytes = true): SseEvent => ({ ...sseEvent(data), ...(withBytes ? {} : { dataBytes: undefined }) });

t.test('property: an event is written exactly as the full normalizer writes it', async (t) => {
  let fast = 0;
  let runs = 0;
  fc.assert(
    fc.property(dataArb, callerIdArb, policyArb, fc.boolean(), fc.constantFrom(200, 201, 299, 500), fc.boolean(), (data, callerId: JsonRpcId, base, redact, httpStatus, withBytes) => {
      const policy: NormalizePolicy = redact ? { ...base, redactor: new Redactor([SECRET]) } : base;
      const ctx: EventContext = { callerId, policy, httpStatus };
      const out = normalizeEvent(event(data, withBytes), ctx, 3);
      const expected = fullPathJson(data, ctx, 3);
      if (out.json !== expected) throw new Error(`differs for ${JSON.stringify(data)}:\n  got  ${out.json}\n  want ${expected}`);
      const n = normalizeJsonTextFully(data, callerId, policy, httpStatus);
      if (out.outcome !== (n.outcome === 'ok' || n.outcome === 'REMOTE_ERROR' ? n.outcome : 'INVALID_EVENT')) throw new Error(`outcome ${out.outcome} for ${n.outcome}`);
      if (out.redactions !== n.redactions) throw new Error(`redactions ${out.redactions} vs ${n.redactions}`);
      runs++;
      if (withBytes && recognizeResultEnvelope(Buffer.from(data), policy.maxJsonDepth)) fast++;
    }),
    { numRuns },
  );
  t.equal(runs, numRuns);
  // The generators must reach the fast path often, or the property says little about it.
  t.ok(fast > numRuns / 10, `${fast} of ${numRuns} events took the fast path with their bytes`);
});

t.test('property: a unary reply is normalized exactly as the full normalizer does it (shortcut or not)', async (t) => {
  let plain = 0;
  fc.assert(
    fc.property(dataArb, callerIdArb, policyArb, fc.boolean(), fc.constantFrom(200, 201, 299, 404, 500), (data, callerId: JsonRpcId, base, redact, httpStatus) => {
      const policy: NormalizePolicy = redact ? { ...base, redactor: new Redactor([SECRET]) } : base;
      const got = normalizeJsonText(data, callerId, policy, httpStatus);
      const want = normalizeJsonTextFully(data, callerId, policy, httpStatus);
      if (got.json !== want.json || got.outcome !== want.outcome || got.redactions !== want.redactions) {
        throw new Error(`differs for ${JSON.stringify(data)} (HTTP ${httpStatus}):\n  got  ${got.outcome} ${got.json}\n  want ${want.outcome} ${want.json}`);
      }
      // The value later stages read (card rewrite, result checks, the bridge, trace attributes) is the same value.
      if (!isDeepStrictEqual(got.result, want.result)) throw new Error(`result value differs for ${JSON.stringify(data)}`);
      // The whole-body entry point (bytes in: emptiness, JSON-looking and UTF-8 checked first) hands the same text on.
      const viaBody = normalizeReply({ status: httpStatus, body: Buffer.from(data) }, callerId, policy);
      // (Text with a lone surrogate has no UTF-8 form: its bytes say something else, compared elsewhere.)
      const sameText = Buffer.from(data).toString('utf8') === data;
      if (sameText && viaBody.outcome === 'ok' && viaBody.json !== want.json) throw new Error(`normalizeReply differs for ${JSON.stringify(data)}`);
      if (got.outcome === 'ok' && !redact && httpStatus < 300 && recognizeResultEnvelope(Buffer.from(data), policy.maxJsonDepth)) plain++;
    }),
    { numRuns },
  );
  // The generators must reach the shortcut often, or the property says little about it.
  t.ok(plain > numRuns / 10, `${plain} of ${numRuns} replies took the shortcut`);
});

t.test('the shortcut parses the result only when a later stage reads it, once, as the full path builds it', async (t) => {
  const text = '{"jsonrpc":"2.0","id":"up-1","result":{"kind":"task","id":"t1","status":{"state":"completed"},"n":[1,2.5,-0]}}';
  const policy: NormalizePolicy = { remote: 'r', maxErrorMessageBytes: 200, maxJsonDepth: 32, keepRemoteErrorData: false };
  const got = normalizeJsonText(text, 7, policy);
  t.equal(got.json, '{"jsonrpc":"2.0","id":7,"result":{"kind":"task","id":"t1","status":{"state":"completed"},"n":[1,2.5,-0]}}');
  const first = got.result;
  t.same(first, normalizeJsonTextFully(text, 7, policy).result);
  t.equal(got.result, first, 'parsed once: the same object on every read');
  // Adding a redaction count (what later stages do) keeps the value, though the getter is on the prototype.
  const counted = withRedactionCount(got, 2);
  t.equal(counted.result, first);
  t.equal(counted.redactions, 2);
  t.equal(counted.json, got.json);
  // The value is not an own member (a spread would not copy it): V8 keeps an object literal's own getter in an
  // AccessorPair made in old space, which kept every reply alive to the next full collection.
  t.notOk(Object.hasOwn(got, 'result'), 'a prototype getter');
  t.same(Object.getOwnPropertyNames(Object.getPrototypeOf(got)).sort(), ['constructor', 'result']);
});

t.test('property: the recognizer accepts only JSON, and finds the result where the scan does', async (t) => {
  fc.assert(
    fc.property(dataArb, fc.integer({ min: 2, max: 64 }), (data, maxDepth) => {
      // The recognizer reads UTF-8 bytes (offsets in bytes); the scan reads the text. Text with a lone surrogate has
      // no UTF-8 form: the normalizers leave it to the full path (utf8Of).
      const bytes = utf8Of(data);
      if (bytes === undefined) return;
      const found = recognizeResultEnvelope(bytes, maxDepth);
      if (!found) return;
      const parsed = JSON.parse(data) as Record<string, unknown>;
      const scan = scanJson(data, maxDepth);
      if (scan.problem) throw new Error(`accepted text the scan refuses (${scan.problem}): ${JSON.stringify(data)}`);
      if (bytes.toString('utf8', found.resultStart, found.resultEnd) !== Buffer.from(data.slice(scan.resultStart, scan.resultEnd)).toString()) throw new Error(`result span differs: ${JSON.stringify(data)}`);
      if (!Object.hasOwn(parsed, 'result') || Object.hasOwn(parsed, 'error')) throw new Error(`not a result envelope: ${JSON.stringify(data)}`);
      const id = found.idStart === -1 ? undefined : JSON.parse(bytes.toString('utf8', found.idStart, found.idEnd));
      if (id !== parsed.id && !(Number.isNaN(id) && Number.isNaN(parsed.id))) throw new Error(`id differs: ${JSON.stringify(data)}`);
    }),
    { numRuns },
  );
  t.pass('no counterexample');
});

t.test('plain envelopes of any valid result are recognized (the fast path is the common path)', async (t) => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 6 }), fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null)), (result, id) => {
      const text = JSON.stringify({ jsonrpc: '2.0', id, result });
      // Member names the parser guards, and lone surrogates (escaped by JSON.stringify), go the full way on purpose.
      fc.pre(!/"(__proto__|constructor)"|\\u[dD][89a-fA-F]/.test(text));
      return recognizeResultEnvelope(Buffer.from(text), 64) !== undefined;
    }),
    { numRuns },
  );
  t.pass('no counterexample');
});

t.test('edges the recognizer leaves to the full normalizer', async (t) => {
  const no = [
    '{"result":1,"result":2}',
    '{"id":1,"id":2,"result":1}',
    '{"jsonrpc":"2.0","jsonrpc":"2.0","result":1}',
    '{"result":1,"error":null}',
    '{"__proto__":{},"result":1}',
    '{"result":{"__proto__":{"x":1}}}',
    '{"result":{"a":{"constructor":{"prototype":{}}}}}',
    '{"res\\u0075lt":1}',
    '{"result":"\\ud800"}',
    '{"result":"\\udc00\\ud800"}',
    '{"result":"a\tb"}',
    '{"result":1}x',
    '\ufeff{"result":1}',
    '{"result":01}',
    '{"result":1.}',
    '{"result":.5}',
    '{"result":+1}',
    '{"result":1e}',
    '{"result":tru}',
    '{"result":[1,]}',
    '{"result":{"a":1,}}',
    '{"result":"\\x"}',
    '{"result":"\\u12g4"}',
    '{"id":true,"result":1}',
    '{"id":9007199254740993,"result":1}',
    '{"id":1e400,"result":1}',
    '{"id":[1],"result":1}',
    '[{"result":1}]',
    '{"x":1}',
    '',
  ];
  for (const text of no) t.equal(recognizeResultEnvelope(Buffer.from(text), 64), undefined, JSON.stringify(text));
  t.equal(recognizeResultEnvelope(Buffer.from('{"result":[[[]]]}'), 4)?.resultStart, 10, 'depth 4 within 4');
  t.equal(recognizeResultEnvelope(Buffer.from('{"result":[[[[]]]]}'), 4), undefined, 'depth 5 over 4');
  const text = ' {\n "jsonrpc" : "2.0" ,\r\n\t"id":"a\\"b", "result" : {"t":"\\ud83d\\ude00 \\\\ud800"} , "x":[] }\n';
  const found = recognizeResultEnvelope(Buffer.from(text), 64);
  t.ok(found);
  t.equal(text.slice(found!.resultStart, found!.resultEnd), '{"t":"\\ud83d\\ude00 \\\\ud800"}');
  t.equal(text.slice(found!.idStart, found!.idEnd), '"a\\"b"');
  t.ok(recognizeResultEnvelope(Buffer.from('{"result":{"\\\\u":1,"a\\"b":2}}'), 64), 'an escaped backslash before u in a member name is no \\u escape');
  t.equal(recognizeResultEnvelope(Buffer.from('{"result":{"\\u005f_proto__":1}}'), 64), undefined, 'a \\u escape in a member name goes the full way');
});

t.test('bytes: the id check without a string for short integers, the text of a span, text without a UTF-8 form', async (t) => {
  const passes = (token: string) => plainIdPasses(Buffer.from(token), 0, token.length);
  // Up to 15 digits an integer is always safe (read in place); from 16 on Number() decides, as the full path does.
  t.ok(passes('999999999999999'), '15 digits');
  t.ok(passes('-999999999999999'), 'minus and 15 digits (16 characters: through Number)');
  t.ok(passes('9007199254740991'), '16 digits, the largest safe integer');
  t.notOk(passes('9007199254740993'), '16 digits, past the safe range');
  t.notOk(passes('-9007199254740993'), 'below the safe range');
  t.ok(passes('1.5') && passes('-0') && passes('0') && passes('"x"') && passes('null'));
  t.notOk(passes('1e400'), 'not finite');
  t.notOk(passes('1e300'), 'an integer past the safe range, with an exponent');
  t.ok(passes('1.5e-3'), 'not an integer: no range to keep');
  const text = '{"a":"café 😀","b":"x"}';
  const bytes = utf8Of(text)!;
  t.equal(textBetween(text, bytes, bytes.indexOf('"x"'), bytes.length - 1), '"x"', 'offsets in bytes after characters of 2 and 4 bytes');
  t.equal(textBetween('{"b":"x"}', Buffer.from('{"b":"x"}'), 5, 8), '"x"', 'ASCII: a slice of the text');
  t.equal(utf8Of('a\ud800b'), undefined, 'a lone surrogate: no UTF-8 form');
  t.equal(utf8Of('\udc00'), undefined);
  t.same(utf8Of('😀'), Buffer.from('😀'), 'a pair is well formed');
});
