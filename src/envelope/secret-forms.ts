/**
 * The spellings of a credential a remote could echo back, and the cheap
 * probes that tell whether a text might hold one. Pure; used only by
 * ./redact.ts.
 *
 * A form is matched "loosely": any run of characters the sanitizer drops or
 * turns into spaces (controls, format characters, whitespace, whole terminal
 * control sequences) may sit between its characters, because a reader (an
 * LLM, a terminal) does not see them.
 */

/** Shortest credential the gateway accepts: shorter values cannot be removed from text without mangling it. */
export const MIN_SECRET_BYTES = 8;

/** What a reader may not see between two characters of a form (see ./sanitize.ts). */
const IGNORABLE_CLASS = '[\\p{Cc}\\p{Cf}\\s]';
/** The same inside JSON text: raw, a two-character escape, or any \u escape (over-approximated: a probe may say "maybe"). */
const JSON_IGNORABLE = `(?:${IGNORABLE_CLASS}|\\\\[bfnrt]|\\\\u[0-9A-Fa-f]{4})`;

/**
 * Every form of `secret` the redactor looks for, whitespace removed (the
 * sanitizer collapses it, and loose matching skips it anyway):
 * - the value itself;
 * - percent-encoded: every reserved character encoded (upper- and
 *   lower-case hex), encodeURIComponent's and encodeURI's choices;
 * - base64 and base64url at each of the three byte alignments, so the value
 *   is found inside a longer encoded blob (e.g. `user:token` in Basic auth):
 *   only the characters that depend on the value's bytes alone are kept.
 */
export function formsOf(secret: string): string[] {
  const forms = new Set<string>([secret]);
  const strict = [...secret].map((c) => (/^[A-Za-z0-9_.~-]$/.test(c) ? c : percent(c))).join('');
  for (const encoded of [strict, encodeURIComponent(secret), encodeURI(secret)]) {
    forms.add(encoded);
    forms.add(encoded.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
  }
  const bytes = Buffer.from(secret, 'utf8');
  for (const offset of [0, 1, 2]) {
    const padded = Buffer.concat([Buffer.alloc(offset), bytes]);
    // Characters whose 6 bits all come from the value: from ceil(8·offset/6) up to (not including) floor(8·(offset+len)/6).
    const from = Math.ceil((8 * offset) / 6);
    const to = Math.floor((8 * (offset + bytes.length)) / 6);
    forms.add(padded.toString('base64').slice(from, to));
    forms.add(padded.toString('base64url').slice(from, to));
  }
  return [...forms].map((f) => f.replace(/\s+/g, '')).filter((f) => f.length >= MIN_SECRET_BYTES);
}

function percent(c: string): string {
  return [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

/** A regex over decoded text that finds any form loosely (controls, format characters and whitespace between characters). */
export function textProbe(forms: readonly string[]): RegExp {
  return new RegExp(alternation(trieOf(forms), escapeRegex, `${IGNORABLE_CLASS}*`), 'u');
}

/**
 * Regexes over raw JSON text that find any form loosely, each character raw
 * or escaped. They can say "maybe" where no decoded string holds a form (a
 * probe, not a verdict), never "no" where one does, provided the text holds
 * no terminal control sequence (see `JSON_SEQUENCE_START`). `plainFirst`
 * covers forms whose first character is written raw; `escapedFirst` those
 * written as \u00XX, and only runs on text that has a \u at all: kept apart,
 * the common probe stays a scan for a handful of plain first characters.
 */
export function jsonProbes(forms: readonly string[]): { readonly plainFirst: RegExp; readonly escapedFirst: RegExp } {
  const trie = trieOf(forms);
  const separator = `${JSON_IGNORABLE}*`;
  const branches = (first: (c: string) => string) =>
    [...trie.entries()].map(([c, child]) => `${first(c)}${alternation(child, jsonChar, separator, separator)}`).join('|');
  return {
    plainFirst: new RegExp(branches(jsonRaw), 'u'),
    escapedFirst: new RegExp(branches(unicodeEscape), 'u'),
  };
}

/**
 * A control sequence's printable tail is invisible after sanitizing, which
 * the probes cannot see: JSON text holding an ESC or a C1 introducer, raw or
 * escaped, always takes the slow path.
 */
export const JSON_SEQUENCE_START = /[\x80-\x9f]|\\u00(?:1[bB]|[89][0-9a-fA-F])/;

type Trie = Map<string, Trie>;
const END = '';

/** Forms sharing a prefix share a branch: the regex engine then tries far fewer alternatives per position. */
function trieOf(forms: readonly string[]): Trie {
  const root: Trie = new Map();
  for (const form of forms) {
    let node = root;
    for (const c of form) {
      let next = node.get(c);
      if (!next) node.set(c, (next = new Map()));
      node = next;
    }
    node.set(END, new Map());
  }
  return root;
}

/** Regex source for every path of `node`; `before` goes in front of each character (none before the first). */
function alternation(node: Trie, char: (c: string) => string, separator: string, before = ''): string {
  // A form that is a prefix of another ends here: the shorter match is enough.
  if (node.has(END)) return '';
  const branches = [...node.entries()].map(([c, child]) => `${before}${char(c)}${alternation(child, char, separator, separator)}`);
  return branches.length === 1 ? branches[0]! : `(?:${branches.join('|')})`;
}

/** One character of a form as JSON text may spell it: raw (escaped if JSON requires it) or as \u00XX. */
function jsonChar(c: string): string {
  return c.charCodeAt(0) < 0x80 ? `(?:${jsonRaw(c)}|${unicodeEscape(c)})` : jsonRaw(c);
}

function jsonRaw(c: string): string {
  if (c === '"') return '\\\\"';
  if (c === '\\') return '\\\\\\\\';
  if (c === '/') return '\\\\?/';
  return escapeRegex(c);
}

function unicodeEscape(c: string): string {
  const hex = c.charCodeAt(0).toString(16).padStart(4, '0');
  return `\\\\u${[...hex].map((h) => (/[a-f]/.test(h) ? `[${h}${h.toUpperCase()}]` : h)).join('')}`;
}

function escapeRegex(c: string): string {
  // Only syntax characters (and '/') may be escaped under the u flag.
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}
