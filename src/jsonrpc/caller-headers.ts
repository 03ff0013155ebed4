/**
 * What the gateway reads from a caller's request headers before its body:
 * whether the body claims to be JSON, and which A2A generation the caller
 * speaks. Pure.
 */
import { methodInfo } from '../a2a/methods.js';
import type { CallerGeneration } from '../envelope/codes.js';
import { mediaTypeOf } from '../http/media-type.js';

/**
 * JSON-RPC requests are `application/json` (A2A 0.3 §3.2.1 and 1.0 §9.1: MUST),
 * parameters such as `charset` aside. Like the @a2a-js/sdk server, a request
 * without a Content-Type is let through (the body still has to parse); any
 * other media type is refused with -32005 ContentTypeNotSupported.
 */
export function isJsonContentType(header: string | string[] | undefined): boolean {
  if (header === undefined) return true;
  const value = Array.isArray(header) ? header.join(',') : header;
  return mediaTypeOf(value) === 'application/json';
}

const VERSION = /^\s*(\d{1,3})\.(\d{1,3})\s*$/;

/**
 * The caller's A2A generation: its method's when the method is A2A's (the
 * surest sign: each generation has its own method names), else its
 * `A2A-Version` header, where an absent header means 0.3 (A2A 1.0 §3.6.1).
 */
export function callerGeneration(method: string | undefined, a2aVersion: string | string[] | undefined): CallerGeneration {
  const info = method === undefined ? undefined : methodInfo(method);
  if (info) return info.generation;
  const value = Array.isArray(a2aVersion) ? a2aVersion[0] : a2aVersion;
  const match = value === undefined ? null : VERSION.exec(value);
  return match && Number(match[1]) >= 1 ? '1.0' : '0.3';
}
