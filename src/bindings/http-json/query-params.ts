/**
 * Request fields that travel as query parameters (spec 1.0.1 §11.5), both
 * ways: a caller's query string → typed field values, and a call's params →
 * the query string for a remote. Names are camelCase; strings pass as they
 * are, int32 as decimal strings, booleans as `true`/`false`, enums by name
 * (ProtoJSON's number form is accepted and read as the name), timestamps as
 * RFC 3339 in UTC (`Z`, §5.6.1). An empty value is the proto3 default, i.e.
 * absent. No GET/DELETE request of a2a.proto has a repeated or nested field,
 * so §11.5's rules for those have nothing to apply to. Pure.
 */
import type { RestRoute } from '../../a2a/operations.js';
import { isVersionQueryName } from './service-params.js';

export type QueryKind = RestRoute['query'][string];
export type QueryValue = string | number | boolean;

export const MAX_QUERY_CHARS = 8 * 1024;
export const MAX_QUERY_PARAMS = 32;

/** The enums that travel in a query, by field name, indexed by their proto number. */
const ENUM_NAMES: Readonly<Record<string, readonly string[]>> = {
  status: [
    'TASK_STATE_UNSPECIFIED',
    'TASK_STATE_SUBMITTED',
    'TASK_STATE_WORKING',
    'TASK_STATE_COMPLETED',
    'TASK_STATE_FAILED',
    'TASK_STATE_CANCELED',
    'TASK_STATE_INPUT_REQUIRED',
    'TASK_STATE_REJECTED',
    'TASK_STATE_AUTH_REQUIRED',
  ],
};

const INT32 = /^-?(?:0|[1-9]\d{0,9})$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?Z$/;
const CONTROL = /\p{Cc}/u;

/** A query string split into decoded name/value pairs, in order. */
export type SplitQuery =
  | { readonly ok: true; readonly pairs: readonly (readonly [string, string])[] }
  | { readonly ok: false; readonly detail: string };

/** `raw` is the query string without `?`; `+` is a space, as in forms. */
export function splitQuery(raw: string): SplitQuery {
  if (raw.length > MAX_QUERY_CHARS) return { ok: false, detail: `query string longer than ${MAX_QUERY_CHARS} characters` };
  const pieces = raw === '' ? [] : raw.split('&').filter((p) => p !== '');
  if (pieces.length > MAX_QUERY_PARAMS) return { ok: false, detail: `more than ${MAX_QUERY_PARAMS} query parameters` };
  const pairs: (readonly [string, string])[] = [];
  for (const piece of pieces) {
    const eq = piece.indexOf('=');
    const name = formDecode(eq === -1 ? piece : piece.slice(0, eq));
    const value = formDecode(eq === -1 ? '' : piece.slice(eq + 1));
    if (name === undefined || value === undefined) return { ok: false, detail: 'query parameter that is not valid percent-encoded UTF-8' };
    pairs.push([name, value]);
  }
  return { ok: true, pairs };
}

/** The values of every `A2A-Version` parameter (§3.6.1), for service-params.ts. */
export function queryVersions(pairs: SplitQuery & { ok: true }): string[] {
  return pairs.pairs.filter(([name]) => isVersionQueryName(name)).map(([, value]) => value);
}

export type QueryFields = { readonly ok: true; readonly values: Readonly<Record<string, QueryValue>> } | { readonly ok: false; readonly detail: string };

/**
 * The request fields `kinds` lists, typed. Unknown parameters are ignored, as
 * the spec asks of unknown fields; a known one given twice is refused.
 * `tenant` is read as a string field too (a field not bound by the path
 * travels in the query, per google.api.http).
 */
export function readQueryFields(pairs: readonly (readonly [string, string])[], kinds: RestRoute['query']): QueryFields {
  const values: Record<string, QueryValue> = {};
  const seen = new Set<string>();
  for (const [name, value] of pairs) {
    const kind = name === 'tenant' ? 'string' : Object.hasOwn(kinds, name) ? kinds[name] : undefined;
    if (kind === undefined) continue;
    if (seen.has(name)) return { ok: false, detail: `query parameter ${name} given twice` };
    seen.add(name);
    if (value === '') continue;
    if (CONTROL.test(value)) return { ok: false, detail: `query parameter ${name} has a control character` };
    const typed = readValue(name, kind, value);
    if (typed === undefined) return { ok: false, detail: `query parameter ${name} is not ${describeKind(kind)}` };
    values[name] = typed;
  }
  return { ok: true, values };
}

function formDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

function readValue(name: string, kind: QueryKind, value: string): QueryValue | undefined {
  switch (kind) {
    case 'string':
      return value;
    case 'int32':
      return readInt32(value);
    case 'bool':
      return value === 'true' ? true : value === 'false' ? false : undefined;
    case 'enum':
      return readEnum(name, value);
    case 'timestamp':
      return isTimestamp(value) ? value : undefined;
  }
}

function readInt32(value: string): number | undefined {
  if (!INT32.test(value)) return undefined;
  const n = Number(value);
  return n >= -2147483648 && n <= 2147483647 ? n : undefined;
}

function readEnum(name: string, value: string | number): string | undefined {
  const names = ENUM_NAMES[name] ?? [];
  if (typeof value === 'number') return Number.isInteger(value) ? names[value] : undefined;
  if (names.includes(value)) return value;
  return /^\d{1,3}$/.test(value) ? names[Number(value)] : undefined;
}

/** RFC 3339 in UTC, and a real instant (no February 30th). */
export function isTimestamp(value: string): boolean {
  const m = TIMESTAMP.exec(value);
  if (!m) return false;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const date = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  return (
    date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d &&
    date.getUTCHours() === h && date.getUTCMinutes() === mi && date.getUTCSeconds() === s
  );
}

function describeKind(kind: QueryKind): string {
  switch (kind) {
    case 'string':
      return 'a string';
    case 'int32':
      return 'a 32-bit integer';
    case 'bool':
      return 'true or false';
    case 'enum':
      return 'one of the enum names';
    case 'timestamp':
      return 'an RFC 3339 UTC timestamp';
  }
}

export type EncodedQuery = { readonly ok: true; readonly query: string } | { readonly ok: false; readonly detail: string };

/**
 * The query string (without `?`, '' for none) carrying the fields of
 * `params` that `kinds` lists, in the table's order. A field may be spelled
 * camelCase or snake_case in params (ProtoJSON reads both); a value of the
 * wrong type is refused, proto3 defaults ('' strings) are left out.
 */
export function encodeQuery(params: Readonly<Record<string, unknown>>, kinds: RestRoute['query']): EncodedQuery {
  const parts: string[] = [];
  for (const [name, kind] of Object.entries(kinds)) {
    const value = fieldOf(params, name);
    if (value === undefined || value === null || value === '') continue;
    const text = writeValue(name, kind, value);
    if (text === undefined) return { ok: false, detail: `${name} is not ${describeKind(kind)}` };
    parts.push(`${name}=${encodeURIComponent(text)}`);
  }
  return { ok: true, query: parts.join('&') };
}

/** A request field by its JSON name or its proto (snake_case) name. */
export function fieldOf(params: Readonly<Record<string, unknown>>, camel: string): unknown {
  if (Object.hasOwn(params, camel)) return params[camel];
  const snake = snakeCase(camel);
  return snake !== camel && Object.hasOwn(params, snake) ? params[snake] : undefined;
}

// Field names come from the operation table and the schema: a small fixed set, converted once each, not per request.
const snakeNames = new Map<string, string>();

export function snakeCase(camel: string): string {
  let snake = snakeNames.get(camel);
  if (snake === undefined) {
    snake = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    if (snakeNames.size < 1024) snakeNames.set(camel, snake);
  }
  return snake;
}

function writeValue(name: string, kind: QueryKind, value: unknown): string | undefined {
  switch (kind) {
    case 'string':
      // encodeURIComponent throws on a lone surrogate (JSON.parse makes them from "\ud800").
      return typeof value === 'string' && value.isWellFormed() && !CONTROL.test(value) ? value : undefined;
    case 'int32':
      if (typeof value === 'number') return Number.isInteger(value) && value >= -2147483648 && value <= 2147483647 ? String(value) : undefined;
      return typeof value === 'string' && readInt32(value) !== undefined ? String(Number(value)) : undefined;
    case 'bool':
      return typeof value === 'boolean' ? String(value) : undefined;
    case 'enum':
      return typeof value === 'string' || typeof value === 'number' ? readEnum(name, value) : undefined;
    case 'timestamp':
      return typeof value === 'string' && isTimestamp(value) ? value : undefined;
  }
}
