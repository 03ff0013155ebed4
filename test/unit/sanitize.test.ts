import t from 'tap';
import { sanitizeText, truncateUtf8 } from '../../src/envelope/sanitize.js';

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
const clean = (s: string, maxBytes = 200): string => sanitizeText(s, maxBytes).text;

t.test('C0 controls: NUL dropped, CR and LF become a space', async (t) => {
  t.equal(clean('a\u0000b'), 'ab');
  t.equal(clean('line one\rline two'), 'line one line two');
  t.equal(clean('line one\nline two'), 'line one line two');
  t.equal(clean('a\u0001\u0007\u001bb'), 'ab', 'BEL, ESC and friends dropped');
});

t.test('DEL is dropped', async (t) => {
  t.equal(clean('a\u007fb'), 'ab');
});

t.test('C1 controls: NEL becomes a space, CSI is dropped', async (t) => {
  t.equal(clean('a\u0085b'), 'a b');
  t.equal(clean('a\u009b31mb'), 'a31mb');
});

t.test('bidi embeddings/overrides U+202A-U+202E are dropped', async (t) => {
  for (let cp = 0x202a; cp <= 0x202e; cp++) {
    t.equal(clean(`ab${String.fromCodePoint(cp)}cd`), 'abcd', `U+${cp.toString(16).toUpperCase()}`);
  }
});

t.test('bidi isolates U+2066-U+2069 are dropped', async (t) => {
  for (let cp = 0x2066; cp <= 0x2069; cp++) {
    t.equal(clean(`ab${String.fromCodePoint(cp)}cd`), 'abcd', `U+${cp.toString(16).toUpperCase()}`);
  }
});

t.test('zero-width characters and BOM are dropped', async (t) => {
  for (const cp of [0x200b, 0x200c, 0x200d, 0xfeff]) {
    t.equal(clean(`ab${String.fromCodePoint(cp)}cd`), 'abcd', `U+${cp.toString(16).toUpperCase()}`);
  }
});

t.test('tag characters (ASCII smuggling) are dropped', async (t) => {
  const smuggled = 'ok' + [...'IGNORE'].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');
  t.equal(clean(smuggled), 'ok');
  t.equal(clean('a\u{E0041}b'), 'ab');
});

t.test('tabs become spaces', async (t) => {
  t.equal(clean('a\tb'), 'a b');
  t.equal(clean('a\t\t\tb'), 'a b');
});

t.test('whitespace runs collapse and the ends are trimmed', async (t) => {
  t.equal(clean('   a    b \n\n  c   '), 'a b c');
  t.equal(clean('\u00a0a\u2028b\u2029c\u3000'), 'a b c', 'NBSP, separators, ideographic space');
  t.equal(clean(' \t\r\n '), '');
});

t.test('lone surrogates become U+FFFD', async (t) => {
  t.equal(clean('a\ud800b'), 'a\ufffdb');
  t.equal(clean('a\udc00b'), 'a\ufffdb');
  t.equal(clean('\ud83d\ude00'), '😀', 'a valid pair is kept');
});

t.test('output never contains Cc or Cf characters', async (t) => {
  let all = '';
  for (let cp = 0; cp < 0x3000; cp++) all += String.fromCodePoint(cp);
  for (let cp = 0xe0000; cp < 0xe0080; cp++) all += String.fromCodePoint(cp);
  const out = sanitizeText(all + '\ufeff', 1_000_000).text;
  t.notMatch(out, /[\p{Cc}\p{Cf}]/u);
});

t.test('exactly at the byte bound stays unchanged', async (t) => {
  const s = 'a'.repeat(200);
  t.same(sanitizeText(s, 200), { text: s, truncated: false });
});

t.test('one byte over the bound truncates to the bound', async (t) => {
  const r = sanitizeText('a'.repeat(201), 200);
  t.equal(r.text, 'a'.repeat(200));
  t.equal(r.truncated, true);
});

t.test('a 2-byte character straddling the bound is dropped whole', async (t) => {
  // 'a' + 100 × 'é' = 201 bytes; the last é occupies bytes 199-200.
  const r = sanitizeText('a' + 'é'.repeat(100), 200);
  t.equal(r.text, 'a' + 'é'.repeat(99));
  t.equal(bytes(r.text), 199);
  t.equal(r.truncated, true);
  t.same(sanitizeText('é'.repeat(100), 200), { text: 'é'.repeat(100), truncated: false }, '200 bytes of é fit');
});

t.test('3-byte characters (€) at the bound', async (t) => {
  const fits = 'ab' + '€'.repeat(66); // 2 + 198 = 200 bytes
  t.same(sanitizeText(fits, 200), { text: fits, truncated: false });
  const over = 'abc' + '€'.repeat(66); // 201 bytes: the last € would end at byte 201
  const r = sanitizeText(over, 200);
  t.equal(r.text, 'abc' + '€'.repeat(65));
  t.equal(bytes(r.text), 198);
  t.equal(r.truncated, true);
});

t.test('4-byte characters (😀) at the bound', async (t) => {
  const fits = '😀'.repeat(50); // 200 bytes
  t.same(sanitizeText(fits, 200), { text: fits, truncated: false });
  const r = sanitizeText('a' + '😀'.repeat(50), 200);
  t.equal(r.text, 'a' + '😀'.repeat(49));
  t.equal(bytes(r.text), 197);
  t.equal(r.truncated, true);
  t.notMatch(r.text, /\ufffd/, 'no half character left behind');
});

t.test('maxBytes smaller than one character gives an empty, truncated text', async (t) => {
  t.same(sanitizeText('€', 2), { text: '', truncated: true });
  t.same(sanitizeText('😀', 3), { text: '', truncated: true });
  t.same(sanitizeText('😀', 4), { text: '😀', truncated: false });
  t.same(sanitizeText('é', 1), { text: '', truncated: true });
  t.same(sanitizeText('a', 0), { text: '', truncated: true });
});

t.test('truncation does not leave trailing space', async (t) => {
  const r = sanitizeText('abc def', 4);
  t.same(r, { text: 'abc', truncated: true });
});

t.test('sanitizing happens before measuring', async (t) => {
  // 200 visible bytes plus invisible characters: invisible ones do not count.
  const s = 'a'.repeat(100) + '\u200b'.repeat(50) + 'a'.repeat(100);
  t.same(sanitizeText(s, 200), { text: 'a'.repeat(200), truncated: false });
});

t.test('truncateUtf8 with a negative bound returns nothing', async (t) => {
  t.same(truncateUtf8('ab', -1), { text: '', truncated: true });
});
