import t from 'tap';
import fc from 'fast-check';
import { findDuplicateMember } from '../../src/envelope/duplicate-members.js';
import { LISTED_NAMES } from '../../src/envelope/member-names.js';

t.test('finds a repeated member at any depth and says where', async (t) => {
  t.same(findDuplicateMember('{"a":1,"b":2}', 10), { ok: true });
  t.same(findDuplicateMember('{"a":1,"a":2}', 10), { ok: false, problem: 'duplicate-member', member: 'a', path: [] });
  t.same(findDuplicateMember('{"m":{"x":[{"k":1},{"k":2,"k":3}]}}', 10), { ok: false, problem: 'duplicate-member', member: 'k', path: ['m', 'x', 1] });
  t.same(findDuplicateMember('{"a\\u0062":1,"ab":2}', 10), { ok: false, problem: 'duplicate-member', member: 'ab', path: [] }, 'escapes are the same key');
  t.same(findDuplicateMember('{"a":{"x":1},"b":{"x":1}}', 10), { ok: true }, 'the same key in two objects');
  t.same(findDuplicateMember('{"a":"\\"a\\":","b":["a","a"]}', 10), { ok: true }, 'strings and array items are not keys');
  t.same(findDuplicateMember('{"a\\\\":1,"a\\\\":2}', 10).ok, false, 'an escaped backslash before the closing quote');
  t.same(findDuplicateMember('[{"a":1,"a":1}]', 10).ok, false, 'objects inside a top-level array');
});

t.test('objects with names up to the listed bound and past it: a name twice is found wherever it falls', async (t) => {
  const object = (names: number, again?: { name: number; at: number }) => {
    const members = Array.from({ length: names }, (_, i) => `"n${i}":${i}`);
    if (again) members.splice(again.at, 0, `"n${again.name}":"again"`);
    return `{"outer":[{${members.join(',')}}]}`;
  };
  for (const names of [LISTED_NAMES - 1, LISTED_NAMES, LISTED_NAMES + 1, LISTED_NAMES + 2, 3 * LISTED_NAMES]) {
    t.same(findDuplicateMember(object(names), 10), { ok: true }, `${names} names, none twice`);
    for (const again of [{ name: 0, at: names }, { name: names - 1, at: names }, { name: 0, at: Math.min(names, LISTED_NAMES + 1) }, { name: 1, at: 2 }]) {
      const found = findDuplicateMember(object(names, again), 10);
      t.same(found, { ok: false, problem: 'duplicate-member', member: `n${again.name}`, path: ['outer', 0] }, `${names} names, n${again.name} again at ${again.at}`);
    }
  }
});

t.test('levels bounds which objects are checked', async (t) => {
  t.same(findDuplicateMember('{"t":{"a":1,"a":2}}', 10, 1), { ok: true });
  t.same(findDuplicateMember('{"t":{"a":1,"a":2}}', 10, 2).ok, false);
  t.same(findDuplicateMember('{"a":1,"a":2}', 10, 1).ok, false);
});

t.test('depth is bounded: just under passes, just over is too-deep', async (t) => {
  t.same(findDuplicateMember(`${'['.repeat(5)}${']'.repeat(5)}`, 5), { ok: true });
  t.same(findDuplicateMember(`${'['.repeat(6)}${']'.repeat(6)}`, 5), { ok: false, problem: 'too-deep' });
  t.same(findDuplicateMember(`${'{"a":'.repeat(100000)}1${'}'.repeat(100000)}`, 64), { ok: false, problem: 'too-deep' });
});

t.test('property: agrees with a reference on arbitrary JSON objects', async (t) => {
  // Reference: JSON.parse with a reviver cannot see duplicates, so build texts with a known duplicate count.
  const objArb = fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 });
  t.doesNotThrow(() =>
    fc.assert(
      fc.property(objArb, fc.boolean(), (obj, dup) => {
        const text = JSON.stringify(obj);
        const keys = Object.keys(obj);
        if (!dup || keys.length === 0) {
          // JSON.stringify never writes a key twice, but nested values may hold objects: none has duplicates.
          if (!findDuplicateMember(text, 100).ok) throw new Error(`false positive on ${text}`);
          return;
        }
        const k = keys[0]!;
        const withDup = `{${JSON.stringify(k)}:0,${text.slice(1)}`;
        const r = findDuplicateMember(withDup, 100);
        if (r.ok || r.problem !== 'duplicate-member' || r.member !== k) throw new Error(`missed ${k} in ${withDup}`);
      }),
      { numRuns: 500 },
    ),
  );
});
