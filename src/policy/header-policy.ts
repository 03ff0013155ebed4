/**
 * Which headers cross the gateway, as pure functions. Requests: a short list
 * of A2A/tracing headers plus the remote's configured allowlist; never
 * hop-by-hop headers or host. Responses: only the A2A headers, each
 * validated as what it is, because no raw remote header may reach the
 * caller: A2A-Version must be `Major.Minor` (A2A 1.0 §3.6, §14.2.1) and
 * A2A-Extensions (and its 0.3 spelling X-A2A-Extensions) a bounded list of
 * absolute URIs. Anything else is dropped, never repaired.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { HOP_BY_HOP } from '../http/hop-by-hop.js';

/**
 * Never forwarded, whatever the allowlist says: hop-by-hop, the caller's host
 * (the upstream client sets the remote's), and content-length (the gateway
 * sends its own body).
 */
export const NEVER_FORWARDED: ReadonlySet<string> = new Set([...HOP_BY_HOP, 'host', 'content-length']);

/** Request headers every remote gets when the caller sent them. */
export const ALWAYS_FORWARDED: readonly string[] = Object.freeze([
  'a2a-version',
  'a2a-extensions',
  // The 0.3 spelling (the JS and Python SDKs' 0.3 layers send and answer with it).
  'x-a2a-extensions',
  'traceparent',
  'tracestate',
  'x-request-id',
  'accept-language',
]);

export const MAX_FORWARDED_VALUE_LENGTH = 8 * 1024;
/** Longest A2A response header value kept, whole field (repeated fields joined). */
export const MAX_RESPONSE_VALUE_LENGTH = 4096;
/** Most extension URIs an A2A-Extensions response header may list. */
export const MAX_EXTENSIONS = 16;
/** Longest single extension URI. */
export const MAX_EXTENSION_URI_LENGTH = 512;

/** `Major.Minor`, each at most three digits: what A2A-Version may hold (also the card cache's version key). */
export const A2A_VERSION_PATTERN = /^\d{1,3}\.\d{1,3}$/;

const HEADER_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// What undici accepts in a value (HTAB, visible ASCII, obs-text); anything else
// (CR, LF, NUL, other controls) would make the upstream request throw or split.
const INVALID_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;
const NON_PRINTABLE_ASCII = /[^\x20-\x7e]/;
// scheme ":" then URI characters except the list separator and whitespace.
const URI_ISH = /^[A-Za-z][A-Za-z0-9+.-]*:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+;=%]+$/;

export function isHeaderToken(name: string): boolean {
  return HEADER_TOKEN.test(name);
}

/** True when a name may appear in a remote's `forwardHeaders` allowlist (config validation). */
export function isForwardableHeaderName(name: string): boolean {
  const lower = name.toLowerCase();
  return isHeaderToken(lower) && !NEVER_FORWARDED.has(lower);
}

/**
 * Whether the `connection` header declares `name` (lower case) hop-by-hop for this message: a comma-separated list
 * of names, compared without case, each trimmed of whitespace as String#trim trims it. Read in place: most calls
 * carry `Connection: keep-alive` and ask this once or twice, so no list or Set of names is built for them.
 */
export function connectionLists(connection: string | string[] | undefined, name: string): boolean {
  if (connection === undefined) return false;
  if (typeof connection !== 'string') return connection.some((value) => connectionLists(value, name));
  const n = connection.length;
  for (let start = 0; start <= n; ) {
    let end = connection.indexOf(',', start);
    if (end === -1) end = n;
    let from = start;
    let to = end;
    while (from < to && isTrimmedSpace(connection.charCodeAt(from))) from++;
    while (to > from && isTrimmedSpace(connection.charCodeAt(to - 1))) to--;
    if (to - from === name.length && equalsLowerCase(connection, from, name)) return true;
    start = end + 1;
  }
  return false;
}

/** What String#trim removes (ECMAScript WhiteSpace and LineTerminator). */
function isTrimmedSpace(code: number): boolean {
  if (code <= 0xa0) return code === 0x20 || (code >= 0x09 && code <= 0x0d) || code === 0xa0;
  return code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff;
}

/**
 * Whether `text` from `at`, lower-cased, is `lower` (a lower-case ASCII header name), as `toLowerCase()` would
 * compare them: ASCII capitals and the Kelvin sign (U+212A, which lower-cases to "k") are the only characters that
 * lower-case into ASCII one for one (U+0130 becomes two characters, one of them not ASCII).
 */
function equalsLowerCase(text: string, at: number, lower: string): boolean {
  for (let i = 0; i < lower.length; i++) {
    let code = text.charCodeAt(at + i);
    if (code >= 0x41 && code <= 0x5a) code += 0x20;
    else if (code === 0x212a) code = 0x6b;
    if (code !== lower.charCodeAt(i)) return false;
  }
  return true;
}

export interface UpstreamHeaderOptions {
  /** Lowercased allowlist from config; may include authorization or cookie. */
  readonly forwardHeaders: readonly string[];
}

// One allowlist per remote's forwardHeaders array (config objects are immutable), built once, never-forwarded names
// left out (so a call checks one set per header).
const allowedSets = new WeakMap<readonly string[], ReadonlySet<string>>();

function allowedSetFor(forwardHeaders: readonly string[]): ReadonlySet<string> {
  let allowed = allowedSets.get(forwardHeaders);
  if (!allowed) {
    const set = new Set(ALWAYS_FORWARDED);
    for (const name of forwardHeaders) set.add(name.trim().toLowerCase());
    for (const name of NEVER_FORWARDED) set.delete(name);
    allowedSets.set(forwardHeaders, set);
    allowed = set;
  }
  return allowed;
}

/** The caller headers to send upstream: see the module comment for the rules. */
export function buildUpstreamHeaders(
  callerHeaders: IncomingHttpHeaders,
  opts: UpstreamHeaderOptions,
): Record<string, string> {
  const allowed = allowedSetFor(opts.forwardHeaders);
  const out: Record<string, string> = {};
  // Own names only (never an inherited one), without Object.entries' array per header.
  for (const rawName of Object.keys(callerHeaders)) {
    const rawValue = callerHeaders[rawName];
    if (rawValue === undefined) continue;
    const name = rawName.toLowerCase();
    if (!allowed.has(name)) continue;
    if (connectionLists(callerHeaders.connection, name)) continue;
    const value = joinValues(rawValue, name === 'cookie' ? '; ' : ', ');
    if (value.length > MAX_FORWARDED_VALUE_LENGTH || INVALID_VALUE_CHAR.test(value)) continue;
    out[name] = value;
  }
  return out;
}

/** The remote's response headers a caller may see: only validated A2A headers. */
export function filterUpstreamResponseHeaders(
  upstreamHeaders: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rawName of Object.keys(upstreamHeaders)) {
    const rawValue = upstreamHeaders[rawName];
    if (rawValue === undefined) continue;
    const name = rawName.toLowerCase();
    if (name === 'a2a-version') {
      const version = cleanVersion(rawValue);
      if (version !== undefined) out[name] = version;
    } else if (name === 'a2a-extensions' || name === 'x-a2a-extensions') {
      const extensions = cleanExtensions(rawValue);
      if (extensions !== undefined) out[name] = extensions;
    }
  }
  return out;
}

/** True for a plain `Major.Minor` version such as "1.0" or "0.3". */
export function isA2aVersion(value: string): boolean {
  return A2A_VERSION_PATTERN.test(value);
}

/** `Major.Minor` such as "1.0"; a repeated header is ambiguous and dropped. */
function cleanVersion(raw: string | string[]): string | undefined {
  if (Array.isArray(raw) && raw.length !== 1) return undefined;
  const value = boundedPrintable(joinValues(raw, ','));
  return value !== undefined && isA2aVersion(value) ? value : undefined;
}

/**
 * A comma-separated list of at most MAX_EXTENSIONS absolute URIs, each at most
 * MAX_EXTENSION_URI_LENGTH long; one bad item drops the header, empty items are skipped.
 */
function cleanExtensions(raw: string | string[]): string | undefined {
  const value = boundedPrintable(joinValues(raw, ','));
  if (value === undefined) return undefined;
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length === 0 || items.length > MAX_EXTENSIONS || !items.every(isExtensionUri)) return undefined;
  return items.join(', ');
}

/** An absolute URI (scheme first) of URI characters only, that a URL parser also accepts. */
function isExtensionUri(item: string): boolean {
  return item.length <= MAX_EXTENSION_URI_LENGTH && URI_ISH.test(item) && URL.canParse(item);
}

function boundedPrintable(value: string): string | undefined {
  if (value.length > MAX_RESPONSE_VALUE_LENGTH || NON_PRINTABLE_ASCII.test(value)) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

function joinValues(value: string | string[], separator: string): string {
  return Array.isArray(value) ? value.join(separator) : value;
}
