/** What every scenario gets from the runner, and the helpers they share. */
import type { Child } from './processes.js';

export interface BenchContext {
  readonly quick: boolean;
  readonly upstream: Child;
  /** The gateway at logLevel warn (per-call info logging off), shared by scenarios that need no fresh process. */
  readonly gateway: Child;
  readonly log: (line: string) => void;
}

/** A duration (or count) for the full run, or the shorter one `--quick` uses. */
export const pick = <T>(ctx: BenchContext, full: T, quick: T): T => (ctx.quick ? quick : full);

export const directUrl = (ctx: BenchContext, route: string) => `http://127.0.0.1:${ctx.upstream.port}/${route}`;
export const gatewayUrl = (gateway: Child, remote: string) => `http://127.0.0.1:${gateway.port}/remotes/${remote}`;

/**
 * Runs both sides once per round, in an order shuffled per round (roundOrder): drift in the machine's state hits
 * both sides alike, and no side always runs first, last or right after the other.
 */
export async function alternate<T>(rounds: number, a: () => Promise<T>, b: () => Promise<T>): Promise<{ a: T[]; b: T[] }> {
  const [as, bs] = await alternateMany(rounds, [a, b]);
  return { a: as!, b: bs! };
}

/** Like alternate, for any number of sides: round i runs every side once, in roundOrder(sides, i). */
export async function alternateMany<T>(rounds: number, sides: readonly (() => Promise<T>)[]): Promise<T[][]> {
  const out = sides.map(() => [] as T[]);
  for (let i = 0; i < rounds; i++) {
    for (const j of roundOrder(sides.length, i)) out[j]!.push(await sides[j]!());
  }
  return out;
}

/**
 * The order of the sides in round `round`: a shuffle seeded by the round (the same in every run), rotated to start
 * with side `round % sides`. The host's bursts
 * of other work last seconds: in a fixed order they hit the same places of every round, and with every other round
 * reversed (tried first) a burst across two rounds hit the same sides twice running (one run's gateway rounds read
 * 76-131 µs while the hops' read 50-72).
 */
export function roundOrder(sides: number, round: number): number[] {
  const order = Array.from({ length: sides }, (_, j) => j);
  let seed = (round + 1) * 0x9e3779b1;
  for (let i = sides - 1; i > 0; i--) {
    // mulberry32: a small, well-mixed generator (the order needs no more).
    seed = (seed + 0x6d2b79f5) | 0;
    let r = Math.imul(seed ^ (seed >>> 15), seed | 1);
    r ^= r + Math.imul(r ^ (r >>> 7), r | 61);
    const j = ((r ^ (r >>> 14)) >>> 0) % (i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  // Rotated so that the first side goes round the sides in turn: with few sides a shuffle alone may start most rounds
  // with the same one (3 sides, 5 rounds: one side first 4 times).
  const first = order.indexOf(round % sides);
  return order.slice(first).concat(order.slice(0, first));
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
