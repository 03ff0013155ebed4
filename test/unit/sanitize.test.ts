import t from 'tap';
import { sanitizeText } from '../../src/envelope/sanitize.js';

t.test('exactly at the byte bound stays unchanged', async (t) => {
  const s = 'a'.repeat(200);
  t.same(sanitizeText(s, 200), { text: s, truncated: false });
});
