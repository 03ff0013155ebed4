/**
 * `npm run bench -- --only instructions` (opt-in): instructions per unary
 * call of the gateway and of the bare dispatch hop, counted by Valgrind's
 * callgrind (bench/callgrind.ts says why instructions), and the functions
 * whose instructions differ most. Each process runs under callgrind with its
 * instrumentation off while it starts and warms up (its JIT settles), on
 * while it answers the measured calls; the two run one after the other, as
 * contention does not change what they count. Under callgrind a process runs
 * about fifty times slower: the scenario takes a few minutes.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { UNARY_REQUEST } from './bodies.js';
import { annotate, checkCallgrind, instructionsByFunction, parsePerfMapEntries, totalInstructions } from './callgrind.js';
import { gatewayUrl, pick, type BenchContext } from './context.js';
import { closedLoop, probe } from './load.js';
import { startDispatchHop, startGateway, TMP, type Child, type Launcher } from './processes.js';
import { fmt, type ScenarioResult } from './report.js';
import { REMOTE, ROUTE } from './unary-peers.js';

/** Connections of the load: fewer than the CPU-time scenarios' 32, the process under callgrind answers slowly. */
const CONNECTIONS = 16;
/** Rows of the per-function table. */
const TOP = 15;

interface Counted {
  readonly label: string;
  readonly calls: number;
  /** Per call, on the main thread (the event loop): the figure that repeats. */
  readonly instructions: number;
  /** Per call, on V8's and libuv's other threads (collector helpers, the optimizing compiler). */
  readonly otherThreads: number;
  /** Main thread, per call. */
  readonly byFunction: Map<string, number>;
}

/** A dump per thread: `<out>.<dump>-<thread>`, thread 01 the main one. */
function launcherFor(outFile: string): Launcher {
  return {
    command: 'valgrind',
    args: ['-q', '--tool=callgrind', '--instr-atstart=no', '--smc-check=all', '--separate-threads=yes', `--callgrind-out-file=${outFile}`],
    startupMs: 180_000,
  };
}

/** Warms `child` uncounted, counts `calls` calls, dumps and stops it; returns its counts per call. */
async function count(ctx: BenchContext, label: string, child: Child, url: string, dir: string, outFile: string): Promise<Counted> {
  const calls = pick(ctx, 4_000, 500);
  try {
    await probe(url, UNARY_REQUEST);
    const warm = await closedLoop(url, UNARY_REQUEST, pick(ctx, 12_000, 1_000), CONNECTIONS);
    if (warm.errors + warm.non2xx > 0) throw new Error(`${label}: warm-up had ${warm.errors} errors, ${warm.non2xx} non-2xx`);
    execFileSync('callgrind_control', ['--instr=on', String(child.pid)], { stdio: 'ignore' });
    const measured = await closedLoop(url, UNARY_REQUEST, calls, CONNECTIONS);
    // Dumped while the instrumentation is on: switching it off first would drop what was counted.
    execFileSync('callgrind_control', ['--dump', String(child.pid)], { stdio: 'ignore' });
    if (measured.ok !== calls) throw new Error(`${label}: ${measured.errors} errors, ${measured.non2xx} non-2xx of ${calls} calls`);
  } finally {
    await child.stop();
  }
  // `<out>.1-01`...: the one dump asked for, a file per thread (the dump at exit, `<out>-01`..., is not read).
  const dumps = readdirSync(dir).filter((f) => f.startsWith(`${basename(outFile)}.`) && !f.endsWith('.map'));
  if (dumps.length === 0) throw new Error(`${label}: callgrind wrote no dump`);
  let main = 0;
  let others = 0;
  const byFunction = new Map<string, number>();
  const mapFile = `/tmp/perf-${child.pid}.map`;
  const map = existsSync(mapFile) ? parsePerfMapEntries(readFileSync(mapFile, 'utf8')) : [];
  if (existsSync(mapFile)) copyFileSync(mapFile, `${outFile}.map`);
  for (const dump of dumps) {
    const path = join(dir, dump);
    const total = totalInstructions(readFileSync(path, 'utf8'));
    if (!dump.endsWith('-01')) {
      others += total;
      continue;
    }
    main += total;
    for (const [name, n] of instructionsByFunction(annotate(path), map)) byFunction.set(name, (byFunction.get(name) ?? 0) + n);
  }
  if (main === 0) throw new Error(`${label}: no main-thread dump`);
  return { label, calls, instructions: main / calls, otherThreads: others / calls, byFunction: new Map([...byFunction].map(([name, n]) => [name, n / calls])) };
}

export async function instructionsPerCall(ctx: BenchContext): Promise<ScenarioResult> {
  const id = 'instructions';
  const check = checkCallgrind();
  if (!check.ok) return { id, rows: [], rounds: { skipped: check.why }, notes: [`skipped: ${check.why}`] };
  const dir = join(TMP, `callgrind-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  // Named JIT code: the perf map, and no code-space compaction (the map has no record of code that moves).
  const nodeArgs = ['--perf-basic-prof', '--no-compact-code-space'];
  const gatewayOut = join(dir, 'gateway.out');
  const gateway = await startGateway({ upstreamPort: ctx.upstream.port, logLevel: 'warn', nodeArgs, launcher: launcherFor(gatewayOut) });
  const sides = [await count(ctx, 'gateway', gateway, gatewayUrl(gateway, REMOTE), dir, gatewayOut)];
  const hopOut = join(dir, 'hop.out');
  const hop = await startDispatchHop(ctx.upstream.port, ROUTE, nodeArgs, launcherFor(hopOut));
  sides.push(await count(ctx, 'dispatch hop', hop, `http://127.0.0.1:${hop.port}/`, dir, hopOut));
  const [gw, bare] = sides as [Counted, Counted];

  const names = new Set([...gw.byFunction.keys(), ...bare.byFunction.keys()]);
  const diffs = [...names]
    .map((name) => ({ name, gateway: gw.byFunction.get(name) ?? 0, hop: bare.byFunction.get(name) ?? 0 }))
    .map((r) => ({ ...r, diff: r.gateway - r.hop }))
    .sort((a, b) => b.diff - a.diff);
  const line = (r: (typeof diffs)[number]) => `${fmt(r.gateway, 0).padStart(9)} ${fmt(r.hop, 0).padStart(9)} ${`${r.diff >= 0 ? '+' : '-'}${fmt(Math.abs(r.diff), 0)}`.padStart(9)}  ${r.name}`;
  ctx.log(
    [
      `  instructions per call on the main thread: gateway ${fmt(gw.instructions, 0)}, dispatch hop ${fmt(bare.instructions, 0)} (${fmt(gw.instructions / bare.instructions)} x; ${gw.calls} calls each, counted after a warm-up)`,
      `  on other threads (collector helpers, compiler; they vary from run to run): gateway ${fmt(gw.otherThreads, 0)}, dispatch hop ${fmt(bare.otherThreads, 0)}`,
      '  main-thread functions whose instructions differ most (per call): gateway | dispatch hop | difference',
      ...diffs.slice(0, TOP).map((r) => `  ${line(r)}`),
      '  ...',
      ...diffs.slice(-3).map((r) => `  ${line(r)}`),
    ].join('\n'),
  );
  return {
    id,
    rows: [
      {
        scenario: 'unary instructions per call, main thread (callgrind): gateway (JSON-RPC) vs bare dispatch hop',
        direct: fmt(bare.instructions, 0),
        gateway: fmt(gw.instructions, 0),
        ratio: fmt(gw.instructions / bare.instructions),
        goal: 'report',
        met: null,
      },
    ],
    rounds: {
      tool: 'callgrind',
      calls: gw.calls,
      instructionsPerCall: { gateway: gw.instructions, dispatchHop: bare.instructions },
      otherThreadsPerCall: { gateway: gw.otherThreads, dispatchHop: bare.otherThreads },
      topDifferences: diffs.slice(0, 40),
    },
    notes: [`callgrind dumps and perf maps: ${dir}`, 'instructions are not time: read them to compare builds, the CPU rows and profiles for where time goes'],
  };
}
