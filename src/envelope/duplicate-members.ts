/**
 * Finds a member that occurs twice in one JSON object. Parsers disagree on
 * what `{"id":"a","id":"b"}` means (JSON.parse keeps the last, others the
 * first or refuse), so a body the gateway checked could mean something else
 * to the remote: such bodies are refused, not forwarded.
 *
 * One pass over the text; it does not check syntax (JSON.parse does that)
 * and it stops past `maxDepth`, so a hostile body costs at most one scan.
 */
import { MemberNames } from './member-names.js';

export type DuplicateScan =
  | { readonly ok: true }
  /**
   * `member` is the repeated key; `path` the keys leading to its object from the top (`[]` for the top
   * level, `['message', 'parts', 0]` ...; array positions are numbers). Both are the body's own text.
   */
  | { readonly ok: false; readonly problem: 'duplicate-member'; readonly member: string; readonly path: readonly (string | number)[] }
  | { readonly ok: false; readonly problem: 'too-deep' };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

interface Frame {
  /** Keys seen so far in this object; undefined for arrays and unchecked objects. */
  readonly keys: MemberNames | undefined;
  readonly isArray: boolean;
  /** Where this container sits, for the report (built only when there is one to make). */
  readonly parent: Frame | undefined;
  readonly at: string | number;
  expectKey: boolean;
  /** Items seen so far in this array. */
  items: number;
  /** The last key read in this object (the member whose value may open a child). */
  lastKey: string;
}

/**
 * `levels` bounds how deep objects are checked (1 = the top-level object
 * only, Infinity = every object); `maxDepth` bounds nesting of any kind.
 */
export function findDuplicateMember(text: string, maxDepth: number, levels = Infinity): DuplicateScan {
  const stack: Frame[] = [];
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      const top = stack[stack.length - 1];
      if (top?.keys !== undefined && top.expectKey) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? unescape(raw) : raw;
        if (!top.keys.add(key)) return { ok: false, problem: 'duplicate-member', member: key, path: pathTo(top) };
        top.lastKey = key;
        top.expectKey = false;
      }
      i = end;
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (stack.length >= maxDepth) return { ok: false, problem: 'too-deep' };
      const parent = stack[stack.length - 1];
      const checked = c === 0x7b && stack.length < levels;
      // Objects past `levels` are still tracked (as key-less frames) so depth and paths stay right.
      const at = parent === undefined ? '' : parent.isArray ? parent.items : parent.lastKey;
      stack.push({ keys: checked ? new MemberNames() : undefined, isArray: c === 0x5b, parent, at, expectKey: checked, lastKey: '', items: 0 });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top?.keys !== undefined) top.expectKey = true;
      else if (top?.isArray) top.items++;
    }
  }
  return { ok: true };
}

function pathTo(frame: Frame): (string | number)[] {
  const path: (string | number)[] = [];
  for (let f: Frame | undefined = frame; f?.parent !== undefined; f = f.parent) path.unshift(f.at);
  return path;
}

/** Index of the closing quote of the string opening at `start` (or the text's end when unterminated). */
function stringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return text.length;
    let backslashes = 0;
    for (let j = quote - 1; j > start && text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

/** `"a\u0062"` and `"ab"` are the same key. */
function unescape(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}
