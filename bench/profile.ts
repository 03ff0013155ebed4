/**
 * Profiles of the gateway's hot paths under load (opt-in: a profiled gateway
 * is slower, so these numbers never enter the table):
 *   profile, profile-stream   on-CPU profile with Linux perf (bench/perf-profile.ts),
 *                             JS and native frames; falls back to --cpu-prof, saying why,
 *                             where perf cannot run
 *   profile-cpuprof           V8's --cpu-prof (wall-clock samples), for comparison
 *   profile-cpuprof-rest      the same, HTTP+JSON caller to an HTTP+JSON remote
 * Each starts its own gateway, warms it, then records only the measured load.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import { REST_HEADERS, REST_SEND_REQUEST, UNARY_REQUEST } from './bodies.js';
import { gatewayUrl, pick, type BenchContext } from './context.js';
import { formatSummary, summarizeCpuProfile } from './cpuprofile-summary.js';
import { probe, saturate } from './load.js';
import { compareRuns, formatComparison } from './perf-compare.js';
import { checkPerf, keepPerfMap, perfNodeArgs, readRecording, readRecordings, recordPerf } from './perf-profile.js';
import { formatPerfSummary, summarizePerf } from './perf-summary.js';
import { startDispatchHop, startGateway, TMP, type Child } from './processes.js';
import { fmt, type ScenarioResult } from './report.js';
import { countEvents } from './sse-client.js';
import { REMOTE, ROUTE } from './unary-peers.js';

interface ProfileLoad {
  /** Not recorded: JIT warm-up, pools filled. */
  warm(gw: Child): Promise<void>;
  /** Recorded; returns what it measured (the profiled gateway's speed, for the record only). */
  measure(gw: Child): Promise<string>;
}

function unaryLoad(ctx: BenchContext): ProfileLoad {
  return {
    async warm(gw) {
      await probe(gatewayUrl(gw, 'unary1k'), UNARY_REQUEST);
      // Long enough for the JIT to settle: recompiles show up as the compiler threads' share otherwise.
      await saturate(gatewayUrl(gw, 'unary1k'), UNARY_REQUEST, pick(ctx, 4, 1), 32);
    },
    async measure(gw) {
      const r = await saturate(gatewayUrl(gw, 'unary1k'), UNARY_REQUEST, pick(ctx, 6, 3), 32);
      return `${fmt(r.rps)} req/s (unary, 32 connections)`;
    },
  };
}

/** The same call from an HTTP+JSON caller to an HTTP+JSON remote (`unary1krest`, binding: http+json). */
function unaryRestLoad(ctx: BenchContext): ProfileLoad {
  const url = (gw: Child) => `${gatewayUrl(gw, 'unary1krest')}/message:send`;
  return {
    async warm(gw) {
      await saturate(url(gw), REST_SEND_REQUEST, pick(ctx, 4, 1), 32, REST_HEADERS);
    },
    async measure(gw) {
      const r = await saturate(url(gw), REST_SEND_REQUEST, pick(ctx, 6, 3), 32, REST_HEADERS);
      if (r.non2xx > 0 || r.errors > 0) throw new Error(`HTTP+JSON load: ${r.non2xx} non-2xx, ${r.errors} errors`);
      return `${fmt(r.rps)} req/s (unary HTTP+JSON → HTTP+JSON, 32 connections)`;
    },
  };
}

async function readStreams(gw: Child, seconds: number): Promise<number> {
  const pool = new Pool(`http://127.0.0.1:${gw.port}`, { connections: 4 });
  const end = performance.now() + seconds * 1000;
  let events = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (performance.now() < end) events += (await countEvents(pool, '/remotes/sse')).events;
    }),
  );
  await pool.close();
  return events;
}

function streamLoad(ctx: BenchContext): ProfileLoad {
  return {
    warm: async (gw) => void (await readStreams(gw, pick(ctx, 3, 1))),
    async measure(gw) {
      const seconds = pick(ctx, 6, 3);
      return `${fmt((await readStreams(gw, seconds)) / seconds)} events/s (4 streams)`;
    },
  };
}

async function perfProfiled(ctx: BenchContext, id: string, load: ProfileLoad, event: string, how: string): Promise<ScenarioResult> {
  const dir = join(TMP, `perf-${id}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  const gw = await startGateway({ upstreamPort: ctx.upstream.port, logLevel: 'warn', nodeArgs: perfNodeArgs(dir) });
  let dataFile: string | undefined;
  let measured = '';
  try {
    await load.warm(gw);
    const recording = await recordPerf(gw.pid, event, id, dir);
    measured = await load.measure(gw);
    dataFile = await recording.stop();
  } finally {
    await gw.stop();
    // The symbol map is read (and cleaned) only once the gateway has stopped writing it.
    if (!dataFile) keepPerfMap(gw.pid, dir);
  }
  const { samples, staleSymbols, map } = await readRecording(dataFile, gw.pid);
  if (samples.length === 0) throw new Error(`perf recorded no samples of pid ${gw.pid} (${dataFile})`);
  const summary = summarizePerf(samples, 30);
  const text = `${how}\ngateway under load (pid ${gw.pid}): ${measured}; ${staleSymbols} stale JIT symbols dropped from its map\n\n${formatPerfSummary(summary)}`;
  writeFileSync(join(dir, 'summary.txt'), `${text}\n`);
  ctx.log(text.replace(/^/gm, '  '));
  const browse = map ? `cp ${map} /tmp/ && perf report -i ${dataFile}` : `perf report -i ${dataFile}`;
  return {
    id,
    rows: [],
    rounds: { tool: 'perf', how, measuredUnderProfiler: measured, dataFile, summary },
    notes: [`summary: ${join(dir, 'summary.txt')}`, `to browse the recording: ${browse}`],
  };
}

/** Runs the load against a gateway started with --cpu-prof; summarizes the samples of the measured window only. */
async function cpuProfiled(ctx: BenchContext, id: string, load: ProfileLoad): Promise<ScenarioResult> {
  const dir = join(TMP, `cpu-profile-${id}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  const gw = await startGateway({
    upstreamPort: ctx.upstream.port,
    logLevel: 'warn',
    nodeArgs: ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '200'],
  });
  let measured = '';
  let window: [number, number] | undefined;
  try {
    await load.warm(gw);
    // Samples are stamped with CLOCK_MONOTONIC, the clock process.hrtime reads.
    const from = Number(process.hrtime.bigint() / 1000n);
    measured = await load.measure(gw);
    window = [from, Number(process.hrtime.bigint() / 1000n)];
  } finally {
    await gw.stop();
  }
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`the profiled gateway wrote no .cpuprofile into ${dir}`);
  const path = join(dir, file);
  const summary = summarizeCpuProfile(JSON.parse(readFileSync(path, 'utf8')), 30, window);
  if (summary.busyMs === 0) throw new Error('no profile samples fell inside the load window (clock mismatch?)');
  const text = formatSummary(summary);
  writeFileSync(join(dir, 'summary.txt'), `${text}\n`);
  ctx.log(`  profiled gateway (--cpu-prof, wall-clock samples): ${measured}; samples from the measured window only\n${text.replace(/^/gm, '  ')}`);
  return {
    id,
    rows: [],
    rounds: { tool: 'cpu-prof', profile: path, measuredUnderProfiler: measured, summary },
    notes: [`profile: ${path}`, `summary: ${join(dir, 'summary.txt')}`],
  };
}

/** One side of a side-by-side profile: a process under a unary load, its recordings, the calls answered while recorded. */
interface ProfiledSide {
  readonly label: string;
  readonly child: Child;
  readonly url: string;
  readonly body: Buffer;
  /** Request headers of the load (default: JSON). */
  readonly headers?: Record<string, string>;
  readonly dataFiles: string[];
  calls: number;
}

/**
 * Warms every side, records them alternately (a, b, a, b; cpu-clock, whose sample periods are CPU nanoseconds) under
 * the same 32-connection load shape, and compares the first with the second in CPU µs per call (bench/perf-compare.ts).
 * `stop` ends the processes: a process's symbol map is complete once it has exited, and each of its recordings reads
 * that one map.
 */
async function profileSideBySide(ctx: BenchContext, id: string, dir: string, sides: [ProfiledSide, ProfiledSide], stop: () => Promise<void>): Promise<ScenarioResult> {
  try {
    for (const side of sides) {
      // A JSON-RPC side is probed for a JSON-RPC result first; any side must answer its load without errors below.
      if (side.headers === undefined) await probe(side.url, side.body);
      await saturate(side.url, side.body, pick(ctx, 4, 1), 32, side.headers);
    }
    for (let round = 0; round < 2; round++) {
      for (const side of sides) {
        const recording = await recordPerf(side.child.pid, 'cpu-clock', `${side.label.replace(/\W+/g, '-')}-${round}`, dir);
        const r = await saturate(side.url, side.body, pick(ctx, 4, 2), 32, side.headers);
        side.dataFiles.push(await recording.stop());
        if (r.errors > 0 || r.non2xx > 0) throw new Error(`${side.label} under profile: ${r.errors} errors, ${r.non2xx} non-2xx`);
        side.calls += r.ok;
      }
    }
  } finally {
    await stop();
  }
  const runs = await Promise.all(
    sides.map(async (side) => ({ label: side.label, calls: side.calls, samples: (await readRecordings(side.dataFiles, side.child.pid)).samples })),
  );
  const comparison = compareRuns(runs[0]!, runs[1]!);
  const text = formatComparison(comparison);
  writeFileSync(join(dir, 'comparison.txt'), `${text}\n`);
  ctx.log(text.replace(/^/gm, '  '));
  return {
    id,
    rows: [],
    rounds: { tool: 'perf', event: 'cpu-clock', calls: comparison.calls, totalMicrosPerCall: comparison.total, comparison: comparison.views },
    notes: [`comparison: ${join(dir, 'comparison.txt')}`, 'the profiled processes run slower than unprofiled ones: read the differences, not the totals, against npm run bench'],
  };
}

/**
 * The gateway and the bare dispatch hop (bench/dispatch-hop.ts) profiled under the same unary load, in alternating
 * recordings (gateway, hop, gateway, hop), and shown side by side in CPU µs per call (bench/perf-compare.ts): where
 * the gateway's time above the hop's goes. Always the cpu-clock event, whose sample periods are CPU nanoseconds.
 */
export async function profileVsHop(ctx: BenchContext): Promise<ScenarioResult> {
  const check = checkPerf();
  if (!check.ok) throw new Error(`profile-vs-hop needs Linux perf: ${check.why}`);
  const dir = join(TMP, `perf-vs-hop-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  const nodeArgs = perfNodeArgs(dir);
  const gw = await startGateway({ upstreamPort: ctx.upstream.port, logLevel: 'warn', nodeArgs });
  const hop = await startDispatchHop(ctx.upstream.port, ROUTE, nodeArgs).catch(async (err: unknown) => {
    await gw.stop();
    throw err;
  });
  return profileSideBySide(
    ctx,
    'profile-vs-hop',
    dir,
    [
      { label: 'gateway', child: gw, url: gatewayUrl(gw, REMOTE), body: UNARY_REQUEST, dataFiles: [], calls: 0 },
      { label: 'dispatch hop', child: hop, url: `http://127.0.0.1:${hop.port}/`, body: UNARY_REQUEST, dataFiles: [], calls: 0 },
    ],
    async () => {
      await Promise.all([gw.stop(), hop.stop()]);
    },
  );
}

/**
 * One gateway process under two loads, recorded alternately: an HTTP+JSON caller's `message:send` to the JSON-RPC
 * remote (transcoded both ways) and a JSON-RPC caller's `message/send` to the same remote, side by side in CPU µs per
 * call: where the HTTP+JSON caller path spends what the JSON-RPC one does not (the unary-peers goal is 1.10).
 */
export async function profileRestVsJsonRpc(ctx: BenchContext): Promise<ScenarioResult> {
  const check = checkPerf();
  if (!check.ok) throw new Error(`profile-rest-vs-jsonrpc needs Linux perf: ${check.why}`);
  const dir = join(TMP, `perf-rest-vs-jsonrpc-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  const gw = await startGateway({ upstreamPort: ctx.upstream.port, logLevel: 'warn', nodeArgs: perfNodeArgs(dir) });
  return profileSideBySide(
    ctx,
    'profile-rest-vs-jsonrpc',
    dir,
    [
      { label: 'HTTP+JSON caller', child: gw, url: `${gatewayUrl(gw, REMOTE)}/message:send`, body: REST_SEND_REQUEST, headers: { ...REST_HEADERS }, dataFiles: [], calls: 0 },
      { label: 'JSON-RPC caller', child: gw, url: gatewayUrl(gw, REMOTE), body: UNARY_REQUEST, dataFiles: [], calls: 0 },
    ],
    () => gw.stop(),
  );
}

/** perf where it works; otherwise --cpu-prof, and the result says why. */
async function onCpu(ctx: BenchContext, id: string, load: ProfileLoad): Promise<ScenarioResult> {
  const check = checkPerf();
  if (check.ok) return perfProfiled(ctx, id, load, check.event, check.how);
  const fallback = `perf cannot profile here: ${check.why}. Falling back to V8's --cpu-prof, which samples wall time: a preemption is charged to whatever was on the stack (writev, say), so read its shares with care`;
  ctx.log(`  ${fallback}`);
  const result = await cpuProfiled(ctx, id, load);
  return { ...result, notes: [fallback, ...result.notes] };
}

export const profileUnary = (ctx: BenchContext) => onCpu(ctx, 'profile', unaryLoad(ctx));
export const profileStream = (ctx: BenchContext) => onCpu(ctx, 'profile-stream', streamLoad(ctx));
export const profileCpuprof = (ctx: BenchContext) => cpuProfiled(ctx, 'profile-cpuprof', unaryLoad(ctx));
export const profileCpuprofRest = (ctx: BenchContext) => cpuProfiled(ctx, 'profile-cpuprof-rest', unaryRestLoad(ctx));
