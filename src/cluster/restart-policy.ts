/**
 * When a worker dies unexpectedly the primary forks a replacement, after a
 * delay that doubles with each death in the window (100 ms, 200 ms, ... up
 * to maxDelayMs), and gives up once more than maxRestarts deaths fall within
 * windowMs: a worker that dies at start (a bad disk, a port taken, a bug hit
 * by every request) would otherwise be forked forever. Giving up stops the
 * whole gateway with exit code 1, so the supervisor (systemd, Kubernetes)
 * sees the failure instead of a gateway quietly serving on fewer workers.
 */
export interface RestartPolicyOptions {
  readonly maxRestarts: number;
  readonly windowMs: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicyOptions = { maxRestarts: 5, windowMs: 60_000, baseDelayMs: 100, maxDelayMs: 5_000 };

export type RestartDecision = { readonly restart: true; readonly delayMs: number } | { readonly restart: false; readonly why: string };

export class RestartPolicy {
  /** When each recent unexpected death happened (ms, the injected clock), oldest first. */
  readonly #deaths: number[] = [];

  constructor(
    private readonly opts: RestartPolicyOptions = DEFAULT_RESTART_POLICY,
    private readonly now: () => number = Date.now,
  ) {}

  /** A worker died unexpectedly: fork again after `delayMs`, or give up. */
  onDeath(): RestartDecision {
    const t = this.now();
    this.#deaths.push(t);
    while (this.#deaths.length > 0 && this.#deaths[0]! <= t - this.opts.windowMs) this.#deaths.shift();
    const recent = this.#deaths.length;
    if (recent > this.opts.maxRestarts) {
      return { restart: false, why: `${recent} workers died within ${this.opts.windowMs} ms (at most ${this.opts.maxRestarts} are replaced)` };
    }
    return { restart: true, delayMs: Math.min(this.opts.maxDelayMs, this.opts.baseDelayMs * 2 ** (recent - 1)) };
  }
}
