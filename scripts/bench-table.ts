/**
 * Generates the README's Performance tables from bench/results/latest.json
 * (what `npm run bench` wrote on its last full run): the machine, its load
 * average and the date of the run, each scenario's own tables (peers side by
 * side) and the goal rows. `npx tsx scripts/bench-table.ts` prints the block;
 * `--write` puts it in the README between <!-- bench:start --> and
 * <!-- bench:end -->. test/unit/bench-table.test.ts fails when the README
 * and the results file disagree.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Row, Table } from '../bench/report.js';

export interface BenchResults {
  readonly machine: {
    readonly cpus: number;
    readonly cpuModel: string;
    readonly memoryMiB: number;
    readonly node: string;
    readonly platform: string;
    readonly date: string;
    readonly loadAverage1m: number;
    readonly loadAverage1mBefore?: number;
    readonly loadAverage1mDuring?: { readonly min: number; readonly max: number } | null;
  };
  readonly command?: string;
  readonly mode: string;
  readonly seconds: number;
  readonly table: readonly Row[];
  readonly tables?: readonly Table[];
}

export const RESULTS_PATH = new URL('../bench/results/latest.json', import.meta.url);
const START = '<!-- bench:start -->';
const END = '<!-- bench:end -->';

/** A cell of a Markdown table: a `|` inside would start a new column. */
const cell = (text: string) => text.replace(/\|/g, '\\|');
const line = (cells: readonly string[]) => `| ${cells.map(cell).join(' | ')} |`;

function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)];
}

function runLine(r: BenchResults): string {
  const m = r.machine;
  const date = m.date.replace('T', ' ').replace(/:\d\d\.\d+Z$/, ' UTC');
  const during = m.loadAverage1mDuring ? `, ${m.loadAverage1mDuring.min}–${m.loadAverage1mDuring.max} during it` : '';
  const before = m.loadAverage1mBefore !== undefined ? `${m.loadAverage1mBefore} before the run${during}, ` : '';
  const busy = Math.max(m.loadAverage1m, m.loadAverage1mBefore ?? 0, m.loadAverage1mDuring?.max ?? 0) > m.cpus ? ' (above the CPU count: other work shared the machine, every number is noisier)' : '';
  return (
    `Run of ${date}: \`${r.command ?? 'npm run bench'}\` (${r.mode}, ${r.seconds} s) on ${m.cpus} × ${m.cpuModel}, ${Math.round(m.memoryMiB / 1024)} GiB, ` +
    `Node ${m.node}, ${m.platform}; 1-minute load average ${before}${m.loadAverage1m} after${busy}.`
  );
}

function goal(row: Row): string {
  if (row.met === null) return row.goal;
  return `${row.goal} — ${row.met ? 'met' : '**not met**'}`;
}

/** The generated block (without its markers). */
export function benchBlock(r: BenchResults): string {
  const out: string[] = [runLine(r)];
  for (const t of r.tables ?? []) {
    out.push('', `**${t.title}**`, '', ...markdownTable(t.header, t.rows));
    if (t.notes && t.notes.length > 0) out.push('', ...t.notes.map((n) => `- ${n}`));
  }
  out.push('', '**Goals and comparisons** (baseline = the left side named in the row)', '');
  out.push(...markdownTable(['scenario', 'baseline', 'gateway', 'ratio / added', 'goal'], r.table.map((row) => [row.scenario, row.direct, row.gateway, row.ratio, goal(row)])));
  return out.join('\n');
}

/** The README with its bench block regenerated from `results`. */
export function withBenchTable(readme: string, results: BenchResults): string {
  const a = readme.indexOf(START);
  const b = readme.indexOf(END);
  if (a === -1 || b === -1 || b < a) throw new Error(`README has no ${START} ... ${END} markers`);
  return `${readme.slice(0, a + START.length)}\n${benchBlock(results)}\n${readme.slice(b)}`;
}

export const readResults = (path: URL | string = RESULTS_PATH): BenchResults => JSON.parse(readFileSync(path, 'utf8')) as BenchResults;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const results = readResults();
  if (process.argv.includes('--write')) {
    const readme = new URL('../README.md', import.meta.url);
    writeFileSync(readme, withBenchTable(readFileSync(readme, 'utf8'), results));
  } else {
    process.stdout.write(`${benchBlock(results)}\n`);
  }
}
