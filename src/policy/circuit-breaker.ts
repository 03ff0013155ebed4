/**
 * Per-remote circuit breaker. After `failureThreshold` consecutive failures
 * inside `windowMs` it opens and refuses calls for `cooldownMs`; then it lets
 * exactly one probe through (half-open). The probe's outcome closes it or
 * re-opens it for another cooldown.
 *
 * Time is read lazily: the open → half-open step happens when someone asks
 * (`canPass()` or `state`), so the breaker needs no timers and no cleanup.
 */

export type CircuitState = 'closed' | 'open' | 'half-open';

export interface CircuitStateChange {
  readonly from: CircuitState;
  readonly to: CircuitState;
}

export interface CircuitBreakerOptions {
  /** Consecutive failures that open the circuit (>= 1). */
  readonly failureThreshold: number;
  /** The failures must all fall within this span: failures spread wider do not open it. */
  readonly windowMs: number;
  /** How long the circuit stays open before a probe is allowed. */
  readonly cooldownMs: number;
  /** Called on every transition, for metrics and logs. Must not throw. */
  readonly onStateChange?: (change: CircuitStateChange) => void;
}

const monotonicNow = (): number => performance.now();

export class CircuitBreaker {
  readonly #opts: CircuitBreakerOptions;
  readonly #now: () => number;
  #state: CircuitState = 'closed';
  /** Times of the current run of consecutive failures, oldest first, at most failureThreshold long. */
  #failures: number[] = [];
  #openedAt = 0;
  /** When the half-open probe was handed out, or undefined if it is still available. */
  #probeTakenAt: number | undefined;

  constructor(opts: CircuitBreakerOptions, now: () => number = monotonicNow) {
    if (!Number.isInteger(opts.failureThreshold) || opts.failureThreshold < 1) {
      throw new RangeError('CircuitBreaker: failureThreshold must be an integer >= 1');
    }
    for (const key of ['windowMs', 'cooldownMs'] as const) {
      if (!Number.isFinite(opts[key]) || opts[key] <= 0) {
        throw new RangeError(`CircuitBreaker: ${key} must be a finite number > 0`);
      }
    }
    this.#opts = opts;
    this.#now = now;
  }

  get state(): CircuitState {
    this.#advanceClock();
    return this.#state;
  }

  /** Milliseconds until an open circuit lets a probe through (0 when not open). */
  get retryAfterMs(): number {
    if (this.state !== 'open') return 0;
    return Math.max(1, Math.ceil(this.#openedAt + this.#opts.cooldownMs - this.#now()));
  }

  /**
   * True when a call may go ahead. In half-open, the first caller gets the
   * probe and everyone else is refused until it reports back. A probe that
   * never reports (its caller crashed) is given up after another cooldown, so
   * the breaker cannot stay half-open forever.
   */
  canPass(): boolean {
    this.#advanceClock();
    if (this.#state === 'closed') return true;
    if (this.#state === 'open') return false;
    const now = this.#now();
    if (this.#probeTakenAt !== undefined && now - this.#probeTakenAt < this.#opts.cooldownMs) return false;
    this.#probeTakenAt = now;
    return true;
  }

  onSuccess(): void {
    this.#advanceClock();
    // A late success from a call that started before the circuit opened says
    // nothing about the remote now: only the probe may close an open circuit.
    if (this.#state === 'open') return;
    this.#failures = [];
    if (this.#state === 'half-open') this.#transition('closed');
  }

  onFailure(): void {
    this.#advanceClock();
    const now = this.#now();
    if (this.#state === 'open') return;
    if (this.#state === 'half-open') {
      this.#open(now);
      return;
    }
    // Only failures inside the window count; older ones fall out of the run.
    this.#failures = this.#failures.filter((at) => now - at < this.#opts.windowMs);
    this.#failures.push(now);
    if (this.#failures.length >= this.#opts.failureThreshold) this.#open(now);
  }

  #open(now: number): void {
    this.#openedAt = now;
    this.#failures = [];
    this.#probeTakenAt = undefined;
    this.#transition('open');
  }

  #advanceClock(): void {
    if (this.#state === 'open' && this.#now() - this.#openedAt >= this.#opts.cooldownMs) {
      this.#probeTakenAt = undefined;
      this.#transition('half-open');
    }
  }

  #transition(to: CircuitState): void {
    const from = this.#state;
    if (from === to) return;
    this.#state = to;
    this.#opts.onStateChange?.({ from, to });
  }
}
