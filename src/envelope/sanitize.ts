/**
 * The one function that makes remote text safe to show an LLM or a log line.
 * Pure: no config lookups, no I/O. Used for error messages, card text and
 * anything else a remote wrote that a caller will read.
 */

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
  const cleaned = input
    .toWellFormed()
    .replace(WHITESPACE_LIKE, ' ')
    .replace(INVISIBLE, '')
    .replace(WHITESPACE_RUN, ' ')
    .trim();
  return truncateUtf8(cleaned, maxBytes);
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
