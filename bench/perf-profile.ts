/**
 * On-CPU profiles with Linux perf. V8's --cpu-prof samples wall time and
 * charges a preemption to whatever was on the stack; perf samples only while
 * the process runs on a CPU and sees native frames (V8, libuv, the kernel) as
 * well as JS. node's --perf-basic-prof writes /tmp/perf-<pid>.map so perf can
 * name JIT code; --interpreted-frames-native-stack names interpreted frames.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { cleanPerfMap } from './perf-map.js';
import { PERF_SCRIPT_FIELDS, PerfScriptReader, type Sample } from './perf-summary.js';
import { TMP } from './processes.js';

export type PerfCheck = { readonly ok: true; readonly event: string; readonly how: string } | { readonly ok: false; readonly why: string };

/**
 * The node flags a process needs for perf to name its JS frames. --perf-basic-prof
 * also turns V8's log on: it goes to `dir`, not to an isolate-*.log in the working directory.
 */
export function perfNodeArgs(dir: string): string[] {
  // No code-space compaction: the map has no record of code that moves.
  return ['--perf-basic-prof', '--interpreted-frames-native-stack', '--no-compact-code-space', '--no-logfile-per-isolate', `--logfile=${join(dir, 'v8.log')}`];
}
const FREQUENCY_HZ = 1999;

/**
 * Whether perf can profile here, and with which event: the hardware cycle
 * counter when the machine exposes it (`perf stat -e instructions true`
 * counts), else the cpu-clock software event (most VMs), which still samples
 * only on-CPU time.
 */
export function checkPerf(): PerfCheck {
  const version = spawnSync('perf', ['--version'], { encoding: 'utf8' });
  if (version.error || version.status !== 0) {
    return { ok: false, why: 'perf is not installed: install Debian\'s linux-perf as root (apt-get install linux-perf), or see "Reading a profile" in the README' };
  }
  const stat = spawnSync('perf', ['stat', '-e', 'instructions', 'true'], { encoding: 'utf8' });
  const hardware = stat.status === 0 && /\binstructions\b/.test(stat.stderr) && !/not supported|not counted/.test(stat.stderr);
  const event = hardware ? 'cycles' : 'cpu-clock';
  const trialFile = join(TMP, 'perf-trial.data');
  const trial = spawnSync('perf', ['record', '-q', '-e', event, '-g', '-o', trialFile, '--', 'true'], { encoding: 'utf8' });
  rmSync(trialFile, { force: true });
  if (trial.status !== 0) {
    const said = `${trial.stderr}`.trim().split('\n').slice(0, 3).join(' | ');
    return { ok: false, why: `perf record -e ${event} does not work here (${said}); kernel.perf_event_paranoid or a container may forbid it` };
  }
  return {
    ok: true,
    event,
    how: hardware
      ? `${version.stdout.trim()}, event cycles (hardware counter) at ${FREQUENCY_HZ} Hz with call chains`
      : `${version.stdout.trim()}, event cpu-clock (no hardware counters on this machine: \`perf stat -e instructions true\` says <not supported>; the software clock still samples on-CPU time only) at ${FREQUENCY_HZ} Hz with call chains`,
  };
}

export interface PerfRecording {
  /** Stops recording; perf has written its data file when this resolves. */
  stop(): Promise<string>;
}

/** Starts `perf record` on a running process; returns once perf is attached. */
export async function recordPerf(pid: number, event: string, label: string, dir: string): Promise<PerfRecording> {
  const dataFile = join(dir, `perf-${label}-${pid}.data`);
  const perf = spawn('perf', ['record', '-q', '-e', event, '-F', String(FREQUENCY_HZ), '-g', '-p', String(pid), '-o', dataFile], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  perf.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => perf.once('exit', (code) => resolve(code)));
  // perf creates its output file once the events are open; a little more for the mmap of every thread.
  const deadline = Date.now() + 5_000;
  while (!existsSync(dataFile) && Date.now() < deadline && perf.exitCode === null) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 200));
  if (perf.exitCode !== null) throw new Error(`perf record exited at once (code ${perf.exitCode}): ${stderr.trim()}`);
  return {
    async stop() {
      perf.kill('SIGINT');
      const code = await exited;
      if (!existsSync(dataFile)) throw new Error(`perf record wrote no ${dataFile} (exit ${code}): ${stderr.trim()}`);
      return dataFile;
    },
  };
}

/**
 * Runs `perf script` on a recording of a process that has exited, streaming
 * its (large) output through the reader. The process's symbol map is cleaned
 * first (bench/perf-map.ts), then moved beside the recording.
 */
export async function readRecording(dataFile: string, pid: number): Promise<{ samples: Sample[]; staleSymbols: number; map?: string }> {
  const { samples, staleSymbols, map } = await readRecordings([dataFile], pid);
  return map ? { samples, staleSymbols, map } : { samples, staleSymbols };
}

/** The same for several recordings of one process (its map cleaned once, read by each, then moved beside the first). */
export async function readRecordings(dataFiles: readonly string[], pid: number): Promise<{ samples: Sample[]; staleSymbols: number; map?: string | undefined }> {
  const live = `/tmp/perf-${pid}.map`;
  let staleSymbols = 0;
  if (existsSync(live)) {
    const cleaned = cleanPerfMap(readFileSync(live, 'utf8'));
    writeFileSync(live, cleaned.text);
    staleSymbols = cleaned.dropped;
  }
  let map: string | undefined;
  const samples: Sample[] = [];
  try {
    for (const dataFile of dataFiles) samples.push(...(await perfScript(dataFile, pid)));
  } finally {
    // Moved even when perf script fails: nothing of a run is left at the top of /tmp.
    if (dataFiles[0] !== undefined) map = keepPerfMap(pid, dirname(dataFiles[0]));
  }
  return { samples, staleSymbols, map };
}

async function perfScript(dataFile: string, pid: number): Promise<Sample[]> {
  const script = spawn('perf', ['script', '-i', dataFile, '--pid', String(pid), '-F', PERF_SCRIPT_FIELDS], { stdio: ['ignore', 'pipe', 'ignore'] });
  const reader = new PerfScriptReader();
  const lines = createInterface({ input: script.stdout! });
  lines.on('line', (l) => reader.line(l));
  await new Promise<void>((resolve, reject) => {
    script.once('error', reject);
    lines.once('close', resolve);
  });
  return reader.end();
}

/**
 * perf's symbol map of a process, left in /tmp by --perf-basic-prof: moved
 * beside the recording once read (`perf report` looks for it in /tmp).
 */
export function keepPerfMap(pid: number, dir: string): string | undefined {
  const from = `/tmp/perf-${pid}.map`;
  if (!existsSync(from)) return undefined;
  const to = join(dir, `perf-${pid}.map`);
  copyFileSync(from, to);
  rmSync(from, { force: true });
  return to;
}
