/**
 * The request message of an HTTP+JSON call: the body (or the query fields)
 * with the fields the path carries (tenant, id, taskId) merged in. The path
 * wins over a body that says otherwise, as the @a2a-js/sdk server decides.
 * The caller's exact body text is kept whenever the path adds nothing or
 * only adds members (spliced in front); only a body that contradicts its
 * path is re-serialized. Pure.
 */
import { snakeCase } from './query-params.js';

export interface MergedParams {
  readonly params: Record<string, unknown>;
  /** `params` as JSON text: the caller's body bytes where possible. */
  readonly json: string;
}

/**
 * `params` is the parsed body (or the typed query fields), `bodyText` the
 * body's decoded text when there was one (a JSON object, trimmed).
 */
export function mergePathFields(
  params: Readonly<Record<string, unknown>>,
  bodyText: string | undefined,
  pathParams: Readonly<Record<string, string>>,
  tenant: string | undefined,
): MergedParams {
  const fields: Record<string, string> = { ...(tenant === undefined ? {} : { tenant }), ...pathParams };
  const missing: string[] = [];
  let contradicts = false;
  for (const [name, value] of Object.entries(fields)) {
    const snake = snakeCase(name);
    const has = Object.hasOwn(params, name);
    const hasSnake = snake !== name && Object.hasOwn(params, snake);
    if (!has && !hasSnake) missing.push(name);
    else if ((has && params[name] !== value) || (hasSnake && params[snake] !== value)) contradicts = true;
  }

  if (bodyText !== undefined && !contradicts) {
    if (missing.length === 0) return { params: { ...params }, json: bodyText };
    const added = missing.map((name) => `${JSON.stringify(name)}:${JSON.stringify(fields[name])}`).join(',');
    const inner = bodyText.slice(1).trimStart();
    const json = inner.startsWith('}') ? `{${added}}` : `{${added},${bodyText.slice(1)}`;
    return { params: { ...Object.fromEntries(missing.map((name) => [name, fields[name]])), ...params }, json };
  }

  // The path's fields first, then the rest, dropping any other spelling of a path field.
  const merged: Record<string, unknown> = { ...fields };
  const taken = new Set(Object.keys(fields).flatMap((name) => [name, snakeCase(name)]));
  for (const [key, value] of Object.entries(params)) if (!taken.has(key)) merged[key] = value;
  return { params: merged, json: JSON.stringify(merged) };
}
