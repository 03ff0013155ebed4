/**
 * The shapes of a capped body read, and readCappedBody: the upstream
 * exchange's buffered read (capped-read.ts: a hard cap on *decoded* bytes,
 * checked as bytes arrive, so a 1 GB body or a gzip bomb costs at most the
 * cap plus one chunk) over any Readable; when the cap is crossed the body is
 * destroyed.
 */
import type { Readable } from 'node:stream';
import { CappedRead, type BodyRead, type ByteHold } from './capped-read.js';

export { decoderFor, type BodyRead, type ByteHold } from './capped-read.js';

/**
 * Drops a body we will not read. A Readable emits 'error' when destroyed
 * unread; with no listener that would crash the process.
 */
export function discardBody(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/** An upstream response head whose body is read whole with the unary cap (exchange.ts's buffered read). */
export interface UpstreamAnswer {
  readonly statusCode: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readBody(): Promise<BodyRead>;
  /**
   * The body when it is already read whole, else undefined (then `readBody()`). A small reply's head and body
   * usually arrive in one packet, so by the time the head is awaited its body is there: no promise needed.
   */
  readBodyNow(): BodyRead | undefined;
}

/** The buffered read of capped-read.ts over a Readable. */
export function readCappedBody(body: Readable, contentEncoding: string | undefined, maxBytes: number, hold?: ByteHold): Promise<BodyRead> {
  const read = new CappedRead({ maxBytes, hold }, contentEncoding, {
    pause: () => body.pause(),
    resume: () => body.resume(),
    refuse: () => discardBody(body),
  });
  if (read.settled) return read.result();
  const onData = (chunk: Buffer) => read.data(chunk);
  const onEnd = () => read.end();
  const onError = (err: Error) => read.fail(err);
  body.on('data', onData);
  body.on('end', onEnd);
  body.on('error', onError);
  return read.result().then((result) => {
    body.off('data', onData);
    body.off('end', onEnd);
    if (!result.ok) discardBody(body);
    return result;
  });
}
