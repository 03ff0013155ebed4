/**
 * Samples a process's RSS from /proc every 100 ms while some load runs, and
 * judges the curve: the peak, and whether the second half of the load window
 * grew past the first (a leak or an unbounded buffer shows as growth).
 */
import { readRss } from './processes.js';
import { fmt, type Row } from './report.js';
import { round } from './stats.js';

export interface RssProfile {
  readonly baselineMiB: number;
  readonly peakMiB: number;
  /** The kernel's high-water mark: catches a spike between two samples. */
  readonly hwmMiB: number;
  readonly endMiB: number;
  /** Peak of the last third of the window minus peak of the middle third (the first third is ramp-up). */
  readonly growthMiB: number;
  readonly samples: number;
}

export async function sampleRssWhile(pid: number, load: () => Promise<void>): Promise<RssProfile> {
  const baseline = readRss(pid)?.rssMiB ?? NaN;
  const samples: number[] = [];
  const timer = setInterval(() => {
    const now = readRss(pid);
    if (now) samples.push(now.rssMiB);
  }, 100);
  try {
    await load();
  } finally {
    clearInterval(timer);
  }
  const last = readRss(pid);
  const third = Math.floor(samples.length / 3);
  const peakOf = (xs: number[]) => (xs.length ? Math.max(...xs) : NaN);
  return {
    baselineMiB: round(baseline, 1),
    peakMiB: round(peakOf(samples), 1),
    hwmMiB: round(last?.hwmMiB ?? NaN, 1),
    endMiB: round(last?.rssMiB ?? NaN, 1),
    growthMiB: round(peakOf(samples.slice(2 * third)) - peakOf(samples.slice(third, 2 * third)), 1),
    samples: samples.length,
  };
}

const LIMIT_MIB = 150;
/** Growth allowed between the middle and last thirds before the curve counts as not flat. */
const FLAT_SLACK_MIB = 10;

export function rssRow(scenario: string, p: RssProfile): Row {
  const peak = Math.max(p.peakMiB, p.hwmMiB);
  return {
    scenario,
    direct: 'n/a',
    gateway: `peak ${fmt(peak, 0)} MiB (base ${fmt(p.baselineMiB, 0)}, end ${fmt(p.endMiB, 0)})`,
    ratio: `growth ${p.growthMiB >= 0 ? '+' : ''}${fmt(p.growthMiB, 1)} MiB`,
    goal: `< ${LIMIT_MIB} MiB, flat`,
    met: peak < LIMIT_MIB && p.growthMiB <= FLAT_SLACK_MIB,
  };
}
