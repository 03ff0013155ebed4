/**
 * The pure heart of the stream relay: upstream bytes in, caller events out.
 * No sockets and no clock: relay.ts feeds it chunks and tells it when a timer
 * or the gateway ends the stream. Every bound that is counted in bytes or
 * events lives here, so a test (or a fuzz loop) can drive it with any
 * chunking and check that the output is the same.
 */
import type { CallerGeneration, Reason } from '../envelope/codes.js';
import type { JsonRpcId } from '../envelope/envelope.js';
import { failureEnvelope, normalizePolicyOf, type NormalizePolicy } from '../envelope/normalize.js';
import type { Redactor } from '../envelope/redact.js';
import type { Limits, RemoteConfig } from '../config/schema.js';
import { normalizeEvent, oneLine, type EventContext, type EventOutcome } from './event-normalize.js';
import { SseParser, type SseEvent, type SseItem } from './sse-parser.js';

export interface OutputEvent {
  /** The exact text to write: `data: <one-line JSON>\n\n`. */
  readonly text: string;
  readonly json: string;
  readonly outcome: EventOutcome;
  /** Nothing follows this event; the relay closes both sides. */
  readonly final: boolean;
  /** Credentials of the remote removed from (or refused in) this event. */
  readonly redactions?: number | undefined;
}

export interface CoreOptions {
  readonly callerId: JsonRpcId;
  readonly remote: Pick<RemoteConfig, 'name' | 'keepRemoteErrorData'> & {
    readonly limits: Pick<Limits, 'maxEventBytes' | 'maxStreamBytes' | 'maxStreamEvents' | 'maxResponseBytes' | 'maxErrorMessageBytes' | 'maxJsonDepth'>;
  };
  /** The upstream's HTTP status (200 for a stream). */
  readonly httpStatus: number;
  /** See EventContext.checkResult. */
  readonly checkResult?: EventContext['checkResult'];
  /** See EventContext.translateResult (the version bridge). */
  readonly translateResult?: EventContext['translateResult'];
  /** The caller's A2A generation (shape of error.data); default 1.0. */
  readonly caller?: CallerGeneration | undefined;
  /**
   * The remote's redactor, asked for each event: a token file that rotates
   * during a long stream is redacted from the events after it.
   */
  readonly redactor?: (() => Redactor | undefined) | undefined;
}

/** What relay.ts drives. */
export interface RelayCore {
  readonly finished: boolean;
  /** How the stream ended so far: 'ok' until an error event is produced. */
  readonly outcome: EventOutcome;
  push(chunk: Buffer): OutputEvent[];
  /** The upstream body ended cleanly. */
  end(): OutputEvent[];
  /** The upstream body failed (reset, abort) before it ended. */
  broken(): OutputEvent[];
  /** The gateway ends the stream (a timer, shutdown). */
  stop(reason: Reason): OutputEvent[];
}

export function toOutput(json: string, outcome: EventOutcome, final: boolean, redactions?: number): OutputEvent {
  const line = oneLine(json);
  const text = `data: ${line}\n\n`;
  // Built without a spread: this runs once per relayed event.
  return redactions ? { text, json: line, outcome, final, redactions } : { text, json: line, outcome, final };
}

/** The normalizer's policy for a stream, its redactor looked up live (see CoreOptions.redactor). */
function streamPolicy(opts: CoreOptions): NormalizePolicy {
  const policy = normalizePolicyOf(opts.remote, opts.caller);
  const redactor = opts.redactor;
  if (!redactor) return policy;
  return Object.defineProperty({ ...policy }, 'redactor', { get: redactor, enumerable: true });
}

/** Shared ending logic: at most one final event, after which everything is ignored. */
abstract class CoreBase implements RelayCore {
  finished = false;
  outcome: EventOutcome = 'ok';
  protected readonly eventRules: EventContext;

  constructor(protected readonly opts: CoreOptions) {
    this.eventRules = { callerId: opts.callerId, policy: streamPolicy(opts), httpStatus: opts.httpStatus, checkResult: opts.checkResult,
      ...(opts.translateResult ? { translateResult: opts.translateResult, maxEventBytes: opts.remote.limits.maxEventBytes } : {}) };
  }

  abstract push(chunk: Buffer): OutputEvent[];
  abstract end(): OutputEvent[];
  abstract broken(): OutputEvent[];

  stop(reason: Reason, detail?: string): OutputEvent[] {
    if (this.finished) return [];
    return [this.finish(this.stopOutput(reason, detail))];
  }

  /** The final event of an ending the gateway causes (a subclass writes it in another binding). */
  protected stopOutput(reason: Reason, detail?: string): OutputEvent {
    const errorFacts = { remote: this.eventRules.policy.remote, httpStatus: this.eventRules.httpStatus, caller: this.eventRules.policy.caller };
    return toOutput(failureEnvelope(this.eventRules.callerId, reason, errorFacts, detail).json, reason, true);
  }

  protected finish(event: OutputEvent): OutputEvent {
    this.finished = true;
    this.outcome = event.outcome;
    return event;
  }
}

/** An upstream `text/event-stream`: each event normalized, every bound counted as bytes arrive. */
export class EventRelayCore extends CoreBase {
  private readonly parser: SseParser;
  private streamBytes = 0;
  /** The events of the chunk being pushed; the parser's sink (bound once, not per chunk) adds to it. */
  private out: OutputEvent[] = [];
  private readonly sink = (item: SseItem): boolean => this.onItem(item, this.out);
  /** Upstream events dispatched (events with data), the count maxStreamEvents bounds. */
  upstreamEvents = 0;

  constructor(opts: CoreOptions) {
    super(opts);
    this.parser = new SseParser(opts.remote.limits.maxEventBytes);
  }

  /** Bytes held for the event being assembled; the relay counts them against the gateway's budget. */
  get bufferedBytes(): number {
    return this.parser.bufferedBytes;
  }

  push(chunk: Buffer): OutputEvent[] {
    if (this.finished) return [];
    const out: OutputEvent[] = [];
    this.out = out;
    // Only the bytes within the stream bound are read, so the output does not depend on chunking.
    const room = this.opts.remote.limits.maxStreamBytes - this.streamBytes;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.streamBytes += part.length;
    this.parser.push(part, this.sink);
    if (!this.finished && part.length < chunk.length) {
      out.push(...this.stop('STREAM_TOO_LARGE', `more than ${this.opts.remote.limits.maxStreamBytes} bytes`));
    }
    return out;
  }

  end(): OutputEvent[] {
    if (this.finished) return [];
    if (this.parser.pending) return this.stop('STREAM_TRUNCATED');
    // A stream that closes without a single event would look to the caller like a silent success.
    if (this.upstreamEvents === 0) return this.stop('EMPTY_RESPONSE', 'the stream ended without an event');
    this.finished = true;
    return [];
  }

  broken(): OutputEvent[] {
    return this.stop(this.parser.pending ? 'STREAM_TRUNCATED' : 'UPSTREAM_RESET');
  }

  private onItem(item: SseItem, out: OutputEvent[]): boolean {
    if (item.kind === 'comment') return true;
    if (item.kind === 'too-large') {
      out.push(...this.stop('EVENT_TOO_LARGE', `more than ${this.opts.remote.limits.maxEventBytes} bytes`));
      return false;
    }
    this.upstreamEvents++;
    if (this.upstreamEvents > this.opts.remote.limits.maxStreamEvents) {
      out.push(...this.stop('STREAM_TOO_MANY_EVENTS', `more than ${this.opts.remote.limits.maxStreamEvents} events`));
      return false;
    }
    const event = this.eventOutput(item, this.upstreamEvents);
    out.push(event.final ? this.finish(event) : event);
    return !event.final;
  }

  /** One upstream event, normalized and written for the caller (a subclass reads and writes other bindings). */
  protected eventOutput(item: SseEvent, index: number): OutputEvent {
    const n = normalizeEvent(item, this.eventRules, index);
    return toOutput(n.json, n.outcome, n.final, n.redactions);
  }
}
