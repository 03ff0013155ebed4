/**
 * CPU profile of the unary hot path: a gateway started with --cpu-prof takes
 * the saturation load, exits on SIGTERM (which writes the profile), and the
 * profile is summarized by self time. Not part of the default run: the
 * profiler slows the gateway, so these numbers never enter the table.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UNARY_REQUEST } from './bodies.js';
import { gatewayUrl, type BenchContext } from './context.js';
import { formatSummary, summarizeCpuProfile } from './cpuprofile-summary.js';
import { probe, saturate } from './load.js';
import { startGateway, TMP } from './processes.js';
import { fmt, type ScenarioResult } from './report.js';

export async function profileUnary(ctx: BenchContext): Promise<ScenarioResult> {
  const dir = join(TMP, `cpu-profile-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  const gw = await startGateway({
    upstreamPort: ctx.upstream.port,
    logLevel: 'warn',
    nodeArgs: ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '200'],
  });
  let rps = NaN;
  let window: [number, number] | undefined;
  try {
    const url = gatewayUrl(gw, 'unary1k');
    await probe(url, UNARY_REQUEST);
    await saturate(url, UNARY_REQUEST, 1, 50);
    const from = Number(process.hrtime.bigint() / 1000n);
    rps = (await saturate(url, UNARY_REQUEST, ctx.quick ? 3 : 5, 50)).rps;
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
  ctx.log(`  profiled gateway: ${fmt(rps)} req/s under the profiler; samples from the measured load window only\n${text.replace(/^/gm, '  ')}`);
  return {
    id: 'profile',
    rows: [],
    rounds: { profile: path, rpsUnderProfiler: rps, summary },
    notes: [`profile: ${path}`, `summary: ${join(dir, 'summary.txt')}`],
  };
}
