/**
 * The stream relay's core for any pair of bindings: the same SSE parsing and
 * byte, event and size bounds as the JSON-RPC relay (EventRelayCore, which
 * this extends), but each upstream event is read by the remote's codec into
 * a StreamItem, redacted, and written by the caller's codec. Pure like its
 * parent: bytes in, caller text out.
 */
import type { Reason } from '../envelope/codes.js';
import type { Redactor } from '../envelope/redact.js';
import { EventRelayCore, type CoreOptions, type OutputEvent } from '../stream/event-core.js';
import type { SseEvent } from '../stream/sse-parser.js';
import type { ErrorOutcome, StreamItem } from './outcome.js';
import { redactOutcome } from './redact-outcome.js';

export interface ItemCoreOptions {
  /** The remote's codec: one upstream event → one item (`index` 1-based). */
  readonly read: (event: SseEvent, index: number) => StreamItem;
  /** The caller's codec: one item → the exact text to write. */
  readonly write: (item: StreamItem) => string;
  /** A gateway-caused ending as an error (catalogue text, the stream's HTTP status). */
  readonly stopError: (reason: Reason, detail?: string) => ErrorOutcome;
  /** Asked per event (a rotated token file applies to the events after it). */
  readonly redactor?: (() => Redactor | undefined) | undefined;
  /** A last look at each redacted item (the version bridge), with the event's 1-based index. */
  readonly rewrite?: ((item: StreamItem, index: number) => StreamItem) | undefined;
}

export class ItemRelayCore extends EventRelayCore {
  constructor(
    opts: CoreOptions,
    private readonly items: ItemCoreOptions,
  ) {
    super(opts);
  }

  protected override eventOutput(event: SseEvent, index: number): OutputEvent {
    const item = this.items.read(event, index);
    const redactor = this.items.redactor?.();
    if (!redactor) return this.output(this.rewritten(item, index), 0);
    const redacted = redactOutcome(item.outcome, redactor, (where) => this.items.stopError('CREDENTIAL_ECHOED', where));
    if (redacted.redactions === 0) return this.output(this.rewritten(item, index), 0);
    const outcome = redacted.outcome;
    const next: StreamItem = outcome.kind === 'result' ? { outcome, final: false } : { outcome, final: true };
    return this.output(this.rewritten(next, index), redacted.redactions);
  }

  private rewritten(item: StreamItem, index: number): StreamItem {
    return this.items.rewrite ? this.items.rewrite(item, index) : item;
  }

  protected override stopOutput(reason: Reason, detail?: string): OutputEvent {
    return this.output({ outcome: this.items.stopError(reason, detail), final: true }, 0);
  }

  private output(item: StreamItem, redactions: number): OutputEvent {
    const outcome = item.outcome;
    return {
      text: this.items.write(item),
      json: outcome.kind === 'result' ? outcome.json : '',
      outcome: outcome.kind === 'result' ? 'ok' : outcome.reason,
      final: item.final,
      ...(redactions > 0 ? { redactions } : {}),
    };
  }
}
