/**
 * The shapes of a capped body read, the decoder for a Content-Encoding, and
 * readCappedBody: the same capped decoded read over any Readable (the
 * upstream exchange reads its bodies with capped-read.ts). The cap is checked
 * as bytes arrive, so a 1 GB body or a gzip bomb costs at most the cap plus
 * one chunk; when it is crossed the body is destroyed.
 */
import { createBrotliDecompress, createGunzip, createInflate, type Gunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import type { Reason } from '../envelope/codes.js';
import { classifyTransportError } from './errors.js';

export type BodyRead =
  | { readonly ok: true; readonly body: Buffer; readonly wireBytes: number }
  | { readonly ok: false; readonly reason: Reason; readonly wireBytes: number; readonly error?: unknown };

type Decoder = Gunzip | ReturnType<typeof createBrotliDecompress> | ReturnType<typeof createInflate>;

/** The decoder for a Content-Encoding: null for none/identity, 'unsupported' for anything else. */
export function decoderFor(contentEncoding: string | undefined): Decoder | null | 'unsupported' {
  if (contentEncoding === undefined) return null;
  const codings = contentEncoding.toLowerCase().split(',').map((c) => c.trim()).filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return null;
  // One coding only: stacked codings are legal but nobody sends them except to hide a bomb.
  if (codings.length > 1) return 'unsupported';
  switch (codings[0]) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      return 'unsupported';
  }
}

/**
 * Drops a body we will not read. undici's body emits 'error' when destroyed
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
}

/** Where the bytes held while reading are counted (the gateway-wide BufferBudget); optional for card fetches. */
export interface ByteHold {
  take(n: number): boolean;
}

export async function readCappedBody(body: Readable, contentEncoding: string | undefined, maxBytes: number, hold?: ByteHold): Promise<BodyRead> {
  const decoder = decoderFor(contentEncoding);
  if (decoder === 'unsupported') {
    discardBody(body);
    return { ok: false, reason: 'UNSUPPORTED_ENCODING', wireBytes: 0 };
  }
  let wireBytes = 0;
  const chunks: Buffer[] = [];
  let decoded = 0;
  try {
    if (decoder === null) {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        wireBytes += chunk.length;
        decoded += chunk.length;
        if (decoded > maxBytes) {
          discardBody(body);
          return { ok: false, reason: 'RESPONSE_TOO_LARGE', wireBytes };
        }
        if (hold && !hold.take(chunk.length)) {
          discardBody(body);
          return { ok: false, reason: 'GATEWAY_OVERLOADED', wireBytes };
        }
        chunks.push(chunk);
      }
    } else {
      const result = await decodeCapped(body, decoder, maxBytes, chunks, (n) => (wireBytes += n), hold);
      if (result !== undefined) return { ok: false, reason: result, wireBytes };
      decoded = chunks.reduce((n, c) => n + c.length, 0);
    }
  } catch (error) {
    discardBody(body);
    // The head has arrived, so whatever breaks now (reset, close, a short body) truncates a response.
    return { ok: false, reason: classifyTransportError(error, true), wireBytes, error };
  }
  return { ok: true, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, decoded), wireBytes };
}

function decodeCapped(
  body: Readable,
  decoder: Decoder,
  maxBytes: number,
  chunks: Buffer[],
  onWire: (n: number) => void,
  hold: ByteHold | undefined,
): Promise<Reason | undefined> {
  return new Promise((resolve, reject) => {
    let decoded = 0;
    let settled = false;
    const finish = (value: Reason | undefined, err?: unknown) => {
      if (settled) return;
      settled = true;
      if (err !== undefined || value !== undefined) {
        discardBody(body);
        decoder.on('error', () => {});
        decoder.destroy();
      }
      if (err !== undefined) reject(err);
      else resolve(value);
    };
    decoder.on('data', (chunk: Buffer) => {
      decoded += chunk.length;
      if (decoded > maxBytes) return finish('RESPONSE_TOO_LARGE');
      if (hold && !hold.take(chunk.length)) return finish('GATEWAY_OVERLOADED');
      chunks.push(chunk);
    });
    decoder.on('error', (err) => finish(undefined, err));
    decoder.on('end', () => finish(undefined));
    body.on('data', (chunk: Buffer) => {
      onWire(chunk.length);
      // Respect the decoder's backpressure so a bomb is inflated one window at a time.
      if (!decoder.write(chunk)) {
        body.pause();
        decoder.once('drain', () => body.resume());
      }
    });
    body.on('error', (err) => finish(undefined, err));
    body.on('end', () => decoder.end());
  });
}
