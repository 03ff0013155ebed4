/**
 * Making card content safe to hand to an LLM: every string sanitized and
 * bounded, every list and map bounded, nesting bounded, URLs parsed and
 * re-serialized by the gateway. Pure functions.
 */
import { sanitizeText } from '../envelope/sanitize.js';

/**
 * Bounds for what the generic walk keeps. Cards in the wild have a handful of
 * skills and a few dozen members per object; these limits leave wide room
 * while keeping the re-serialized card small.
 */
export const CARD_BOUNDS = {
  /** Items kept from any array not bounded more tightly by the rewriter. */
  maxArrayItems: 100,
  /** Members kept from any object (securitySchemes, scopes, extension params, ...). */
  maxObjectMembers: 100,
  /** Nesting below this depth is dropped (extension params are free-form Structs). */
  maxDepth: 8,
  /** A member name longer than this, or one with invisible characters, is dropped. */
  maxKeyBytes: 128,
  /** URLs longer than this are treated as unusable. */
  maxUrlLength: 2048,
} as const;

export function cleanText(value: unknown, maxBytes: number): string | undefined {
  return typeof value === 'string' ? sanitizeText(value, maxBytes).text : undefined;
}

/** Strings of a list, cleaned, empty ones dropped, at most `maxItems`. */
export function cleanTextList(value: unknown, maxItems: number, maxBytes: number): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: string[] = [];
  for (const item of value) {
    if (out.length >= maxItems) break;
    const text = cleanText(item, maxBytes);
    if (text) out.push(text);
  }
  return out;
}

/** A member name that reads the same after sanitizing and is short enough; else undefined. */
function cleanKey(key: string): string | undefined {
  if (key === '__proto__' || Buffer.byteLength(key, 'utf8') > CARD_BOUNDS.maxKeyBytes) return undefined;
  return sanitizeText(key, CARD_BOUNDS.maxKeyBytes).text === key && key !== '' ? key : undefined;
}

/**
 * Deep copy with every string sanitized and bounded, arrays and objects
 * bounded, and anything nested deeper than `maxDepth` dropped. Numbers,
 * booleans and null pass; anything else (not possible from JSON) is dropped.
 */
export function sanitizeTree(value: unknown, maxTextBytes: number, depth = 0): unknown {
  if (typeof value === 'string') return sanitizeText(value, maxTextBytes).text;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  if (depth >= CARD_BOUNDS.maxDepth || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value.slice(0, CARD_BOUNDS.maxArrayItems)) {
      const clean = sanitizeTree(item, maxTextBytes, depth + 1);
      if (clean !== undefined) out.push(clean);
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  let kept = 0;
  for (const [key, item] of Object.entries(value)) {
    if (kept >= CARD_BOUNDS.maxObjectMembers) break;
    const name = cleanKey(key);
    if (name === undefined) continue;
    const clean = sanitizeTree(item, maxTextBytes, depth + 1);
    if (clean === undefined) continue;
    out[name] = clean;
    kept++;
  }
  return out;
}

/**
 * The gateway's own serialization of an http(s) URL, or undefined when the
 * value is not one (javascript:, data:, relative, embedded credentials, too long).
 */
export function httpUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > CARD_BOUNDS.maxUrlLength) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username !== '' || url.password !== '') return undefined;
  return url.href.length <= CARD_BOUNDS.maxUrlLength ? url.href : undefined;
}

/** True when `value` is an http(s) URL on the same origin (scheme, host, port) as `remote`. */
export function sameOrigin(value: unknown, remote: URL): boolean {
  const href = httpUrl(value);
  return href !== undefined && new URL(href).origin === remote.origin;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
