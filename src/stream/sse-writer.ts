/**
 * The caller's side of a stream: the gateway's own response head, its own
 * keep-alive comments, and writes that never throw at a caller who left.
 */
import type { ServerResponse } from 'node:http';

export const KEEP_ALIVE_COMMENT = ': keep-alive\n\n';

/** Headers the gateway always sets on a stream; they win over any extra header of the same name. */
export const STREAM_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  // Tells nginx-style proxies between gateway and caller not to buffer events.
  'x-accel-buffering': 'no',
};

export function callerGone(out: ServerResponse): boolean {
  return out.destroyed || out.writableEnded;
}

/** Sends `200 text/event-stream` at once (so the caller sees the stream open); false when the caller is gone. */
export function openEventStream(out: ServerResponse, extra: Readonly<Record<string, string>> = {}): boolean {
  if (callerGone(out)) return false;
  if (!out.headersSent) {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(extra)) headers[name.toLowerCase()] = value;
    Object.assign(headers, STREAM_HEADERS);
    // A stream has no length: a stale content-length would make the caller wait for bytes that never come.
    delete headers['content-length'];
    out.writeHead(200, headers);
    out.flushHeaders();
  }
  return true;
}

/**
 * Writes text; returns the bytes written (0 when the caller is gone) and
 * whether the socket wants us to wait for 'drain'.
 */
export function writeText(out: ServerResponse, text: string): { bytes: number; full: boolean } {
  if (callerGone(out)) return { bytes: 0, full: false };
  const full = !out.write(text);
  return { bytes: Buffer.byteLength(text), full };
}
