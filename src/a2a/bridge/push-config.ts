/**
 * Push notification configs. 0.3 nests the config under its task
 * (`{taskId, pushNotificationConfig: {url, id, token, authentication: {schemes[], credentials}}}`);
 * 1.0 has one flat message (`{tenant, id, taskId, url, token, authentication: {scheme, credentials}}`).
 * 0.3 lists several auth schemes, 1.0 one: the first is kept, the rest recorded.
 */
import { copyNonEmptyString, copyString, Drops, join, readMembers, requiredString, stringList, type JsonObject } from './json.js';

const CONFIG_03 = ['url', 'id', 'token', 'authentication'] as const;
const TASK_CONFIG_03 = ['taskId', 'pushNotificationConfig'] as const;
const CONFIG_10 = ['tenant', 'id', 'taskId', 'url', 'token', 'authentication'] as const;
const AUTH_03 = ['schemes', 'credentials'] as const;
const AUTH_10 = ['scheme', 'credentials'] as const;

function authTo10(value: unknown, path: string, drops: Drops): JsonObject {
  const a = readMembers(value, AUTH_03, '0.3', path, drops) ?? (drops.add(path), {});
  const schemes = a.schemes === undefined ? [] : (stringList(a.schemes, join(path, 'schemes'), drops) ?? []);
  if (schemes.length > 1) drops.add(join(path, 'schemes[]'));
  const out: JsonObject = { scheme: schemes[0] ?? '' };
  copyString(a, 'credentials', out, 'credentials', path, drops);
  return out;
}

function authTo03(value: unknown, path: string, drops: Drops): JsonObject {
  const a = readMembers(value, AUTH_10, '1.0', path, drops) ?? (drops.add(path), {});
  const scheme = requiredString(a, 'scheme', path, drops);
  const out: JsonObject = { schemes: scheme === '' ? [] : [scheme] };
  copyNonEmptyString(a, 'credentials', out, path, drops);
  return out;
}

/**
 * A 0.3 PushNotificationConfig (with the task it belongs to, when known) as a 1.0 TaskPushNotificationConfig.
 * `defaultId`: the id to give a config that has none (see taskConfigTo10).
 */
export function configTo10(value: unknown, taskId: string | undefined, path: string, drops: Drops, defaultId?: string): JsonObject {
  const c = readMembers(value, CONFIG_03, '0.3', path, drops) ?? (drops.add(path), {});
  const out: JsonObject = {};
  if (typeof c.id === 'string') out.id = c.id;
  else if (c.id !== undefined) drops.add(join(path, 'id'));
  if (out.id === undefined && defaultId !== undefined) out.id = defaultId;
  if (taskId !== undefined) out.taskId = taskId;
  out.url = requiredString(c, 'url', path, drops);
  copyString(c, 'token', out, 'token', path, drops);
  if (c.authentication !== undefined) out.authentication = authTo10(c.authentication, join(path, 'authentication'), drops);
  return out;
}

/** A 1.0 TaskPushNotificationConfig as a 0.3 PushNotificationConfig and the task id it names ('' when none). */
export function configTo03(value: unknown, path: string, drops: Drops): { readonly config: JsonObject; readonly taskId: string } {
  const c = readMembers(value, CONFIG_10, '1.0', path, drops) ?? (drops.add(path), {});
  if (c.tenant !== undefined && c.tenant !== '') drops.add(join(path, 'tenant'));
  const config: JsonObject = { url: requiredString(c, 'url', path, drops) };
  copyNonEmptyString(c, 'id', config, path, drops);
  copyNonEmptyString(c, 'token', config, path, drops);
  if (c.authentication !== undefined) config.authentication = authTo03(c.authentication, join(path, 'authentication'), drops);
  return { config, taskId: requiredString(c, 'taskId', path, drops) };
}

/**
 * A 0.3 TaskPushNotificationConfig as the flat 1.0 one. `idFromTask`: a 0.3 config set without an id is
 * known by its task's id (0.3 servers store it under the task id, and 0.3 get/delete without a config id
 * mean that one), so the 1.0 remote is given that id explicitly.
 */
export function taskConfigTo10(value: unknown, path: string, drops: Drops, idFromTask: boolean): JsonObject {
  const t = readMembers(value, TASK_CONFIG_03, '0.3', path, drops) ?? (drops.add(path), {});
  const taskId = requiredString(t, 'taskId', path, drops);
  return configTo10(t.pushNotificationConfig, taskId, join(path, 'pushNotificationConfig'), drops, idFromTask ? taskId : undefined);
}

export function taskConfigTo03(value: unknown, path: string, drops: Drops): JsonObject {
  const { config, taskId } = configTo03(value, path, drops);
  return { taskId, pushNotificationConfig: config };
}
