/**
 * A gRPC caller seen by the binding-neutral call runner (proxy/call-runner.ts,
 * proxy/stream-runner.ts) as the response it writes to. The runner and its SSE
 * relay (stream/relay.ts) were built around an HTTP response: they watch it
 * for 'close' (the caller left), write each event's text and wait for
 * 'drain'. This object gives them exactly that surface over a gRPC listener's
 * EventSink, so a gRPC caller's call to an HTTP remote runs every bound,
 * timer and policy step of the HTTP paths unchanged.
 *
 * Items do not travel as text: the stream caller's `write` (see
 * `streamCaller`) queues each StreamItem and returns a text only for the
 * relay's byte counts; the relay's next `write` hands the queued items to the
 * sink. A keep-alive comment finds the queue empty and sends nothing (gRPC
 * keeps its connection alive with HTTP/2 pings).
 */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { EventSink } from '../bindings/grpc/contracts.js';
import type { ErrorOutcome, ResultOutcome, StreamItem } from '../core/outcome.js';
import type { StreamCaller } from '../proxy/stream-runner.js';

export class GrpcCallerOut extends EventEmitter {
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  readonly #queue: StreamItem[] = [];
  #final: ErrorOutcome | undefined;
  #full = false;
  #sinkEnded = false;

  /** `sink` is absent for a unary call (only 'close' is watched then). */
  constructor(
    signal: AbortSignal,
    private readonly sink?: EventSink,
  ) {
    super();
    const gone = () => this.gone();
    if (signal.aborted) queueMicrotask(gone);
    else signal.addEventListener('abort', gone, { once: true });
  }

  /** What the runner is given: the surface of a ServerResponse it uses, no more (see the file comment). */
  asResponse(): ServerResponse {
    return this as unknown as ServerResponse;
  }

  /** The StreamCaller of a stream relayed onto this sink. */
  streamCaller(): StreamCaller {
    return {
      write: (item) => {
        this.#queue.push(item);
        return item.outcome.kind === 'result' ? item.outcome.json : item.outcome.message;
      },
      headers: {},
      takeOver: () => undefined,
    };
  }

  writeHead(): this {
    this.headersSent = true;
    return this;
  }

  flushHeaders(): void {
    if (!this.destroyed) this.sink?.open({});
  }

  /** The relay's text is ignored: the queued items are what the caller gets. False = wait for 'drain'. */
  write(_text: string): boolean {
    if (this.destroyed || this.writableEnded) return false;
    for (const item of this.#queue.splice(0)) {
      if (item.final) {
        this.#final = item.outcome;
        continue;
      }
      const taken = this.sink?.write(item.outcome) ?? true;
      if (taken === true) continue;
      this.#full = true;
      void taken.then((ok) => {
        this.#full = false;
        if (ok) this.emit('drain');
        else this.gone();
      });
    }
    return !this.#full;
  }

  end(): this {
    if (this.writableEnded) return this;
    this.writableEnded = true;
    this.writableFinished = true;
    this.endSink();
    this.emit('finish');
    return this;
  }

  /** A streaming call answered with one result instead of events: that result is the stream's one message. */
  deliverOne(result: ResultOutcome): void {
    if (this.destroyed || this.#sinkEnded) return;
    this.sink?.open({});
    void this.sink?.write(result);
    this.endSink();
  }

  /** After the runner returned: ends the sink (with `error` when the call never reached a stream). */
  finish(error?: ErrorOutcome): void {
    if (error) this.#final ??= error;
    this.endSink();
  }

  private endSink(): void {
    if (this.#sinkEnded) return;
    this.#sinkEnded = true;
    this.sink?.end(this.#final);
  }

  private gone(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.emit('close');
  }
}
