/**
 * Two on-CPU profiles side by side, in CPU microseconds per call: where a
 * process that does more per call (the gateway) spends what a minimal one
 * (the bare dispatch hop) does not. A profile's percentages are shares of its
 * own samples, so two profiles' percentages do not compare; a sample's period
 * (the CPU nanoseconds it stands for, with perf's cpu-clock event) divided by
 * the calls the process answered does. Each view's rows are sorted by the
 * difference, so the first lines say where the extra time goes.
 * Used by bench/profile.ts (`--only profile-vs-hop`).
 */
import { causeOf, displayName, jsFrame, kindOf, type Sample } from './perf-summary.js';

export interface ProfiledRun {
  readonly label: string;
  readonly samples: readonly Sample[];
  /** Calls the process answered while it was recorded. */
  readonly calls: number;
}

/**
 * The views: the kind of code running; the module that caused the work (the nearest JS frame's, as in
 * summarizePerf); kernel time by the user-space function that entered the kernel (writev, read, epoll_pwait...);
 * JS functions by inclusive time.
 */
export const VIEWS = ['kind', 'cause', 'kernel entry', 'inclusive'] as const;
export type View = (typeof VIEWS)[number];

export interface CompareRow {
  readonly name: string;
  /** µs per call in each run, in the order the runs were given. */
  readonly micros: readonly [number, number];
  /** micros[0] − micros[1]. */
  readonly diff: number;
}

export interface Comparison {
  readonly labels: readonly [string, string];
  readonly calls: readonly [number, number];
  readonly total: readonly [number, number];
  readonly views: Readonly<Record<View, readonly CompareRow[]>>;
}

/** The rows a sample counts in, per view (inclusive: every JS function on its stack once). */
function keysOf(sample: Sample, view: View): string[] {
  const leaf = sample.frames[0]!;
  switch (view) {
    case 'kind':
      return [sample.main ? kindOf(leaf) : 'other threads (GC helpers, compiler, libuv pool)'];
    case 'cause':
      return [causeOf(sample)];
    case 'kernel entry': {
      if (kindOf(leaf) !== 'kernel') return [];
      const entry = sample.frames.find((f) => kindOf(f) !== 'kernel');
      return [entry ? displayName(entry) : '(kernel only: interrupts, kernel threads)'];
    }
    case 'inclusive': {
      const seen = new Set<string>();
      for (const f of sample.frames) {
        const js = jsFrame(f);
        if (js) seen.add(displayName(f));
      }
      return [...seen];
    }
  }
}

/** What one nanosecond of a run's samples is in µs per call (no call answered counts as one). */
const microsPerNanosecond = (run: ProfiledRun) => 1 / (1000 * Math.max(1, run.calls));

/** µs per call for each row of a view: the periods (ns) of the samples counted in it, over the calls. */
export function microsPerCall(run: ProfiledRun, view: View): Map<string, number> {
  const out = new Map<string, number>();
  const scale = microsPerNanosecond(run);
  for (const s of run.samples) for (const key of keysOf(s, view)) out.set(key, (out.get(key) ?? 0) + s.period * scale);
  return out;
}

export function compareRuns(a: ProfiledRun, b: ProfiledRun): Comparison {
  const total = (run: ProfiledRun) => run.samples.reduce((n, s) => n + s.period, 0) * microsPerNanosecond(run);
  const views = {} as Record<View, CompareRow[]>;
  for (const view of VIEWS) {
    const ma = microsPerCall(a, view);
    const mb = microsPerCall(b, view);
    const rows: CompareRow[] = [];
    for (const name of new Set([...ma.keys(), ...mb.keys()])) {
      const x = ma.get(name) ?? 0;
      const y = mb.get(name) ?? 0;
      rows.push({ name, micros: [x, y], diff: x - y });
    }
    // Largest excess first; equal ones by name, so a report reads the same each time.
    views[view] = rows.sort((r, s) => s.diff - r.diff || (r.name < s.name ? -1 : 1));
  }
  return { labels: [a.label, b.label], calls: [a.calls, b.calls], total: [total(a), total(b)], views };
}

const VIEW_TITLES: Readonly<Record<View, string>> = {
  kind: 'by kind of code running',
  cause: "by module that caused the work (nearest JS frame; native work included)",
  'kernel entry': 'kernel time by the call that entered the kernel',
  inclusive: 'JS functions by inclusive time (on the stack at all)',
};

const us = (n: number) => n.toFixed(1).padStart(7);

/** A text report: the totals, then each view's `rows` largest differences. */
export function formatComparison(c: Comparison, rows = 12): string {
  const [la, lb] = c.labels;
  const lines = [
    `CPU µs per call from on-CPU samples (all threads): ${la} ${c.total[0].toFixed(1)}, ${lb} ${c.total[1].toFixed(1)} ` +
      `(${c.calls[0]} and ${c.calls[1]} calls recorded); rows: ${la} | ${lb} | difference`,
  ];
  for (const view of VIEWS) {
    lines.push('', `${VIEW_TITLES[view]}:`);
    for (const r of c.views[view].slice(0, rows)) lines.push(`  ${us(r.micros[0])} ${us(r.micros[1])} ${us(r.diff)}  ${r.name}`);
  }
  return lines.join('\n');
}
