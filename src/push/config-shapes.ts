/**
 * Reading and writing push notification configs in both generations, as
 * callers send them and remotes return them:
 * - 1.0 `TaskPushNotificationConfig`, flat: `{tenant, id, taskId, url, token, authentication: {scheme, credentials}}`;
 * - 0.3 `PushNotificationConfig` `{id, url, token, authentication: {schemes[], credentials}}`, nested in
 *   `{taskId, pushNotificationConfig}` for set/get/list.
 *
 * ProtoJSON parsers accept a field's proto name too (`task_id`), and 0.3
 * servers built on pydantic accept snake_case: a member written both ways
 * is refused (which one a remote reads is up to the remote), and either
 * spelling is read. What the gateway writes is camelCase. Pure.
 */
import type { ProtocolGeneration } from '../a2a/operations.js';
import type { CallerAuth } from './ticket.js';

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const snake = (camel: string): string => camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** A member read under either spelling; `twice` when both are present. */
export type Member = { readonly present: false } | { readonly present: true; readonly value: unknown } | { readonly twice: true; readonly present: true; readonly value?: undefined };

export function member(obj: JsonObject, camel: string): Member {
  const s = snake(camel);
  const hasCamel = Object.hasOwn(obj, camel);
  const hasSnake = s !== camel && Object.hasOwn(obj, s);
  if (hasCamel && hasSnake) return { twice: true, present: true };
  if (hasCamel) return { present: true, value: obj[camel] };
  if (hasSnake) return { present: true, value: obj[s] };
  return { present: false };
}

/** A member's value under either spelling; undefined when absent or given both ways. */
export function memberValue(obj: JsonObject, camel: string): unknown {
  const m = member(obj, camel);
  return 'twice' in m || !m.present ? undefined : m.value;
}

export class ShapeError extends Error {
  override readonly name = 'ShapeError';
}

/** A member that must be a string when present ('' counts as absent, as in ProtoJSON). */
export function optionalString(obj: JsonObject, camel: string, where: string): string | undefined {
  const m = member(obj, camel);
  if ('twice' in m) throw new ShapeError(`${where}.${camel} is given twice (camelCase and snake_case)`);
  if (!m.present || m.value === undefined || m.value === null) return undefined;
  if (typeof m.value !== 'string') throw new ShapeError(`${where}.${camel} must be a string`);
  return m.value === '' ? undefined : m.value;
}

/** The members of a push config the gateway reads and writes, in either generation. */
export interface ConfigFields {
  readonly url?: string;
  readonly id?: string;
  readonly token?: string;
  readonly auth?: CallerAuth;
  /** 1.0 only (0.3 keeps them on the wrapper). */
  readonly taskId?: string;
  readonly tenant?: string;
}

const HEADER_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;

/** Reads a config object. Throws ShapeError for a member of the wrong type or given twice. */
export function readConfig(value: unknown, generation: ProtocolGeneration, where: string): ConfigFields {
  if (!isObject(value)) throw new ShapeError(`${where} must be an object`);
  const url = optionalString(value, 'url', where);
  const id = optionalString(value, 'id', where);
  const token = optionalString(value, 'token', where);
  const fields: { -readonly [K in keyof ConfigFields]: ConfigFields[K] } = {};
  if (url !== undefined) fields.url = url;
  if (id !== undefined) fields.id = id;
  if (token !== undefined) fields.token = token;
  if (generation === '1.0') {
    const taskId = optionalString(value, 'taskId', where);
    const tenant = optionalString(value, 'tenant', where);
    if (taskId !== undefined) fields.taskId = taskId;
    if (tenant !== undefined) fields.tenant = tenant;
  }
  const auth = member(value, 'authentication');
  if ('twice' in auth) throw new ShapeError(`${where}.authentication is given twice`);
  if (auth.present && auth.value !== undefined && auth.value !== null) fields.auth = readAuth(auth.value, generation, `${where}.authentication`);
  return fields;
}

function readAuth(value: unknown, generation: ProtocolGeneration, where: string): CallerAuth {
  if (!isObject(value)) throw new ShapeError(`${where} must be an object`);
  const credentials = optionalString(value, 'credentials', where);
  let schemes: string[];
  if (generation === '1.0') {
    const scheme = optionalString(value, 'scheme', where);
    schemes = scheme === undefined ? [] : [scheme];
  } else {
    const m = member(value, 'schemes');
    if ('twice' in m) throw new ShapeError(`${where}.schemes is given twice`);
    const list = m.present ? m.value : [];
    if (!Array.isArray(list) || !list.every((s): s is string => typeof s === 'string')) throw new ShapeError(`${where}.schemes must be a list of strings`);
    schemes = list;
  }
  if (schemes.length > 8 || !schemes.every((s) => HEADER_TOKEN.test(s))) throw new ShapeError(`${where}: each scheme must be an HTTP authentication scheme name`);
  return credentials === undefined ? { schemes } : { schemes, credentials };
}

/** A config as `generation` writes it (1.0 with its task id and tenant; 0.3 without: they sit on the wrapper). */
export function writeConfig(fields: ConfigFields & { readonly url: string }, generation: ProtocolGeneration): JsonObject {
  const out: JsonObject = {};
  if (generation === '1.0') {
    if (fields.tenant !== undefined) out.tenant = fields.tenant;
    if (fields.id !== undefined) out.id = fields.id;
    if (fields.taskId !== undefined) out.taskId = fields.taskId;
  } else if (fields.id !== undefined) {
    out.id = fields.id;
  }
  out.url = fields.url;
  if (fields.token !== undefined) out.token = fields.token;
  if (fields.auth !== undefined) {
    const { schemes, credentials } = fields.auth;
    const auth: JsonObject = generation === '1.0' ? { scheme: schemes[0] ?? '' } : { schemes: [...schemes] };
    if (credentials !== undefined) auth.credentials = credentials;
    out.authentication = auth;
  }
  return out;
}
