/**
 * CPU profiles of the gateway's hot paths: a gateway started with --cpu-prof
 * takes a saturation load (unary calls, or SSE streams), exits on SIGTERM
 * (which writes the profile), and the samples taken under load are
 * summarized by self time. Not part of the default run: the profiler slows
 * the gateway, so these numbers never enter the table.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import { UNARY_REQUEST } from './bodies.js';
import { gatewayUrl, pick, type BenchContext } from './context.js';
import { formatSummary, summarizeCpuProfile } from './cpuprofile-summary.js';
import { probe, saturate } from './load.js';
import { startGateway, TMP, type Child } from './processes.js';
import { fmt, type ScenarioResult } from './report.js';
import { countEvents } from './sse-client.js';

/** Runs `load` against a profiled gateway; returns what it measured and the profile of that window only. */
async function profiled(ctx: BenchContext, id: string, load: (gw: Child) => Promise<string>): Promise<ScenarioResult> {
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
    // Samples are stamped with CLOCK_MONOTONIC, the clock process.hrtime reads.
    const from = Number(process.hrtime.bigint() / 1000n);
    measured = await load(gw);
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
  ctx.log(`  profiled gateway: ${measured} under the profiler; samples from the measured load window only\n${text.replace(/^/gm, '  ')}`);
  return {
    id,
    rows: [],
    rounds: { profile: path, measuredUnderProfiler: measured, summary },
    notes: [`profile: ${path}`, `summary: ${join(dir, 'summary.txt')}`],
  };
}

export function profileUnary(ctx: BenchContext): Promise<ScenarioResult> {
  return profiled(ctx, 'profile', async (gw) => {
    const url = gatewayUrl(gw, 'unary1k');
    await probe(url, UNARY_REQUEST);
    await saturate(url, UNARY_REQUEST, 1, 50);
    const r = await saturate(url, UNARY_REQUEST, pick(ctx, 6, 3), 50);
    return `${fmt(r.rps)} req/s (warm-up second included in the window)`;
  });
}

export function profileStream(ctx: BenchContext): Promise<ScenarioResult> {
  return profiled(ctx, 'profile-stream', async (gw) => {
    const pool = new Pool(`http://127.0.0.1:${gw.port}`, { connections: 4 });
    const end = performance.now() + pick(ctx, 6, 3) * 1000;
    let events = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (performance.now() < end) events += (await countEvents(pool, '/remotes/sse')).events;
      }),
    );
    await pool.close();
    return `${fmt(events / ((performance.now() - started) / 1000))} events/s`;
  });
}
