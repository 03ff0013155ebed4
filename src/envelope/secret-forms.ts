/**
 * The spellings of a credential a remote could echo back, and the cheap
 * probes that tell whether a text might hold one. Pure; used only by
 * ./redact.ts.
 *
 * A form is matched "loosely": any run of characters the sanitizer drops or
 * turns into spaces (controls, format characters, whitespace, whole terminal
 * control sequences) may sit between its characters, because a reader (an
 * LLM, a terminal) does not see them. The probes here over-approximate that
 * cheaply; ./redact.ts then decides exactly.
 */

/** Shortest credential the gateway accepts: shorter values cannot be removed from text without mangling it. */
export const MIN_SECRET_BYTES = 8;

/**
 * What may sit between two characters of a form, for the probes: anything
 * but visible ASCII. Forms are visible ASCII, so this is a superset of what
 * a reader does not see (controls, format characters, whitespace): a probe
 * may say "maybe" too often, never "no" wrongly. A small class keeps the
 * compiled regex small; the precise rule lives in the redactor's skeleton.
 */
const LOOSE_GAP = '[^!-~]*';
/** The same inside JSON text: also two-character escapes and any \u escape. */
const JSON_LOOSE_GAP = '(?:[^!-~]|\\\\[bfnrt]|\\\\u[0-9A-Fa-f]{4})*';

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

/** A regex over decoded text that finds any form loosely (anything but visible ASCII between characters). */
export function textProbe(forms: readonly string[]): RegExp {
  return new RegExp(alternation(trieOf(forms), escapeRegex, LOOSE_GAP));
}

/**
 * A regex over raw JSON text that finds any form loosely, each character
 * written raw (or as JSON's own \" \\ \/). It can say "maybe" where no
 * decoded string holds a form (a probe, not a verdict), never "no" where one
 * does, provided the text holds no terminal control sequence
 * (`JSON_SEQUENCE_START`) and spells none of the forms' characters as
 * \u00XX (`escapedFormChar`): encoders escape controls, non-ASCII, and at
 * most < > & ' among visible ASCII, so either of those is worth the slow path.
 */
export function jsonProbe(forms: readonly string[]): RegExp {
  return new RegExp(alternation(trieOf(forms), jsonRaw, JSON_LOOSE_GAP));
}

/** Finds a \u00XX escape of any character the forms use (hex in either case). */
export function escapedFormChar(forms: readonly string[]): RegExp {
  const codes = [...new Set(forms.join(''))].map((c) => c.charCodeAt(0).toString(16).padStart(2, '0'));
  return new RegExp(`\\\\u00(?:${codes.join('|')})`, 'i');
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

/** One character of a form as raw JSON text spells it. */
function jsonRaw(c: string): string {
  if (c === '"') return '\\\\"';
  if (c === '\\') return '\\\\\\\\';
  if (c === '/') return '\\\\?/';
  return escapeRegex(c);
}

function escapeRegex(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}
