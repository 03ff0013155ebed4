/**
 * npm run bench [-- --quick] [-- --only <id>[,<id>...]] [-- --no-build] [-- --out FILE]
 *
 * Builds the gateway, starts the upstream agent and the gateway as separate
 * processes (this process is only the load generator), runs each scenario
 * with its peers' rounds alternating, prints the tables and writes the
 * results: bench/results/latest.json for a full run of every default
 * scenario (the README's Performance section is generated from it:
 * scripts/bench-table.ts), bench/results/partial.json for a quick or
 * partial run, so a short run never replaces the committed one.
 * `--only profile` (or `profile-stream`) records an on-CPU profile of the
 * unary (or streaming) hot path with Linux perf instead (`profile-cpuprof`:
 * V8's --cpu-prof; `profile-vs-hop`: the gateway and the bare dispatch hop
 * side by side in CPU µs per call; `profile-rest-vs-jsonrpc`: the gateway's
 * HTTP+JSON caller path beside its JSON-RPC one; `instructions`: instructions per call of the gateway and the
 * dispatch hop, counted by Valgrind's callgrind, for comparing builds on a busy host); not part of the default set: a
 * profiled gateway is slower, so its numbers never enter the table.
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { BenchContext } from './context.js';
import { buildGateway, ROOT, startGateway, startUpstream, type Child } from './processes.js';
import { profileCpuprof, profileCpuprofRest, profileRestVsJsonRpc, profileStream, profileUnary, profileVsHop } from './profile.js';
import { formatExtraTable, formatTable, machineInfo, writeResults, type Row, type ScenarioResult } from './report.js';
import { memoryStreams, memoryUnary } from './scenario-memory.js';
import { normalizerCost } from './scenario-normalizer.js';
import { streamingLatency, streamingThroughput } from './scenario-stream.js';
import { fixedRateCalibration, unaryFixedRate, unaryLogCost } from './scenario-unary.js';
import { unaryPeers } from './scenario-unary-peers.js';
import { instructionsPerCall } from './instructions.js';

type Scenario = (ctx: BenchContext) => Promise<ScenarioResult>;

const SCENARIOS: ReadonlyMap<string, Scenario> = new Map([
  ['unary-peers', unaryPeers],
  ['unary-fixed-rate', unaryFixedRate],
  ['unary-log-cost', unaryLogCost],
  ['normalizer', normalizerCost],
  ['stream-throughput', streamingThroughput],
  ['stream-latency', streamingLatency],
  ['memory-unary', memoryUnary],
  ['memory-stream', memoryStreams],
]);
const OPT_IN: ReadonlyMap<string, Scenario> = new Map([
  ['profile', profileUnary],
  ['profile-stream', profileStream],
  ['profile-vs-hop', profileVsHop],
  ['profile-rest-vs-jsonrpc', profileRestVsJsonRpc],
  ['profile-cpuprof', profileCpuprof],
  ['profile-cpuprof-rest', profileCpuprofRest],
  ['fixed-rate-calibration', fixedRateCalibration],
  ['instructions', instructionsPerCall],
]);

function parseCli() {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      'no-build': { type: 'boolean', default: false },
      out: { type: 'string' },
    },
    strict: true,
  });
  const known = new Map([...SCENARIOS, ...OPT_IN]);
  const selected = values.only ? values.only.split(',').map((s) => s.trim()) : [...SCENARIOS.keys()];
  for (const id of selected) {
    if (!known.has(id)) throw new Error(`unknown scenario "${id}"; known: ${[...known.keys()].join(', ')}`);
  }
  const complete = !values.quick && [...SCENARIOS.keys()].every((id) => selected.includes(id));
  const out = values.out ?? join(ROOT, complete ? 'bench/results/latest.json' : 'bench/results/partial.json');
  return { quick: values.quick, selected, build: !values['no-build'], out, known };
}

async function main(): Promise<void> {
  const cli = parseCli();
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const started = Date.now();
  const machineBefore = machineInfo();
  // The 1-minute load average every 5 s of the run: how much else wanted the CPUs while it ran.
  const loadSamples: number[] = [];
  const loadTimer = setInterval(() => loadSamples.push(Math.round(loadavg()[0]! * 100) / 100), 5_000);
  loadTimer.unref();
  // Before the run the machine should be idle; after it, the bench's own three processes account for about one load per CPU.
  const busyBefore = (machineBefore.loadAverage1m as number) > (machineBefore.cpus as number) * 0.5;
  if (cli.build) {
    const build = buildGateway();
    if (!build.ok) {
      if (!existsSync(join(ROOT, 'dist/cli.js'))) throw new Error(`build failed and there is no dist/:\n${build.output}`);
      log(`warning: build failed, benchmarking the existing dist/ (someone may be mid-edit):\n${build.output.split('\n').slice(0, 10).join('\n')}`);
    }
  }
  const children: Child[] = [];
  const results: ScenarioResult[] = [];
  try {
    const upstream = await startUpstream();
    children.push(upstream);
    const gateway = await startGateway({ upstreamPort: upstream.port, logLevel: 'warn' });
    children.push(gateway);
    const ctx: BenchContext = { quick: cli.quick, upstream, gateway, log };
    log(`bench: ${cli.quick ? 'quick' : 'full'} run; gateway pid ${gateway.pid} at logLevel warn (per-call info logging off)`);
    for (const id of cli.selected) {
      log(`[${id}]`);
      const t0 = Date.now();
      let result: ScenarioResult;
      try {
        result = await cli.known.get(id)!(ctx);
      } catch (err) {
        // One broken scenario must not cost the rest of the run; the table says it failed.
        const message = err instanceof Error ? err.message : String(err);
        result = { id, rows: [{ scenario: `${id}: FAILED`, direct: '-', gateway: '-', ratio: '-', goal: '-', met: false }], rounds: {}, notes: [`FAILED: ${message}`] };
      }
      results.push(result);
      for (const note of result.notes) log(`  note: ${note}`);
      log(`  (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    }
  } finally {
    for (const child of children.reverse()) await child.stop();
  }

  const rows: Row[] = results.flatMap((r) => r.rows);
  const tables = results.flatMap((r) => r.tables ?? []);
  for (const t of tables) process.stdout.write(`\n${formatExtraTable(t)}\n`);
  if (rows.length > 0) process.stdout.write(`\n${formatTable(rows)}\n\n`);
  process.stdout.write('Gateway at logLevel warn: per-call info logging is off in every row except the one that measures it.\n');
  process.stdout.write(`Load generator, proxies and upstream share ${machineInfo().cpus} CPUs; direct rounds use two processes, the others three.\n`);
  const machineAfter = machineInfo();
  if (busyBefore || (machineAfter.loadAverage1m as number) > (machineAfter.cpus as number) + 1) {
    process.stdout.write(
      `WARNING: the machine was busy (load average ${machineBefore.loadAverage1m} before, ${machineAfter.loadAverage1m} after, ${machineAfter.cpus} CPUs): other processes took CPU, numbers are noisy.\n`,
    );
  }
  const seconds = (Date.now() - started) / 1000;
  process.stdout.write(`Total ${seconds.toFixed(0)} s. Results: ${cli.out}\n`);
  writeResults(cli.out, {
    machine: {
      ...machineAfter,
      loadAverage1mBefore: machineBefore.loadAverage1m,
      loadAverage1mDuring: loadSamples.length > 0 ? { min: Math.min(...loadSamples), max: Math.max(...loadSamples), samples: loadSamples.length } : null,
    },
    command: ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' '),
    mode: cli.quick ? 'quick' : 'full',
    scenarios: cli.selected,
    gatewayLogLevel: 'warn (per-call info logging off; see unary-log-cost for its cost)',
    seconds: Math.round(seconds),
    table: rows,
    tables,
    results,
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
