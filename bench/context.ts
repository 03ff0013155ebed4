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

/** Runs a, b, a, b, ... so drift in the machine's state hits both sides alike. */
export async function alternate<T>(rounds: number, a: () => Promise<T>, b: () => Promise<T>): Promise<{ a: T[]; b: T[] }> {
  const out = { a: [] as T[], b: [] as T[] };
  for (let i = 0; i < rounds; i++) {
    out.a.push(await a());
    out.b.push(await b());
  }
  return out;
}

/** Like alternate, for any number of sides: round i runs every side once, in order. */
export async function alternateMany<T>(rounds: number, sides: readonly (() => Promise<T>)[]): Promise<T[][]> {
  const out = sides.map(() => [] as T[]);
  for (let i = 0; i < rounds; i++) {
    for (const [j, side] of sides.entries()) out[j]!.push(await side());
  }
  return out;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
