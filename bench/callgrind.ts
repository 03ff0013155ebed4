/**
 * Instruction counts from Valgrind's callgrind, read per function. On a
 * shared machine a process's CPU time per call moves by 10-20% from one round
 * to the next with what else runs on the host; the instructions its main
 * thread executes do much less (one build read 249,201 to 253,471 per call
 * in three runs; the other threads, the collector's helpers and the
 * optimizing compiler, vary by a third). So a
 * change of a few percent, too small for CPU time to show, is measured in
 * main-thread instructions, and the functions it touched are named (a
 * function's own count repeats more closely than the total). Instructions are not time: a tight
 * loop retires several per cycle, code that misses the caches few, so the
 * CPU-time profile (bench/perf-compare.ts) still says where the time goes.
 *
 * callgrind names native functions itself; JIT code it knows only by address,
 * named here from the process's --perf-basic-prof map. Used by
 * bench/instructions.ts (`--only instructions`).
 */
import { spawnSync } from 'node:child_process';

/** One line of the perf map: code at [start, start + size) is `name`. */
export interface MapEntry {
  readonly start: number;
  readonly size: number;
  readonly name: string;
}

/** The entries of a /tmp/perf-<pid>.map text (`<hex start> <hex size> <name>` per line), sorted by start. */
export function parsePerfMapEntries(text: string): MapEntry[] {
  const entries: MapEntry[] = [];
  for (const line of text.split('\n')) {
    const first = line.indexOf(' ');
    const second = first === -1 ? -1 : line.indexOf(' ', first + 1);
    if (second === -1) continue;
    const start = Number.parseInt(line.slice(0, first), 16);
    const size = Number.parseInt(line.slice(first + 1, second), 16);
    if (!Number.isFinite(start) || !Number.isFinite(size)) continue;
    entries.push({ start, size, name: line.slice(second + 1) });
  }
  return entries.sort((a, b) => a.start - b.start);
}

/** Entries nameAt looks back over for one holding an address (a JIT map's entries barely overlap). */
export const LOOK_BACK = 64;

/**
 * The name of the code at `address`: the last-written entry that holds it (V8 writes a new entry where code was
 * replaced), or undefined. Entries overlap rarely, so the search looks back a few from the last start at or below it.
 */
export function nameAt(entries: readonly MapEntry[], address: number): string | undefined {
  let lo = 0;
  let hi = entries.length - 1;
  let at = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (entries[mid]!.start <= address) {
      at = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  for (let i = at; i >= 0 && i > at - LOOK_BACK; i--) {
    const e = entries[i]!;
    if (address < e.start + e.size) return e.name;
  }
  return undefined;
}

/** The `totals:` (or `summary:`) count of a callgrind dump: every instruction it recorded. */
export function totalInstructions(dump: string): number {
  const m = /^totals:\s+(\d+)/m.exec(dump) ?? /^summary:\s+(\d+)/m.exec(dump);
  if (!m) throw new Error('no totals line in the callgrind dump');
  return Number(m[1]);
}

/** `JS:*name file:///…/dist/x.js:1:2` -> `name dist/x.js:1` (the tier and column dropped: one function, any tier). */
function jsName(symbol: string): string {
  const m = /^JS:[*+^~]?(.*?) (\S+?):(\d+):\d+$/.exec(symbol);
  if (!m) return symbol.replace(/^JS:[*+^~]?/, '');
  const where = m[2]!.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '').replace(/^.*\/(dist|src|bench)\//, '$1/');
  return `${m[1] || '(anonymous)'} ${where}:${m[3]}`;
}

/**
 * Instructions by function from `callgrind_annotate` output (`<count> (<share>)  <file>:<function> [<object>]`
 * lines): native functions by callgrind's name (C++ without its parameter list), JIT code named from the perf map,
 * code the map does not hold as `(JIT code, unnamed)`.
 */
export function instructionsByFunction(annotated: string, map: readonly MapEntry[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of annotated.split('\n')) {
    const m = /^\s*([\d,]+)\s+\([^)]*\)\s+(.+)$/.exec(line);
    if (!m || m[2]!.includes('PROGRAM TOTALS')) continue;
    const count = Number(m[1]!.replace(/,/g, ''));
    const where = m[2]!.replace(/\s+\[[^\]]*\]\s*$/, '');
    const address = /^\?\?\?:0x([0-9a-f]+)/.exec(where);
    let name: string;
    if (address) {
      const symbol = nameAt(map, Number.parseInt(address[1]!, 16));
      name = symbol === undefined ? '(JIT code, unnamed)' : jsName(symbol);
    } else {
      const fn = where.slice(where.indexOf(':') + 1);
      name = fn.replace(/\(.*$/, '').replace(/'\d+$/, '') || fn;
    }
    out.set(name, (out.get(name) ?? 0) + count);
  }
  return out;
}

/** `callgrind_annotate` over a dump, every function listed (no threshold). */
export function annotate(dumpFile: string): string {
  const run = spawnSync('callgrind_annotate', ['--threshold=100', dumpFile], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`callgrind_annotate failed: ${`${run.stderr}`.trim().split('\n')[0]}`);
  return run.stdout;
}

export type CallgrindCheck = { readonly ok: true } | { readonly ok: false; readonly why: string };

/** Whether Valgrind's callgrind and its tools are installed. */
export function checkCallgrind(): CallgrindCheck {
  for (const tool of ['valgrind', 'callgrind_control', 'callgrind_annotate']) {
    // Found is enough: callgrind_annotate --version prints its version and exits 255.
    const run = spawnSync(tool, ['--version'], { encoding: 'utf8' });
    if (run.error) return { ok: false, why: `${tool} is not installed: install Debian's valgrind as root (apt-get install valgrind)` };
  }
  return { ok: true };
}
