/**
 * One-pass recognizers for the JSON shapes that make up nearly all traffic:
 * a JSON-RPC reply with a `result` (unary replies and stream events), an
 * HTTP+JSON response message, and a caller's usual JSON-RPC request. Each
 * checks the whole text in one pass without building any value (RFC 8259
 * grammar, as JSON.parse reads it) and says where the parts sit, so the text
 * can be passed on byte for byte.
 *
 * They read the text's UTF-8 bytes, valid UTF-8 checked by the caller (a
 * body as it came, or a string's encoding): every structural character of
 * JSON is ASCII and UTF-8 puts every character past ASCII in bytes
 * 0x80-0xFF, which the grammar only ever meets inside strings, so the
 * verdict is the decoded text's and the offsets are byte offsets. Bytes
 * rather than a string because indexing a Buffer is cheaper than
 * String#charCodeAt in these loops: on the bench's 1 KiB reply and request
 * the pair took 3.5-3.9 us on a latin1 view and 1.9-2.7 on the bytes
 * (Node 20), and a body no longer needs the view made first.
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

import { plainRuns } from './plain-runs.js';

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
export function plainIdPasses(json: Buffer, start: number, end: number): boolean {
  const first = json[start];
  if (first === QUOTE || first === 0x6e /* n(ull) */) return true;
  // The usual id, a short integer, without making a string of it: 15 digits are always within the safe range.
  if (end - start <= 15 && digitsEnd(json, first === MINUS ? start + 1 : start) === end) return true;
  const id = Number(json.toString('latin1', start, end));
  return Number.isFinite(id) && (!Number.isInteger(id) || Number.isSafeInteger(id));
}

/**
 * The UTF-8 bytes the recognizers read for `text`, or undefined when the text has a lone surrogate: it has no UTF-8
 * form (the encoder writes U+FFFD for it), so its bytes would not read as the text does. Only a string made in code
 * can have one; every decoder makes well-formed text.
 */
export function utf8Of(text: string): Buffer | undefined {
  const json = Buffer.from(text);
  return json.length === text.length || text.isWellFormed() ? json : undefined;
}

/**
 * The text of bytes [start, end) of `json`, where `text` is what `json` decodes to (no byte-order mark; well-formed,
 * as every decoder makes it): a slice of the text, at the character offsets of those bytes. When every character is
 * ASCII the offsets are the same; otherwise the characters before `start` and after `end` are counted (the span a
 * recognizer finds is most of the text, what is around it short).
 */
export function textBetween(text: string, json: Buffer, start: number, end: number): string {
  if (json.length === text.length) return text.slice(start, end);
  return text.slice(utf16Length(json, 0, start), text.length - utf16Length(json, end, json.length));
}

/** UTF-16 code units of the characters in well-formed UTF-8 bytes [start, end): one per character, two past U+FFFF. */
function utf16Length(json: Buffer, start: number, end: number): number {
  let units = 0;
  for (let i = start; i < end; i++) {
    const b = json[i]!;
    // A continuation byte adds nothing; a lead byte of four (0xF0 and up) starts a surrogate pair.
    if ((b & 0xc0) !== 0x80) units += b >= 0xf0 ? 2 : 1;
  }
  return units;
}

/**
 * Bytes of a string run scanned here before the rest of the run goes to plain-runs.ts: most strings (member names,
 * ids, states, kinds) end within them, and for those a call out would cost more than the bytes.
 */
const PLAIN_HEAD = 16;

/** A failed recognition: the caller falls back to the full normalizer. */
const NO = -1;

/**
 * The envelope's parts when `json` is certainly a JSON object with a
 * `result`, no `error`, at most one `id` (a string, null or a number that
 * passes plainIdPasses) and at most one `jsonrpc`, nested at most `maxDepth`
 * deep; else undefined.
 */
export function recognizeResultEnvelope(json: Buffer, maxDepth: number): ResultEnvelope | undefined {
  plainRuns?.newText();
  const n = json.length;
  let i = skipSpace(json, 0);
  if (i >= n || json[i] !== OPEN_OBJECT || maxDepth < 1) return undefined;
  i = skipSpace(json, i + 1);
  let resultStart = -1;
  let resultEnd = -1;
  let idStart = -1;
  let idEnd = -1;
  let sawJsonrpc = false;
  for (;;) {
    if (i >= n || json[i] !== QUOTE) return undefined;
    const keyStart = i + 1;
    const keyEnd = plainKeyEnd(json, keyStart);
    if (keyEnd === NO) return undefined;
    const member = watchedMember(json, keyStart, keyEnd - keyStart);
    i = skipSpace(json, keyEnd + 1);
    if (i >= n || json[i] !== COLON) return undefined;
    const valueStart = skipSpace(json, i + 1);
    const valueEnd = value(json, valueStart, 1, maxDepth, false);
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
    i = skipSpace(json, valueEnd);
    if (i >= n) return undefined;
    const c = json[i];
    if (c === COMMA) {
      i = skipSpace(json, i + 1);
      continue;
    }
    if (c !== CLOSE_OBJECT) return undefined;
    break;
  }
  if (skipSpace(json, i + 1) !== n || resultStart === -1) return undefined;
  if (idStart !== -1 && (!plainId(json[idStart]!) || !plainIdPasses(json, idStart, idEnd))) return undefined;
  return { resultStart, resultEnd, idStart, idEnd };
}

/**
 * True when `json` is certainly one JSON object (an HTTP+JSON remote's response message) whose top-level members
 * are named plainly (no escape), none `__proto__` or `constructor` and none twice, that is not an object with
 * `error` as its only member, and that is valid JSON throughout under the rules above (nested names, depth, surrogate
 * escapes). False means "not sure": the full reader (bindings/http-json/response-json.ts) decides.
 */
export function recognizeMessageObject(json: Buffer, maxDepth: number): boolean {
  plainRuns?.newText();
  const n = json.length;
  let i = skipSpace(json, 0);
  if (i >= n || json[i] !== OPEN_OBJECT || maxDepth < 1) return false;
  i = skipSpace(json, i + 1);
  if (i < n && json[i] === CLOSE_OBJECT) return skipSpace(json, i + 1) === n;
  // The top-level names go in the first block of name slots (the values below are read without names kept); a
  // response message has one member as a rule (the oneof's payload), and one with more than the block holds is left
  // to the full reader.
  let count = 0;
  for (;;) {
    if (i >= n || json[i] !== QUOTE) return false;
    const keyStart = i + 1;
    const keyEnd = plainKeyEnd(json, keyStart);
    if (keyEnd === NO || count === MAX_RECOGNIZED_MEMBERS) return false;
    const length = keyEnd - keyStart;
    if (specialName(json, keyStart, length) || seenName(json, 0, count, keyStart, length)) return false;
    nameStarts[count] = keyStart;
    nameLengths[count] = length;
    count++;
    i = skipSpace(json, keyEnd + 1);
    if (i >= n || json[i] !== COLON) return false;
    const valueEnd = value(json, skipSpace(json, i + 1), 1, maxDepth, false);
    if (valueEnd === NO) return false;
    i = skipSpace(json, valueEnd);
    if (i >= n) return false;
    const c = json[i];
    if (c === COMMA) {
      i = skipSpace(json, i + 1);
      continue;
    }
    if (c !== CLOSE_OBJECT) return false;
    break;
  }
  return skipSpace(json, i + 1) === n && !(count === 1 && nameLengths[0] === 5 && bytesAre(json, nameStarts[0]!, 'error'));
}

/** Top-level member kinds (plain numbers: the recognizer runs per event, and so does this switch). */
const Member = { Other: 0, Result: 1, Id: 2, Jsonrpc: 3, Special: 4 } as const;
type Member = (typeof Member)[keyof typeof Member];

/** Which top-level member a (escape-free) name is; `error`, `__proto__` and `constructor` are Special. */
function watchedMember(json: Buffer, start: number, length: number): Member {
  switch (length) {
    case 2:
      return bytesAre(json, start, 'id') ? Member.Id : Member.Other;
    case 5:
      return bytesAre(json, start, 'error') ? Member.Special : Member.Other;
    case 6:
      return bytesAre(json, start, 'result') ? Member.Result : Member.Other;
    case 7:
      return bytesAre(json, start, 'jsonrpc') ? Member.Jsonrpc : Member.Other;
    case 9:
      return bytesAre(json, start, '__proto__') ? Member.Special : Member.Other;
    case 11:
      return bytesAre(json, start, 'constructor') ? Member.Special : Member.Other;
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
function value(json: Buffer, i: number, depth: number, maxDepth: number, strict: boolean): number {
  if (i >= json.length) return NO;
  const c = json[i]!;
  if (c === QUOTE) return stringEnd(json, i + 1);
  if (c === OPEN_OBJECT) return depth + 1 > maxDepth ? NO : objectEnd(json, i + 1, depth + 1, maxDepth, strict);
  if (c === OPEN_ARRAY) return depth + 1 > maxDepth ? NO : arrayEnd(json, i + 1, depth + 1, maxDepth, strict);
  if (c === MINUS || (c >= ZERO && c <= NINE)) return numberEnd(json, i);
  if (c === 0x74 /* t */) return bytesAre(json, i, 'true') ? i + 4 : NO;
  if (c === 0x66 /* f */) return bytesAre(json, i, 'false') ? i + 5 : NO;
  if (c === 0x6e /* n */) return bytesAre(json, i, 'null') ? i + 4 : NO;
  return NO;
}

/** An object at `depth` (1 for a top level read this way); `strict` as for value(). */
function objectEnd(json: Buffer, i: number, depth: number, maxDepth: number, strict: boolean): number {
  const n = json.length;
  // Strict: the names seen so far in this object, in the block of slots of its depth (depth <= MAX_RECOGNIZED_DEPTH).
  const base = (depth - 1) * MAX_RECOGNIZED_MEMBERS;
  let count = 0;
  i = skipSpace(json, i);
  if (i < n && json[i] === CLOSE_OBJECT) return i + 1;
  for (;;) {
    if (i >= n || json[i] !== QUOTE) return NO;
    let keyEnd: number;
    if (strict) {
      const start = i + 1;
      const end = plainKeyEnd(json, start);
      if (end === NO || count === MAX_RECOGNIZED_MEMBERS) return NO;
      const length = end - start;
      if (specialName(json, start, length) || seenName(json, base, count, start, length)) return NO;
      nameStarts[base + count] = start;
      nameLengths[base + count] = length;
      count++;
      keyEnd = end + 1;
    } else {
      keyEnd = nestedNameEnd(json, i + 1);
      if (keyEnd === NO) return NO;
    }
    i = skipSpace(json, keyEnd);
    if (i >= n || json[i] !== COLON) return NO;
    const end = value(json, skipSpace(json, i + 1), depth, maxDepth, strict);
    if (end === NO) return NO;
    i = skipSpace(json, end);
    if (i >= n) return NO;
    const c = json[i];
    if (c === CLOSE_OBJECT) return i + 1;
    if (c !== COMMA) return NO;
    i = skipSpace(json, i + 1);
  }
}

/**
 * A member name below the top level: just past its closing quote, or NO.
 * Prototype-looking names at any depth are secure-json-parse's business (it
 * refuses some of them): `__proto__` and `constructor` go the full way, and
 * so does any name with a \u escape, the only escape that could spell one
 * in disguise (the others make characters those names lack).
 */
function nestedNameEnd(json: Buffer, i: number): number {
  const plain = plainKeyEnd(json, i);
  if (plain !== NO) return specialName(json, i, plain - i) ? NO : plain + 1;
  const end = stringEnd(json, i);
  return end === NO || hasUnicodeEscape(json, i, end) ? NO : end;
}

/** In a valid string body [start, end), each backslash found after the last escape starts the next escape. */
function hasUnicodeEscape(json: Buffer, start: number, end: number): boolean {
  for (let b = start; b < end; b++) {
    if (json[b] !== BACKSLASH) continue;
    if (json[b + 1] === 0x75 /* u */) return true;
    b++;
  }
  return false;
}

function specialName(json: Buffer, start: number, length: number): boolean {
  return (length === 9 && bytesAre(json, start, '__proto__')) || (length === 11 && bytesAre(json, start, 'constructor'));
}

function arrayEnd(json: Buffer, i: number, depth: number, maxDepth: number, strict: boolean): number {
  const n = json.length;
  i = skipSpace(json, i);
  if (i < n && json[i] === CLOSE_ARRAY) return i + 1;
  for (;;) {
    const end = value(json, i, depth, maxDepth, strict);
    if (end === NO) return NO;
    i = skipSpace(json, end);
    if (i >= n) return NO;
    const c = json[i];
    if (c === CLOSE_ARRAY) return i + 1;
    if (c !== COMMA) return NO;
    i = skipSpace(json, i + 1);
  }
}

/** A member name without escapes or control characters: the index of its closing quote, or NO. */
function plainKeyEnd(json: Buffer, i: number): number {
  const n = json.length;
  for (; i < n; i++) {
    const c = json[i]!;
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
function stringEnd(json: Buffer, i: number): number {
  const n = json.length;
  while (i < n) {
    // Past the first PLAIN_HEAD bytes of a run (the string's first, or one after an escape: a text full of newlines
    // keeps the gain), the rest of it is searched natively (plain-runs.ts).
    const handOver = plainRuns === undefined ? n : i + PLAIN_HEAD;
    // Bytes past the backslash are plain (UTF-8 sequences included): only a quote, a backslash or a control
    // character stops the run.
    let c = json[i]!;
    while (c > BACKSLASH || (c >= 0x20 && c !== QUOTE && c !== BACKSLASH)) {
      if (++i === n) return NO;
      if (i === handOver) {
        i = plainRuns!.end(json, i);
        if (i === n) return NO;
      }
      c = json[i]!;
    }
    if (c === QUOTE) return i + 1;
    if (c !== BACKSLASH) return NO; // a raw control character
    const e = json[i + 1];
    if (e !== 0x75 /* u */) {
      if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) return NO;
      i += 2;
    } else {
      const unit = hex4(json, i + 2);
      if (unit < 0) return NO;
      if (unit < 0xd800 || unit > 0xdfff) {
        i += 6;
      } else {
        if (unit > 0xdbff || json[i + 6] !== BACKSLASH || json[i + 7] !== 0x75) return NO;
        const low = hex4(json, i + 8);
        if (low < 0xdc00 || low > 0xdfff) return NO;
        i += 12;
      }
    }
  }
  return NO;
}

/** The value of four hex digits at `i`, or -1. */
function hex4(json: Buffer, i: number): number {
  if (i + 4 > json.length) return -1;
  let v = 0;
  for (let k = i; k < i + 4; k++) {
    const c = json[k]!;
    const d = c >= ZERO && c <= NINE ? c - ZERO : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/** -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
function numberEnd(json: Buffer, i: number): number {
  if (json[i] === MINUS) i++;
  let c = byteAt(json, i);
  if (c === ZERO) i++;
  else if (c >= 0x31 && c <= NINE) i = digitsEnd(json, i + 1);
  else return NO;
  c = byteAt(json, i);
  if (c === DOT) {
    const end = digitsEnd(json, i + 1);
    if (end === i + 1) return NO;
    i = end;
    c = byteAt(json, i);
  }
  if (c === 0x65 || c === 0x45 /* e E */) {
    i++;
    c = byteAt(json, i);
    if (c === PLUS || c === MINUS) i++;
    const end = digitsEnd(json, i);
    if (end === i) return NO;
    i = end;
  }
  return i;
}

/** The byte at `i`, or -1 past the end (a number may end the text). */
function byteAt(json: Buffer, i: number): number {
  return i < json.length ? json[i]! : -1;
}

function digitsEnd(json: Buffer, i: number): number {
  const n = json.length;
  while (i < n) {
    const c = json[i]!;
    if (c < ZERO || c > NINE) break;
    i++;
  }
  return i;
}

/** JSON whitespace only: space, tab, LF, CR. */
function skipSpace(json: Buffer, i: number): number {
  const n = json.length;
  while (i < n) {
    const c = json[i];
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

// The member names of the objects open during a scan (offset and length in the bytes), one block of slots per
// depth. The scan is synchronous and never re-entered, so one pair of arrays serves every request.
const nameStarts = new Int32Array(MAX_RECOGNIZED_DEPTH * MAX_RECOGNIZED_MEMBERS);
const nameLengths = new Int32Array(MAX_RECOGNIZED_DEPTH * MAX_RECOGNIZED_MEMBERS);

/** Top-level members (plain numbers: this switch runs per member of every request). */
const Top = { Other: 0, Jsonrpc: 1, Id: 2, Method: 3, Params: 4 } as const;
type Top = (typeof Top)[keyof typeof Top];

/** The members' places when `json` is certainly the usual request (see the file comment); else undefined. */
export function recognizeCallerRequest(json: Buffer): RecognizedRequest | undefined {
  plainRuns?.newText();
  const n = json.length;
  let i = skipSpace(json, 0);
  if (i >= n || json[i] !== OPEN_OBJECT) return undefined;
  i = skipSpace(json, i + 1);
  let idStart = -1;
  let idEnd = -1;
  let methodStart = -1;
  let methodEnd = -1;
  let paramsStart = -1;
  let paramsEnd = -1;
  let sawJsonrpc = false;
  for (;;) {
    if (i >= n || json[i] !== QUOTE) return undefined;
    const keyStart = i + 1;
    const keyEnd = plainKeyEnd(json, keyStart);
    if (keyEnd === NO) return undefined;
    const member = topMember(json, keyStart, keyEnd - keyStart);
    if (member === Top.Other) return undefined;
    i = skipSpace(json, keyEnd + 1);
    if (i >= n || json[i] !== COLON) return undefined;
    const valueStart = skipSpace(json, i + 1);
    const valueEnd = value(json, valueStart, 1, MAX_RECOGNIZED_DEPTH, true);
    if (valueEnd === NO) return undefined;
    const first = json[valueStart]!;
    switch (member) {
      case Top.Jsonrpc:
        if (sawJsonrpc || valueEnd - valueStart !== 5 || !bytesAre(json, valueStart, '"2.0"')) return undefined;
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
    i = skipSpace(json, valueEnd);
    if (i >= n) return undefined;
    const c = json[i];
    if (c === COMMA) {
      i = skipSpace(json, i + 1);
      continue;
    }
    if (c !== CLOSE_OBJECT) return undefined;
    break;
  }
  if (skipSpace(json, i + 1) !== n || !sawJsonrpc || methodStart === -1) return undefined;
  return { idStart, idEnd, methodStart, methodEnd, paramsStart, paramsEnd };
}

/**
 * True when `json` is certainly one JSON object, nested at most `maxDepth` deep (the object itself is depth 1), every
 * member name at every depth plain (no escape), none `__proto__` or `constructor`, none twice in its object, no
 * object wider than MAX_RECOGNIZED_MEMBERS, no lone surrogate escape, valid JSON throughout: a body JSON.parse reads
 * as every other parser does. False means "not sure" (a depth past MAX_RECOGNIZED_DEPTH too): the full check decides.
 */
export function recognizeStrictObject(json: Buffer, maxDepth: number): boolean {
  plainRuns?.newText();
  const i = skipSpace(json, 0);
  if (i >= json.length || json[i] !== OPEN_OBJECT || maxDepth < 1) return false;
  const end = objectEnd(json, i + 1, 1, Math.min(maxDepth, MAX_RECOGNIZED_DEPTH), true);
  return end !== NO && skipSpace(json, end) === json.length;
}

function topMember(json: Buffer, start: number, length: number): Top {
  switch (length) {
    case 2:
      return bytesAre(json, start, 'id') ? Top.Id : Top.Other;
    case 6:
      return bytesAre(json, start, 'method') ? Top.Method : bytesAre(json, start, 'params') ? Top.Params : Top.Other;
    case 7:
      return bytesAre(json, start, 'jsonrpc') ? Top.Jsonrpc : Top.Other;
    default:
      return Top.Other;
  }
}

/** Whether the name at [start, start + length) is one of the `count` names kept from slot `base` on. */
function seenName(json: Buffer, base: number, count: number, start: number, length: number): boolean {
  for (let k = base; k < base + count; k++) {
    if (nameLengths[k] === length && sameBytes(json, nameStarts[k]!, start, length)) return true;
  }
  return false;
}

function sameBytes(json: Buffer, a: number, b: number, length: number): boolean {
  for (let k = 0; k < length; k++) {
    if (json[a + k] !== json[b + k]) return false;
  }
  return true;
}

/** Whether the bytes at `i` spell `ascii` (an ASCII literal). */
function bytesAre(json: Buffer, i: number, ascii: string): boolean {
  if (i + ascii.length > json.length) return false;
  for (let k = 0; k < ascii.length; k++) {
    if (json[i + k] !== ascii.charCodeAt(k)) return false;
  }
  return true;
}
