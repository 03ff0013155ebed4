import t from 'tap';
import { CARD_BOUNDS, cleanTextList, httpUrl, sameOrigin, sanitizeTree } from '../../src/a2a/card-text.js';

t.test('sanitizeTree cleans every string at any depth', async (t) => {
  t.same(sanitizeTree({ a: ['x\u202ey', { b: 'p\u0000q\nr' }], n: 1, f: false, z: null }, 100), {
    a: ['xy', { b: 'pq r' }],
    n: 1,
    f: false,
    z: null,
  });
  t.equal(sanitizeTree('a'.repeat(11), 10), 'a'.repeat(10));
  t.equal(sanitizeTree(undefined, 10), undefined);
});

t.test('arrays: just under the bound kept whole, just over cut', async (t) => {
  const n = CARD_BOUNDS.maxArrayItems;
  t.equal((sanitizeTree(Array(n).fill(1), 10) as unknown[]).length, n);
  t.equal((sanitizeTree(Array(n + 1).fill(1), 10) as unknown[]).length, n);
});

t.test('objects: just under the member bound kept whole, just over cut', async (t) => {
  const n = CARD_BOUNDS.maxObjectMembers;
  const obj = (k: number) => Object.fromEntries(Array.from({ length: k }, (_, i) => [`k${i}`, i]));
  t.equal(Object.keys(sanitizeTree(obj(n), 10) as object).length, n);
  t.equal(Object.keys(sanitizeTree(obj(n + 1), 10) as object).length, n);
});

t.test('nesting: objects at maxDepth are dropped, strings there are kept', async (t) => {
  const nest = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : { x: nest(depth - 1, leaf) });
  const depthOf = (v: unknown): number => (v !== null && typeof v === 'object' ? 1 + depthOf((v as { x: unknown }).x) : 0);
  const d = CARD_BOUNDS.maxDepth;
  t.equal(depthOf(sanitizeTree(nest(d - 1, {}), 10)), d, 'd objects deep (the last at depth maxDepth-1): all kept');
  t.equal(depthOf(sanitizeTree(nest(d, {}), 10)), d, 'd+1 objects deep: the one at depth maxDepth is dropped');
  t.same(depthOf(sanitizeTree(nest(d, 's'), 10)), d, 'a string leaf at depth maxDepth survives');
});

t.test('member names with invisible characters, or too long, are dropped', async (t) => {
  const max = CARD_BOUNDS.maxKeyBytes;
  const out = sanitizeTree({ ok: 1, 'bad\u202ekey': 2, 'sp ace': 3, '': 4, ['k'.repeat(max)]: 5, ['k'.repeat(max + 1)]: 6 }, 10) as Record<string, unknown>;
  t.same(Object.keys(out), ['ok', 'sp ace', 'k'.repeat(max)]);
});

t.test('cleanTextList drops non-strings and empties, bounds the count', async (t) => {
  t.same(cleanTextList(['a', 1, '\u200b', ' b '], 10, 10), ['a', 'b']);
  t.same(cleanTextList(['a', 'b', 'c'], 2, 10), ['a', 'b']);
  t.equal(cleanTextList('a', 2, 10), undefined);
});

t.test('httpUrl accepts http(s) only and re-serializes', async (t) => {
  t.equal(httpUrl('https://Example.COM:443/a b'), 'https://example.com/a%20b');
  t.equal(httpUrl('http://x.example/'), 'http://x.example/');
  for (const bad of ['javascript:alert(1)', 'data:text/html,x', 'file:///etc/passwd', '/relative', 'ftp://x.example/', 'https://user:pw@x.example/', 'not a url', 5]) {
    t.equal(httpUrl(bad), undefined, String(bad));
  }
  const prefix = 'https://x.example/';
  const max = CARD_BOUNDS.maxUrlLength;
  t.equal(httpUrl(prefix + 'a'.repeat(max - prefix.length)), prefix + 'a'.repeat(max - prefix.length), 'just under the URL bound');
  t.equal(httpUrl(prefix + 'a'.repeat(max - prefix.length + 1)), undefined, 'just over');
  t.equal(httpUrl(prefix + ' '.repeat(max - prefix.length - 1) + 'a'), undefined, 'input at the bound whose serialization is over it');
});

t.test('sameOrigin compares scheme, host and port', async (t) => {
  const remote = new URL('https://agent.example.com/a2a');
  t.ok(sameOrigin('https://agent.example.com:443/other', remote));
  t.notOk(sameOrigin('http://agent.example.com/a2a', remote));
  t.notOk(sameOrigin('https://agent.example.com:8443/a2a', remote));
  t.notOk(sameOrigin('https://evil.example.com/a2a', remote));
  t.notOk(sameOrigin(undefined, remote));
});
