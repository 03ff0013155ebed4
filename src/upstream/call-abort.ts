/**
 * How one call (unary, or a stream until and while it is relayed) is ended
 * early, for a reason of the gateway's: its total deadline or its headers
 * deadline (UPSTREAM_TIMEOUT), the caller leaving (CALLER_CLOSED) or the end
 * of the shutdown drain (GATEWAY_SHUTDOWN).
 *
 * The deadlines are entries of the shared queues (deadlines.ts); the drain is
 * one listener per drain signal for all calls (not one per call); the work in
 * flight (an upstream exchange) registers itself as the one thing to tell.
 * An AbortSignal is made only when something asks for one (a wait in the
 * concurrency queue, a retry's backoff, a stream's undici request()), so a
 * call that needs none has none.
 */
import { CallAborted } from './errors.js';
import { Deadline, deadlines, type DeadlineQueues } from './deadlines.js';
import type { Reason } from '../envelope/codes.js';

/** The caller's side of the call (a ServerResponse): its closing before the reply finished means the caller left. */
export interface CallerSide {
  readonly writableFinished: boolean;
  on(event: 'close', listener: () => void): unknown;
  off(event: 'close', listener: () => void): unknown;
}

/** The thing a call is doing right now that must stop when it is aborted. */
export interface AbortTarget {
  abort(error: CallAborted): void;
}

export class CallAbort {
  #error: CallAborted | undefined;
  #controller: AbortController | undefined;
  #target: AbortTarget | undefined;
  readonly #total = new Deadline(() => this.abort('UPSTREAM_TIMEOUT'));
  readonly #headers = new Deadline(() => this.abort('UPSTREAM_TIMEOUT'));
  #drain: DrainWatch | undefined;
  /** @internal links in its drain watch's list of calls (see DrainWatch) */
  drainPrev: CallAbort | null = null;
  /** @internal */
  drainNext: CallAbort | null = null;
  #caller: CallerSide | undefined;
  readonly #onCallerClose = (): void => {
    if (this.#caller && !this.#caller.writableFinished) this.abort('CALLER_CLOSED');
  };

  constructor(private readonly queues: DeadlineQueues = deadlines) {}

  get aborted(): boolean {
    return this.#error !== undefined;
  }

  /** The CallAborted it was aborted with. */
  get error(): CallAborted | undefined {
    return this.#error;
  }

  /** A signal that aborts with the call (made on first use). */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#error) this.#controller.abort(this.#error);
    }
    return this.#controller.signal;
  }

  /** The first reason wins; later ones are ignored. */
  abort(reason: Reason): void {
    if (this.#error) return;
    const error = new CallAborted(reason);
    this.#error = error;
    this.#controller?.abort(error);
    this.#target?.abort(error);
  }

  /** Tells `target` when the call is aborted (at once if it already is); undefined to stop. */
  setTarget(target: AbortTarget | undefined): void {
    this.#target = target;
    if (target && this.#error) target.abort(this.#error);
  }

  /** The whole call's deadline. */
  startTotal(ms: number): void {
    this.queues.start(this.#total, ms);
  }

  /** A stream's relay took over (its own timers bound it): the total deadline no longer applies. */
  stopTotal(): void {
    this.queues.stop(this.#total);
  }

  /** The wait for the response head (retries included). */
  startHeaders(ms: number): void {
    this.queues.start(this.#headers, ms);
  }

  stopHeaders(): void {
    this.queues.stop(this.#headers);
  }

  /** Aborts with GATEWAY_SHUTDOWN when `drainEnd` aborts (at once if it has). */
  watchDrain(drainEnd: AbortSignal): void {
    if (drainEnd.aborted) return this.abort('GATEWAY_SHUTDOWN');
    const watch = drainWatchOf(drainEnd);
    // Watching again is a no-op, and watching another signal leaves the first: a call is in one list at most.
    if (this.#drain === watch) return;
    this.#drain?.remove(this);
    this.#drain = watch;
    watch.add(this);
  }

  /** Aborts with CALLER_CLOSED when the caller's side closes before its reply finished. */
  watchCaller(caller: CallerSide): void {
    this.#caller = caller;
    // `on`, not `once`: finish() removes it, and once's wrapper (a bound closure and its state) is not made per call.
    caller.on('close', this.#onCallerClose);
  }

  /** The call is over: no deadline, drain, caller listener or target is left holding it. */
  finish(): void {
    this.queues.stop(this.#total);
    this.queues.stop(this.#headers);
    this.#caller?.off('close', this.#onCallerClose);
    this.#caller = undefined;
    this.#drain?.remove(this);
    this.#drain = undefined;
    this.#target = undefined;
  }
}

/**
 * The calls to abort when one drain signal fires: one listener on the signal for all of them, and the calls in a
 * list linked through the calls themselves. A Set did the same with a hash per call and, as calls came and went, a
 * table grown and shrunk through V8's runtime (about 0.2 µs of each call under perf).
 */
class DrainWatch {
  #head: CallAbort | null = null;

  constructor(signal: AbortSignal) {
    signal.addEventListener('abort', () => this.#abortAll(), { once: true });
  }

  add(call: CallAbort): void {
    call.drainPrev = null;
    call.drainNext = this.#head;
    if (this.#head !== null) this.#head.drainPrev = call;
    this.#head = call;
  }

  remove(call: CallAbort): void {
    if (call.drainPrev !== null) call.drainPrev.drainNext = call.drainNext;
    else if (this.#head === call) this.#head = call.drainNext;
    if (call.drainNext !== null) call.drainNext.drainPrev = call.drainPrev;
    call.drainPrev = call.drainNext = null;
  }

  /**
   * Every call still watching is aborted, and the list is emptied first (the signal fires once): nothing is held
   * for a call that never finishes, and each call's finish() then finds itself unlinked.
   */
  #abortAll(): void {
    const calls: CallAbort[] = [];
    for (let call = this.#head; call !== null; call = call.drainNext) calls.push(call);
    this.#head = null;
    for (const call of calls) call.drainPrev = call.drainNext = null;
    for (const call of calls) call.abort('GATEWAY_SHUTDOWN');
  }
}

const drainWatches = new WeakMap<AbortSignal, DrainWatch>();

function drainWatchOf(signal: AbortSignal): DrainWatch {
  let watch = drainWatches.get(signal);
  if (watch === undefined) {
    watch = new DrainWatch(signal);
    drainWatches.set(signal, watch);
  }
  return watch;
}
