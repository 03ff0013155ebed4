/** The bench's output: one table row per measured quantity, and the JSON file with every round. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname } from 'node:path';

export interface Row {
  readonly scenario: string;
  readonly direct: string;
  readonly gateway: string;
  /** gateway/direct, or the added amount for latencies. */
  readonly ratio: string;
  readonly goal: string;
  /** null when the row is reported, not judged. */
  readonly met: boolean | null;
}

/** A table of its own (one row per peer, say), printed and put in the README beside the rows. */
export interface Table {
  readonly title: string;
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
  /** Lines under the table: what a peer is, why one was skipped. */
  readonly notes?: readonly string[];
}

export interface ScenarioResult {
  readonly id: string;
  readonly rows: Row[];
  readonly tables?: Table[];
  /** Every round's raw numbers, so a reader can see the spread, not only the median. */
  readonly rounds: Record<string, unknown>;
  readonly notes: string[];
}

export function fmt(value: number, digits = 2): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value >= 1000 ? Math.round(value).toLocaleString('en-US') : value.toFixed(digits);
}

/** "+1.23 ms" / "-0.40 ms": an added amount, with its sign. */
export function signed(value: number, unit: string, digits = 3): string {
  return `${value >= 0 ? '+' : '-'}${fmt(Math.abs(value), digits)} ${unit}`;
}

export function formatTable(rows: readonly Row[]): string {
  const header = ['scenario', 'baseline', 'gateway', 'ratio', 'goal', 'met?'];
  return formatCells(header, rows.map((r) => [r.scenario, r.direct, r.gateway, r.ratio, r.goal, r.met === null ? '-' : r.met ? 'yes' : 'NO']));
}

/** A padded text table for the terminal. */
export function formatCells(header: readonly string[], cells: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: readonly string[]) => `| ${widths.map((w, i) => (c[i] ?? '').padEnd(w)).join(' | ')} |`;
  const rule = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`;
  return [line(header), rule, ...cells.map(line)].join('\n');
}

export function formatExtraTable(table: Table): string {
  return [table.title, formatCells(table.header, table.rows), ...(table.notes ?? []).map((n) => `  ${n}`)].join('\n');
}

export function machineInfo(): Record<string, unknown> {
  const list = cpus();
  return {
    cpus: list.length,
    cpuModel: list[0]?.model ?? 'unknown',
    memoryMiB: Math.round(totalmem() / 1024 / 1024),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    date: new Date().toISOString(),
    /** 1-minute load average: above the CPU count, other work shared the machine and every number is noisier. */
    loadAverage1m: Math.round(loadavg()[0]! * 100) / 100,
  };
}

export function writeResults(path: string, data: Record<string, unknown>): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(data, null, 2)}\n`);
}
