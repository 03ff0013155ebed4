/**
 * JSON that the gateway decides on and then forwards as bytes must read the
 * same in every parser, or a check can be bypassed: given
 * `{"method":"tasks/get","method":"message/send"}` JavaScript keeps the last
 * member and Go's first-wins or Python's object_pairs_hook readers another,
 * so the gateway would allow one method and the remote run the other.
 *
 * The gateway refuses such JSON rather than forwarding a canonical
 * re-serialization: conformant clients never send a member twice, and
 * forwarding the caller's exact bytes keeps what a re-serialization would
 * change (numbers beyond double precision, the caller's own escapes).
 * A member counts as named twice when the names are equal after JSON
 * unescaping (`"m\u0065thod"` is `"method"`), at any depth. Pure.
 *
 * Used for every body the gateway decides on: caller JSON-RPC requests
 * today, REST bodies and push-notification configs when they exist, and
 * results checked with `limits.validateResults`.
 */
import sjson from 'secure-json-parse';
import { MemberNames } from './member-names.js';
import { cleanText, truncateUtf8 } from './sanitize.js';

export interface DuplicateMember {
  /** The member name, unescaped. */
  readonly member: string;
  /** Where the object holding it is, e.g. `$.params.message` or `$[2]`. */
  readonly path: string;
}

export type StrictJson =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly problem: 'invalid-utf8' | 'syntax' | 'forbidden-key' }
  | ({ readonly ok: false; readonly problem: 'duplicate-member' } & DuplicateMember);

/** A body with a member named twice, for code paths that throw rather than branch. */
export class DuplicateMemberError extends Error {
  override readonly name = 'DuplicateMemberError';
  constructor(readonly duplicate: DuplicateMember) {
    super(describeDuplicate(duplicate));
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Parses UTF-8 JSON with prototype-poisoning protection, refusing a member named twice anywhere. */
export function parseStrictJson(input: Buffer | string): StrictJson {
  let text: string;
  try {
    text = typeof input === 'string' ? input : utf8.decode(input);
  } catch {
    return { ok: false, problem: 'invalid-utf8' };
  }
  let value: unknown;
  try {
    value = sjson.parse(text, null, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    const forbidden = err instanceof SyntaxError && err.message.includes('forbidden prototype');
    return { ok: false, problem: forbidden ? 'forbidden-key' : 'syntax' };
  }
  const duplicate = findDuplicateMember(text);
  return duplicate ? { ok: false, problem: 'duplicate-member', ...duplicate } : { ok: true, value };
}

/** A short, printable description for an error message: `"method" twice at $`. */
export function describeDuplicate(duplicate: DuplicateMember): string {
  return `${JSON.stringify(shown(duplicate.member, 64))} twice at ${shown(duplicate.path, 160)}`;
}

/** The caller's own text, made printable and bounded before it goes into a message. */
function shown(text: string, maxBytes: number): string {
  const cut = truncateUtf8(cleanText(text), maxBytes);
  return cut.truncated ? `${cut.text}…` : cut.text;
}

const QUOTE = 0x22;
const BACKSLASH = '\\';
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/** One open object or array while scanning; `key` / `index` say where the scan is inside it. */
interface Frame {
  /** The member names of this object so far; undefined for an array. */
  readonly names: MemberNames | undefined;
  expectKey: boolean;
  key: string;
  index: number;
}

/**
 * The first member named twice in one object of `text`, which must be valid
 * JSON (parse it first: this scan does not check syntax). Strings are jumped
 * through with indexOf, so the scan costs little next to the parse.
 */
export function findDuplicateMember(text: string): DuplicateMember | undefined {
  const frames: Frame[] = [];
  // The next backslash at or after the scan position (-1: none left), so escapes cost one indexOf each.
  let backslashAt = text.indexOf(BACKSLASH);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i;
      let escaped = false;
      let from = i + 1;
      for (;;) {
        const quote = text.indexOf('"', from);
        if (quote === -1) return undefined; // not JSON: the parser has the final word
        if (backslashAt !== -1 && backslashAt < from) backslashAt = text.indexOf(BACKSLASH, from);
        if (backslashAt === -1 || backslashAt > quote) {
          i = quote;
          break;
        }
        escaped = true;
        from = backslashAt + 2; // the escaped character, even a quote, is skipped
      }
      const top = frames[frames.length - 1];
      if (top?.names && top.expectKey) {
        const raw = text.slice(start + 1, i);
        const key = escaped ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (!top.names.add(key)) return { member: key, path: pathOf(frames) };
        top.key = key;
        top.expectKey = false;
      }
      continue;
    }
    switch (c) {
      case OPEN_OBJECT:
        frames.push({ names: new MemberNames(), expectKey: true, key: '', index: 0 });
        break;
      case OPEN_ARRAY:
        frames.push({ names: undefined, expectKey: false, key: '', index: 0 });
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        frames.pop();
        break;
      case COMMA: {
        const top = frames[frames.length - 1];
        if (top?.names) top.expectKey = true;
        else if (top) top.index++;
        break;
      }
      default:
        break;
    }
  }
  return undefined;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** The path of the innermost open object: each enclosing frame's current member or index. */
function pathOf(frames: readonly Frame[]): string {
  let path = '$';
  for (const frame of frames.slice(0, -1)) {
    if (!frame.names) path += `[${frame.index}]`;
    else path += IDENTIFIER.test(frame.key) ? `.${frame.key}` : `[${JSON.stringify(frame.key)}]`;
  }
  return path;
}
