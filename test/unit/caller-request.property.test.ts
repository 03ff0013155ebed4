/**
 * The one-pass reading of a caller's JSON-RPC request (src/jsonrpc/request-recognizer.ts, used by
 * checkCallerRequest) must change nothing: whatever the bytes, the check's verdict (the request's id, method, params
 * and bytes, or the refusal's reason, id and detail) is exactly what the full check (parse, prototype keys,
 * duplicates anywhere) gives. And the recognizer must actually be taken for the usual request, or this proves nothing.
 */
import fc from 'fast-check';
import t from 'tap';
import { checkCallerRequest, checkCallerRequestInFull, type CallerRequestCheck } from '../../src/jsonrpc/caller-request.js';
import { MAX_RECOGNIZED_DEPTH, MAX_RECOGNIZED_MEMBERS, recognizeCallerRequest } from '../../src/envelope/json-recognizers.js';
import { hostileTextArb } from '../support/envelope-invariants.js';
import { writtenValueArb } from '../support/json-text.js';

const numRuns = Number.parseInt(process.env.FUZZ_RUNS ?? '', 10) || 3000;
const LIMIT = 1 << 20;

/** The two verdicts, side by side in plain data (params read, -0 kept apart from 0). */
function verdict(check: CallerRequestCheck): unknown {
  if (!check.ok) return { ok: false, reason: check.reason, id: check.id, detail: check.detail };
  const { id, method, raw, params } = check.request;
  return { ok: true, id, negativeZero: Object.is(id, -0), method, raw: raw.toString('latin1'), params };
}

function sameVerdict(raw: Buffer): void {
  const fast = verdict(checkCallerRequest(raw, LIMIT));
  const full = verdict(checkCallerRequestInFull(raw));
  if (JSON.stringify(fast) !== JSON.stringify(full)) throw new Error(`verdicts differ for ${JSON.stringify(raw.toString('latin1'))}:\n fast ${JSON.stringify(fast)}\n full ${JSON.stringify(full)}`);
}

const idArb = fc.oneof(
  { weight: 3, arbitrary: fc.integer().map(String) },
  { weight: 3, arbitrary: fc.string({ maxLength: 10 }).map((s) => JSON.stringify(s)) },
  hostileTextArb.map((s) => JSON.stringify(s)),
  fc.constantFrom('null', '-0', '1.0', '1.5', '1e2', '1e400', '9007199254740993', 'true', '{}', '[]', `"${'x'.repeat(256)}"`, `"${'x'.repeat(257)}"`, `"${'é'.repeat(128)}"`, `"${'é'.repeat(129)}"`),
);
const methodArb = fc.oneof(
  fc.constantFrom('"message/send"', '"SendMessage"', '"tasks/get"', '"m\\u0065ssage/send"', '""', '1', 'null', `"${'m'.repeat(128)}"`, `"${'m'.repeat(129)}"`, '"mé"'),
  fc.string({ maxLength: 12 }).map((s) => JSON.stringify(s)),
);
const paramsArb = fc.oneof({ weight: 4, arbitrary: writtenValueArb.filter((v) => v.startsWith('{')) }, { weight: 1, arbitrary: writtenValueArb });

/** A whole request: the four members in any order, some missing or repeated, sometimes another member beside them. */
const requestArb = fc
  .record({
    jsonrpc: fc.constantFrom('"2.0"', '"2.0"', '"2.0"', '"1.0"', '2', '"2\\u002e0"'),
    id: idArb,
    method: methodArb,
    params: paramsArb,
    omit: fc.oneof({ weight: 4, arbitrary: fc.constant<string[]>([]) }, { weight: 1, arbitrary: fc.subarray(['jsonrpc', 'id', 'method', 'params']) }),
    extra: fc.oneof(
      { weight: 4, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.tuple(fc.constantFrom('"Method"', '"ID"', '"extra"', '"jsonrpc"', '"id"', '"params"', '"__proto__"', '"ſd"'), writtenValueArb) },
    ),
    order: fc.nat(),
    space: fc.constantFrom('', ' ', '\r\n\t'),
  })
  .map(({ jsonrpc, id, method, params, omit, extra, order, space }) => {
    const members: string[] = [];
    for (const [name, value] of [['jsonrpc', jsonrpc], ['id', id], ['method', method], ['params', params]] as const) {
      if (!omit.includes(name)) members.push(`"${name}"${space}:${space}${value}`);
    }
    if (extra) members.splice(order % (members.length + 1), 0, `${extra[0]}:${extra[1]}`);
    const rotated = members.slice(order % Math.max(1, members.length)).concat(members.slice(0, order % Math.max(1, members.length)));
    return `${space}{${space}${rotated.join(`,${space}`)}${space}}${space}`;
  });

/** Bytes as they arrive: the request, or it damaged (cut, a byte changed, a BOM, bytes that are not UTF-8). */
const bodyArb = fc.tuple(requestArb, fc.constantFrom('none', 'none', 'none', 'cut', 'flip', 'bom', 'bad-utf8', 'array'), fc.nat()).map(([text, how, at]) => {
  const buf = Buffer.from(text, 'utf8');
  const pos = buf.length === 0 ? 0 : at % buf.length;
  switch (how) {
    case 'cut':
      return buf.subarray(0, pos);
    case 'flip': {
      const copy = Buffer.from(buf);
      if (copy.length > 0) copy[pos] = at % 256;
      return copy;
    }
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), buf]);
    case 'bad-utf8':
      return Buffer.concat([buf.subarray(0, pos), Buffer.from([0xc3]), buf.subarray(pos)]);
    case 'array':
      return Buffer.from(`[${text}]`);
    default:
      return buf;
  }
});

t.test('whatever the bytes, the verdict is the full check\'s', async (t) => {
  fc.assert(fc.property(bodyArb, (raw) => sameVerdict(raw)), { numRuns });
  t.pass(`${numRuns} bodies`);
});

t.test('the recognizer is taken for the usual requests, and only says yes to JSON.parse-able text', async (t) => {
  let taken = 0;
  fc.assert(
    fc.property(requestArb, (text) => {
      // The recognizer reads UTF-8 bytes; its offsets are the bytes'.
      const bytes = Buffer.from(text);
      const found = recognizeCallerRequest(bytes);
      if (found === undefined) return;
      taken++;
      const value = JSON.parse(text) as Record<string, unknown>;
      t.same(JSON.parse(bytes.toString('utf8', found.methodStart, found.methodEnd)), value.method);
      if (found.paramsStart !== -1) t.same(JSON.parse(bytes.toString('utf8', found.paramsStart, found.paramsEnd)), value.params);
    }),
    { numRuns },
  );
  t.ok(taken > numRuns / 20, `recognized ${taken} of ${numRuns} generated requests`);
  const usual = '{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m-1","parts":[{"kind":"text","text":"hello"}]}}}';
  t.ok(recognizeCallerRequest(Buffer.from(usual)), 'a plain message/send');
  const checked = checkCallerRequest(Buffer.from(usual), LIMIT);
  t.ok(checked.ok && checked.request.paramsHold !== undefined, 'checkCallerRequest took the one-pass path (params searchable in place)');
  t.equal(checkCallerRequestInFull(Buffer.from(usual)).ok && (checkCallerRequestInFull(Buffer.from(usual)) as { request: { paramsHold?: unknown } }).request.paramsHold, undefined);
});

t.test('depth and width bounds: just under is recognized, just over goes to the full check, the verdict the same', async (t) => {
  const nested = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
  // The top-level object is depth 1, params depth 2: params nested `d` deep reaches depth d + 1.
  const deep = (depth: number) => `{"jsonrpc":"2.0","id":1,"method":"m","params":${nested(depth - 1)}}`;
  t.ok(recognizeCallerRequest(Buffer.from(deep(MAX_RECOGNIZED_DEPTH))), `depth ${MAX_RECOGNIZED_DEPTH}: recognized`);
  t.notOk(recognizeCallerRequest(Buffer.from(deep(MAX_RECOGNIZED_DEPTH + 1))), `depth ${MAX_RECOGNIZED_DEPTH + 1}: not`);
  const wide = (members: number) => `{"jsonrpc":"2.0","id":1,"method":"m","params":{${Array.from({ length: members }, (_, i) => `"k${i}":${i}`).join(',')}}}`;
  t.ok(recognizeCallerRequest(Buffer.from(wide(MAX_RECOGNIZED_MEMBERS))), `${MAX_RECOGNIZED_MEMBERS} members: recognized`);
  t.notOk(recognizeCallerRequest(Buffer.from(wide(MAX_RECOGNIZED_MEMBERS + 1))), `${MAX_RECOGNIZED_MEMBERS + 1} members: not`);
  for (const text of [deep(MAX_RECOGNIZED_DEPTH), deep(MAX_RECOGNIZED_DEPTH + 1), deep(1000), wide(MAX_RECOGNIZED_MEMBERS), wide(MAX_RECOGNIZED_MEMBERS + 1)]) {
    sameVerdict(Buffer.from(text));
    t.equal(checkCallerRequest(Buffer.from(text), LIMIT).ok, true);
  }
  // A duplicate past the width bound is still found, by the full check.
  const dup = `{"jsonrpc":"2.0","id":1,"method":"m","params":{${Array.from({ length: MAX_RECOGNIZED_MEMBERS + 1 }, (_, i) => `"k${i}":${i}`).join(',')},"k0":0}}`;
  t.match(checkCallerRequest(Buffer.from(dup), LIMIT), { ok: false, reason: 'DUPLICATE_MEMBER', detail: '"k0" twice at $.params' });
});

t.test('members named twice are refused at every depth, as before', async (t) => {
  for (const [text, detail] of [
    ['{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"b":1,"b":2}}}', '"b" twice at $.params.a'],
    ['{"jsonrpc":"2.0","id":1,"method":"m","params":[{"x":1},{"y":1,"y":1}]}', '"y" twice at $.params[1]'],
    ['{"jsonrpc":"2.0","id":1,"method":"m","params":{"é":1,"é":2}}', '"é" twice at $.params'],
    ['{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"\\u0061":2}}', '"a" twice at $.params'],
  ] as const) {
    t.match(checkCallerRequest(Buffer.from(text), LIMIT), { ok: false, reason: 'DUPLICATE_MEMBER', id: 1, detail }, text);
  }
  // Same length, same first and last character: compared in full.
  t.equal(checkCallerRequest(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"m","params":{"abXc":1,"abYc":2}}'), LIMIT).ok, true);
});

t.test('paramsHold: a match must lie within the params, not before or after them', async (t) => {
  const held = (text: string, name: string) => {
    const checked = checkCallerRequest(Buffer.from(text), LIMIT);
    if (!checked.ok || checked.request.paramsHold === undefined) throw new Error(`not read in one pass: ${text}`);
    return checked.request.paramsHold(Buffer.from(`"${name}"`));
  };
  t.equal(held('{"jsonrpc":"2.0","method":"message/send","params":{"message":{}},"id":"configuration"}', 'configuration'), false, 'after the params (the id)');
  t.equal(held('{"jsonrpc":"2.0","id":"configuration","method":"message/send","params":{"message":{}}}', 'configuration'), false, 'before them');
  t.equal(held('{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"configuration":{}}}', 'configuration'), true, 'the first member');
  t.equal(held('{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"a":{"configuration":1}}}', 'configuration'), true, 'nested');
  t.equal(held('{"jsonrpc":"2.0","id":1,"method":"message/send"}', 'configuration'), false, 'no params');
});

t.test('params are parsed only when read, and read as the full check reads them', async (t) => {
  const text = '{"jsonrpc":"2.0","id":"é-1","method":"message/send","params":{"message":{"text":"naïve — ok","n":1.5e3}}}';
  const checked = checkCallerRequest(Buffer.from(text), LIMIT);
  t.ok(checked.ok);
  if (!checked.ok) return;
  t.equal(checked.request.id, 'é-1', 'an id past ASCII is decoded from its bytes');
  const hold = (name: string) => checked.request.paramsHold!(Buffer.from(`"${name}"`));
  t.ok(hold('message') && hold('text') && hold('n'), 'its member names are held');
  t.notOk(hold('configuration'), 'a name it does not spell is not');
  t.same(checked.request.params, { message: { text: 'naïve — ok', n: 1500 } });
  t.equal(checked.request.params, checked.request.params, 'parsed once');
});
