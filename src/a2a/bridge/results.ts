/**
 * Results of every operation, 0.3 ↔ 1.0: Task and Message (0.3 bare with a
 * `kind`, 1.0's SendMessageResponse wraps them), push configs (nested against
 * flat; 0.3 lists them as a bare array, 1.0 as `{configs, nextPageToken}`),
 * DeleteTaskPushNotificationConfig (0.3 `null`, 1.0 `google.protobuf.Empty`,
 * i.e. `{}`), and the extended card (card.ts).
 */
import { Code } from '../../envelope/codes.js';
import type { Operation, ProtocolGeneration } from '../operations.js';
import { bridgeCard } from './card.js';
import { bridgeEvent, bridgePayload } from './events.js';
import { done, Drops, isRecord, mapList, noCounterpart, readMembers, type Bridged, type JsonObject } from './json.js';
import { hasId } from './message.js';
import { taskConfigTo03, taskConfigTo10 } from './push-config.js';
import { taskTo03, taskTo10 } from './task.js';

/** A 0.3 list element worth translating: an object whose config has its required url. */
function isConfig03(value: unknown): boolean {
  return isRecord(value) && hasId(value.pushNotificationConfig, 'url');
}

function configListTo10(value: unknown, drops: Drops): JsonObject {
  const configs = mapList(value, 'configs', drops, (c, p) => (isConfig03(c) ? taskConfigTo10(c, p, drops, false) : void drops.add(p)));
  return { configs: configs ?? [] };
}

function configListTo03(value: unknown, drops: Drops): JsonObject[] {
  const list = readMembers(value, ['configs', 'nextPageToken'], '1.0', '', drops) ?? {};
  // A 0.3 list has no pages: a caller sees the first page only.
  if (list.nextPageToken !== undefined && list.nextPageToken !== '') drops.add('nextPageToken');
  return mapList(list.configs ?? [], 'configs', drops, (c, p) => (hasId(c, 'url') ? taskConfigTo03(c, p, drops) : void drops.add(p))) ?? [];
}

/** The result of `operation` written in `from`, as the result of the same operation in `to`. */
export function bridgeResult(operation: Operation, from: ProtocolGeneration, to: ProtocolGeneration, result: unknown): Bridged<unknown> {
  const drops = new Drops();
  if (from === to) return done(result, drops);
  switch (operation.name) {
    case 'SendMessage':
      return bridgePayload(from, to, result, false);
    case 'SendStreamingMessage':
    case 'SubscribeToTask':
      return bridgeEvent(from, to, result);
    case 'GetExtendedAgentCard':
      return bridgeCard(from, to, result);
    case 'ListTasks':
      return noCounterpart(Code.UnsupportedOperation, 'ListTasks does not exist in A2A 0.3', drops);
    case 'DeleteTaskPushNotificationConfig':
      if (result !== null && !(isRecord(result) && Object.keys(result).length === 0)) drops.add('*');
      return done(to === '1.0' ? {} : null, drops);
    case 'ListTaskPushNotificationConfigs':
      if (to === '1.0' && !Array.isArray(result)) return notObject(operation, 'a list', drops);
      if (to === '0.3' && !isRecord(result)) return notObject(operation, 'an object', drops);
      return done(to === '1.0' ? configListTo10(result, drops) : configListTo03(result, drops), drops);
    default:
      break;
  }
  if (!isRecord(result)) return notObject(operation, 'an object', drops);
  switch (operation.name) {
    case 'GetTask':
    case 'CancelTask':
      return done(to === '1.0' ? taskTo10(result, 'task', drops) : taskTo03(result, 'task', drops), drops);
    default: // CreateTaskPushNotificationConfig, GetTaskPushNotificationConfig
      return done(to === '1.0' ? taskConfigTo10(result, 'pushConfig', drops, false) : taskConfigTo03(result, 'pushConfig', drops), drops);
  }
}

function notObject(operation: Operation, what: string, drops: Drops): Bridged<never> {
  return noCounterpart(Code.InvalidAgentResponse, `the ${operation.name} result is not ${what}`, drops);
}
