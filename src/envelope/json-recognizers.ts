/**
 * One-pass recognizers for the JSON shapes that make up nearly all traffic:
 * a JSON-RPC reply with a `result` (unary replies and stream events), an
 * HTTP+JSON response message, and a caller's usual JSON-RPC request. Each
 * checks the whole text in one pass without building any value (RFC 8259
 * grammar, as JSON.parse reads it) and says where the parts sit, so the text
 * can be passed on byte for byte.
 *
 * Why: JSON.parse builds every object, string and member name only for the
 * gateway to throw them away when nothing asks for the value (no result
 * schema check, no version bridge, no credential in sight); with the depth
 * and duplicate scans beside it, that was most of a relayed event's CPU, and
 * most of the check of a caller's request. This pass is the validation
 * without the building.
 *
 * Each only ever says "certainly this shape" or "not sure": anything unusual
 * gets `undefined` (or false), and the caller runs the full reader, which
 * decides exactly as before. The recognizers and their grammar steps live in
 * one module on purpose: with the grammar steps imported from a module of
 * their own, the reply recognizer took 8% longer on Node 20 (measured on the
 * bench's reply; V8 handles a module's own functions better in these loops).
 *
 * Replies: a JSON object with `result`, an optional `id` and `jsonrpc`, no
 * `error`; an escape in a member name, a lone surrogate escape, `__proto__`
 * or `constructor` as a member name, a watched member twice, too deep: not
 * sure.
 */

/** Where the parts of a recognized envelope sit in its text ([start, end) offsets). */
export interface ResultEnvelope {
  readonly resultStart: number;
  readonly resultEnd: number;
  /** -1 when there is no `id` member. The id is a JSON string, `null` or a JSON number (see idKind). */
  readonly idStart: number;
  readonly idEnd: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/**
 * The upstream id check (normalize.ts checkUpstreamId) on a recognized id's text ([start, end)): a string or null
 * passes; a number must survive a round trip (finite; an integer within the safe range).
 */
export function plainIdPasses(text: string, start: number, end: number): boolean {
  const first = text.charCodeAt(start);
  if (first === QUOTE || first === 0x6e /* n(ull) */) return true;
  const id = Number(text.slice(start, end));
  return Number.isFinite(id) && (!Number.isInteger(id) || Number.isSafeInteger(id));
}

/** A failed recognition: the caller falls back to the full normalizer. */
const NO = -1;

/**
 * The envelope's parts when `text` is certainly a JSON object with a
 * `result`, no `error`, at most one `id` (a string, null or a number) and at
 * most one `jsonrpc`, nested at most `maxDepth` deep; else undefined.
 */
export function recognizeResultEnvelope(text: string, maxDepth: number): ResultEnvelope | undefined {
  const n = text.length;
  let i = skipSpace(text, 0);
  if (i >= n || text.charCodeAt(i) !== OPEN_OBJECT || maxDepth < 1) return undefined;
  i = skipSpace(text, i + 1);
  let resultStart = -1;
  let resultEnd = -1;
  let idStart = -1;
  let idEnd = -1;
  let sawJsonrpc = false;
  for (;;) {
    if (i >= n || text.charCodeAt(i) !== QUOTE) return undefined;
    const keyStart = i + 1;
    const keyEnd = plainKeyEnd(text, keyStart);
    if (keyEnd === NO) return undefined;
    const member = watchedMember(text, keyStart, keyEnd - keyStart);
    i = skipSpace(text, keyEnd + 1);
    if (i >= n || text.charCodeAt(i) !== COLON) return undefined;
    const valueStart = skipSpace(text, i + 1);
    const valueEnd = value(text, valueStart, 1, maxDepth, false);
    if (valueEnd === NO) return undefined;
    switch (member) {
      case Member.Result:
        if (resultStart !== -1) return undefined;
        resultStart = valueStart;
        resultEnd = valueEnd;
        break;
      case Member.Id:
        if (idStart !== -1) return undefined;
        idStart = valueStart;
        idEnd = valueEnd;
        break;
      case Member.Jsonrpc:
        if (sawJsonrpc) return undefined;
        sawJsonrpc = true;
        break;
      case Member.Other:
        break;
      default:
        // `error`, or a member name JSON parsing treats specially: the full normalizer decides.
        return undefined;
    }
    i = skipSpace(text, valueEnd);
    if (i >= n) return undefined;
    const c = text.charCodeAt(i);
    if (c === COMMA) {
      i = skipSpace(text, i + 1);
      continue;
    }
    if (c !== CLOSE_OBJECT) return undefined;
    break;
  }
  if (skipSpace(text, i + 1) !== n || resultStart === -1) return undefined;
  if (idStart !== -1 && !plainId(text.charCodeAt(idStart))) return undefined;
  return { resultStart, resultEnd, idStart, idEnd };
}

/**
 * True when `text` is certainly one JSON object (an HTTP+JSON remote's response message) whose top-level members
 * are named plainly (no escape), none `__proto__` or `constructor` and none twice, that is not an object with
 * `error` as its only member, and that is valid JSON throughout under the rules above (nested names, depth, surrogate
 * escapes). False means "not sure": the full reader (bindings/http-json/response-json.ts) decides.
 */
export function recognizeMessageObject(text: string, maxDepth: number): boolean {
  const n = text.length;
  let i = skipSpace(text, 0);
  if (i >= n || text.charCodeAt(i) !== OPEN_OBJECT || maxDepth < 1) return false;
  i = skipSpace(text, i + 1);
  if (i < n && text.charCodeAt(i) === CLOSE_OBJECT) return skipSpace(text, i + 1) === n;
  // A response message has one member, as a rule (the oneof's payload): the names are few, a list will do.
  const names: string[] = [];
  for (;;) {
    if (i >= n || text.charCodeAt(i) !== QUOTE) return false;
    const keyStart = i + 1;
    const keyEnd = plainKeyEnd(text, keyStart);
    if (keyEnd === NO || specialName(text, keyStart, keyEnd - keyStart)) return false;
    const name = text.slice(keyStart, keyEnd);
    if (names.includes(name)) return false;
    names.push(name);
    i = skipSpace(text, keyEnd + 1);
    if (i >= n || text.charCodeAt(i) !== COLON) return false;
    const valueEnd = value(text, skipSpace(text, i + 1), 1, maxDepth, false);
    if (valueEnd === NO) return false;
    i = skipSpace(text, valueEnd);
    if (i >= n) return false;
    const c = text.charCodeAt(i);
    if (c === COMMA) {
      i = skipSpace(text, i + 1);
      continue;
    }
    if (c !== CLOSE_OBJECT) return false;
    break;
  }
  return skipSpace(text, i + 1) === n && !(names.length === 1 && names[0] === 'error');
}

/** Top-level member kinds (plain numbers: the recognizer runs per event, and so does this switch). */
const Member = { Other: 0, Result: 1, Id: 2, Jsonrpc: 3, Special: 4 } as const;
type Member = (typeof Member)[keyof typeof Member];

/** Which top-level member a (escape-free) name is; `error`, `__proto__` and `constructor` are Special. */
function watchedMember(text: string, start: number, length: number): Member {
  switch (length) {
    case 2:
      return text.startsWith('id', start) ? Member.Id : Member.Other;
    case 5:
      return text.startsWith('error', start) ? Member.Special : Member.Other;
    case 6:
      return text.startsWith('result', start) ? Member.Result : Member.Other;
    case 7:
      return text.startsWith('jsonrpc', start) ? Member.Jsonrpc : Member.Other;
    case 9:
      return text.startsWith('__proto__', start) ? Member.Special : Member.Other;
    case 11:
      return text.startsWith('constructor', start) ? Member.Special : Member.Other;
    default:
      return Member.Other;
  }
}

/** An id the normalizer takes as it is: a string, null or a number (checked for range by the caller). */
function plainId(first: number): boolean {
  return first === QUOTE || first === 0x6e /* n(ull) */ || first === MINUS || (first >= ZERO && first <= NINE);
}

/**
 * End of one JSON value starting at `i` (just past it), or NO. `depth` is the depth of the container holding it.
 * `strict`: every member name plain, none twice in its object, at most MAX_RECOGNIZED_MEMBERS per object and
 * MAX_RECOGNIZED_DEPTH deep (callers' requests, whose bytes are forwarded as the gateway read them); otherwise names
 * are only kept from meaning something special (replies, whose duplicates below the top level JSON.parse settles as
 * the normalizer would).
 */
function value(text: string, i: number, depth: number, maxDepth: number, strict: boolean): number {
  if (i >= text.length) return NO;
  const c = text.charCodeAt(i);
  if (c === QUOTE) return stringEnd(text, i + 1);
  if (c === OPEN_OBJECT) return depth + 1 > maxDepth ? NO : objectEnd(text, i + 1, depth + 1, maxDepth, strict);
  if (c === OPEN_ARRAY) return depth + 1 > maxDepth ? NO : arrayEnd(text, i + 1, depth + 1, maxDepth, strict);
  if (c === MINUS || (c >= ZERO && c <= NINE)) return numberEnd(text, i);
  if (c === 0x74 /* t */) return text.startsWith('true', i) ? i + 4 : NO;
  if (c === 0x66 /* f */) return text.startsWith('false', i) ? i + 5 : NO;
  if (c === 0x6e /* n */) return text.startsWith('null', i) ? i + 4 : NO;
  return NO;
}

/** An object at `depth` (1 for a top level read this way); `strict` as for value(). */
function objectEnd(text: string, i: number, depth: number, maxDepth: number, strict: boolean): number {
  const n = text.length;
  // Strict: the names seen so far in this object, in the block of slots of its depth (depth <= MAX_RECOGNIZED_DEPTH).
  const base = (depth - 1) * MAX_RECOGNIZED_MEMBERS;
  let count = 0;
  i = skipSpace(text, i);
  if (i < n && text.charCodeAt(i) === CLOSE_OBJECT) return i + 1;
  for (;;) {
    if (i >= n || text.charCodeAt(i) !== QUOTE) return NO;
    let keyEnd: number;
    if (strict) {
      const start = i + 1;
      const end = plainKeyEnd(text, start);
      if (end === NO || count === MAX_RECOGNIZED_MEMBERS) return NO;
      const length = end - start;
      if (specialName(text, start, length)) return NO;
      for (let k = base; k < base + count; k++) {
        if (nameLengths[k] === length && sameChars(text, nameStarts[k]!, start, length)) return NO;
      }
      nameStarts[base + count] = start;
      nameLengths[base + count] = length;
      count++;
      keyEnd = end + 1;
    } else {
      keyEnd = nestedNameEnd(text, i + 1);
      if (keyEnd === NO) return NO;
    }
    i = skipSpace(text, keyEnd);
    if (i >= n || text.charCodeAt(i) !== COLON) return NO;
    const end = value(text, skipSpace(text, i + 1), depth, maxDepth, strict);
    if (end === NO) return NO;
    i = skipSpace(text, end);
    if (i >= n) return NO;
    const c = text.charCodeAt(i);
    if (c === CLOSE_OBJECT) return i + 1;
    if (c !== COMMA) return NO;
    i = skipSpace(text, i + 1);
  }
}

/**
 * A member name below the top level: just past its closing quote, or NO.
 * Prototype-looking names at any depth are secure-json-parse's business (it
 * refuses some of them): `__proto__` and `constructor` go the full way, and
 * so does any name with a \u escape, the only escape that could spell one
 * in disguise (the others make characters those names lack).
 */
function nestedNameEnd(text: string, i: number): number {
  const plain = plainKeyEnd(text, i);
  if (plain !== NO) return specialName(text, i, plain - i) ? NO : plain + 1;
  const end = stringEnd(text, i);
  return end === NO || hasUnicodeEscape(text, i, end) ? NO : end;
}

/** In a valid string body [start, end), each backslash found after the last escape starts the next escape. */
function hasUnicodeEscape(text: string, start: number, end: number): boolean {
  for (let b = text.indexOf('\\', start); b !== -1 && b < end; b = text.indexOf('\\', b + 2)) {
    if (text.charCodeAt(b + 1) === 0x75 /* u */) return true;
  }
  return false;
}

function specialName(text: string, start: number, length: number): boolean {
  return (length === 9 && text.startsWith('__proto__', start)) || (length === 11 && text.startsWith('constructor', start));
}

function arrayEnd(text: string, i: number, depth: number, maxDepth: number, strict: boolean): number {
  const n = text.length;
  i = skipSpace(text, i);
  if (i < n && text.charCodeAt(i) === CLOSE_ARRAY) return i + 1;
  for (;;) {
    const end = value(text, i, depth, maxDepth, strict);
    if (end === NO) return NO;
    i = skipSpace(text, end);
    if (i >= n) return NO;
    const c = text.charCodeAt(i);
    if (c === CLOSE_ARRAY) return i + 1;
    if (c !== COMMA) return NO;
    i = skipSpace(text, i + 1);
  }
}

/** A member name without escapes or control characters: the index of its closing quote, or NO. */
function plainKeyEnd(text: string, i: number): number {
  const n = text.length;
  for (; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c > BACKSLASH) continue;
    if (c === QUOTE) return i;
    if (c === BACKSLASH || c < 0x20) return NO;
  }
  return NO;
}

/**
 * `i` is just past the opening quote; returns just past the closing one, or
 * NO: a raw control character, an escape JSON does not define, or a
 * surrogate escape that is not a high one directly followed by a low one
 * (JSON.parse takes a lone one; the full normalizer refuses it).
 */
function stringEnd(text: string, i: number): number {
  const n = text.length;
  while (i < n) {
    // Runs of characters with nothing to check (neither quote, backslash nor control) are skipped by the regex
    // engine's native loop: long text values are most of a reply's bytes.
    PLAIN_RUN.lastIndex = i;
    PLAIN_RUN.test(text);
    i = PLAIN_RUN.lastIndex;
    if (i >= n) return NO;
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i + 1;
    if (c !== BACKSLASH) return NO; // a raw control character
    const e = text.charCodeAt(i + 1);
    if (e !== 0x75 /* u */) {
      if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) return NO;
      i += 2;
      continue;
    }
    const unit = hex4(text, i + 2);
    if (unit < 0) return NO;
    if (unit < 0xd800 || unit > 0xdfff) {
      i += 6;
      continue;
    }
    if (unit > 0xdbff || text.charCodeAt(i + 6) !== BACKSLASH || text.charCodeAt(i + 7) !== 0x75) return NO;
    const low = hex4(text, i + 8);
    if (low < 0xdc00 || low > 0xdfff) return NO;
    i += 12;
  }
  return NO;
}

/** Characters a JSON string may hold as they are (sticky: matched from lastIndex, never allocating a match). */
const PLAIN_RUN = /[^"\\\u0000-\u001f]*/y;

/** The value of four hex digits at `i`, or -1. */
function hex4(text: string, i: number): number {
  if (i + 4 > text.length) return -1;
  let v = 0;
  for (let k = i; k < i + 4; k++) {
    const c = text.charCodeAt(k);
    const d = c >= ZERO && c <= NINE ? c - ZERO : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/** -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
function numberEnd(text: string, i: number): number {
  if (text.charCodeAt(i) === MINUS) i++;
  let c = text.charCodeAt(i);
  if (c === ZERO) i++;
  else if (c >= 0x31 && c <= NINE) i = digitsEnd(text, i + 1);
  else return NO;
  c = text.charCodeAt(i);
  if (c === DOT) {
    const end = digitsEnd(text, i + 1);
    if (end === i + 1) return NO;
    i = end;
    c = text.charCodeAt(i);
  }
  if (c === 0x65 || c === 0x45 /* e E */) {
    i++;
    c = text.charCodeAt(i);
    if (c === PLUS || c === MINUS) i++;
    const end = digitsEnd(text, i);
    if (end === i) return NO;
    i = end;
  }
  return i;
}

function digitsEnd(text: string, i: number): number {
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c < ZERO || c > NINE) break;
    i++;
  }
  return i;
}

/** JSON whitespace only: space, tab, LF, CR. */
function skipSpace(text: string, i: number): number {
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    i++;
  }
  return i;
}

/*
 * Callers' requests: the request nearly every JSON-RPC caller sends:
 * one object with `"jsonrpc":"2.0"`, a `method` string, an optional `id`
 * (string, number or null) and optional `params` (object or array), and no
 * other member; valid JSON throughout (RFC 8259, as JSON.parse reads it); no
 * member named twice in any object; no member name with an escape, a control
 * character, or the name `__proto__` or `constructor`; at most
 * MAX_RECOGNIZED_DEPTH deep and MAX_RECOGNIZED_MEMBERS members per object.
 * It builds no value and says where `id`, `method` and `params` sit.
 *
 * Why: the full check (caller-request.ts) decodes the body, parses it with
 * secure-json-parse (JSON.parse and a scan for prototype keys) and scans it
 * again for members named twice, building every object of the params, to
 * forward the caller's bytes unchanged in the end.
 *
 * It only ever says "certainly this" or "not sure": anything else (another
 * top-level member, a variant spelling, a jsonrpc other than the plain
 * `"2.0"`, an escaped member name, a duplicate, a special name, too deep, too
 * wide, not JSON at all) gets undefined, and the full check decides exactly
 * as before. Member names without escapes are equal exactly when their
 * characters are, so the duplicate check compares them in place.
 */

/** Where a recognized request's members sit in its text: [start, end) of each value, -1 when absent. */
export interface RecognizedRequest {
  readonly idStart: number;
  readonly idEnd: number;
  /** The method's JSON string, quotes included. */
  readonly methodStart: number;
  readonly methodEnd: number;
  readonly paramsStart: number;
  readonly paramsEnd: number;
}

/** Deeper than this the full check decides (an A2A request's params are a few levels deep). */
export const MAX_RECOGNIZED_DEPTH = 32;
/** Members of one object compared pairwise for duplicates; an object with more goes to the full check. */
export const MAX_RECOGNIZED_MEMBERS = 32;

// The member names of the objects open during a scan (offset and length in the text), one block of slots per
// depth. The scan is synchronous and never re-entered, so one pair of arrays serves every request.
const nameStarts = new Int32Array(MAX_RECOGNIZED_DEPTH * MAX_RECOGNIZED_MEMBERS);
const nameLengths = new Int32Array(MAX_RECOGNIZED_DEPTH * MAX_RECOGNIZED_MEMBERS);

/** Top-level members (plain numbers: this switch runs per member of every request). */
const Top = { Other: 0, Jsonrpc: 1, Id: 2, Method: 3, Params: 4 } as const;
type Top = (typeof Top)[keyof typeof Top];

/** The members' places when `text` is certainly the usual request (see the file comment); else undefined. */
export function recognizeCallerRequest(text: string): RecognizedRequest | undefined {
  const n = text.length;
  let i = skipSpace(text, 0);
  if (i >= n || text.charCodeAt(i) !== OPEN_OBJECT) return undefined;
  i = skipSpace(text, i + 1);
  let idStart = -1;
  let idEnd = -1;
  let methodStart = -1;
  let methodEnd = -1;
  let paramsStart = -1;
  let paramsEnd = -1;
  let sawJsonrpc = false;
  for (;;) {
    if (i >= n || text.charCodeAt(i) !== QUOTE) return undefined;
    const keyStart = i + 1;
    const keyEnd = plainKeyEnd(text, keyStart);
    if (keyEnd === NO) return undefined;
    const member = topMember(text, keyStart, keyEnd - keyStart);
    if (member === Top.Other) return undefined;
    i = skipSpace(text, keyEnd + 1);
    if (i >= n || text.charCodeAt(i) !== COLON) return undefined;
    const valueStart = skipSpace(text, i + 1);
    const valueEnd = value(text, valueStart, 1, MAX_RECOGNIZED_DEPTH, true);
    if (valueEnd === NO) return undefined;
    const first = text.charCodeAt(valueStart);
    switch (member) {
      case Top.Jsonrpc:
        if (sawJsonrpc || valueEnd - valueStart !== 5 || !text.startsWith('"2.0"', valueStart)) return undefined;
        sawJsonrpc = true;
        break;
      case Top.Id:
        if (idStart !== -1 || !plainId(first)) return undefined;
        idStart = valueStart;
        idEnd = valueEnd;
        break;
      case Top.Method:
        if (methodStart !== -1 || first !== QUOTE) return undefined;
        methodStart = valueStart;
        methodEnd = valueEnd;
        break;
      default:
        if (paramsStart !== -1 || (first !== OPEN_OBJECT && first !== OPEN_ARRAY)) return undefined;
        paramsStart = valueStart;
        paramsEnd = valueEnd;
    }
    i = skipSpace(text, valueEnd);
    if (i >= n) return undefined;
    const c = text.charCodeAt(i);
    if (c === COMMA) {
      i = skipSpace(text, i + 1);
      continue;
    }
    if (c !== CLOSE_OBJECT) return undefined;
    break;
  }
  if (skipSpace(text, i + 1) !== n || !sawJsonrpc || methodStart === -1) return undefined;
  return { idStart, idEnd, methodStart, methodEnd, paramsStart, paramsEnd };
}

/**
 * True when `text` is certainly one JSON object, nested at most `maxDepth` deep (the object itself is depth 1), every
 * member name at every depth plain (no escape), none `__proto__` or `constructor`, none twice in its object, no
 * object wider than MAX_RECOGNIZED_MEMBERS, no lone surrogate escape, valid JSON throughout: a body JSON.parse reads
 * as every other parser does. False means "not sure" (a depth past MAX_RECOGNIZED_DEPTH too): the full check decides.
 */
export function recognizeStrictObject(text: string, maxDepth: number): boolean {
  const i = skipSpace(text, 0);
  if (i >= text.length || text.charCodeAt(i) !== OPEN_OBJECT || maxDepth < 1) return false;
  const end = objectEnd(text, i + 1, 1, Math.min(maxDepth, MAX_RECOGNIZED_DEPTH), true);
  return end !== NO && skipSpace(text, end) === text.length;
}

function topMember(text: string, start: number, length: number): Top {
  switch (length) {
    case 2:
      return text.startsWith('id', start) ? Top.Id : Top.Other;
    case 6:
      return text.startsWith('method', start) ? Top.Method : text.startsWith('params', start) ? Top.Params : Top.Other;
    case 7:
      return text.startsWith('jsonrpc', start) ? Top.Jsonrpc : Top.Other;
    default:
      return Top.Other;
  }
}

function sameChars(text: string, a: number, b: number, length: number): boolean {
  for (let k = 0; k < length; k++) {
    if (text.charCodeAt(a + k) !== text.charCodeAt(b + k)) return false;
  }
  return true;
}
