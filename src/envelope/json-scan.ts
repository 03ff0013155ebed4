/**
 * One pass over JSON text that finds what JSON.parse hides: nesting depth
 * (stopping early, so a 100,000-deep body costs almost nothing), duplicate
 * top-level members (which different parsers resolve differently), lone
 * surrogate escapes, and where the top-level `result` value sits, so a valid
 * result can be spliced into the caller's envelope byte for byte.
 *
 * It does not check syntax: JSON.parse runs after it and does that.
 */

export type ScanProblem = 'too-deep' | 'duplicate-member' | 'lone-surrogate';

export interface JsonScan {
  readonly problem?: ScanProblem;
  /** Which member was duplicated, when problem is 'duplicate-member'. */
  readonly member?: string;
  /** [start, end) of the top-level "result" value in the text, if present. */
  readonly resultStart: number;
  readonly resultEnd: number;
  /**
   * Members of the top-level object, repeats counted (0 when the top level is no object). More than the parsed
   * object's keys means a repeated member: how the HTTP+JSON normalizer finds one at no extra cost.
   */
  readonly topLevelMembers?: number;
}

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;

/** The members whose duplication changes what a reply means. */
const WATCHED = new Set(['jsonrpc', 'id', 'result', 'error']);

export function scanJson(text: string, maxDepth: number): JsonScan {
  const n = text.length;
  let depth = 0;
  let topIsObject = false;
  let expectKey = false;
  let currentKey: string | undefined;
  let valueStart = -1;
  let resultStart = -1;
  let resultEnd = -1;
  const seen = new Set<string>();
  let topLevelMembers = 0;
  // Other problems are remembered, not returned at once, so the depth bound is
  // always enforced: a duplicate key must not let a 100,000-deep body reach JSON.parse.
  let found: { problem: ScanProblem; member?: string } | undefined;
  const note = (problem: ScanProblem, member?: string): void => {
    found ??= member === undefined ? { problem } : { problem, member };
  };

  const endTopValue = (at: number): void => {
    if (currentKey === 'result' && valueStart >= 0) {
      resultStart = valueStart;
      resultEnd = trimEnd(text, at);
    }
    currentKey = undefined;
    valueStart = -1;
  };

  // Strings are most of a reply's bytes: jump through them with indexOf (native
  // speed) instead of a loop per character. `backslashAt` is the next escape at or
  // after the scan position, or -1 once there are none left in the text.
  let backslashAt = text.indexOf('\\');
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i;
      let hasEscape = false;
      let from = i + 1;
      for (;;) {
        const quote = text.indexOf('"', from);
        if (quote === -1) {
          i = n; // unterminated: JSON.parse rejects it
          break;
        }
        if (backslashAt !== -1 && backslashAt < from) backslashAt = text.indexOf('\\', from);
        if (backslashAt === -1 || backslashAt > quote) {
          i = quote;
          break;
        }
        hasEscape = true;
        const b = backslashAt;
        if (text.charCodeAt(b + 1) === 0x75 /* u */) {
          const unit = parseInt(text.slice(b + 2, b + 6), 16);
          if (unit >= 0xd800 && unit <= 0xdbff) {
            const next = text.charCodeAt(b + 6) === BACKSLASH && text.charCodeAt(b + 7) === 0x75
              ? parseInt(text.slice(b + 8, b + 12), 16)
              : -1;
            if (next >= 0xdc00 && next <= 0xdfff) {
              from = b + 12;
              continue;
            }
            note('lone-surrogate');
          } else if (unit >= 0xdc00 && unit <= 0xdfff) {
            note('lone-surrogate');
          }
          from = b + 6;
        } else {
          from = b + 2; // the escaped character, even a quote or a backslash, is skipped
        }
      }
      if (depth === 1 && topIsObject && expectKey) {
        topLevelMembers++;
        const raw = text.slice(start + 1, i);
        const key = hasEscape ? safeUnescape(raw) : raw;
        if (WATCHED.has(key)) {
          if (seen.has(key)) note('duplicate-member', key);
          seen.add(key);
        }
        currentKey = key;
        expectKey = false;
      }
      continue;
    }
    switch (c) {
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        if (depth === 0 && c === OPEN_OBJECT) {
          topIsObject = true;
          expectKey = true;
        }
        depth++;
        if (depth > maxDepth) return problemScan('too-deep');
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        if (depth === 1 && topIsObject) endTopValue(i);
        depth--;
        break;
      case COMMA:
        if (depth === 1 && topIsObject) {
          endTopValue(i);
          expectKey = true;
        }
        break;
      case COLON:
        if (depth === 1 && topIsObject && currentKey !== undefined) valueStart = skipSpace(text, i + 1);
        break;
      default:
        break;
    }
  }
  if (found) return { ...found, resultStart: -1, resultEnd: -1, topLevelMembers };
  return { resultStart, resultEnd, topLevelMembers };
}

function problemScan(problem: ScanProblem): JsonScan {
  return { problem, resultStart: -1, resultEnd: -1 };
}

function safeUnescape(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

function trimEnd(text: string, end: number): number {
  while (end > 0 && isSpace(text.charCodeAt(end - 1))) end--;
  return end;
}
