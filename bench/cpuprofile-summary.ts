/**
 * Summarizes a V8 .cpuprofile (node --cpu-prof): self time per function and
 * per area (gateway module, package, node internals, GC). Runnable alone:
 *   npx tsx bench/cpuprofile-summary.ts <file.cpuprofile> [top]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface SelfTime {
  readonly name: string;
  readonly where: string;
  readonly area: string;
  readonly selfMs: number;
  /** Share of the busy (non-idle) time. */
  readonly pct: number;
}

export interface ProfileSummary {
  readonly wallMs: number;
  readonly busyMs: number;
  readonly idleMs: number;
  readonly functions: SelfTime[];
  readonly areas: { area: string; selfMs: number; pct: number }[];
}

/** Which part of the stack a frame belongs to, from its script URL. */
export function areaOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const own = /\/(?:dist|src)\/(.+?)\.[jt]s$/.exec(url);
  if (own) return `gateway ${own[1]}`;
  return url;
}

function shortWhere(url: string, line: number): string {
  if (url === '') return '';
  const path = url.replace(/^file:\/\//, '');
  const trimmed = path.includes('/node_modules/') ? path.replace(/^.*\/node_modules\//, '') : path.replace(/^.*\/(dist|src)\//, '$1/');
  return `${trimmed}:${line + 1}`;
}

/**
 * `window` ([from, to] in µs of CLOCK_MONOTONIC, the clock V8 stamps samples
 * with and process.hrtime reads) keeps only the samples taken under load,
 * leaving out startup (module loading, schema compiling) and shutdown.
 */
export function summarizeCpuProfile(profile: CpuProfile, top = 25, window?: readonly [number, number]): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  let at = profile.startTime;
  let firstUs = Infinity;
  let lastUs = -Infinity;
  // timeDeltas[i] is the time before sample i; attribute it to that sample's node.
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (window && (at < window[0] || at > window[1])) continue;
    firstUs = Math.min(firstUs, at);
    lastUs = Math.max(lastUs, at);
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  }
  const perFunction = new Map<string, { name: string; where: string; area: string; us: number }>();
  let idleUs = 0;
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    totalUs += us;
    if (frame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    const where = shortWhere(frame.url, frame.lineNumber);
    const key = `${frame.functionName}@${where}`;
    const entry = perFunction.get(key) ?? { name: frame.functionName || '(anonymous)', where, area: areaOf(frame.url, frame.functionName), us: 0 };
    entry.us += us;
    perFunction.set(key, entry);
  }
  const busyUs = totalUs - idleUs;
  const pct = (us: number) => Math.round((1000 * us) / Math.max(1, busyUs)) / 10;
  const functions = [...perFunction.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, top)
    .map((f) => ({ name: f.name, where: f.where, area: f.area, selfMs: Math.round(f.us / 100) / 10, pct: pct(f.us) }));
  const areaUs = new Map<string, number>();
  for (const f of perFunction.values()) areaUs.set(f.area, (areaUs.get(f.area) ?? 0) + f.us);
  const areas = [...areaUs.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([area, us]) => ({ area, selfMs: Math.round(us / 100) / 10, pct: pct(us) }));
  const wallUs = Number.isFinite(firstUs) ? lastUs - firstUs : 0;
  return { wallMs: Math.round(wallUs / 1000), busyMs: Math.round(busyUs / 1000), idleMs: Math.round(idleUs / 1000), functions, areas };
}

export function formatSummary(s: ProfileSummary, areaCount = 15): string {
  const own = s.areas.filter((a) => a.area.startsWith('gateway '));
  const ownPct = own.reduce((n, a) => n + a.pct, 0);
  const lines = [
    `wall ${s.wallMs} ms, busy ${s.busyMs} ms, idle ${s.idleMs} ms (percentages are of busy time)`,
    `the gateway's own modules (src/) together: ${ownPct.toFixed(1)}% self time`,
    '',
    'self time by area:',
  ];
  for (const a of s.areas.slice(0, areaCount)) lines.push(`  ${a.pct.toFixed(1).padStart(5)}%  ${a.selfMs.toFixed(0).padStart(7)} ms  ${a.area}`);
  lines.push('', 'top functions by self time:');
  for (const f of s.functions) lines.push(`  ${f.pct.toFixed(1).padStart(5)}%  ${f.selfMs.toFixed(0).padStart(7)} ms  ${f.name}  ${f.where}`);
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: npx tsx bench/cpuprofile-summary.ts <file.cpuprofile> [top]\n');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  process.stdout.write(`${formatSummary(summarizeCpuProfile(profile, Number(process.argv[3] ?? 25)))}\n`);
}
