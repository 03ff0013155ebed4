/**
 * Relays one upstream SSE response to the caller, every event normalized and
 * the stream bounded in bytes, events and time. This file owns the sockets
 * and the clock; everything counted in bytes lives in ./event-core.ts.
 *
 * It is started only for an upstream that answered with an event stream
 * (proxy/stream.ts sends any other answer as one JSON envelope). The caller
 * gets HTTP 200 text/event-stream; every ending the gateway causes is one
 * final error event, after which the relay ends the response itself (never
 * through pipeline(), which can drop that last event).
 */
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { StreamSink, StreamSource } from '../upstream/exchange.js';
import type { RemoteConfig } from '../config/schema.js';
import type { CallerGeneration, Reason } from '../envelope/codes.js';
import type { JsonRpcId } from '../envelope/envelope.js';
import { EventRelayCore, type CoreOptions, type OutputEvent, type RelayCore } from './event-core.js';
import { KEEP_ALIVE_COMMENT, callerGone, openEventStream, writeText } from './sse-writer.js';

export interface StreamUpstream {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  /**
   * The raw body bytes (the gateway asks the remote for identity encoding): the upstream exchange's streamed
   * read (upstream/exchange.ts), or any Readable.
   */
  body: StreamSource | Readable;
}

export interface StreamRelayOptions {
  callerId: JsonRpcId;
  remote: RemoteConfig;
  /** The caller's A2A generation (shape of error.data); default 1.0. */
  caller?: CallerGeneration;
  /** The caller's raw response, headers not yet sent: the relay writes 200 text/event-stream itself. */
  out: ServerResponse;
  /** Extra response headers the gateway sets (x-request-id, filtered a2a-version...). */
  headers?: Record<string, string>;
  /** Destroys the upstream request and its socket at once (before the body itself is destroyed). */
  abortUpstream: () => void;
  /** Gateway shutdown: end the stream with one GATEWAY_SHUTDOWN error event. */
  shutdown?: AbortSignal;
  /** `limits.validateResults`: each event's result is checked (see EventContext.checkResult). */
  checkResult?: CoreOptions['checkResult'];
  /** The version bridge: each event's result in the caller's generation (see EventContext.translateResult). */
  translateResult?: CoreOptions['translateResult'];
  /** The remote's credentials to keep out of every event (see CoreOptions.redactor). */
  redactor?: CoreOptions['redactor'];
  /** The gateway-wide byte budget for the event being assembled; a stream that cannot get room ends with GATEWAY_OVERLOADED. */
  buffer?: { resize(bytes: number): boolean; release(): void };
  /** A bug caught inside the relay (it never throws): the caller logs and counts it. Must not throw. */
  onInternalError?: (err: unknown) => void;
  /** The core that reads and writes the events (default: JSON-RPC in and out, EventRelayCore from these options). */
  core?: RelayCore;
  /** Each event written to the caller (telemetry; set only while someone records them). Must not throw. */
  onEvent?: (event: OutputEvent) => void;
}

export interface StreamOutcome {
  outcome: 'ok' | 'REMOTE_ERROR' | Reason;
  /** Events written to the caller (keep-alive comments not counted). */
  events: number;
  /** Upstream body bytes read. */
  bytesIn: number;
  /** Bytes written to the caller, keep-alive comments included. */
  bytesOut: number;
  /** The caller went away before the stream ended (the upstream was aborted). */
  callerClosed: boolean;
  /** Credentials of the remote removed from (or refused in) the events. */
  redactions?: number;
}

const noop = (): void => {};

export function relayStream(upstream: StreamUpstream, opts: StreamRelayOptions): Promise<StreamOutcome> {
  return new Promise((resolve) => new StreamRelay(upstream, opts, resolve).start());
}

export function isEventStream(upstream: Pick<StreamUpstream, 'statusCode' | 'headers'>): boolean {
  if (upstream.statusCode < 200 || upstream.statusCode > 299) return false;
  return /^\s*text\/event-stream\s*(;|$)/i.test(headerValue(upstream.headers['content-type']) ?? '');
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/** A Readable as a StreamSource: 'error', or 'close' before 'end', is the transfer breaking. */
function readableSource(body: Readable): StreamSource {
  let sink: StreamSink | undefined;
  let ended = false;
  // An error listener from the first moment: a failing body must never become an uncaught error (it stays on).
  body.on('error', (err: Error) => sink?.error(err));
  const onData = (chunk: Buffer | string) => sink?.data(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  const onEnd = () => {
    ended = true;
    sink?.end();
  };
  const onClose = () => {
    if (!ended) sink?.error(new Error('upstream body closed before its end'));
  };
  const detach = () => {
    sink = undefined;
    body.off('data', onData);
    body.off('end', onEnd);
    body.off('close', onClose);
  };
  return {
    start(to) {
      sink = to;
      // A body that failed before we were handed it will send no further event.
      if (body.destroyed) return to.error(new Error('upstream body destroyed before the relay started'));
      body.on('data', onData);
      body.on('end', onEnd);
      body.on('close', onClose);
    },
    pause: () => body.pause(),
    resume: () => body.resume(),
    destroy() {
      detach();
      body.destroy();
    },
  };
}

function isStreamSource(body: StreamSource | Readable): body is StreamSource {
  return typeof (body as Partial<StreamSource>).start === 'function';
}

class StreamRelay {
  private core: RelayCore | undefined;
  private readonly source: StreamSource;
  private done = false;
  private upstreamEnded = false;
  /** Waiting for the caller to drain: upstream reading and its silence timers are paused. */
  private paused = false;
  private events = 0;
  private redactions = 0;
  private bytesIn = 0;
  private bytesOut = 0;
  /** Upstream events that produced output (what streamNoDataMs watches). */
  private upstreamEvents = 0;
  private readonly timers: NodeJS.Timeout[] = [];
  private idle: NodeJS.Timeout | undefined;
  private noData: NodeJS.Timeout | undefined;
  /**
   * Upstream chunks arrive one per upstream write, often many in one read of
   * the socket and so in one tick: their events are written to the caller
   * once, and the silence timers re-armed once, at the end of that tick (see
   * flush). `batch` holds the events not yet written.
   */
  private batch: OutputEvent[] = [];
  private flushQueued = false;
  private bytesSinceFlush = false;
  private eventsSinceFlush = false;

  constructor(
    private readonly up: StreamUpstream,
    private readonly opts: StreamRelayOptions,
    private readonly resolve: (outcome: StreamOutcome) => void,
  ) {
    this.source = isStreamSource(up.body) ? up.body : readableSource(up.body);
  }

  start(): void {
    this.guard(() => {
      const { out, remote, shutdown } = this.opts;
      out.on('error', noop);
      if (!openEventStream(out, this.opts.headers)) return this.callerLeft();
      out.on('close', this.onCallerClose);
      out.on('drain', this.onDrain);

      const coreOptions = {
        callerId: this.opts.callerId,
        remote,
        httpStatus: this.up.statusCode,
        checkResult: this.opts.checkResult,
        ...(this.opts.translateResult ? { translateResult: this.opts.translateResult } : {}),
        caller: this.opts.caller,
        redactor: this.opts.redactor,
      };
      const core = this.opts.core ?? new EventRelayCore(coreOptions);
      this.core = core;
      // Only event streams are relayed; anything else reaching here is a bug upstream of the relay, said once.
      if (!isEventStream(this.up)) return this.emit(core.stop('INVALID_RESPONSE', 'not an event stream'));
      const encoding = headerValue(this.up.headers['content-encoding'])?.trim().toLowerCase();
      if (encoding && encoding !== 'identity') return this.emit(core.stop('UNSUPPORTED_ENCODING'));
      if (shutdown?.aborted) return this.emit(core.stop('GATEWAY_SHUTDOWN'));
      shutdown?.addEventListener('abort', this.onShutdown, { once: true });

      const t = remote.timeouts;
      this.timers.push(setTimeout(() => this.guard(() => this.emit(core.stop('STREAM_TOO_LONG'))), t.maxStreamMs));
      this.idle = this.silenceTimer(t.streamIdleMs, 'STREAM_IDLE', () => this.bytesIn);
      this.noData = this.silenceTimer(t.streamNoDataMs, 'STREAM_NO_DATA', () => this.upstreamEvents);
      this.timers.push(setInterval(this.onKeepAlive, t.keepAliveMs));

      // Last: the source may hand over bytes (or its end) before start returns.
      this.source.start(this.sink);
    });
  }

  /**
   * A silence bound that a caller who reads slowly does not trip (while paused
   * it only re-arms). After a busy spell Node runs due timers before pending
   * socket reads, so the verdict waits one turn for I/O and is dropped if
   * anything arrived meanwhile.
   */
  private silenceTimer(ms: number, reason: Reason, activity: () => number): NodeJS.Timeout {
    const timer: NodeJS.Timeout = setTimeout(() => {
      if (this.paused) return void timer.refresh();
      const before = activity();
      setImmediate(() =>
        this.guard(() => {
          if (this.done) return;
          if (this.paused || activity() !== before) timer.refresh();
          else this.emit(this.core?.stop(reason) ?? []);
        }),
      );
    }, ms);
    this.timers.push(timer);
    return timer;
  }

  private readonly onData = (bytes: Buffer): void =>
    this.guard(() => {
      if (this.done || !this.core) return;
      this.bytesIn += bytes.length;
      this.bytesSinceFlush = true;
      const events = this.core.push(bytes);
      if (events.length > 0) {
        this.upstreamEvents += events.length;
        this.eventsSinceFlush = true;
      }
      const held = 'bufferedBytes' in this.core ? (this.core as { bufferedBytes: number }).bufferedBytes : 0;
      if (this.opts.buffer && !this.core.finished && !this.opts.buffer.resize(held)) {
        return this.emit([...events, ...this.core.stop('GATEWAY_OVERLOADED')]);
      }
      this.emit(events);
      this.queueFlush();
    });

  /** At most one flush per tick, after every chunk of that tick was read. */
  private queueFlush(): void {
    if (this.flushQueued || this.done) return;
    this.flushQueued = true;
    process.nextTick(this.onFlush);
  }

  private readonly onFlush = (): void =>
    this.guard(() => {
      this.flushQueued = false;
      if (this.done) return;
      this.flush();
    });

  private readonly onEnd = (): void =>
    this.guard(() => {
      this.upstreamEnded = true;
      if (!this.done && this.core) this.emit(this.core.end());
    });

  /** The transfer broke (reset, close before the end, the call aborted). */
  private readonly onBroken = (): void =>
    this.guard(() => {
      if (!this.done && !this.upstreamEnded && this.core) this.emit(this.core.broken());
    });

  private readonly sink: StreamSink = { data: this.onData, end: this.onEnd, error: this.onBroken };

  private readonly onCallerClose = (): void => {
    if (!this.done) this.callerLeft();
  };

  private readonly onDrain = (): void => {
    if (!this.paused || this.done) return;
    this.paused = false;
    this.idle?.refresh();
    this.noData?.refresh();
    this.source.resume();
  };

  private readonly onShutdown = (): void => this.guard(() => this.emit(this.core?.stop('GATEWAY_SHUTDOWN') ?? []));

  private readonly onKeepAlive = (): void => {
    if (this.done || this.paused) return;
    this.bytesOut += writeText(this.opts.out, KEEP_ALIVE_COMMENT).bytes;
  };

  /** Events to write: held until the tick's flush, or written at once when they end the stream. */
  private emit(events: OutputEvent[]): void {
    if (this.done) return;
    for (const event of events) {
      this.redactions += event.redactions ?? 0;
      this.batch.push(event);
    }
    if (this.core?.finished) {
      this.flush();
      this.finish(false);
    }
  }

  /**
   * Writes the events held so far in one write, however many upstream chunks
   * carried them (a write per event cost ~3x the CPU under burst load), and
   * re-arms the silence timers once for all the bytes and events since the
   * last flush (re-arming per chunk was a timer-list update per event).
   */
  private flush(): void {
    if (this.bytesSinceFlush) this.idle?.refresh();
    if (this.eventsSinceFlush) this.noData?.refresh();
    this.bytesSinceFlush = false;
    this.eventsSinceFlush = false;
    const events = this.batch;
    if (events.length === 0) return;
    this.batch = [];
    let text = events[0]!.text;
    for (let i = 1; i < events.length; i++) text += events[i]!.text;
    const written = writeText(this.opts.out, text);
    this.bytesOut += written.bytes;
    if (written.bytes > 0) {
      this.events += events.length;
      if (this.opts.onEvent) for (const event of events) this.opts.onEvent(event);
    }
    if (written.full && !events[events.length - 1]!.final && !this.paused) {
      this.paused = true;
      this.source.pause();
    }
  }

  private finish(callerClosed: boolean): void {
    if (this.done) return;
    // Events read this tick are the caller's before the end (emit has written them already when it ends the stream).
    if (!callerClosed) this.flush();
    this.done = true;
    this.cleanup();
    this.opts.buffer?.release();
    if (!callerClosed && !callerGone(this.opts.out)) this.opts.out.end();
    if (!this.upstreamEnded) {
      try {
        this.opts.abortUpstream();
      } catch (err) {
        // Aborting is best effort (the body is destroyed below either way), but a throw here is a bug.
        this.opts.onInternalError?.(err);
      }
      this.source.destroy();
    }
    const outcome = this.core?.outcome ?? 'ok';
    const redacted = this.redactions > 0 ? { redactions: this.redactions } : {};
    this.resolve({ outcome, events: this.events, bytesIn: this.bytesIn, bytesOut: this.bytesOut, callerClosed, ...redacted });
  }

  private callerLeft(): void {
    this.finish(true);
  }

  private cleanup(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.length = 0;
    const { out, shutdown } = this.opts;
    out.off('close', this.onCallerClose);
    out.off('drain', this.onDrain);
    shutdown?.removeEventListener('abort', this.onShutdown);
  }

  /** Never throws: a bug in here ends the stream with GATEWAY_ERROR instead of crashing the gateway. */
  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.opts.onInternalError?.(err);
      if (this.done) return;
      try {
        if (this.core && !this.core.finished) this.emit(this.core.stop('GATEWAY_ERROR'));
      } catch (again) {
        // Fall through to a plain finish.
        this.opts.onInternalError?.(again);
      }
      if (!this.done) this.finish(callerGone(this.opts.out));
    }
  }
}
