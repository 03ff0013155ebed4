/**
 * Stream events (and the SendMessage result, which is the same union without
 * the updates). 0.3 sends the object itself with its `kind`
 * (`task` | `message` | `status-update` | `artifact-update`); 1.0 sends a
 * StreamResponse (SendMessageResponse) whose one member names the payload
 * (`{task}` | `{message}` | `{statusUpdate}` | `{artifactUpdate}`).
 */
import { Code } from '../../envelope/codes.js';
import type { ProtocolGeneration } from '../operations.js';
import { done, Drops, isRecord, noCounterpart, readMembers, type Bridged, type JsonObject } from './json.js';
import { messageTo03, messageTo10 } from './message.js';
import { artifactUpdateTo, statusUpdateTo03, statusUpdateTo10, taskTo03, taskTo10 } from './task.js';

/** The payload members of a 1.0 StreamResponse, in proto order, with the 0.3 kind each one is. */
export const STREAM_PAYLOADS: readonly (readonly [v10Member: string, v03Kind: string])[] = [
  ['task', 'task'],
  ['message', 'message'],
  ['statusUpdate', 'status-update'],
  ['artifactUpdate', 'artifact-update'],
];

const PAYLOAD_MEMBERS = STREAM_PAYLOADS.map(([member]) => member);
const UPDATE_KINDS = new Set(['status-update', 'artifact-update']);

/** The kind of a 0.3 object: its `kind`, or (when a sender left it out) what its members say it is. */
function kindOf03(value: JsonObject): unknown {
  if (value.kind !== undefined) return value.kind;
  if (value.artifact !== undefined) return 'artifact-update';
  if (value.taskId !== undefined && value.status !== undefined) return 'status-update';
  if (value.messageId !== undefined) return 'message';
  if (value.id !== undefined && value.status !== undefined) return 'task';
  return undefined;
}

function payloadTo10(kind: string, value: JsonObject, drops: Drops): JsonObject {
  switch (kind) {
    case 'task':
      return { task: taskTo10(value, 'task', drops) };
    case 'message':
      return { message: messageTo10(value, 'message', drops) };
    case 'status-update':
      return { statusUpdate: statusUpdateTo10(value, 'statusUpdate', drops) };
    default:
      return { artifactUpdate: artifactUpdateTo('1.0', value, 'artifactUpdate', drops) };
  }
}

function payloadTo03(member: string, value: unknown, drops: Drops): JsonObject {
  switch (member) {
    case 'task':
      return taskTo03(value, 'task', drops);
    case 'message':
      return messageTo03(value, 'message', drops, 'agent');
    case 'statusUpdate':
      return statusUpdateTo03(value, 'statusUpdate', drops);
    default:
      return artifactUpdateTo('0.3', value, 'artifactUpdate', drops);
  }
}

/**
 * A 0.3 event (or message/send result) as its 1.0 wrapper, or a 1.0 wrapper as the 0.3 object.
 * `updates`: whether status and artifact updates belong here (streams) or not (SendMessage).
 */
export function bridgePayload(from: ProtocolGeneration, to: ProtocolGeneration, value: unknown, updates: boolean): Bridged<JsonObject> {
  const drops = new Drops();
  if (from === to) return done(isRecord(value) ? value : {}, drops);
  const what = updates ? 'stream event' : 'SendMessage result';
  if (!isRecord(value)) return noCounterpart(Code.InvalidAgentResponse, `the ${what} is not an object`, drops);
  if (to === '1.0') {
    const kind = kindOf03(value);
    const known = typeof kind === 'string' && STREAM_PAYLOADS.some(([, k]) => k === kind) && (updates || !UPDATE_KINDS.has(kind));
    if (!known) return noCounterpart(Code.InvalidAgentResponse, `the ${what} is of no A2A 0.3 kind this operation has`, drops);
    return done(payloadTo10(kind, value, drops), drops);
  }
  const wrapper = readMembers(value, PAYLOAD_MEMBERS, '1.0', '', drops) ?? {};
  const present = STREAM_PAYLOADS.filter(([member]) => wrapper[member] !== undefined);
  const first = present.find(([, kind]) => updates || !UPDATE_KINDS.has(kind));
  if (first === undefined) return noCounterpart(Code.InvalidAgentResponse, `the ${what} has no payload this operation has`, drops);
  // A oneof holds one member; a sender that set several meant the first the proto declares.
  for (const [member] of present) if (member !== first[0]) drops.add(member);
  return done(payloadTo03(first[0], wrapper[first[0]], drops), drops);
}

/** One stream event of SendStreamingMessage or SubscribeToTask, written in `from`, as `to` writes it. */
export function bridgeEvent(from: ProtocolGeneration, to: ProtocolGeneration, event: unknown): Bridged<JsonObject> {
  return bridgePayload(from, to, event, true);
}
