/**
 * Reads JSON text a remote sent (a reply body, one event's data) under the
 * rules every normalizer applies (src/envelope/normalize.ts): nesting depth
 * bounded before parsing, `__proto__` / `constructor.prototype` keys
 * refused, lone surrogate escapes refused, a member twice in the top-level
 * object refused (in a response message the top level is the oneof
 * payload: `{"task":…,"task":…}` means different things to different
 * parsers). Pure.
 */
import sjson from 'secure-json-parse';
import type { Reason } from '../../envelope/codes.js';
import { findDuplicateMember } from '../../envelope/duplicate-members.js';
import { scanJson } from '../../envelope/json-scan.js';

export type JsonRead =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly reason: Reason; readonly detail?: string };

/** `duplicateLevels`: how many object levels are checked for repeated members (1: the top level). */
export function readRemoteJson(text: string, maxJsonDepth: number, duplicateLevels = 1): JsonRead {
  const scan = scanJson(text, maxJsonDepth);
  if (scan.problem === 'too-deep') return { ok: false, reason: 'JSON_TOO_DEEP', detail: `deeper than ${maxJsonDepth} levels` };
  let value: unknown;
  try {
    value = sjson.parse(text, null, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    const forbidden = err instanceof SyntaxError && err.message.includes('forbidden prototype');
    return { ok: false, reason: forbidden ? 'UNSAFE_JSON' : 'INVALID_JSON' };
  }
  if (scan.problem === 'lone-surrogate') return { ok: false, reason: 'INVALID_JSON', detail: 'string with a lone surrogate escape' };
  // The scan counted the top-level members: fewer keys after parsing means one was repeated. Only then (or when
  // deeper levels are asked for) is the text walked again, to name it.
  const repeatedAtTop = isPlainObject(value) && scan.topLevelMembers !== undefined && scan.topLevelMembers > Object.keys(value).length;
  const duplicate = repeatedAtTop || duplicateLevels > 1 ? findDuplicateMember(text, maxJsonDepth, duplicateLevels) : ({ ok: true } as const);
  if (!duplicate.ok && duplicate.problem === 'duplicate-member') {
    const member = /^[A-Za-z0-9_-]{1,64}$/.test(duplicate.member) ? duplicate.member : '*';
    return { ok: false, reason: 'INVALID_RESPONSE_MESSAGE', detail: `duplicate "${member}" member` };
  }
  return { ok: true, value };
}

export function describeJsonValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
