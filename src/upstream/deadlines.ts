/**
 * Shared deadline queues: one timer per distinct duration, not one per call.
 *
 * Every entry of a queue has the same duration, so entries expire in the
 * order they were started: a queue is a FIFO list with ONE timer armed for
 * its head. Starting a deadline is an append and stopping it an unlink (both
 * O(1), no allocation but the entry, which a call reuses), so a call that
 * ends long before its deadline costs no timer work. Compare a per-call
 * AbortController with two setTimeouts: three objects, two insertions into
 * and removals from Node's timer lists, and an abort listener per call.
 *
 * A deadline never fires early (a timer that finds its head not yet due
 * re-arms for what is left) and fires within the event loop's usual timer
 * slack after it is due. Timers are unref'd: a deadline never keeps the
 * process alive by itself (the socket or caller it bounds does).
 * The clock and timer functions are injectable so tests use a fake clock.
 */
import { performance } from 'node:perf_hooks';

/** What a deadline calls when it expires. */
export type DeadlineCallback = () => void;

/** One pending (or idle) deadline; owned by one call, restartable after it stopped or fired. */
export class Deadline {
  /** Clock time at which it is due. */
  at = 0;
  /** @internal list links */
  next: Deadline | null = null;
  /** @internal */
  prev: Deadline | null = null;
  /** @internal the queue this entry waits in; null when not pending. */
  queue: DurationQueue | null = null;

  constructor(readonly onExpire: DeadlineCallback) {}

  get pending(): boolean {
    return this.queue !== null;
  }
}

export interface DeadlineClock {
  /** Monotonic milliseconds. */
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

export const realClock: DeadlineClock = {
  now: () => performance.now(),
  setTimer: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** @internal The entries of one duration, soonest due first. */
class DurationQueue {
  head: Deadline | null = null;
  tail: Deadline | null = null;
  timer: unknown = undefined;

  constructor(
    readonly ms: number,
    private readonly owner: DeadlineQueues,
  ) {}

  append(entry: Deadline): void {
    entry.queue = this;
    entry.prev = this.tail;
    entry.next = null;
    if (this.tail) this.tail.next = entry;
    else this.head = entry;
    this.tail = entry;
    if (this.timer === undefined) this.arm(entry.at);
  }

  unlink(entry: Deadline): void {
    if (entry.prev) entry.prev.next = entry.next;
    else this.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    else this.tail = entry.prev;
    entry.prev = entry.next = null;
    entry.queue = null;
    // The timer stays armed: when it runs it finds the new head (or nothing) and acts on that.
  }

  arm(at: number): void {
    const clock = this.owner.clock;
    this.timer = clock.setTimer(this.fire, Math.max(1, Math.ceil(at - clock.now())));
  }

  readonly fire = (): void => {
    this.timer = undefined;
    const now = this.owner.clock.now();
    // Due order: run the due ones. A callback may start new deadlines; they are appended behind.
    for (let entry = this.head; entry !== null && entry.at <= now; entry = this.head) {
      this.unlink(entry);
      entry.onExpire();
    }
    if (this.head !== null) {
      if (this.timer === undefined) this.arm(this.head.at);
    } else if (this.timer === undefined) this.owner.drop(this);
  };
}

export class DeadlineQueues {
  readonly #queues = new Map<number, DurationQueue>();

  constructor(readonly clock: DeadlineClock = realClock) {}

  /** (Re)starts `entry` to expire `ms` (rounded up to whole milliseconds) from now; a pending entry is moved. */
  start(entry: Deadline, ms: number): void {
    if (entry.queue !== null) entry.queue.unlink(entry);
    const key = Math.max(0, Math.ceil(ms));
    let queue = this.#queues.get(key);
    if (queue === undefined) {
      queue = new DurationQueue(key, this);
      this.#queues.set(key, queue);
    }
    entry.at = this.clock.now() + key;
    queue.append(entry);
  }

  /** Stops a pending entry; nothing happens for one that is not pending. */
  stop(entry: Deadline): void {
    if (entry.queue !== null) entry.queue.unlink(entry);
  }

  /** Entries pending over all durations (tests, state). */
  get size(): number {
    let n = 0;
    for (const queue of this.#queues.values()) for (let e = queue.head; e !== null; e = e.next) n++;
    return n;
  }

  /** Distinct durations with a queue (and so at most one timer each). */
  get durations(): number {
    return this.#queues.size;
  }

  /** @internal a queue whose timer found it empty goes; a later start makes a new one. */
  drop(queue: DurationQueue): void {
    if (queue.head === null && this.#queues.get(queue.ms) === queue) this.#queues.delete(queue.ms);
  }
}

/** The process-wide queues every call shares. */
export const deadlines = new DeadlineQueues();
