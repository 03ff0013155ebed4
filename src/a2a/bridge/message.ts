/**
 * Messages and artifacts: the same members in both generations except 0.3's
 * `kind: "message"` discriminator, the role literals (`user`/`agent` against
 * `ROLE_USER`/`ROLE_AGENT`) and the parts inside (parts.ts).
 */
import { ROLE_UNSPECIFIED_10, roleTo03, roleTo10 } from './enums.js';
import {
  copyNonEmptyString,
  copyString,
  copyStringList,
  copyStruct,
  Drops,
  join,
  mapList,
  readMembers,
  requiredString,
  type JsonObject,
} from './json.js';
import { partTo03, partTo10 } from './parts.js';

const MESSAGE_03 = ['kind', 'messageId', 'contextId', 'taskId', 'role', 'parts', 'metadata', 'extensions', 'referenceTaskIds'] as const;
const MESSAGE_10 = MESSAGE_03.filter((m) => m !== 'kind');
const ARTIFACT = ['artifactId', 'name', 'description', 'parts', 'metadata', 'extensions'] as const;

/** Whether a list element is worth translating: it must be an object carrying its identity (`idMember` a string). */
export function hasId(value: unknown, idMember: string): boolean {
  return value !== null && typeof value === 'object' && typeof (value as JsonObject)[idMember] === 'string';
}

/** A list of messages (task history): a message without a messageId is malformed and left out. */
export function messageListTo10(value: unknown, path: string, drops: Drops): JsonObject[] | undefined {
  return mapList(value, path, drops, (m, p) => (hasId(m, 'messageId') ? messageTo10(m, p, drops) : void drops.add(p)));
}

export function messageListTo03(value: unknown, path: string, drops: Drops): JsonObject[] | undefined {
  return mapList(value, path, drops, (m, p) => (hasId(m, 'messageId') ? messageTo03(m, p, drops, 'agent') : void drops.add(p)));
}

/** A 0.3 Message as a 1.0 Message. Members the proto requires are always written (their proto default when missing). */
export function messageTo10(value: unknown, path: string, drops: Drops): JsonObject {
  const m = readMembers(value, MESSAGE_03, '0.3', path, drops) ?? (drops.add(path), {});
  const out: JsonObject = { messageId: requiredString(m, 'messageId', path, drops) };
  copyString(m, 'contextId', out, 'contextId', path, drops);
  copyString(m, 'taskId', out, 'taskId', path, drops);
  const role = roleTo10(m.role);
  if (role === undefined && m.role !== undefined) drops.add(join(path, 'role'));
  out.role = role ?? ROLE_UNSPECIFIED_10;
  out.parts = mapList(m.parts ?? [], join(path, 'parts'), drops, (p, pp) => partTo10(p, pp, drops)) ?? [];
  copyStruct(m, 'metadata', out, 'metadata', path, drops);
  copyStringList(m, 'extensions', out, 'extensions', path, drops);
  copyStringList(m, 'referenceTaskIds', out, 'referenceTaskIds', path, drops);
  return out;
}

/**
 * A 1.0 Message as a 0.3 Message. 0.3 has no unspecified role: a message without one takes
 * `defaultRole` (`user` for the message a caller sends, `agent` elsewhere) and the role is recorded.
 * Empty optional ids are the proto default, i.e. absent, and are not written.
 */
export function messageTo03(value: unknown, path: string, drops: Drops, defaultRole: 'user' | 'agent'): JsonObject {
  const m = readMembers(value, MESSAGE_10, '1.0', path, drops) ?? (drops.add(path), {});
  const out: JsonObject = { kind: 'message', messageId: requiredString(m, 'messageId', path, drops) };
  copyNonEmptyString(m, 'contextId', out, path, drops);
  copyNonEmptyString(m, 'taskId', out, path, drops);
  const role = roleTo03(m.role);
  if (role === undefined) drops.add(join(path, 'role'));
  out.role = role ?? defaultRole;
  out.parts = mapList(m.parts ?? [], join(path, 'parts'), drops, (p, pp) => partTo03(p, pp, drops)) ?? [];
  copyStruct(m, 'metadata', out, 'metadata', path, drops);
  copyStringList(m, 'extensions', out, 'extensions', path, drops);
  copyStringList(m, 'referenceTaskIds', out, 'referenceTaskIds', path, drops);
  return out;
}

/** A list of artifacts: an artifact without an artifactId is malformed and left out. */
export function artifactListTo(generation: '0.3' | '1.0', value: unknown, path: string, drops: Drops): JsonObject[] | undefined {
  return mapList(value, path, drops, (a, p) => (hasId(a, 'artifactId') ? artifactTo(generation, a, p, drops) : void drops.add(p)));
}

/** An artifact of the other generation as one of `generation`: the same members, parts translated. */
export function artifactTo(generation: '0.3' | '1.0', value: unknown, path: string, drops: Drops): JsonObject {
  const from = generation === '1.0' ? '0.3' : '1.0';
  const a = readMembers(value, ARTIFACT, from, path, drops) ?? (drops.add(path), {});
  const out: JsonObject = { artifactId: requiredString(a, 'artifactId', path, drops) };
  if (generation === '1.0') {
    copyString(a, 'name', out, 'name', path, drops);
    copyString(a, 'description', out, 'description', path, drops);
  } else {
    copyNonEmptyString(a, 'name', out, path, drops);
    copyNonEmptyString(a, 'description', out, path, drops);
  }
  const translate = generation === '1.0' ? partTo10 : partTo03;
  out.parts = mapList(a.parts ?? [], join(path, 'parts'), drops, (p, pp) => translate(p, pp, drops)) ?? [];
  copyStruct(a, 'metadata', out, 'metadata', path, drops);
  copyStringList(a, 'extensions', out, 'extensions', path, drops);
  return out;
}
