/**
 * One request to a remote and its response: the one upstream-call module of
 * unary calls, streams and card fetches. It goes through undici's `dispatch`
 * with this handler object (no Readable body, no async iterator, no
 * AbortSignal, no promise per chunk), and every kind of call gets the same:
 *
 * - head handling: 1xx skipped; untrusted framing (framing.ts) refused
 *   before any body byte as UPSTREAM_PROTOCOL_ERROR, its socket destroyed;
 *   the status and headers of the final head kept;
 * - the call's abort point (call-abort.ts): its deadlines, the caller
 *   leaving, the drain's end. Before the head the promise rejects with the
 *   CallAborted; after it the body read fails with its reason (buffered) or
 *   the relay hears the transfer break (streamed); either way undici
 *   destroys the socket;
 * - one error classification (errors.ts): a failure before the head is the
 *   transport's reason, after it a truncated response.
 *
 * The body is read one of two ways, chosen at the head:
 * - buffered (capped-read.ts): decoded, capped, counted in the buffer budget,
 *   handed over whole by `readBody()`;
 * - streamed (an event stream): chunks handed to the relay's sink as they
 *   arrive. The transfer is paused from the head until the relay starts it,
 *   and the relay's back-pressure pauses undici's parser (controller.pause),
 *   so a slow caller leaves the bytes in the socket, not in the gateway.
 *   The stream's idle and total timers are the relay's own.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Reason } from '../envelope/codes.js';
import type { AbortTarget, CallAbort } from './call-abort.js';
import { CappedRead, type BodyLimits, type Transfer } from './capped-read.js';
import { CallAborted } from './errors.js';
import { hasUntrustedFraming } from './framing.js';
import { headerValue, type BodyRead, type UpstreamAnswer } from './read-body.js';

export type { BodyLimits } from './capped-read.js';

export interface UpstreamRequest {
  readonly path: string;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer | string | null;
}

/** Where a streamed body goes: chunks, then one `end` or one `error`; nothing after `destroy()`. */
export interface StreamSink {
  data(chunk: Buffer): void;
  end(): void;
  error(err: Error): void;
}

/** A streamed body as the relay drives it. */
export interface StreamSource {
  /** Starts the flow into `sink` (it may call the sink before returning). */
  start(sink: StreamSink): void;
  pause(): void;
  resume(): void;
  /** Stops the transfer and destroys its socket; the sink hears nothing more. */
  destroy(): void;
}

/** The response head, and its body read whole (`readBody`) or streamed (`stream`). */
export interface UpstreamResponse extends UpstreamAnswer {
  readonly headers: IncomingHttpHeaders;
  /** Set when the head chose the streamed read. */
  readonly stream: StreamSource | undefined;
}

export interface ExchangeOptions {
  /** The buffered read's bounds. */
  readonly limits: BodyLimits;
  /** Chooses the streamed read for this head (e.g. an event stream); absent: always buffered. */
  readonly streamIf?: ((statusCode: number, headers: IncomingHttpHeaders) => boolean) | undefined;
}

/** The error a stream is stopped with once its relay is done with it (no one hears it). */
const RELAY_DONE = new CallAborted('CALLER_CLOSED');

class Exchange implements Dispatcher.DispatchHandler, AbortTarget, UpstreamResponse, StreamSource, Transfer {
  statusCode = 0;
  headers: IncomingHttpHeaders = {};
  stream: StreamSource | undefined;
  #controller: Dispatcher.DispatchController | undefined;
  #pendingAbort: Error | undefined;
  #headSettled = false;
  #resolveHead: ((res: UpstreamResponse) => void) | undefined;
  #rejectHead: ((err: unknown) => void) | undefined;
  #buffered: CappedRead | undefined;
  // The streamed read: its sink once started; what ended it before that.
  #sink: StreamSink | undefined;
  #streamEnd: Error | true | undefined;
  #streamDone = false;

  constructor(private readonly options: ExchangeOptions) {}

  head(): Promise<UpstreamResponse> {
    return new Promise((resolve, reject) => {
      this.#resolveHead = resolve;
      this.#rejectHead = reject;
    });
  }

  readBody(): Promise<BodyRead> {
    // A streamed head has no buffered body: asking for one is a bug of the caller.
    if (this.#buffered === undefined) return Promise.resolve({ ok: false, reason: 'GATEWAY_ERROR', wireBytes: 0, error: new Error('no buffered body to read') });
    return this.#buffered.result();
  }

  readBodyNow(): BodyRead | undefined {
    return this.#buffered?.now();
  }

  /** The call was aborted (deadline, caller gone, shutdown). */
  abort(error: CallAborted): void {
    if (!this.#headSettled) this.#failHead(error);
    else if (this.#buffered) this.#buffered.abort(error.reason, error);
    else if (this.stream) {
      // A stream hears it as its transfer failing, one tick later: the caller's 'close' that aborted the call is
      // the relay's to see first (it ends the stream as the caller's leaving, not as a broken upstream).
      return void process.nextTick(() => this.#stop(error));
    }
    this.#stop(error);
  }

  // --- undici's handler ---

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#pendingAbort) controller.abort(this.#pendingAbort);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.#controller = controller;
    // 1xx informational heads are not the answer (request() skipped them too).
    if (statusCode < 200 || this.#headSettled) return;
    // Aborting inside the head callback makes undici destroy the socket; the head promise rejects with the reason.
    if (hasUntrustedFraming(headers)) return controller.abort(new CallAborted('UPSTREAM_PROTOCOL_ERROR'));
    this.#headSettled = true;
    this.statusCode = statusCode;
    this.headers = headers;
    if (this.options.streamIf?.(statusCode, headers)) {
      this.stream = this;
      // No byte of the body is read until the relay starts the flow.
      controller.pause();
    } else {
      this.#buffered = new CappedRead(this.options.limits, headerValue(headers['content-encoding']), this);
    }
    const resolve = this.#resolveHead!;
    this.#resolveHead = this.#rejectHead = undefined;
    resolve(this);
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#buffered) this.#buffered.data(chunk);
    else if (this.#sink) this.#sink.data(chunk);
  }

  onResponseEnd(): void {
    if (this.#buffered) this.#buffered.end();
    else this.#endStream(true);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (!this.#headSettled) return this.#failHead(error);
    if (this.#buffered) this.#buffered.fail(error);
    else this.#endStream(error);
  }

  // --- the transfer, as the streamed read (StreamSource) and the buffered one (Transfer) drive it ---

  start(sink: StreamSink): void {
    if (this.#streamDone || this.#sink) return;
    this.#sink = sink;
    const ended = this.#streamEnd;
    if (ended !== undefined) return this.#endStream(ended);
    this.#controller?.resume();
  }

  pause(): void {
    this.#controller?.pause();
  }

  resume(): void {
    if (!this.#streamDone) this.#controller?.resume();
  }

  destroy(): void {
    if (this.#streamDone) return;
    this.#streamDone = true;
    this.#sink = undefined;
    this.#stop(RELAY_DONE);
  }

  #endStream(how: Error | true): void {
    if (this.#streamDone) return;
    const sink = this.#sink;
    // Not started yet: kept for the relay's start.
    if (sink === undefined) return void (this.#streamEnd ??= how);
    this.#streamDone = true;
    this.#sink = undefined;
    if (how === true) sink.end();
    else sink.error(how);
  }

  /** The buffered read crossed a bound. */
  refuse(reason: Reason): void {
    this.#stop(new CallAborted(reason));
  }

  // --- shared ---

  #failHead(error: unknown): void {
    if (this.#headSettled) return;
    this.#headSettled = true;
    const reject = this.#rejectHead!;
    this.#resolveHead = this.#rejectHead = undefined;
    reject(error);
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
export function sendExchange(pool: Dispatcher, request: UpstreamRequest, options: ExchangeOptions, abort: CallAbort): Promise<UpstreamResponse> {
  const exchange = new Exchange(options);
  const head = exchange.head();
  abort.setTarget(exchange);
  if (!abort.aborted) pool.dispatch({ path: request.path, method: request.method as Dispatcher.HttpMethod, headers: request.headers, body: request.body }, exchange);
  return head;
}
