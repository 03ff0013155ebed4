/**
 * The small vocabulary every translator of the version bridge shares: reading
 * members of already-parsed JSON without trusting its shape, and recording
 * what could not be carried over as bounded labels.
 *
 * A label is a member path built only from names the translators know, `[]`
 * for "an element of that list" and `*` for a member name the translator does
 * not know (member names are caller or remote bytes; they never become a label,
 * so the labels are a finite set and safe as a metrics label value).
 */
import type { ProtocolGeneration } from '../operations.js';

export type JsonObject = Record<string, unknown>;

/** What a translator made, and the labels of what it had to leave out. */
export type Bridged<T = unknown> =
  | { readonly ok: true; readonly value: T; readonly dropped: readonly string[] }
  /** The input has no counterpart at all in the target generation (`code` is the JSON-RPC code to answer with). */
  | { readonly ok: false; readonly code: number; readonly problem: string; readonly dropped: readonly string[] };

/** More distinct labels than this from one value are not recorded (the set is finite anyway; this bounds one call). */
export const MAX_DROP_LABELS = 32;

/** Collects drop labels for one translation, each once. */
export class Drops {
  private readonly labels = new Set<string>();

  add(label: string): void {
    if (this.labels.size < MAX_DROP_LABELS) this.labels.add(label);
  }

  list(): string[] {
    return [...this.labels];
  }
}

export function isRecord(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A path below `path`: `join('', 'message')` is `message`, `join('message', 'parts[]')` is `message.parts[]`. */
export function join(path: string, member: string): string {
  return path === '' ? member : `${path}.${member}`;
}

const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const NO_ALIASES: ReadonlyMap<string, string> = new Map();
/** Proto field name → JSON name, per list of known members (the lists are module constants, so this is built once each). */
const aliasCache = new WeakMap<readonly string[], ReadonlyMap<string, string>>();
function aliasesOf(known: readonly string[]): ReadonlyMap<string, string> {
  let aliases = aliasCache.get(known);
  if (!aliases) {
    aliases = new Map(known.map((name) => [snakeCase(name), name] as const).filter(([alias, name]) => alias !== name));
    aliasCache.set(known, aliases);
  }
  return aliases;
}

/** Keys that would change an object's prototype or look like it when copied: never copied, always dropped. */
export function unsafeKey(key: string): boolean {
  return key === '__proto__' || key === 'constructor' || key === 'prototype';
}

/**
 * The members of `value` the translator knows, by their JSON name. Every other member is recorded as
 * `<path>.*`. 1.0 input may spell a member by its proto field name (ProtoJSON parsers accept `message_id`
 * as well as `messageId`): both are read, the JSON name wins. `undefined` when `value` is not an object.
 */
export function readMembers(
  value: unknown,
  known: readonly string[],
  generation: ProtocolGeneration,
  path: string,
  drops: Drops,
): JsonObject | undefined {
  if (!isRecord(value)) return undefined;
  const out: JsonObject = {};
  for (const name of known) if (Object.hasOwn(value, name)) out[name] = value[name];
  const aliases = generation === '1.0' ? aliasesOf(known) : NO_ALIASES;
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const canonical = aliases.get(key);
    if (canonical !== undefined) {
      if (!Object.hasOwn(out, canonical)) out[canonical] = value[key];
      continue;
    }
    drops.add(join(path, '*'));
  }
  return out;
}

/** Copies an optional string member; a present member of another type is dropped. */
export function copyString(from: JsonObject, name: string, to: JsonObject, toName: string, path: string, drops: Drops): void {
  const v = from[name];
  if (v === undefined) return;
  if (typeof v === 'string') to[toName] = v;
  else drops.add(join(path, name));
}

/** A 1.0 optional string whose empty value means "not set" (ProtoJSON omits defaults): copied only when not empty. */
export function copyNonEmptyString(from: JsonObject, name: string, to: JsonObject, path: string, drops: Drops): void {
  if (from[name] === '') return;
  copyString(from, name, to, name, path, drops);
}

/** Copies an optional boolean member; a present member of another type is dropped. */
export function copyBoolean(from: JsonObject, name: string, to: JsonObject, toName: string, path: string, drops: Drops): void {
  const v = from[name];
  if (v === undefined) return;
  if (typeof v === 'boolean') to[toName] = v;
  else drops.add(join(path, name));
}

/** A Struct member (metadata, params, header): any JSON object, copied by reference (it has the same shape in both generations). */
export function copyStruct(from: JsonObject, name: string, to: JsonObject, toName: string, path: string, drops: Drops): void {
  const v = from[name];
  if (v === undefined) return;
  if (isRecord(v)) to[toName] = v;
  else drops.add(join(path, name));
}

/** A list of strings: other elements are dropped; a member that is not a list is dropped. */
export function copyStringList(from: JsonObject, name: string, to: JsonObject, toName: string, path: string, drops: Drops): void {
  const v = from[name];
  if (v === undefined) return;
  const list = stringList(v, join(path, name), drops);
  if (list !== undefined) to[toName] = list;
}

export function stringList(value: unknown, path: string, drops: Drops): string[] | undefined {
  if (!Array.isArray(value)) {
    drops.add(path);
    return undefined;
  }
  const out: string[] = [];
  for (const item of value) {
    if (typeof item === 'string') out.push(item);
    else drops.add(`${path}[]`);
  }
  return out;
}

/** A required string: the value, or '' (the proto default) with the member recorded when it was present but not a string. */
export function requiredString(from: JsonObject, name: string, path: string, drops: Drops): string {
  const v = from[name];
  if (typeof v === 'string') return v;
  if (v !== undefined) drops.add(join(path, name));
  return '';
}

/**
 * Maps a list member element by element; an element `map` returns `undefined` for is left out (the mapper
 * records why). A member that is not a list is dropped.
 */
export function mapList<T>(value: unknown, path: string, drops: Drops, map: (item: unknown, itemPath: string) => T | undefined): T[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    drops.add(path);
    return undefined;
  }
  const itemPath = `${path}[]`;
  const out: T[] = [];
  for (const item of value) {
    const mapped = map(item, itemPath);
    if (mapped !== undefined) out.push(mapped);
  }
  return out;
}

/**
 * An int32 as ProtoJSON writes it (a number, or a decimal string); 0.3 writes plain JSON integers.
 * Anything else, or a value outside int32, is `undefined`.
 */
export function int32(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d{1,10}$/.test(value) ? Number(value) : Number.NaN;
  return Number.isInteger(n) && n >= -2147483648 && n <= 2147483647 ? n : undefined;
}

/** Copies an optional integer member (int32 range); anything else is dropped. */
export function copyInt32(from: JsonObject, name: string, to: JsonObject, toName: string, path: string, drops: Drops): void {
  const v = from[name];
  if (v === undefined) return;
  const n = int32(v);
  if (n !== undefined) to[toName] = n;
  else drops.add(join(path, name));
}

/** A map member (string keys, values mapped one by one); unsafe keys and values `map` refuses are dropped. */
export function mapObject<T>(value: unknown, path: string, drops: Drops, map: (item: unknown, itemPath: string) => T | undefined): Record<string, T> | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value)) {
    drops.add(path);
    return undefined;
  }
  const itemPath = `${path}.*`;
  const out: Record<string, T> = {};
  for (const [key, item] of Object.entries(value)) {
    if (unsafeKey(key)) {
      drops.add(itemPath);
      continue;
    }
    const mapped = map(item, itemPath);
    if (mapped !== undefined) out[key] = mapped;
  }
  return out;
}

export function done<T>(value: T, drops: Drops): Bridged<T> {
  return { ok: true, value, dropped: drops.list() };
}

export function noCounterpart(code: number, problem: string, drops: Drops): Bridged<never> {
  return { ok: false, code, problem, dropped: drops.list() };
}
