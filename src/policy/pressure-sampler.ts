/**
 * What load shedding judges (`server.maxEventLoopDelayMs`, `server.maxHeapUsedBytes`; routes/load-shed.ts): the
 * event loop's mean delay over the last second and the heap in use at its end, sampled once a second, and only while
 * a threshold is set.
 *
 * Measuring the loop's delay wakes the process a hundred times a second (a 10 ms timer whose lateness is recorded).
 * The gateway used to register @fastify/under-pressure once per listener for this, sampling whether shedding was on
 * or not (it is off by default): a histogram, a 10 ms timer and a once-a-second `process.memoryUsage()` per listener,
 * beside prom-client's own event-loop-lag timer. Idle with three listeners, 60-120 s after start, that process spent
 * 57-63 ticks of 10 ms a minute, and 30-34 with this sampler. One sampler per gateway now, running while a threshold
 * is set: started when the gateway starts with one or a reload sets one (or at the first call that finds one set and
 * the sampler idle); stopped at its next tick once a reload clears them.
 *
 * The figures are under-pressure's, so the thresholds keep their meaning: the delay is the histogram's mean less the
 * timer's own 10 ms (a window with no sample at all, a loop blocked throughout, counts as infinitely late) and the
 * heap is `process.memoryUsage().heapUsed`.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export interface PressureSample {
  /** Mean event-loop delay over the last window, in ms. */
  readonly eventLoopDelay: number;
  readonly heapUsed: number;
}

/** Before the first window ends: nothing is known, nothing is shed. */
const CALM: PressureSample = Object.freeze({ eventLoopDelay: 0, heapUsed: 0 });
const RESOLUTION_MS = 10;
const WINDOW_MS = 1000;

export class PressureSampler {
  #histogram: IntervalHistogram | undefined;
  #timer: NodeJS.Timeout | undefined;
  #last: PressureSample = CALM;

  /** @param wanted read at each tick: whether a threshold is still set (the config in force). */
  constructor(private readonly wanted: () => boolean) {}

  /** The last window's figures; starts sampling when it is wanted and not running (CALM until its first window ends). */
  sample(): PressureSample {
    this.startIfWanted();
    return this.#last;
  }

  /** Starts sampling if it is wanted and not running (the gateway's start and each reload ask). */
  startIfWanted(): void {
    if (this.#timer === undefined && this.wanted()) this.start();
  }

  get running(): boolean {
    return this.#timer !== undefined;
  }

  start(): void {
    if (this.#timer !== undefined) return;
    this.#histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.#histogram.enable();
    // Unref'd: a sampler never keeps the process alive.
    this.#timer = setTimeout(() => this.#tick(), WINDOW_MS).unref();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#histogram?.disable();
    this.#histogram = undefined;
    this.#last = CALM;
  }

  #tick(): void {
    if (!this.wanted()) return this.stop();
    const histogram = this.#histogram!;
    const delay = Math.max(0, histogram.mean / 1e6 - RESOLUTION_MS);
    histogram.reset();
    this.#last = { eventLoopDelay: Number.isNaN(delay) ? Infinity : delay, heapUsed: process.memoryUsage().heapUsed };
    this.#timer?.refresh();
  }
}
