/**
 * The task a result is about: its id and state, read from an Outcome's
 * already-parsed value with a few property reads (no walk, no copy), for the
 * spans' `a2a.task.id` and `a2a.task.state`.
 *
 * Shapes, both generations (the value is the JSON-RPC result / REST body):
 * - 1.0 SendMessageResponse / StreamResponse: `{task}`, `{message}`,
 *   `{statusUpdate: {taskId, status: {state}}}`, `{artifactUpdate: {taskId}}`;
 *   GetTask / CancelTask: a Task `{id, status: {state}}`.
 * - 0.3: `{kind: "task", id, status}`, `{kind: "message", taskId}`,
 *   `{kind: "status-update", taskId, status}`, `{kind: "artifact-update", taskId}`.
 * Only the operations that answer with tasks, messages or their events are
 * read: a push-notification config also has a `taskId`, but it is not a result
 * about a task's progress.
 *
 * The id is the remote's text: control characters are removed and it is cut
 * to MAX_TASK_ID_BYTES. The state is kept only when it is one A2A defines, and
 * always reported as the 1.0 enum name.
 */
import type { OperationName } from '../a2a/operations.js';
import { stateTo03, stateTo10 } from '../a2a/bridge/enums.js';
import { sanitizeText } from '../envelope/sanitize.js';
import { MAX_TASK_ID_BYTES } from './span-attributes.js';

export interface TaskSummary {
  readonly id: string | undefined;
  readonly state: string | undefined;
}

const TASK_OPERATIONS: ReadonlySet<OperationName> = new Set(['SendMessage', 'SendStreamingMessage', 'GetTask', 'CancelTask', 'SubscribeToTask']);

/** Whether results of this operation are read for a task at all. */
export function carriesTask(operation: OperationName | undefined): boolean {
  return operation !== undefined && TASK_OPERATIONS.has(operation);
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The task id and state in one result or stream event; undefined fields when it names none. */
export function taskSummaryOf(value: unknown): TaskSummary | undefined {
  if (!isObj(value)) return undefined;
  // 1.0 wrappers (oneof payload).
  if (isObj(value.task)) return fromTask(value.task);
  if (isObj(value.statusUpdate)) return fromUpdate(value.statusUpdate);
  if (isObj(value.artifactUpdate)) return fromUpdate(value.artifactUpdate);
  if (isObj(value.message)) return fromUpdate(value.message);
  // 0.3 results and events carry a kind; a 1.0 Task is bare.
  switch (value.kind) {
    case 'task':
      return fromTask(value);
    case 'message':
    case 'status-update':
    case 'artifact-update':
      return fromUpdate(value);
    default:
      return typeof value.id === 'string' && isObj(value.status) ? fromTask(value) : undefined;
  }
}

function fromTask(task: Obj): TaskSummary | undefined {
  return summary(task.id, task.status);
}

function fromUpdate(update: Obj): TaskSummary | undefined {
  return summary(update.taskId, update.status);
}

function summary(id: unknown, status: unknown): TaskSummary | undefined {
  const taskId = typeof id === 'string' && id !== '' ? boundedId(id) : undefined;
  const state = isObj(status) ? stateName(status.state) : undefined;
  return taskId === undefined && state === undefined ? undefined : { id: taskId, state };
}

/** A state as its 1.0 enum name: 0.3 literals mapped, 1.0 names (or numbers) checked; anything else dropped. */
export function stateName(state: unknown): string | undefined {
  const from03 = stateTo10(state);
  if (from03 !== undefined) return from03;
  // A 1.0 name or number maps to a 0.3 literal exactly when A2A defines it; map back for the canonical name.
  const as03 = stateTo03(state);
  return as03 === undefined ? undefined : stateTo10(as03);
}

function boundedId(id: string): string | undefined {
  // Ids are short ASCII in practice: only an unusual one pays for the full clean-up.
  const plain = id.length <= MAX_TASK_ID_BYTES && /^[\x21-\x7e]+$/.test(id);
  const text = plain ? id : sanitizeText(id, MAX_TASK_ID_BYTES).text;
  return text === '' ? undefined : text;
}
