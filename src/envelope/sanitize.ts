/**
 * The one function that makes remote text safe to show an LLM or a log line.
 * Pure: no config lookups, no I/O. Used for error messages, card text and
 * anything else a remote wrote that a caller will read.
 */

// Terminal control sequences (ECMA-48) are removed whole, not just their ESC
// byte: dropping ESC alone left "[2J" or "]0;pwned" behind as readable text.
// Each introducer has a 7-bit form (ESC + char) and an 8-bit C1 form:
//   CSI  ESC [ or U+009B, then parameter/intermediate bytes 0x20-0x3F, then one
//        final byte 0x40-0x7E. Parameters after an intermediate are malformed
//        but still part of the sequence (terminals ignore up to the final byte).
//   OSC  ESC ] or U+009D, a string ended by BEL or ST.
//   DCS  ESC P / U+0090, SOS ESC X / U+0098, PM ESC ^ / U+009E,
//   APC  ESC _ / U+009F: strings ended by ST.
//   ST   ESC \ or U+009C.
// A string stops at ESC too: like a terminal, the ESC starts the next
// sequence (for ESC \ that is the ST itself, removed as a two-character
// sequence), so "ESC ] title ESC [2J" loses both parts. A string with no end
// runs to the end of the text, and all of it goes: a terminal would swallow it.
// Two-character escapes are ESC, any intermediates 0x20-0x2F, and one final
// byte 0x30-0x7E (ESC c, ESC 7, ESC ( B). An ESC followed by anything else
// is removed alone. Exported as source: the redactor skips exactly what this removes.
export const CONTROL_SEQUENCE_SOURCE = [
  '(?:\\x1b\\[|\\x9b)[\\x20-\\x3f]*[\\x40-\\x7e]?',
  '(?:\\x1b\\]|\\x9d)[^\\x07\\x1b\\x9c]*(?:\\x07|\\x9c)?',
  '(?:\\x1b[PX^_]|[\\x90\\x98\\x9e\\x9f])[^\\x1b\\x9c]*\\x9c?',
  '\\x1b[\\x20-\\x2f]*[\\x30-\\x7e]?',
].join('|');

const CONTROL_SEQUENCE = new RegExp(CONTROL_SEQUENCE_SOURCE, 'g');
/** Cheap test: does the text hold anything that can start a control sequence? */
export const SEQUENCE_START = /[\x1b\x90\x98\x9b\x9d\x9e\x9f]/;

// Whitespace-like controls and line/paragraph separators become a space so
// "line one\nline two" stays readable; every other control (Cc) and every
// format character (Cf: bidi overrides, zero-width, BOM, tag characters used
// for "ASCII smuggling") is dropped.
const WHITESPACE_LIKE = /[\t\n\v\f\r\u0085\u2028\u2029]/gu;
const INVISIBLE = /[\p{Cc}\p{Cf}]/gu;
const WHITESPACE_RUN = /\s+/gu;

export interface SanitizedText {
  readonly text: string;
  readonly truncated: boolean;
}

/** Cleans `input` and cuts it to at most `maxBytes` UTF-8 bytes on a character boundary. */
export function sanitizeText(input: string, maxBytes: number): SanitizedText {
  return truncateUtf8(cleanText(input), maxBytes);
}

/** `sanitizeText` without the cut: for callers that must look at the whole clean text first (the redactor). */
export function cleanText(input: string): string {
  return removeControlSequences(input.toWellFormed())
    .replace(WHITESPACE_LIKE, ' ')
    .replace(INVISIBLE, '')
    .replace(WHITESPACE_RUN, ' ')
    .trim();
}

/** Removes every terminal control sequence whole (ECMA-48 CSI, OSC, DCS, SOS, PM, APC, two-character escapes). */
export function removeControlSequences(text: string): string {
  return SEQUENCE_START.test(text) ? text.replace(CONTROL_SEQUENCE, '') : text;
}

/** Cuts to at most `maxBytes` bytes of UTF-8 without splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): SanitizedText {
  // Each UTF-16 unit encodes to at most 3 bytes, so short strings need no encoding.
  if (text.length * 3 <= maxBytes) return { text, truncated: false };
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { text, truncated: false };
  let cut = Math.max(0, maxBytes);
  // Back off over continuation bytes (10xxxxxx) so the cut lands on a lead byte.
  while (cut > 0 && ((bytes[cut] ?? 0) & 0xc0) === 0x80) cut--;
  return { text: bytes.subarray(0, cut).toString('utf8').trimEnd(), truncated: true };
}
