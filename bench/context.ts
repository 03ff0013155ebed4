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
 * Runs a, b, b, a, a, b, ...: drift in the machine's state hits both sides alike, and neither side always runs
 * right after the other (a round can inherit the previous one's caches, page cache and scheduler state).
 */
export async function alternate<T>(rounds: number, a: () => Promise<T>, b: () => Promise<T>): Promise<{ a: T[]; b: T[] }> {
  const [as, bs] = await alternateMany(rounds, [a, b]);
  return { a: as!, b: bs! };
}

/** Like alternate, for any number of sides: round i runs every side once, in order on even rounds and reversed on odd ones. */
export async function alternateMany<T>(rounds: number, sides: readonly (() => Promise<T>)[]): Promise<T[][]> {
  const out = sides.map(() => [] as T[]);
  for (let i = 0; i < rounds; i++) {
    for (const j of roundOrder(sides.length, i)) out[j]!.push(await sides[j]!());
  }
  return out;
}

/** The order of the sides in round `round`: 0..n-1, then n-1..0, and so on. */
export function roundOrder(sides: number, round: number): number[] {
  const order = Array.from({ length: sides }, (_, j) => j);
  return round % 2 === 0 ? order : order.reverse();
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
