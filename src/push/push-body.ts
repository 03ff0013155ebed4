/**
 * One push body → what reaches the local agent, or a refusal with its
 * reason. Pure: bytes and policy in, verdict out (fuzzed in
 * test/unit/push-body.property.test.ts).
 *
 * The rules every remote body meets elsewhere in the gateway: a size bound;
 * a JSON object (an HTML page or a bare value is refused before parsing);
 * valid UTF-8; nesting depth bounded before parsing and lone surrogate
 * escapes refused (src/envelope/json-scan.ts); `__proto__` keys and a
 * member named twice at any depth refused (src/envelope/strict-json.ts).
 * Then A2A: a 1.0 push is one StreamResponse (exactly one of task, message,
 * statusUpdate, artifactUpdate), a 0.3 push one Task, Message or update
 * event with its `kind` — the generation the remote registered the config
 * in — checked against the A2A schema (src/a2a/result-validate.ts); it must
 * be about the config's task when the config names one. Its text is cleaned
 * and the gateway's secrets removed (./push-text.ts); the schema is checked
 * again on what will be sent. Where the local agent speaks the other
 * generation, the version bridge translates it.
 *
 * The body sent on is the remote's own bytes when nothing had to change,
 * else the cleaned value serialized.
 */
import { bridgeEvent } from '../a2a/bridge/index.js';
import type { ProtocolGeneration } from '../a2a/operations.js';
import { checkResult } from '../a2a/result-validate.js';
import { scanJson } from '../envelope/json-scan.js';
import type { Redactor } from '../envelope/redact.js';
import { parseStrictJson } from '../envelope/strict-json.js';
import { isObject, member, memberValue } from './config-shapes.js';
import { cleanPush } from './push-text.js';
import type { PushRefusal } from './reasons.js';

export interface PushBodyPolicy {
  /** What the remote pushes: the generation it registered the config in. */
  readonly generation: ProtocolGeneration;
  /** What the local agent is delivered: the generation it registered the config in. */
  readonly deliverAs: ProtocolGeneration;
  readonly maxBytes: number;
  readonly maxJsonDepth: number;
  /** The config's task; undefined for a config given in SendMessage for a new task. */
  readonly taskId?: string | undefined;
  /** Values that must not reach the local agent: the credential minted for this config, the remote's own credentials. */
  readonly redactors: readonly Redactor[];
}

export type PushVerdict =
  | {
      readonly ok: true;
      /** The body to deliver. */
      readonly json: string;
      /** The task the push is about ('' for none). */
      readonly taskId: string;
      readonly cleaned: number;
      readonly redacted: number;
      readonly bridged: boolean;
    }
  | { readonly ok: false; readonly reason: PushRefusal; readonly detail?: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });
const OPEN_OBJECT = 0x7b;

export function checkPushBody(body: Buffer, policy: PushBodyPolicy): PushVerdict {
  if (body.length > policy.maxBytes) return { ok: false, reason: 'PUSH_TOO_LARGE' };
  if (firstNonSpaceByte(body) !== OPEN_OBJECT) return { ok: false, reason: 'PUSH_NOT_JSON' };
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    return { ok: false, reason: 'PUSH_INVALID_UTF8' };
  }
  const scan = scanJson(text, policy.maxJsonDepth);
  if (scan.problem === 'too-deep') return { ok: false, reason: 'PUSH_JSON_TOO_DEEP', detail: `deeper than ${policy.maxJsonDepth} levels` };
  if (scan.problem === 'lone-surrogate') return { ok: false, reason: 'PUSH_INVALID_JSON', detail: 'string with a lone surrogate escape' };
  const parsed = parseStrictJson(text);
  if (!parsed.ok) {
    if (parsed.problem === 'forbidden-key') return { ok: false, reason: 'PUSH_UNSAFE_JSON' };
    if (parsed.problem === 'duplicate-member') return { ok: false, reason: 'PUSH_DUPLICATE_MEMBER' };
    return { ok: false, reason: 'PUSH_INVALID_JSON' };
  }
  const value = parsed.value;
  if (!isObject(value)) return { ok: false, reason: 'PUSH_NOT_JSON' };
  const schemaProblem = problemOf(value, policy.generation);
  if (schemaProblem !== undefined) return { ok: false, reason: 'PUSH_INVALID_EVENT', detail: schemaProblem };

  const clean = cleanPush(value, policy.redactors);
  if (!clean.ok) return clean.detail === undefined ? { ok: false, reason: clean.reason } : { ok: false, reason: clean.reason, detail: clean.detail };
  // The task as the remote wrote it (cleaning has refused camelCase/snake_case twins by now).
  const taskId = taskIdOf(value, policy.generation);
  if (policy.taskId !== undefined && taskId !== policy.taskId) return { ok: false, reason: 'PUSH_TASK_MISMATCH' };
  const changed = clean.cleaned > 0 || clean.redacted > 0;
  // Defensive: cleaning only changes strings, and no string the schema constrains (enums) can be valid with
  // what cleaning removes, so this holds today; it keeps holding if the schema gains formats.
  if (changed) {
    const problem = problemOf(clean.value, policy.generation);
    if (problem !== undefined) return { ok: false, reason: 'PUSH_INVALID_EVENT', detail: `once cleaned, ${problem}` };
  }
  let out = clean.value;
  const bridged = policy.deliverAs !== policy.generation;
  if (bridged) {
    const b = bridgeEvent(policy.generation, policy.deliverAs, out);
    if (!b.ok) return { ok: false, reason: 'PUSH_INVALID_EVENT', detail: b.problem };
    out = b.value;
  }
  return {
    ok: true,
    json: changed || bridged ? JSON.stringify(out) : text,
    taskId: taskId ?? '',
    cleaned: clean.cleaned,
    redacted: clean.redacted,
    bridged,
  };
}

/** The schema problem of a push in its generation (a path, never a value), or undefined. */
function problemOf(value: unknown, generation: ProtocolGeneration): string | undefined {
  const check = checkResult(generation === '1.0' ? 'SendStreamingMessage' : 'message/stream', value);
  return check.ok ? undefined : check.problem.replace(/^result/, 'push');
}

const PAYLOADS_10 = ['task', 'message', 'statusUpdate', 'artifactUpdate'] as const;

/** The task a push is about: a task's id, an update's or message's taskId. */
export function taskIdOf(value: Record<string, unknown>, generation: ProtocolGeneration): string | undefined {
  let payload: Record<string, unknown> | undefined;
  let isTask: boolean;
  if (generation === '1.0') {
    const name = PAYLOADS_10.find((p) => member(value, p).present);
    const inner = name === undefined ? undefined : memberValue(value, name);
    payload = isObject(inner) ? inner : undefined;
    isTask = name === 'task';
  } else {
    payload = value;
    isTask = value.kind === 'task';
  }
  if (!payload) return undefined;
  const id = memberValue(payload, isTask ? 'id' : 'taskId');
  return typeof id === 'string' ? id : undefined;
}

function firstNonSpaceByte(body: Buffer): number {
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return c;
  }
  return -1;
}
