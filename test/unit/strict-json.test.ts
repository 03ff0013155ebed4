/**
 * The shared rule for bodies the gateway decides on and forwards as bytes:
 * a member named twice anywhere (escapes unescaped) is refused, so parsers
 * that keep the first and parsers that keep the last always agree.
 */
import { isDeepStrictEqual } from 'node:util';
import t from 'tap';
import fc from 'fast-check';
import { LISTED_NAMES } from '../../src/envelope/member-names.js';
import { DuplicateMemberError, describeDuplicate, findDuplicateMember, parseStrictJson } from '../../src/envelope/strict-json.js';
import { readJson } from '../support/json-readers.js';
import { fuzzParams, holdsWith } from '../support/fuzz.js';

const params = fuzzParams(2000);

const holds = holdsWith(params);

t.test('a member named twice is found at any depth, with the path of its object', async (t) => {
  t.same(findDuplicateMember('{"method":"a","method":"b"}'), { member: 'method', path: '$' });
  t.same(findDuplicateMember('{"params":{"message":{"role":"user","parts":[],"role":"agent"}}}'), { member: 'role', path: '$.params.message' });
  t.same(findDuplicateMember('[{"a":1},{"b":1,"b":2}]'), { member: 'b', path: '$[1]' });
  t.same(findDuplicateMember('{"x":[0,[1,{"k":1,"k":1}]]}'), { member: 'k', path: '$.x[1][1]' }, 'same value twice is still twice');
  t.same(findDuplicateMember('{"we ird":{"a":1,"a":2}}'), { member: 'a', path: '$["we ird"]' });
});

t.test('escaped spellings are the same member', async (t) => {
  t.same(findDuplicateMember('{"method":"a","m\\u0065thod":"b"}'), { member: 'method', path: '$' });
  t.same(findDuplicateMember('{"m\\u0065thod":"a","\\u006dethod":"b"}'), { member: 'method', path: '$' });
  t.same(findDuplicateMember('{"a/b":1,"a\\/b":2}'), { member: 'a/b', path: '$' });
  t.same(findDuplicateMember('{"a\\"b":1,"a\\u0022b":2}'), { member: 'a"b', path: '$' });
  t.same(findDuplicateMember('{"\\ud83d\\ude00":1,"😀":2}'), { member: '😀', path: '$' }, 'a surrogate pair escape');
});

t.test('no false alarms', async (t) => {
  for (const ok of [
    '{}',
    '[]',
    '{"a":{"a":{"a":1}}}',
    '{"a":1,"b":{"a":1},"c":[{"a":1},{"a":2}]}',
    '["a","a","a"]',
    '{"a":"a","b":"a"}',
    '{"a":"\\"b\\":1,\\"b\\":2"}',
    '{"a\\\\":1,"a":2}',
    '{"k":"}","k2":"{","k3":"[","k4":"]","k5":","}',
    '{"method":"m","Method":"x"}',
    '"a string"',
    '12',
  ]) {
    t.equal(findDuplicateMember(ok), undefined, ok);
  }
});

t.test('objects with names up to the listed bound and past it: a name twice is found wherever it falls', async (t) => {
  // The names of an object are kept in a list up to LISTED_NAMES, in a set past it; the switch must lose nothing.
  const object = (names: number, again?: { name: number; at: number }) => {
    const members = Array.from({ length: names }, (_, i) => `"n${i}":${i}`);
    if (again) members.splice(again.at, 0, `"n${again.name}":"again"`);
    return `{"outer":[${`{${members.join(',')}}`}]}`;
  };
  for (const names of [LISTED_NAMES - 1, LISTED_NAMES, LISTED_NAMES + 1, LISTED_NAMES + 2, 3 * LISTED_NAMES]) {
    t.equal(findDuplicateMember(object(names)), undefined, `${names} names, none twice`);
    // The second naming placed last (every name already seen), just after the switch, and first-named-again.
    for (const again of [{ name: 0, at: names }, { name: names - 1, at: names }, { name: 0, at: Math.min(names, LISTED_NAMES + 1) }, { name: 1, at: 2 }]) {
      t.same(findDuplicateMember(object(names, again)), { member: `n${again.name}`, path: '$.outer[0]' }, `${names} names, n${again.name} again at ${again.at}`);
    }
  }
});

t.test('parseStrictJson: the value, or exactly what is wrong', async (t) => {
  t.same(parseStrictJson('{"a":[1,2]}'), { ok: true, value: { a: [1, 2] } });
  t.same(parseStrictJson(Buffer.from('{"a":1}')), { ok: true, value: { a: 1 } });
  t.same(parseStrictJson(Buffer.from([0x7b, 0xff, 0x7d])), { ok: false, problem: 'invalid-utf8' });
  t.same(parseStrictJson('{"a":'), { ok: false, problem: 'syntax' });
  t.same(parseStrictJson('{"__proto__":{"x":1}}'), { ok: false, problem: 'forbidden-key' });
  t.same(parseStrictJson('{"a":1,"a":2}'), { ok: false, problem: 'duplicate-member', member: 'a', path: '$' });
  t.same(parseStrictJson('{"a":1,"a":'), { ok: false, problem: 'syntax' }, 'syntax first: a broken body is a parse error');
});

t.test('describeDuplicate: printable and bounded, for an error message', async (t) => {
  t.equal(describeDuplicate({ member: 'method', path: '$' }), '"method" twice at $');
  const long = describeDuplicate({ member: 'x'.repeat(500), path: '$.a' });
  t.ok(long.length < 100 && long.includes('…'), 'a long name is cut');
  t.equal(describeDuplicate({ member: 'a\u202eb\u0000c', path: '$' }), '"abc" twice at $', 'controls and bidi removed');
  const err = new DuplicateMemberError({ member: 'id', path: '$' });
  t.equal(err.name, 'DuplicateMemberError');
  t.equal(err.message, '"id" twice at $');
  t.same(err.duplicate, { member: 'id', path: '$' });
});

// ---------------------------------------------------------------- property

/** A serializer that can name a member twice and spell any name character as a \u escape. */
function render(value: unknown, choose: () => number): string {
  const key = (k: string) =>
    `"${[...JSON.stringify(k).slice(1, -1)].map((c) => (/[A-Za-z0-9]/.test(c) && choose() % 4 === 0 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c)).join('')}"`;
  if (Array.isArray(value)) return `[${value.map((v) => render(v, choose)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value).map(([k, v]) => `${key(k)}:${render(v, choose)}`);
    const entries = Object.entries(value);
    if (entries.length > 0 && choose() % 5 === 0) {
      // Name one member again, with another value, somewhere in the object.
      const [k] = entries[choose() % entries.length]!;
      members.splice(choose() % (members.length + 1), 0, `${key(k)}:${JSON.stringify(choose())}`);
    }
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const textArb = fc
  .tuple(fc.jsonValue({ maxDepth: 5 }), fc.array(fc.nat(), { minLength: 1, maxLength: 64 }))
  .map(([value, choices]) => {
    let n = 0;
    return render(value, () => choices[n++ % choices.length]! + n);
  });

t.test('property: the scan finds a member named twice exactly when a reference reader does', async (t) => {
  const texts = fc.sample(textArb, { numRuns: 500, seed: 7 });
  t.ok(texts.filter((text) => readJson(text, 'last').duplicates > 0).length > 50, 'the generator does name members twice');
  holds(
    t,
    fc.property(textArb, (text) => {
      const found = findDuplicateMember(text) !== undefined;
      const reference = readJson(text, 'last').duplicates > 0;
      if (found !== reference) throw new Error(`scan says ${found}, reference says ${reference}: ${text}`);
    }),
  );
});

t.test('property: whatever parseStrictJson accepts, first-wins and last-wins readers read alike (and as it does)', async (t) => {
  holds(
    t,
    fc.property(textArb, (text) => {
      const strict = parseStrictJson(text);
      if (!strict.ok) {
        if (strict.problem === 'forbidden-key') return; // "__proto__" from fast-check: refused for its own reason
        if (strict.problem !== 'duplicate-member') throw new Error(`${strict.problem}: ${text}`);
        return;
      }
      const first = readJson(text, 'first').value;
      const last = readJson(text, 'last').value;
      if (!isDeepStrictEqual(first, last)) throw new Error(`the readers differ on ${text}`);
      if (!isDeepStrictEqual(first, strict.value)) throw new Error(`the gateway reads otherwise: ${text}`);
    }),
  );
});
