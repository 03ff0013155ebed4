/**
 * Properties of the sanitizer: whatever terminal control sequences a remote
 * puts into text, the result is the same as if they had never been there,
 * and no control or format character survives.
 */
import t from 'tap';
import fc from 'fast-check';
import { sanitizeText } from '../../src/envelope/sanitize.js';
import { hostileTextArb } from '../support/envelope-invariants.js';
import { fuzzParams, holdsWith } from '../support/fuzz.js';

const params = fuzzParams(2000);

const holds = holdsWith(params);

const ESC = '\u001b';
/** Text that cannot start or end a control sequence: no ESC, no C1 controls. */
const plainTextArb = hostileTextArb.map((s) => s.replace(/[\u001b\u0080-\u009f]/g, ''));
const printable = fc.string({ unit: fc.constantFrom(...'abcxyz0189;:?!<=> #()[]{}~PX^_\\/"\'é€😀'), maxLength: 24 });
const csiIntro = fc.constantFrom(`${ESC}[`, '\u009b');
const csiParams = fc.string({ unit: fc.integer({ min: 0x20, max: 0x3f }).map((c) => String.fromCharCode(c)), maxLength: 12 });
const finalByte = (min: number) => fc.integer({ min, max: 0x7e }).map((c) => String.fromCharCode(c));
const st = fc.constantFrom(`${ESC}\\`, '\u009c');
/** A string payload: anything but ESC, ST and (for OSC) BEL. */
const stringBody = printable.map((s) => s.replace(/[\u0007\u001b\u009c]/g, ''));

/** A complete control sequence: CSI, OSC, DCS/SOS/PM/APC or a two-character escape. */
const sequenceArb: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(csiIntro, csiParams, finalByte(0x40)).map((p) => p.join('')),
  fc.tuple(fc.constantFrom(`${ESC}]`, '\u009d'), stringBody, fc.oneof(st, fc.constant('\u0007'))).map((p) => p.join('')),
  fc
    .tuple(fc.constantFrom(`${ESC}P`, `${ESC}X`, `${ESC}^`, `${ESC}_`, '\u0090', '\u0098', '\u009e', '\u009f'), stringBody, st)
    .map((p) => p.join('')),
  fc
    .tuple(fc.string({ unit: fc.integer({ min: 0x20, max: 0x2f }).map((c) => String.fromCharCode(c)), maxLength: 2 }), finalByte(0x30))
    // ESC [ ] P X ^ _ start longer sequences; the ones above cover them.
    .filter(([mid, last]) => mid !== '' || !'[]PX^_'.includes(last))
    .map(([mid, last]) => `${ESC}${mid}${last}`),
);

t.test('property: complete control sequences vanish whole, wherever they are put', async (t) => {
  holds(
    t,
    fc.property(plainTextArb, fc.array(fc.tuple(fc.nat(), sequenceArb), { maxLength: 6 }), (text, inserts) => {
      const units = [...text];
      // Insert from the back so earlier positions stay valid.
      const sorted = inserts.map(([at, seq]) => [at % (units.length + 1), seq] as const).sort((a, b) => b[0] - a[0]);
      for (const [at, seq] of sorted) units.splice(at, 0, seq);
      const withSequences = units.join('');
      const expected = sanitizeText(text, 1_000_000).text;
      const actual = sanitizeText(withSequences, 1_000_000).text;
      if (actual !== expected) throw new Error(`${JSON.stringify(withSequences)} gave ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
    }),
  );
});

t.test('property: an unterminated string removes everything after it', async (t) => {
  holds(
    t,
    fc.property(plainTextArb, fc.constantFrom(`${ESC}]`, `${ESC}P`, `${ESC}_`, '\u009d', '\u009f'), plainTextArb, (before, intro, after) => {
      const tail = after.replace(/[\u0007]/g, '');
      const actual = sanitizeText(`${before}${intro}${tail}`, 1_000_000).text;
      const expected = sanitizeText(before, 1_000_000).text;
      if (actual !== expected) throw new Error(`gave ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
    }),
  );
});

t.test('property: the output never holds a control or format character, whatever the input', async (t) => {
  const anyArb = fc.oneof(hostileTextArb, fc.array(fc.oneof(hostileTextArb, sequenceArb), { maxLength: 8 }).map((p) => p.join('')));
  holds(
    t,
    fc.property(anyArb, fc.integer({ min: 0, max: 600 }), (text, maxBytes) => {
      const out = sanitizeText(text, maxBytes);
      if (/[\p{Cc}\p{Cf}]/u.test(out.text)) throw new Error(`control left in ${JSON.stringify(out.text)}`);
      if (Buffer.byteLength(out.text) > maxBytes) throw new Error('over the bound');
    }),
  );
});
