/**
 * Keeps a remote's credentials (the values the gateway itself sends it) out
 * of everything a caller receives from that remote. Pure: built once per
 * set of values (a remote's bearer token or header value, and the previous
 * token of a rotated token file), then applied to text, parsed JSON values
 * and JSON text.
 *
 * Text is matched after decoding (JSON escapes are gone), loosely (see
 * ./secret-forms.ts: controls, format characters, whitespace and whole
 * terminal control sequences may sit between the characters) and in the
 * encoded forms a remote may echo (percent-encoding, base64, base64url).
 * Each match becomes the fixed marker `[redacted]`. A value that sits in an
 * object member name or in a number cannot be replaced without changing
 * what the JSON means: `value()` refuses it instead, and the caller gets a
 * typed error.
 *
 * The cheap path matters: `mayHold()` and `text()` first run one regex
 * over the text (native speed, no allocation); only a text that might hold
 * a value is taken apart.
 */
import { CONTROL_SEQUENCE_SOURCE, SEQUENCE_START } from './sanitize.js';
import { JSON_SEQUENCE_START, MIN_SECRET_BYTES, escapedFormChar, formsOf, jsonProbe, textProbe } from './secret-forms.js';

export { MIN_SECRET_BYTES } from './secret-forms.js';

/** What a caller sees where a credential was. */
export const REDACTED = '[redacted]';

export interface RedactedText {
  readonly text: string;
  /** Places replaced (overlapping and adjacent matches count once). */
  readonly count: number;
}

export type RedactedValue =
  | { readonly ok: true; readonly value: unknown; readonly count: number }
  | { readonly ok: false; readonly where: 'member name' | 'number' };

/** Runs of what the sanitizer removes or collapses: the skeleton of a text is what is left. */
const IGNORABLE_RUN = new RegExp(`(?:${CONTROL_SEQUENCE_SOURCE}|[\\p{Cc}\\p{Cf}\\s])+`, 'gu');

class Refused extends Error {
  override readonly name = 'Refused';
  constructor(readonly where: 'member name' | 'number') {
    super(where);
  }
}

export class Redactor {
  readonly #forms: readonly string[];
  readonly #text: RegExp;
  readonly #json: RegExp;
  readonly #escaped: RegExp;

  /** `values` must each be at least MIN_SECRET_BYTES long (credentials.ts refuses shorter ones first). */
  constructor(values: readonly string[]) {
    if (values.length === 0) throw new RangeError('a redactor needs at least one value');
    const forms = new Set<string>();
    for (const value of values) {
      if (Buffer.byteLength(value, 'utf8') < MIN_SECRET_BYTES) throw new RangeError(`a redacted value must be at least ${MIN_SECRET_BYTES} bytes`);
      for (const form of formsOf(value)) forms.add(form);
      // "Basic dXNlcjpwYXNz", "Token abc...": a remote may echo the credential without its scheme word.
      const last = value.trim().split(/\s+/).at(-1) ?? '';
      if (last !== value.trim() && Buffer.byteLength(last, 'utf8') >= MIN_SECRET_BYTES) for (const form of formsOf(last)) forms.add(form);
    }
    this.#forms = [...forms];
    this.#text = textProbe(this.#forms);
    this.#json = jsonProbe(this.#forms);
    this.#escaped = escapedFormChar(this.#forms);
  }

  /** Might a string or number in this JSON text hold a value? False means certainly not; true means look closer. */
  mayHold(json: string): boolean {
    return JSON_SEQUENCE_START.test(json) || this.#json.test(json) || (json.includes('\\u') && this.#escaped.test(json));
  }

  /** Replaces every (loose, encoded) occurrence in a decoded string with the marker. */
  text(input: string): RedactedText {
    if (!SEQUENCE_START.test(input) && !this.#text.test(input)) return { text: input, count: 0 };
    const skeleton = skeletonOf(input);
    const ranges: [number, number][] = [];
    for (const form of this.#forms) {
      for (let at = skeleton.text.indexOf(form); at !== -1; at = skeleton.text.indexOf(form, at + 1)) {
        ranges.push([skeleton.original(at), skeleton.original(at + form.length - 1) + 1]);
      }
    }
    if (ranges.length === 0) return { text: input, count: 0 };
    ranges.sort((a, b) => a[0] - b[0]);
    let out = '';
    let count = 0;
    let kept = 0;
    for (let i = 0; i < ranges.length; ) {
      const start = ranges[i]![0];
      let end = ranges[i]![1];
      // Overlapping or touching matches become one marker: nothing of either is left between them.
      for (i++; i < ranges.length && ranges[i]![0] <= end; i++) end = Math.max(end, ranges[i]![1]);
      out += input.slice(kept, start) + REDACTED;
      kept = end;
      count++;
    }
    return { text: out + input.slice(kept), count };
  }

  /** Response headers without any whose value holds a credential (a header cannot be half-shown). */
  headers(headers: Readonly<Record<string, string>>): { readonly headers: Record<string, string>; readonly count: number } {
    const kept: Record<string, string> = {};
    let count = 0;
    for (const [name, value] of Object.entries(headers)) {
      if (this.text(value).count > 0) count++;
      else kept[name] = value;
    }
    return { headers: kept, count };
  }

  /**
   * A parsed JSON value with every string redacted. A value in a member
   * name or a number cannot be replaced safely: refused.
   */
  value(input: unknown): RedactedValue {
    let count = 0;
    const walk = (node: unknown): unknown => {
      if (typeof node === 'string') {
        const r = this.text(node);
        count += r.count;
        return r.text;
      }
      if (typeof node === 'number') {
        if (this.#text.test(String(node))) throw new Refused('number');
        return node;
      }
      if (Array.isArray(node)) return node.map(walk);
      if (node === null || typeof node !== 'object') return node;
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(node)) {
        if (this.text(key).count > 0) throw new Refused('member name');
        // Parsed JSON here never has "__proto__" (the parsers refuse it); never create one by assignment either.
        Object.defineProperty(out, key, { value: walk(item), enumerable: true, writable: true, configurable: true });
      }
      return out;
    };
    try {
      const value = walk(input);
      return { ok: true, value: count === 0 ? input : value, count };
    } catch (err) {
      if (err instanceof Refused) return { ok: false, where: err.where };
      throw err;
    }
  }

  // The forms are the secrets: never print them.
  toString(): string {
    return 'Redactor';
  }
  toJSON(): string {
    return 'Redactor';
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return 'Redactor';
  }
}

interface Skeleton {
  /** The text without what a reader does not see. */
  readonly text: string;
  /** Index in the original text of the skeleton's character at `i`. */
  original(i: number): number;
}

function skeletonOf(input: string): Skeleton {
  const pieces: string[] = [];
  // Kept segments: where each starts in the skeleton and in the original.
  const skeletonStarts: number[] = [];
  const originalStarts: number[] = [];
  let length = 0;
  let last = 0;
  const keep = (from: number, to: number): void => {
    if (to <= from) return;
    pieces.push(input.slice(from, to));
    skeletonStarts.push(length);
    originalStarts.push(from);
    length += to - from;
  };
  for (const match of input.matchAll(IGNORABLE_RUN)) {
    keep(last, match.index);
    last = match.index + match[0].length;
  }
  keep(last, input.length);
  return {
    text: pieces.join(''),
    original(i: number): number {
      // The last segment starting at or before i (binary search).
      let lo = 0;
      let hi = skeletonStarts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (skeletonStarts[mid]! <= i) lo = mid;
        else hi = mid - 1;
      }
      return originalStarts[lo]! + (i - skeletonStarts[lo]!);
    },
  };
}
