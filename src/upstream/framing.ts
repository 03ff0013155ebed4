/**
 * Response framing headers the gateway refuses to trust. undici's parser
 * accepts a few shapes that RFC 9112 lets a client reject and that are the
 * raw material of response smuggling: it concatenates duplicate
 * Content-Length values, lets chunked win over a Content-Length, reads an
 * unknown transfer coding's bytes (undecoded) until close, and accepts
 * `chunked` applied twice. The upstream exchange (exchange.ts) checks every
 * response head, before any body byte, so such a reply never yields a result
 * and its socket is destroyed instead of going back to the pool.
 */
import type { IncomingHttpHeaders } from 'node:http';

const DIGITS = /^\d{1,15}$/;

/** True when the response head frames its body in a way the gateway will not rely on. */
export function hasUntrustedFraming(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length'];
  const coding = headers['transfer-encoding'];
  if (Array.isArray(length) || Array.isArray(coding)) return true;
  if (length !== undefined && (coding !== undefined || !DIGITS.test(length.trim()))) return true;
  // The only transfer coding undici decodes is one `chunked`.
  return coding !== undefined && coding.trim().toLowerCase() !== 'chunked';
}
