/**
 * The path segments of an HTTP+JSON request, decoded safely, and encoded for
 * the remote. A2A ids travel percent-encoded (`/tasks/a%2Fb`), so unlike the
 * JSON-RPC path (src/routes/remote-path.ts, which refuses any encoding) a
 * segment may be encoded, but what it decodes to may not climb or smuggle:
 * no `.` or `..`, no `/` or `\` (an encoded slash would be a second segment
 * to the next parser), no `%` (a second decoding), no control characters,
 * valid UTF-8, bounded length. Pure.
 */

/** The raw path after the remote's base, query excluded. */
export const MAX_PATH_CHARS = 4096;
/** One segment after decoding (an id, a tenant), in UTF-8 bytes. */
export const MAX_SEGMENT_BYTES = 1024;
export const MAX_SEGMENTS = 16;

// RFC 3986 pchar: unreserved, sub-delims, ':' and '@', or a percent-encoded octet.
const RAW_SEGMENT = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})+$/;
const FORBIDDEN_DECODED = /[/\\%\p{Cc}]/u;

export type SplitPath = { readonly ok: true; readonly segments: readonly string[] } | { readonly ok: false; readonly problem: string };

/** Splits a raw path (`/a/b`) into raw segments; one trailing slash is tolerated, empty segments are not. */
export function splitRawPath(rawPath: string): SplitPath {
  if (rawPath.length > MAX_PATH_CHARS) return { ok: false, problem: `path longer than ${MAX_PATH_CHARS} characters` };
  if (rawPath === '' || rawPath === '/') return { ok: true, segments: [] };
  if (rawPath.charCodeAt(0) !== 0x2f) return { ok: false, problem: 'path does not start with "/"' };
  const end = rawPath.endsWith('/') ? rawPath.length - 1 : rawPath.length;
  // Cut at each slash by hand: String#split with a string separator runs in V8's runtime (two runtime calls per call
  // under perf), and a path has a segment or two.
  const segments: string[] = [];
  for (let start = 1; segments.length <= MAX_SEGMENTS; ) {
    const slash = rawPath.indexOf('/', start);
    if (slash === -1 || slash >= end) {
      segments.push(rawPath.slice(start, end));
      break;
    }
    segments.push(rawPath.slice(start, slash));
    start = slash + 1;
  }
  if (segments.length > MAX_SEGMENTS) return { ok: false, problem: `more than ${MAX_SEGMENTS} path segments` };
  for (const segment of segments) {
    if (segment === '') return { ok: false, problem: 'empty path segment' };
    if (!RAW_SEGMENT.test(segment)) return { ok: false, problem: 'path segment with a character that must be percent-encoded' };
    if (segment === '.' || segment === '..') return { ok: false, problem: 'dot segment' };
  }
  return { ok: true, segments };
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** A raw segment's value, or undefined when it is not a safe value (see the module comment). */
export function decodeSegment(raw: string): string | undefined {
  if (raw === '' || !RAW_SEGMENT.test(raw)) return undefined;
  let value = raw;
  if (raw.includes('%')) {
    const bytes: number[] = [];
    for (let i = 0; i < raw.length; i++) {
      if (raw.charCodeAt(i) === 0x25) {
        bytes.push(Number.parseInt(raw.slice(i + 1, i + 3), 16));
        i += 2;
      } else {
        bytes.push(raw.charCodeAt(i));
      }
    }
    try {
      value = strictUtf8.decode(Uint8Array.from(bytes));
    } catch {
      return undefined;
    }
  }
  if (value === '.' || value === '..' || FORBIDDEN_DECODED.test(value)) return undefined;
  if (Buffer.byteLength(value, 'utf8') > MAX_SEGMENT_BYTES) return undefined;
  return value;
}

/** True when `value` can be a path segment at all (what decodeSegment would accept after encoding). */
export function isSegmentValue(value: string): boolean {
  return value !== '' && value !== '.' && value !== '..' && value.isWellFormed() && !FORBIDDEN_DECODED.test(value) && Buffer.byteLength(value, 'utf8') <= MAX_SEGMENT_BYTES;
}

/** Percent-encodes a value for one segment: everything but unreserved characters, so `:` never reads as an action. */
export function encodeSegment(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
