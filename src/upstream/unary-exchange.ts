/**
 * One unary request to a remote through undici's `dispatch` with a handler
 * object: no Readable body, no async iterator, no AbortSignal and no promise
 * per chunk. The response head resolves `sendUnary`'s promise (so retries and
 * the attempt's span still end at the head); the body is read inside the
 * handler as it arrives, with the same hard cap on *decoded* bytes and the
 * same buffer budget as read-body.ts (gzip, deflate, br decoded through zlib,
 * whose back-pressure pauses the socket), and `readBody()` hands it over.
 *
 * The pool is the remote's (pools.ts): its framing guard still checks every
 * response head, its egress guard every connection. The call's abort point
 * (call-abort.ts) ends the exchange: before the head the promise rejects with
 * the CallAborted, after it the body read fails with its reason; either way
 * undici destroys the socket.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Reason } from '../envelope/codes.js';
import type { AbortTarget, CallAbort } from './call-abort.js';
import { CallAborted, classifyTransportError } from './errors.js';
import { decoderFor, headerValue, type BodyRead, type ByteHold, type UpstreamAnswer } from './read-body.js';

export interface UnaryRequest {
  readonly path: string;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer | string | null;
}

export interface BodyLimits {
  /** Cap on the decoded body. */
  readonly maxBytes: number;
  /** Where the bytes held are counted (the gateway-wide buffer budget). */
  readonly hold?: ByteHold | undefined;
}

/** The response head, and its body once read. */
export interface UnaryResponse extends UpstreamAnswer {
  readonly headers: IncomingHttpHeaders;
}

type Decoder = Exclude<ReturnType<typeof decoderFor>, null | 'unsupported'>;

class UnaryExchange implements Dispatcher.DispatchHandler, AbortTarget, UnaryResponse {
  statusCode = 0;
  headers: IncomingHttpHeaders = {};
  #controller: Dispatcher.DispatchController | undefined;
  #pendingAbort: Error | undefined;
  #headSettled = false;
  #resolveHead: ((res: UnaryResponse) => void) | undefined;
  #rejectHead: ((err: unknown) => void) | undefined;
  #chunks: Buffer[] = [];
  #decoded = 0;
  #wireBytes = 0;
  #decoder: Decoder | null = null;
  #read: BodyRead | undefined;
  #resolveBody: ((read: BodyRead) => void) | undefined;

  constructor(private readonly limits: BodyLimits) {}

  head(): Promise<UnaryResponse> {
    return new Promise((resolve, reject) => {
      this.#resolveHead = resolve;
      this.#rejectHead = reject;
    });
  }

  readBody(): Promise<BodyRead> {
    if (this.#read) return Promise.resolve(this.#read);
    return new Promise((resolve) => (this.#resolveBody = resolve));
  }

  /** The call was aborted (deadline, caller gone, shutdown). */
  abort(error: CallAborted): void {
    if (!this.#headSettled) this.#failHead(error);
    else this.#settle({ ok: false, reason: error.reason, wireBytes: this.#wireBytes, error });
    this.#stop(error);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#pendingAbort) controller.abort(this.#pendingAbort);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.#controller = controller;
    // 1xx informational heads are not the answer (request() skipped them too).
    if (statusCode < 200 || this.#headSettled) return;
    this.#headSettled = true;
    this.statusCode = statusCode;
    this.headers = headers;
    const decoder = decoderFor(headerValue(headers['content-encoding']));
    if (decoder === 'unsupported') {
      this.#settle({ ok: false, reason: 'UNSUPPORTED_ENCODING', wireBytes: 0 });
      this.#stop(new CallAborted('UNSUPPORTED_ENCODING'));
    } else if (decoder !== null) {
      this.#decoder = decoder;
      this.#wireDecoder(decoder);
    }
    const resolve = this.#resolveHead!;
    this.#resolveHead = this.#rejectHead = undefined;
    resolve(this);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#read) return;
    this.#wireBytes += chunk.length;
    const decoder = this.#decoder;
    if (decoder === null) {
      this.#keep(chunk);
      return;
    }
    // Respect the decoder's back-pressure so a bomb is inflated one window at a time.
    if (!decoder.write(chunk)) {
      controller.pause();
      decoder.once('drain', () => controller.resume());
    }
  }

  onResponseEnd(): void {
    if (this.#read) return;
    if (this.#decoder !== null) this.#decoder.end();
    else this.#settle(this.#whole());
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (!this.#headSettled) return this.#failHead(error);
    // The head has arrived, so whatever breaks now (reset, close, a short body) truncates a response.
    this.#settle({ ok: false, reason: classifyTransportError(error, true), wireBytes: this.#wireBytes, error });
  }

  #wireDecoder(decoder: Decoder): void {
    decoder.on('data', (chunk: Buffer) => this.#keep(chunk));
    decoder.on('error', (err) => this.#settle({ ok: false, reason: classifyTransportError(err, true), wireBytes: this.#wireBytes, error: err }));
    decoder.on('end', () => this.#settle(this.#whole()));
  }

  #keep(chunk: Buffer): void {
    if (this.#read) return;
    this.#decoded += chunk.length;
    if (this.#decoded > this.limits.maxBytes) return this.#refuse('RESPONSE_TOO_LARGE');
    if (this.limits.hold && !this.limits.hold.take(chunk.length)) return this.#refuse('GATEWAY_OVERLOADED');
    this.#chunks.push(chunk);
  }

  /** A bound was crossed: the read fails and the transfer stops (the socket is destroyed). */
  #refuse(reason: Reason): void {
    this.#settle({ ok: false, reason, wireBytes: this.#wireBytes });
    this.#stop(new CallAborted(reason));
  }

  #whole(): BodyRead {
    const chunks = this.#chunks;
    return { ok: true, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.#decoded), wireBytes: this.#wireBytes };
  }

  #failHead(error: unknown): void {
    if (this.#headSettled) return;
    this.#headSettled = true;
    const reject = this.#rejectHead!;
    this.#resolveHead = this.#rejectHead = undefined;
    reject(error);
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
    const resolve = this.#resolveBody;
    this.#resolveBody = undefined;
    resolve?.(read);
  }

  /** Ends the transfer: undici destroys the socket (the response is never reused). */
  #stop(error: Error): void {
    if (this.#controller) this.#controller.abort(error);
    else this.#pendingAbort = error;
  }
}

/**
 * Sends one request on `pool`; resolves at the response head (1xx skipped),
 * rejects with the transport's error (or the call's CallAborted) before it.
 * `abort` ends it early; the exchange is its target until the next attempt's.
 */
export function sendUnary(pool: Dispatcher, request: UnaryRequest, limits: BodyLimits, abort: CallAbort): Promise<UnaryResponse> {
  const exchange = new UnaryExchange(limits);
  const head = exchange.head();
  abort.setTarget(exchange);
  if (!abort.aborted) pool.dispatch({ path: request.path, method: request.method as Dispatcher.HttpMethod, headers: request.headers, body: request.body }, exchange);
  return head;
}
