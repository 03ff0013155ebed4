/**
 * Request params of every operation, 0.3 ↔ 1.0.
 *
 * 0.3 addresses a task as `id` and a push config as `pushNotificationConfigId`;
 * 1.0 says `id`/`taskId` per request message. `blocking` (0.3) and
 * `returnImmediately` (1.0) are opposites with the same default (both
 * generations block when the member is absent: 1.0 §3.2.2, and the 0.3
 * reference servers treat only `blocking: false` as non-blocking), so an absent
 * member stays absent. 1.0's `tenant` and ListTasks, and 0.3's `metadata` on
 * requests 1.0 gives none, have no counterpart.
 */
import { Code } from '../../envelope/codes.js';
import type { Operation, OperationName, ProtocolGeneration } from '../operations.js';
import {
  copyInt32,
  copyStringList,
  copyStruct,
  done,
  Drops,
  isRecord,
  join,
  noCounterpart,
  readMembers,
  requiredString,
  type Bridged,
  type JsonObject,
} from './json.js';
import { messageTo03, messageTo10 } from './message.js';
import { configTo03, configTo10, taskConfigTo03, taskConfigTo10 } from './push-config.js';

const SEND_03 = ['message', 'configuration', 'metadata'] as const;
const SEND_10 = ['tenant', 'message', 'configuration', 'metadata'] as const;
const SEND_CONFIG_03 = ['acceptedOutputModes', 'blocking', 'historyLength', 'pushNotificationConfig'] as const;
const SEND_CONFIG_10 = ['acceptedOutputModes', 'returnImmediately', 'historyLength', 'taskPushNotificationConfig'] as const;

/** Members of the requests that name a task (and a push config), per operation. */
const TASK_PARAMS_03: Partial<Record<OperationName, readonly string[]>> = {
  GetTask: ['id', 'historyLength', 'metadata'],
  CancelTask: ['id', 'metadata'],
  SubscribeToTask: ['id', 'metadata'],
  GetTaskPushNotificationConfig: ['id', 'pushNotificationConfigId', 'metadata'],
  DeleteTaskPushNotificationConfig: ['id', 'pushNotificationConfigId', 'metadata'],
  ListTaskPushNotificationConfigs: ['id', 'metadata'],
};
const TASK_PARAMS_10: Partial<Record<OperationName, readonly string[]>> = {
  GetTask: ['tenant', 'id', 'historyLength'],
  CancelTask: ['tenant', 'id', 'metadata'],
  SubscribeToTask: ['tenant', 'id'],
  GetTaskPushNotificationConfig: ['tenant', 'taskId', 'id'],
  DeleteTaskPushNotificationConfig: ['tenant', 'taskId', 'id'],
  ListTaskPushNotificationConfigs: ['tenant', 'taskId', 'pageSize', 'pageToken'],
};

/** A 1.0 request's `tenant`: 0.3 has none; a non-empty one is recorded. */
function dropTenant(p: JsonObject, drops: Drops): void {
  if (p.tenant !== undefined && p.tenant !== '') drops.add('tenant');
}

/** 0.3 request `metadata` where the 1.0 request message has no such member. */
function dropMetadata(p: JsonObject, drops: Drops): void {
  if (p.metadata !== undefined) drops.add('metadata');
}

function sendConfigTo10(value: unknown, path: string, drops: Drops): JsonObject {
  const c = readMembers(value, SEND_CONFIG_03, '0.3', path, drops) ?? (drops.add(path), {});
  const out: JsonObject = {};
  copyStringList(c, 'acceptedOutputModes', out, 'acceptedOutputModes', path, drops);
  if (typeof c.blocking === 'boolean') out.returnImmediately = !c.blocking;
  else if (c.blocking !== undefined) drops.add(join(path, 'blocking'));
  copyInt32(c, 'historyLength', out, 'historyLength', path, drops);
  if (c.pushNotificationConfig !== undefined) {
    out.taskPushNotificationConfig = configTo10(c.pushNotificationConfig, undefined, join(path, 'pushNotificationConfig'), drops);
  }
  return out;
}

function sendConfigTo03(value: unknown, path: string, drops: Drops): JsonObject {
  const c = readMembers(value, SEND_CONFIG_10, '1.0', path, drops) ?? (drops.add(path), {});
  const out: JsonObject = {};
  copyStringList(c, 'acceptedOutputModes', out, 'acceptedOutputModes', path, drops);
  if (typeof c.returnImmediately === 'boolean') out.blocking = !c.returnImmediately;
  else if (c.returnImmediately !== undefined) drops.add(join(path, 'returnImmediately'));
  copyInt32(c, 'historyLength', out, 'historyLength', path, drops);
  if (c.taskPushNotificationConfig !== undefined) {
    const pushPath = join(path, 'taskPushNotificationConfig');
    const { config, taskId } = configTo03(c.taskPushNotificationConfig, pushPath, drops);
    // The config of a message's task is for the task the send creates or continues: a task id in it is redundant.
    if (taskId !== '') drops.add(join(pushPath, 'taskId'));
    out.pushNotificationConfig = config;
  }
  return out;
}

function sendTo10(value: unknown, drops: Drops): JsonObject {
  const p = readMembers(value, SEND_03, '0.3', '', drops) ?? {};
  const out: JsonObject = { message: messageTo10(p.message, 'message', drops) };
  if (p.configuration !== undefined) out.configuration = sendConfigTo10(p.configuration, 'configuration', drops);
  copyStruct(p, 'metadata', out, 'metadata', '', drops);
  return out;
}

function sendTo03(value: unknown, drops: Drops): JsonObject {
  const p = readMembers(value, SEND_10, '1.0', '', drops) ?? {};
  dropTenant(p, drops);
  const out: JsonObject = { message: messageTo03(p.message, 'message', drops, 'user') };
  if (p.configuration !== undefined) out.configuration = sendConfigTo03(p.configuration, 'configuration', drops);
  copyStruct(p, 'metadata', out, 'metadata', '', drops);
  return out;
}

/** The params of `operation` written in `from`, as the params of the same operation in `to`. */
export function bridgeParams(operation: Operation, from: ProtocolGeneration, to: ProtocolGeneration, params: unknown): Bridged<JsonObject> {
  const drops = new Drops();
  if (from === to) return done(isRecord(params) ? params : {}, drops);
  const lacking = operation.jsonrpc[to] === undefined ? to : operation.jsonrpc[from] === undefined ? from : undefined;
  if (lacking !== undefined) return noCounterpart(Code.UnsupportedOperation, `${operation.name} does not exist in A2A ${lacking}`, drops);
  // Params are an object (JSON-RPC allows an array too, which A2A never uses); absent params are an empty object.
  if (!isRecord(params) && params !== undefined && params !== null) drops.add('params');
  const input = isRecord(params) ? params : {};
  return done(to === '1.0' ? paramsTo10(operation, input, drops) : paramsTo03(operation, input, drops), drops);
}

function paramsTo10(operation: Operation, params: unknown, drops: Drops): JsonObject {
  switch (operation.name) {
    case 'SendMessage':
    case 'SendStreamingMessage':
      return sendTo10(params, drops);
    case 'CreateTaskPushNotificationConfig':
      return taskConfigTo10(params, '', drops, true);
    case 'GetExtendedAgentCard':
      // 0.3's agent/getAuthenticatedExtendedCard takes no params; whatever came has no counterpart.
      if (isRecord(params) && Object.keys(params).length > 0) drops.add('*');
      return {};
    default:
      break;
  }
  const p = readMembers(params, TASK_PARAMS_03[operation.name] ?? [], '0.3', '', drops) ?? {};
  const id = requiredString(p, 'id', '', drops);
  switch (operation.name) {
    case 'GetTask': {
      const out: JsonObject = { id };
      copyInt32(p, 'historyLength', out, 'historyLength', '', drops);
      dropMetadata(p, drops);
      return out;
    }
    case 'CancelTask': {
      const out: JsonObject = { id };
      copyStruct(p, 'metadata', out, 'metadata', '', drops);
      return out;
    }
    case 'SubscribeToTask':
      dropMetadata(p, drops);
      return { id };
    case 'GetTaskPushNotificationConfig':
    case 'DeleteTaskPushNotificationConfig': {
      dropMetadata(p, drops);
      // 0.3 get without a config id means the config stored under the task's id (see taskConfigTo10).
      const configId = typeof p.pushNotificationConfigId === 'string' ? p.pushNotificationConfigId : id;
      if (p.pushNotificationConfigId !== undefined && typeof p.pushNotificationConfigId !== 'string') drops.add('pushNotificationConfigId');
      return { taskId: id, id: configId };
    }
    default: // ListTaskPushNotificationConfigs
      dropMetadata(p, drops);
      return { taskId: id };
  }
}

function paramsTo03(operation: Operation, params: unknown, drops: Drops): JsonObject {
  switch (operation.name) {
    case 'SendMessage':
    case 'SendStreamingMessage':
      return sendTo03(params, drops);
    case 'CreateTaskPushNotificationConfig':
      return taskConfigTo03(params, '', drops);
    case 'GetExtendedAgentCard': {
      const p = readMembers(params, ['tenant'], '1.0', '', drops) ?? {};
      dropTenant(p, drops);
      return {};
    }
    default:
      break;
  }
  const p = readMembers(params, TASK_PARAMS_10[operation.name] ?? [], '1.0', '', drops) ?? {};
  dropTenant(p, drops);
  switch (operation.name) {
    case 'GetTask': {
      const out: JsonObject = { id: requiredString(p, 'id', '', drops) };
      copyInt32(p, 'historyLength', out, 'historyLength', '', drops);
      return out;
    }
    case 'CancelTask': {
      const out: JsonObject = { id: requiredString(p, 'id', '', drops) };
      copyStruct(p, 'metadata', out, 'metadata', '', drops);
      return out;
    }
    case 'SubscribeToTask':
      return { id: requiredString(p, 'id', '', drops) };
    case 'GetTaskPushNotificationConfig':
    case 'DeleteTaskPushNotificationConfig': {
      const out: JsonObject = { id: requiredString(p, 'taskId', '', drops) };
      const configId = requiredString(p, 'id', '', drops);
      if (configId !== '' || operation.name === 'DeleteTaskPushNotificationConfig') out.pushNotificationConfigId = configId;
      return out;
    }
    default: {
      // ListTaskPushNotificationConfigs: a 0.3 list is one page; paging has no counterpart.
      if (p.pageSize !== undefined && p.pageSize !== 0 && p.pageSize !== '0') drops.add('pageSize');
      if (p.pageToken !== undefined && p.pageToken !== '') drops.add('pageToken');
      return { id: requiredString(p, 'taskId', '', drops) };
    }
  }
}
