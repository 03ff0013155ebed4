/**
 * The buffered read of an upstream exchange (exchange.ts): the body kept in
 * memory with a hard cap on *decoded* bytes and every byte counted in the
 * gateway-wide buffer budget. gzip, deflate and br are decoded through zlib,
 * whose back-pressure pauses the transfer, so a bomb is inflated one window
 * at a time and costs at most the cap plus one chunk. Unary replies, a
 * stream call's non-stream reply and card fetches all read this way.
 */
import { createBrotliDecompress, createGunzip, createInflate, type Gunzip } from 'node:zlib';
import type { Reason } from '../envelope/codes.js';
import { classifyTransportError } from './errors.js';

export type BodyRead =
  | { readonly ok: true; readonly body: Buffer; readonly wireBytes: number }
  | { readonly ok: false; readonly reason: Reason; readonly wireBytes: number; readonly error?: unknown };

/** Where the bytes held while reading are counted (the gateway-wide BufferBudget); optional for card fetches. */
export interface ByteHold {
  take(n: number): boolean;
}

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

export interface BodyLimits {
  /** Cap on the decoded body. */
  readonly maxBytes: number;
  /** Where the bytes held are counted (the gateway-wide buffer budget). */
  readonly hold?: ByteHold | undefined;
}

/** What the read needs from the transfer it reads. */
export interface Transfer {
  pause(): void;
  resume(): void;
  /** A bound was crossed: stop the transfer (the socket is destroyed). */
  refuse(reason: Reason): void;
}

export class CappedRead {
  #chunks: Buffer[] = [];
  #decoded = 0;
  #wireBytes = 0;
  #decoder: Decoder | null = null;
  #read: BodyRead | undefined;
  #resolve: ((read: BodyRead) => void) | undefined;

  /** `contentEncoding`: the response's Content-Encoding; an unsupported one fails the read at once. */
  constructor(
    private readonly limits: BodyLimits,
    contentEncoding: string | undefined,
    private readonly transfer: Transfer,
  ) {
    const decoder = decoderFor(contentEncoding);
    if (decoder === 'unsupported') {
      this.#settle({ ok: false, reason: 'UNSUPPORTED_ENCODING', wireBytes: 0 });
      transfer.refuse('UNSUPPORTED_ENCODING');
    } else if (decoder !== null) {
      this.#decoder = decoder;
      decoder.on('data', (chunk: Buffer) => this.#keep(chunk));
      decoder.on('error', (err) => this.#settle({ ok: false, reason: classifyTransportError(err, true), wireBytes: this.#wireBytes, error: err }));
      decoder.on('end', () => this.#settle(this.#whole()));
    }
  }

  /** The body once read (or why it could not be). */
  result(): Promise<BodyRead> {
    if (this.#read) return Promise.resolve(this.#read);
    return new Promise((resolve) => (this.#resolve = resolve));
  }

  get settled(): boolean {
    return this.#read !== undefined;
  }

  /** The body when it is already read (or failed), without a promise; undefined while it is still arriving. */
  now(): BodyRead | undefined {
    return this.#read;
  }

  data(chunk: Buffer): void {
    if (this.#read) return;
    this.#wireBytes += chunk.length;
    const decoder = this.#decoder;
    if (decoder === null) return this.#keep(chunk);
    // Respect the decoder's back-pressure so a bomb is inflated one window at a time.
    if (!decoder.write(chunk)) {
      this.transfer.pause();
      decoder.once('drain', () => this.transfer.resume());
    }
  }

  end(): void {
    if (this.#read) return;
    if (this.#decoder !== null) this.#decoder.end();
    else this.#settle(this.#whole());
  }

  /** The transfer failed after the head: whatever breaks now (reset, close, a short body) truncates a response. */
  fail(error: Error): void {
    this.#settle({ ok: false, reason: classifyTransportError(error, true), wireBytes: this.#wireBytes, error });
  }

  /** The call was aborted with `reason` (deadline, caller gone, shutdown). */
  abort(reason: Reason, error: Error): void {
    this.#settle({ ok: false, reason, wireBytes: this.#wireBytes, error });
  }

  #keep(chunk: Buffer): void {
    if (this.#read) return;
    this.#decoded += chunk.length;
    if (this.#decoded > this.limits.maxBytes) return this.#refuse('RESPONSE_TOO_LARGE');
    if (this.limits.hold && !this.limits.hold.take(chunk.length)) return this.#refuse('GATEWAY_OVERLOADED');
    this.#chunks.push(chunk);
  }

  /** A bound was crossed: the read fails and the transfer stops. */
  #refuse(reason: Reason): void {
    this.#settle({ ok: false, reason, wireBytes: this.#wireBytes });
    this.transfer.refuse(reason);
  }

  #whole(): BodyRead {
    const chunks = this.#chunks;
    return { ok: true, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.#decoded), wireBytes: this.#wireBytes };
  }

  #settle(read: BodyRead): void {
    if (this.#read) return;
    this.#read = read;
    this.#chunks = [];
    const decoder = this.#decoder;
    if (decoder !== null && !read.ok) {
      decoder.removeAllListeners('data');
      decoder.on('error', () => {});
      decoder.destroy();
    }
    const resolve = this.#resolve;
    this.#resolve = undefined;
    resolve?.(read);
  }
}
