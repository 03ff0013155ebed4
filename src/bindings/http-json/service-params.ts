/**
 * The A2A service parameters of an HTTP+JSON request (spec §3.2.6, §11.2):
 * `A2A-Version` from its header or from the `A2A-Version` query parameter
 * (§3.6.1), validated as one Major.Minor; `A2A-Extensions` (or the 0.3
 * `X-A2A-Extensions`) validated as a bounded list of URIs. Pure.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ServiceParams } from '../../core/call.js';

export const MAX_EXTENSIONS_CHARS = 8 * 1024;
export const MAX_EXTENSIONS = 32;

// Major.Minor, no leading zeros, at most three digits each (spec §3.6: patch versions are not negotiated).
const MAJOR_MINOR = /^(?:0|[1-9]\d{0,2})\.(?:0|[1-9]\d{0,2})$/;
// scheme ":" then URI characters except the list separator and whitespace (as for the response header).
const URI_ISH = /^[A-Za-z][A-Za-z0-9+.-]*:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+;=%]+$/;

export type ServiceParamsResult =
  | { readonly ok: true; readonly service: ServiceParams }
  | { readonly ok: false; readonly reason: 'INVALID_VERSION' | 'INVALID_EXTENSIONS'; readonly detail: string };

/** True for a query parameter name that carries the version (§3.6.1 spells it `A2A-Version`). */
export function isVersionQueryName(name: string): boolean {
  return name.length === 11 && name.toLowerCase() === 'a2a-version';
}

/**
 * `queryVersions` are the values of every `A2A-Version` query parameter.
 * Header and query may both be given only with the same value: two different
 * versions in one request would let the gateway and the remote read different ones.
 */
export function serviceParamsOf(
  headers: IncomingHttpHeaders,
  queryVersions: readonly string[],
  forwarded: Readonly<Record<string, string>>,
): ServiceParamsResult {
  const headerVersion = headers['a2a-version'];
  // The usual request: one header, no query parameter (no arrays built for it).
  const versions =
    typeof headerVersion === 'string' && queryVersions.length === 0
      ? [headerVersion.trim()]
      : [...new Set([...(headerVersion === undefined ? [] : Array.isArray(headerVersion) ? headerVersion : [headerVersion]), ...queryVersions].map((v) => v.trim()))];
  if (versions.length > 1) return { ok: false, reason: 'INVALID_VERSION', detail: 'more than one version given' };
  const version = versions[0];
  if (version !== undefined && version !== '' && version !== '1.0' && version !== '0.3' && !MAJOR_MINOR.test(version)) {
    return { ok: false, reason: 'INVALID_VERSION', detail: 'not a Major.Minor version' };
  }

  const raw = headers['a2a-extensions'] ?? headers['x-a2a-extensions'];
  let extensions: string | undefined;
  if (raw !== undefined) {
    const joined = Array.isArray(raw) ? raw.join(',') : raw;
    if (joined.length > MAX_EXTENSIONS_CHARS) return { ok: false, reason: 'INVALID_EXTENSIONS', detail: `longer than ${MAX_EXTENSIONS_CHARS} characters` };
    const items = joined.split(',').map((item) => item.trim()).filter((item) => item !== '');
    if (items.length > MAX_EXTENSIONS) return { ok: false, reason: 'INVALID_EXTENSIONS', detail: `more than ${MAX_EXTENSIONS} extensions` };
    if (!items.every((item) => URI_ISH.test(item))) return { ok: false, reason: 'INVALID_EXTENSIONS', detail: 'an item is not a URI' };
    if (items.length > 0) extensions = items.join(', ');
  }

  // Built member by member: an object literal that starts with a spread of a non-empty object and has members after
  // it makes a new hidden class for every object in V8 (test/unit/stable-shapes.test.ts).
  const service: { a2aVersion?: string; extensions?: string; forwarded: Readonly<Record<string, string>> } = { forwarded };
  if (version !== undefined && version !== '') service.a2aVersion = version;
  if (extensions !== undefined) service.extensions = extensions;
  return { ok: true, service };
}
