/**
 * Redeliveries: A2A push delivery is at least once (spec §4.3.3), so a
 * remote may send the same event again. A push whose delivered body is the
 * same as one already taken for the same config within the window is
 * acknowledged and not delivered again. Memory is bounded: at most
 * `maxEntries` digests (32 bytes each plus the map's overhead), oldest
 * forgotten first. Per process: another replica has its own window, so a
 * local agent still sees an event twice now and then (and must be
 * idempotent, as the spec asks of webhook receivers anyway).
 */
import { createHash } from 'node:crypto';

export class RedeliveryWindow {
  /** digest → time it was first seen (ms, the injected clock). Insertion order = age order. */
  readonly #seen = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** True when this (config, body) was seen within the window; otherwise remembers it and returns false. */
  seenBefore(configRef: string, body: string): boolean {
    const t = this.now();
    this.#expire(t);
    const digest = createHash('sha256').update(configRef).update('\0').update(body).digest('base64');
    if (this.#seen.has(digest)) return true;
    this.#seen.set(digest, t);
    while (this.#seen.size > this.maxEntries) this.#seen.delete(this.#seen.keys().next().value!);
    return false;
  }

  /** Forgets a push that was taken but could not be queued, so a redelivery is not mistaken for a duplicate. */
  forget(configRef: string, body: string): void {
    this.#seen.delete(createHash('sha256').update(configRef).update('\0').update(body).digest('base64'));
  }

  get size(): number {
    return this.#seen.size;
  }

  #expire(t: number): void {
    for (const [digest, at] of this.#seen) {
      if (t - at < this.windowMs) break;
      this.#seen.delete(digest);
    }
  }
}
