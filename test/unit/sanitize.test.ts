import t from 'tap';
import { sanitizeText, truncateUtf8 } from '../../src/envelope/sanitize.js';

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
const clean = (s: string, maxBytes = 200): string => sanitizeText(s, maxBytes).text;

t.test('C0 controls: NUL dropped, CR and LF become a space', async (t) => {
  t.equal(clean('a\u0000b'), 'ab');
  t.equal(clean('line one\rline two'), 'line one line two');
  t.equal(clean('line one\nline two'), 'line one line two');
  t.equal(clean('a\u0001\u0007b'), 'ab', 'SOH and BEL dropped');
  t.equal(clean('a\u001b\u00e9b'), 'a\u00e9b', 'an ESC that starts no sequence is dropped alone');
});

t.test('DEL is dropped', async (t) => {
  t.equal(clean('a\u007fb'), 'ab');
});

t.test('C1 controls: NEL becomes a space, an 8-bit CSI goes with its sequence', async (t) => {
  t.equal(clean('a\u0085b'), 'a b');
  t.equal(clean('a\u009b31mb'), 'ab');
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

// --- terminal control sequences (ECMA-48) are removed whole ---

const ESC = '\u001b';
const BEL = '\u0007';
const ST7 = `${ESC}\\`;

t.test('CSI sequences go whole: colours, cursor moves, screen clears, private modes', async (t) => {
  t.equal(clean(`boom${ESC}[2J`), 'boom', 'erase display');
  t.equal(clean(`${ESC}[31mred${ESC}[0m text`), 'red text', 'SGR colour and reset');
  t.equal(clean(`a${ESC}[1;31;42mb`), 'ab', 'several parameters');
  t.equal(clean(`a${ESC}[?25lb${ESC}[?1049hc`), 'abc', 'private parameters (hide cursor, alternate screen)');
  t.equal(clean(`a${ESC}[10;20Hb`), 'ab', 'cursor position');
  t.equal(clean(`a${ESC}[ qb`), 'ab', 'an intermediate byte before the final one');
  t.equal(clean(`a\u009b2Jb`), 'ab', '8-bit CSI');
});

t.test('OSC sequences go whole, ended by BEL or ST (7- and 8-bit)', async (t) => {
  t.equal(clean(`boom ${ESC}]0;pwned${BEL} end`), 'boom end', 'window title, BEL');
  t.equal(clean(`boom ${ESC}]0;pwned${ST7} end`), 'boom end', 'window title, ESC \\');
  t.equal(clean(`boom ${ESC}]0;pwned\u009c end`), 'boom end', 'window title, 8-bit ST');
  t.equal(clean(`a \u009d0;pwned${BEL} b`), 'a b', '8-bit OSC');
  t.equal(clean(`${ESC}]8;;https://evil.example/${ST7}click here${ESC}]8;;${ST7}`), 'click here', 'a hyperlink keeps only its visible text');
  t.equal(clean(`a ${ESC}]52;c;SWdub3JlIHByZXZpb3Vz${BEL} b`), 'a b', 'clipboard write');
});

t.test('DCS, SOS, PM and APC strings go whole, ended by ST', async (t) => {
  for (const [name, intro] of [['DCS', 'P'], ['SOS', 'X'], ['PM', '^'], ['APC', '_']] as const) {
    t.equal(clean(`a ${ESC}${intro}payload;pwned${ST7} b`), 'a b', `${name}, 7-bit`);
    t.equal(clean(`a ${ESC}${intro}payload;pwned\u009c b`), 'a b', `${name}, 8-bit ST`);
  }
  for (const [name, intro] of [['DCS', '\u0090'], ['SOS', '\u0098'], ['PM', '\u009e'], ['APC', '\u009f']] as const) {
    t.equal(clean(`a ${intro}payload;pwned${ST7} b`), 'a b', `8-bit ${name}`);
  }
  t.equal(clean(`a ${ESC}Ppayload${BEL}still inside${ST7} b`), 'a b', 'BEL does not end a DCS string');
});

t.test('unterminated strings are removed to the end of the text', async (t) => {
  t.equal(clean(`visible ${ESC}]0;pwned and everything after`), 'visible');
  t.equal(clean(`visible ${ESC}_apc never ends`), 'visible');
  t.equal(clean(`visible \u009dosc never ends`), 'visible');
  t.equal(clean(`visible ${ESC}[12;34`), 'visible', 'a CSI cut before its final byte');
  t.equal(clean(`visible ${ESC}`), 'visible', 'a lone ESC at the end');
});

t.test('two-character escapes go whole', async (t) => {
  t.equal(clean(`a${ESC}cb`), 'ab', 'RIS (full reset)');
  t.equal(clean(`a${ESC}7b${ESC}8c`), 'abc', 'save/restore cursor');
  t.equal(clean(`a${ESC}(Bb`), 'ab', 'charset designation with an intermediate');
  t.equal(clean(`a${ESC}#8b`), 'ab', 'DECALN');
});

t.test('nested and odd cases leave no printable fragment', async (t) => {
  t.equal(clean(`a${ESC}]0;title${ESC}[2Jb`), 'ab', 'an ESC inside an OSC ends it and starts the next sequence');
  t.equal(clean(`a${ESC}${ESC}[2Jb`), 'ab', 'ESC ESC [');
  t.equal(clean(`a${ESC}[${ESC}[2Jb`), 'ab', 'a CSI interrupted by another');
  t.equal(clean(`a${ESC}]0;${ESC}]0;pwned${BEL}b`), 'ab', 'OSC inside OSC');
  t.equal(clean(`a${ESC}Pq${ESC}[31mx${ST7}b`), 'axb', 'an ESC inside DCS ends it, like a terminal (x was never inside a string)');
  t.equal(clean(`a${ESC}[1;2 3mb`), 'ab', 'a parameter after an intermediate (malformed) still ends at the final byte');
  t.equal(clean(`${ESC}[2J${ESC}[H${ESC}]0;x${BEL}`), '', 'nothing but sequences');
  t.equal(clean(`[2J ]0;pwned`), '[2J ]0;pwned', 'printable text without ESC is the remote’s own text and stays');
  t.equal(clean(`a\u009bb`), 'a', '8-bit CSI with a final byte right after it (b)');
  t.equal(clean(`price 5€ ${ESC}[1mnow${ESC}[0m`), 'price 5€ now', 'non-ASCII text around a sequence');
});
