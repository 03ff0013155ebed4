/**
 * One memory budget for every byte the gateway holds on behalf of remotes:
 * unary bodies being read and SSE events being assembled. Per-call caps
 * bound one call; this bounds their sum, so 100 remotes each sending a 1 GB
 * body cost at most the budget, not 100 × maxResponseBytes. A call that
 * cannot get room fails with GATEWAY_OVERLOADED instead of growing the heap.
 */

export class BufferBudget {
  #used = 0;
  #maxBytes: number;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  get maxBytes(): number {
    return this.#maxBytes;
  }

  /** A reload: the new bound applies to the next bytes taken; what calls already hold is not taken back. */
  set maxBytes(bytes: number) {
    this.#maxBytes = bytes;
  }

  get used(): number {
    return this.#used;
  }

  lease(): BufferLease {
    return new BufferLease(this);
  }

  /** @internal used by leases */
  adjust(delta: number): boolean {
    if (delta > 0 && this.#used + delta > this.#maxBytes) return false;
    this.#used = Math.max(0, this.#used + delta);
    return true;
  }
}

/** The bytes one call holds; grows and shrinks with it, returned whole on release(). */
export class BufferLease {
  #held = 0;
  #released = false;

  constructor(private readonly budget: BufferBudget) {}

  get held(): number {
    return this.#held;
  }

  /** Takes `n` more bytes; false (and nothing taken) when the budget is full. */
  take(n: number): boolean {
    if (this.#released) return false;
    if (!this.budget.adjust(n)) return false;
    this.#held += n;
    return true;
  }

  /** Sets what this call holds to exactly `n` bytes (streams: the event being assembled). */
  resize(n: number): boolean {
    return n >= this.#held ? this.take(n - this.#held) : (this.budget.adjust(n - this.#held), (this.#held = n), true);
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.budget.adjust(-this.#held);
    this.#held = 0;
  }
}
