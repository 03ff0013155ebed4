/**
 * Tasks, task statuses and the two update events. 0.3 marks a Task with
 * `kind: "task"` and an update with `kind: "status-update"` /
 * `"artifact-update"`; its status-update carries `final`, which 1.0 carries as
 * the end of the stream (the stream closes at a terminal or interrupted state).
 */
import { STATE_UNKNOWN_03, STATE_UNSPECIFIED_10, STREAM_ENDING_STATES_03, stateTo03, stateTo10 } from './enums.js';
import { copyBoolean, copyString, copyStruct, Drops, join, readMembers, requiredString, type JsonObject } from './json.js';
import { artifactListTo, artifactTo, messageListTo03, messageListTo10, messageTo03, messageTo10 } from './message.js';

const STATUS = ['state', 'message', 'timestamp'] as const;
const TASK_03 = ['kind', 'id', 'contextId', 'status', 'artifacts', 'history', 'metadata'] as const;
const TASK_10 = TASK_03.filter((m) => m !== 'kind');
const STATUS_UPDATE_03 = ['kind', 'taskId', 'contextId', 'status', 'final', 'metadata'] as const;
const STATUS_UPDATE_10 = ['taskId', 'contextId', 'status', 'metadata'] as const;
const ARTIFACT_UPDATE_03 = ['kind', 'taskId', 'contextId', 'artifact', 'append', 'lastChunk', 'metadata'] as const;
const ARTIFACT_UPDATE_10 = ARTIFACT_UPDATE_03.filter((m) => m !== 'kind');

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))?$/;

/**
 * A 0.3 timestamp (free-form ISO 8601 text) as a 1.0 `google.protobuf.Timestamp` (RFC 3339). A date-time
 * without an offset (the 0.3 spec's own examples write them) is read as UTC; anything that is not an
 * RFC 3339 date-time is `undefined`.
 */
export function timestampTo10(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const m = RFC3339.exec(value);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // Date.UTC would read years below 100 as 19xx
  const dayExists = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  if (year < 1 || !dayExists || hour > 23 || minute > 59 || second > 59) return undefined;
  if (Number(m[9] ?? 0) > 23 || Number(m[10] ?? 0) > 59) return undefined;
  return m[8] === undefined ? `${value}Z` : value;
}

export function statusTo10(value: unknown, path: string, drops: Drops): JsonObject {
  const s = readMembers(value, STATUS, '0.3', path, drops) ?? (drops.add(path), {});
  const state = stateTo10(s.state);
  if (state === undefined && s.state !== undefined) drops.add(join(path, 'state'));
  const out: JsonObject = { state: state ?? STATE_UNSPECIFIED_10 };
  if (s.message !== undefined) out.message = messageTo10(s.message, join(path, 'message'), drops);
  if (s.timestamp !== undefined) {
    const timestamp = timestampTo10(s.timestamp);
    if (timestamp !== undefined) out.timestamp = timestamp;
    else drops.add(join(path, 'timestamp'));
  }
  return out;
}

export function statusTo03(value: unknown, path: string, drops: Drops): JsonObject {
  const s = readMembers(value, STATUS, '1.0', path, drops) ?? (drops.add(path), {});
  const state = stateTo03(s.state ?? STATE_UNSPECIFIED_10);
  if (state === undefined) drops.add(join(path, 'state'));
  const out: JsonObject = { state: state ?? STATE_UNKNOWN_03 };
  if (s.message !== undefined) out.message = messageTo03(s.message, join(path, 'message'), drops, 'agent');
  copyString(s, 'timestamp', out, 'timestamp', path, drops);
  return out;
}

export function taskTo10(value: unknown, path: string, drops: Drops): JsonObject {
  const t = readMembers(value, TASK_03, '0.3', path, drops) ?? (drops.add(path), {});
  const out: JsonObject = { id: requiredString(t, 'id', path, drops) };
  copyString(t, 'contextId', out, 'contextId', path, drops);
  out.status = statusTo10(t.status, join(path, 'status'), drops);
  const artifacts = artifactListTo('1.0', t.artifacts, join(path, 'artifacts'), drops);
  if (artifacts !== undefined) out.artifacts = artifacts;
  const history = messageListTo10(t.history, join(path, 'history'), drops);
  if (history !== undefined) out.history = history;
  copyStruct(t, 'metadata', out, 'metadata', path, drops);
  return out;
}

export function taskTo03(value: unknown, path: string, drops: Drops): JsonObject {
  const t = readMembers(value, TASK_10, '1.0', path, drops) ?? (drops.add(path), {});
  const out: JsonObject = {
    kind: 'task',
    id: requiredString(t, 'id', path, drops),
    contextId: requiredString(t, 'contextId', path, drops),
    status: statusTo03(t.status, join(path, 'status'), drops),
  };
  const artifacts = artifactListTo('0.3', t.artifacts, join(path, 'artifacts'), drops);
  if (artifacts !== undefined) out.artifacts = artifacts;
  const history = messageListTo03(t.history, join(path, 'history'), drops);
  if (history !== undefined) out.history = history;
  copyStruct(t, 'metadata', out, 'metadata', path, drops);
  return out;
}

export function statusUpdateTo10(value: unknown, path: string, drops: Drops): JsonObject {
  const e = readMembers(value, STATUS_UPDATE_03, '0.3', path, drops) ?? (drops.add(path), {});
  const out: JsonObject = {
    taskId: requiredString(e, 'taskId', path, drops),
    contextId: requiredString(e, 'contextId', path, drops),
    status: statusTo10(e.status, join(path, 'status'), drops),
  };
  // `final` is carried by the stream's end; it is lost only where it disagrees with the state.
  const state = (out.status as JsonObject).state;
  const ends = typeof state === 'string' && STREAM_ENDING_STATES_03.has(stateTo03(state) ?? '');
  if (e.final !== undefined && e.final !== ends) drops.add(join(path, 'final'));
  copyStruct(e, 'metadata', out, 'metadata', path, drops);
  return out;
}

export function statusUpdateTo03(value: unknown, path: string, drops: Drops): JsonObject {
  const e = readMembers(value, STATUS_UPDATE_10, '1.0', path, drops) ?? (drops.add(path), {});
  const status = statusTo03(e.status, join(path, 'status'), drops);
  const out: JsonObject = {
    kind: 'status-update',
    taskId: requiredString(e, 'taskId', path, drops),
    contextId: requiredString(e, 'contextId', path, drops),
    status,
    final: STREAM_ENDING_STATES_03.has(status.state as string),
  };
  copyStruct(e, 'metadata', out, 'metadata', path, drops);
  return out;
}

export function artifactUpdateTo(generation: '0.3' | '1.0', value: unknown, path: string, drops: Drops): JsonObject {
  const from = generation === '1.0' ? '0.3' : '1.0';
  const e = readMembers(value, from === '0.3' ? ARTIFACT_UPDATE_03 : ARTIFACT_UPDATE_10, from, path, drops) ?? (drops.add(path), {});
  const out: JsonObject = generation === '0.3' ? { kind: 'artifact-update' } : {};
  out.taskId = requiredString(e, 'taskId', path, drops);
  out.contextId = requiredString(e, 'contextId', path, drops);
  out.artifact = artifactTo(generation, e.artifact, join(path, 'artifact'), drops);
  copyBoolean(e, 'append', out, 'append', path, drops);
  copyBoolean(e, 'lastChunk', out, 'lastChunk', path, drops);
  copyStruct(e, 'metadata', out, 'metadata', path, drops);
  return out;
}
