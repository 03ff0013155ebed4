/**
 * Response framing headers the gateway refuses to trust. undici's parser
 * accepts a few shapes that RFC 9112 lets a client reject and that are the
 * raw material of response smuggling: it concatenates duplicate
 * Content-Length values, lets chunked win over a Content-Length, reads an
 * unknown transfer coding's bytes (undecoded) until close, and accepts
 * `chunked` applied twice. The check runs as a pool interceptor on the
 * response head, before any body byte, so such a reply never yields a result
 * and its socket is destroyed instead of going back to the pool.
 */
import type { Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { CallAborted } from './errors.js';

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

class FramingGuard implements Dispatcher.DispatchHandler {
  constructor(private readonly inner: Dispatcher.DispatchHandler) {}

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.inner.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestUpgrade']>>): void {
    this.inner.onRequestUpgrade?.(...args);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, statusMessage?: string): void {
    // Aborting inside the head callback makes undici destroy the socket.
    if (statusCode >= 200 && hasUntrustedFraming(headers)) return controller.abort(new CallAborted('UPSTREAM_PROTOCOL_ERROR'));
    this.inner.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.inner.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.inner.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.inner.onResponseError?.(controller, error);
  }
}

/** `pool.compose(refuseUntrustedFraming)`. */
export const refuseUntrustedFraming: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) =>
  dispatch(opts, new FramingGuard(handler));
