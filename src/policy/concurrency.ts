/**
 * Per-remote concurrency limit with a short, bounded FIFO queue. A call that
 * cannot start at once waits at most `queueTimeoutMs`; when the queue is full
 * it is refused at once, so an overloaded remote sheds load instead of piling
 * up sockets and memory in the gateway.
 */
import { LimitError } from './limit-error.js';

export interface ConcurrencyLimiterOptions {
  /** Calls allowed in flight at once (>= 1). */
  readonly maxConcurrent: number;
  /** Calls allowed to wait for a slot (>= 0; 0 = refuse instead of waiting). */
  readonly maxQueued: number;
  /** How long a queued call waits before it is refused. */
  readonly queueTimeoutMs: number;
}

/** Gives the slot back. Calling it again does nothing. */
export type Release = () => void;

interface Waiter {
  readonly resolve: (release: Release) => void;
  readonly reject: (err: unknown) => void;
  readonly timer: NodeJS.Timeout;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

export class ConcurrencyLimiter {
  readonly #opts: ConcurrencyLimiterOptions;
  // A plain array is fine: the queue is small and bounded by maxQueued.
  readonly #waiters: Waiter[] = [];
  #inFlight = 0;

  constructor(opts: ConcurrencyLimiterOptions) {
    if (!Number.isInteger(opts.maxConcurrent) || opts.maxConcurrent < 1) {
      throw new RangeError('ConcurrencyLimiter: maxConcurrent must be an integer >= 1');
    }
    if (!Number.isInteger(opts.maxQueued) || opts.maxQueued < 0) {
      throw new RangeError('ConcurrencyLimiter: maxQueued must be an integer >= 0');
    }
    if (!Number.isFinite(opts.queueTimeoutMs) || opts.queueTimeoutMs < 0) {
      throw new RangeError('ConcurrencyLimiter: queueTimeoutMs must be a finite number >= 0');
    }
    this.#opts = { ...opts };
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get queued(): number {
    return this.#waiters.length;
  }

  /**
   * Resolves with a Release once a slot is held. Rejects with LimitError
   * (OVERLOADED) when the queue is full or the wait times out, and with the
   * signal's reason when `signal` aborts first. `signal` may be a function
   * that makes it, called only when the call has to wait (a free slot needs none).
   */
  acquire(lazySignal?: AbortSignal | (() => AbortSignal)): Promise<Release> {
    if (typeof lazySignal !== 'function' && lazySignal?.aborted) return Promise.reject(abortReason(lazySignal));
    const slot = this.tryAcquire();
    if (slot) return Promise.resolve(slot);
    if (this.#waiters.length >= this.#opts.maxQueued) {
      return Promise.reject(new LimitError('OVERLOADED', 'queue full'));
    }
    const signal = typeof lazySignal === 'function' ? lazySignal() : lazySignal;
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        timer: setTimeout(() => {
          this.#remove(waiter);
          reject(new LimitError('OVERLOADED', 'queue timeout'));
        }, this.#opts.queueTimeoutMs),
        onAbort: () => {
          this.#remove(waiter);
          reject(abortReason(signal));
        },
      };
      // Not unref'd: the timer is bounded by queueTimeoutMs, and an unref'd one
      // could leave a waiter's promise unsettled forever in a quiet process.
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  #makeRelease(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#handOver();
    };
  }

  /** A freed slot goes straight to the oldest waiter, so a newcomer cannot jump the queue. */
  #handOver(): void {
    const next = this.#waiters.shift();
    if (next === undefined) {
      this.#inFlight--;
      return;
    }
    this.#detach(next);
    next.resolve(this.#makeRelease());
  }

  /** A slot at once when one is free (no promise made), else undefined: nothing is taken or queued. */
  tryAcquire(): Release | undefined {
    if (this.#inFlight >= this.#opts.maxConcurrent) return undefined;
    this.#inFlight++;
    return this.#makeRelease();
  }

  /**
   * acquire without a promise when it can: the Release itself for a free slot; otherwise acquire's promise (a wait,
   * or the refusal of a signal already aborted, which is refused even when a slot is free).
   */
  acquireNow(lazySignal?: AbortSignal | (() => AbortSignal)): Release | Promise<Release> {
    const aborted = typeof lazySignal !== 'function' && lazySignal?.aborted === true;
    return (aborted ? undefined : this.tryAcquire()) ?? this.acquire(lazySignal);
  }

  #remove(waiter: Waiter): void {
    const index = this.#waiters.indexOf(waiter);
    if (index !== -1) this.#waiters.splice(index, 1);
    this.#detach(waiter);
  }

  #detach(waiter: Waiter): void {
    clearTimeout(waiter.timer);
    waiter.signal?.removeEventListener('abort', waiter.onAbort);
  }
}

function abortReason(signal: AbortSignal | undefined): unknown {
  return signal?.reason ?? new DOMException('This operation was aborted', 'AbortError');
}
