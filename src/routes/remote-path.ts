/**
 * Maps the part of a caller's URL after `/remotes/<name>` to a path on that
 * remote. The remote's origin is fixed by its pool, so the only thing to
 * guard is the path: no `..`, no percent-encoding (encoded slashes, dots or
 * NULs), no backslashes, nothing that could climb out of the remote's base path.
 */

const SAFE_SEGMENT = /^[A-Za-z0-9_~:@!$&'()*+,;=.-]+$/;

/** `rawSuffix` is the raw (still encoded) URL text after `/remotes/<name>`, query included. */
export function upstreamPath(base: URL, rawSuffix: string): string | undefined {
  const queryAt = rawSuffix.indexOf('?');
  const suffix = queryAt === -1 ? rawSuffix : rawSuffix.slice(0, queryAt);
  // The usual call names the remote's base URL itself: nothing to split.
  if (suffix === '' || suffix === '/') return base.pathname + base.search;
  const segments = suffix.split('/').filter((s) => s !== '');
  for (const segment of segments) {
    if (segment === '.' || segment === '..' || !SAFE_SEGMENT.test(segment)) return undefined;
  }
  // The caller's query string is not forwarded: a remote's own query lives in its configured URL.
  if (segments.length === 0) return base.pathname + base.search;
  const basePath = base.pathname.endsWith('/') ? base.pathname.slice(0, -1) : base.pathname;
  return `${basePath}/${segments.join('/')}${base.search}`;
}
