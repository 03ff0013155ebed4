/**
 * The A2A protocol version a caller asked for, as the spec compares it:
 * `Major.Minor` only (§3.6: patch numbers "MUST not be considered"), and an
 * empty or missing value means 0.3 (§3.6.2). Spellings that mean the same
 * version ("1.0", " 1.0", "01.0", "1.00", "1.0.2") give the same string, so
 * whatever is keyed on it (the card cache) sees one version, not five.
 */

/** What a missing or empty A2A-Version means. */
export const DEFAULT_A2A_VERSION = '0.3';

const VERSION = /^(\d{1,3})\.(\d{1,3})(?:\.\d{1,3})?$/;

/**
 * `Major.Minor` of an A2A-Version header value, leading zeros dropped;
 * DEFAULT_A2A_VERSION when the header is missing or empty; undefined when it
 * is not a version at all (a list, text, a bare number).
 */
export function a2aVersionOf(header: string | readonly string[] | undefined): string | undefined {
  if (header === undefined) return DEFAULT_A2A_VERSION;
  if (typeof header !== 'string') return header.length === 1 ? a2aVersionOf(header[0]) : undefined;
  const value = header.trim();
  if (value === '') return DEFAULT_A2A_VERSION;
  const match = VERSION.exec(value);
  return match ? `${Number(match[1])}.${Number(match[2])}` : undefined;
}
