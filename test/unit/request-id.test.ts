/**
 * The gateway's request ids (src/policy/request-id.ts): a caller's plain id up to 128 characters is kept; anything
 * else gets a fresh random UUID (version 4), unique, across the batches the random bytes are drawn in.
 */
import t from 'tap';
import { newRequestId, requestIdOf } from '../../src/policy/request-id.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test('fresh ids are version-4 UUIDs, all different, across several draws of random bytes', async (t) => {
  // 256 ids per draw: 1,000 ids cross three refills, whatever the module used before.
  const ids = Array.from({ length: 1_000 }, () => newRequestId());
  t.same(ids.filter((id) => !UUID_V4.test(id)), [], 'every id has the UUID v4 form');
  t.equal(new Set(ids).size, ids.length, 'no id twice');
  const variants = new Set(ids.map((id) => id[19]));
  t.same([...variants].sort(), ['8', '9', 'a', 'b'], 'the variant digit takes its four values');
  const digits = new Set(ids.join('').replaceAll('-', ''));
  t.equal(digits.size, 16, 'every hex digit occurs');
});

t.test("a caller's plain id is kept up to 128 characters, else replaced by a fresh one", async (t) => {
  const plain = 'A'.repeat(127) + '9';
  t.equal(requestIdOf(plain), plain, '128 characters: kept');
  t.match(requestIdOf(plain + 'x'), UUID_V4, '129: replaced');
  t.equal(requestIdOf('trace-1.a_b:c'), 'trace-1.a_b:c');
  for (const odd of ['', 'has space', 'new\nline', 'ünïcode', 'semi;colon', 42, undefined, ['a']]) {
    t.match(requestIdOf(odd), UUID_V4, JSON.stringify(odd) ?? String(odd));
  }
});
