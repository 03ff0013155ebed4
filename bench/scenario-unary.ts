/**
 * Unary scenarios: saturation throughput, added latency at a fixed rate, and
 * what per-call info logging costs. Each compares two targets in the same
 * run, alternating rounds.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { UNARY_REQUEST } from './bodies.js';
import { alternate, alternateMany, directUrl, gatewayUrl, pick, type BenchContext } from './context.js';
import { fixedRate, probe, saturate, upstreamServed, type SaturationRound } from './load.js';
import { cpuMicros, startGateway, startReferenceHop, TMP, type Child } from './processes.js';
import { fmt, signed, type ScenarioResult } from './report.js';
import { median, round } from './stats.js';

const CONNECTIONS = 50;
const RATE = 1_000;

const roundSeconds = (ctx: BenchContext) => pick(ctx, 3, 1);
/** Rounds per side: at least 2 each, so the spread is visible. */
const rounds = (ctx: BenchContext) => pick(ctx, 3, 2);
const warmSeconds = (ctx: BenchContext) => pick(ctx, 1, 0.5);

interface CheckedRound extends SaturationRound {
  /** CPU time per answered call, µs, of each process on the path (proxy: the gateway or the bare hop, when one is in the path). */
  readonly cpuUsPerCall: { loadGenerator: number; upstream: number; proxy?: number };
}

/**
 * A saturation round that also checks the upstream really answered every 2xx
 * the load generator counted, and charges each process's CPU time to the calls.
 */
async function checkedSaturation(
  ctx: BenchContext,
  url: string,
  seconds: number,
  notes: string[],
  label: string,
  proxy?: Child,
): Promise<CheckedRound> {
  const before = await upstreamServed(ctx.upstream.port);
  const cpu0 = { load: process.cpuUsage(), upstream: cpuMicros(ctx.upstream.pid), proxy: proxy ? cpuMicros(proxy.pid) : NaN };
  const r = await saturate(url, UNARY_REQUEST, seconds, CONNECTIONS);
  const load = process.cpuUsage(cpu0.load);
  const perCall = (us: number) => round(us / Math.max(1, r.ok), 1);
  const cpuUsPerCall = {
    loadGenerator: perCall(load.user + load.system),
    upstream: perCall(cpuMicros(ctx.upstream.pid) - cpu0.upstream),
    ...(proxy ? { proxy: perCall(cpuMicros(proxy.pid) - cpu0.proxy) } : {}),
  };
  const served = (await upstreamServed(ctx.upstream.port)) - before;
  // Calls in flight when the load generator stops are served but not counted: allow a few per connection.
  if (Math.abs(served - r.ok) > 2 * CONNECTIONS) notes.push(`${label}: upstream served ${served} calls but the load generator counted ${r.ok} 2xx replies`);
  if (r.errors + r.non2xx > 0) notes.push(`${label}: ${r.errors} errors/timeouts, ${r.non2xx} non-2xx`);
  ctx.log(`  ${label}: ${fmt(r.rps)} req/s (p50 ${r.latencyP50Ms} ms, p99 ${r.latencyP99Ms} ms), CPU µs/call ${JSON.stringify(cpuUsPerCall)}`);
  return { ...r, cpuUsPerCall };
}

/** Sum of the CPU each call costs on its path: what bounds throughput when the CPUs are not shared with anyone else. */
const pathCpu = (r: CheckedRound) => r.cpuUsPerCall.loadGenerator + r.cpuUsPerCall.upstream + (r.cpuUsPerCall.proxy ?? 0);

export async function unarySaturation(ctx: BenchContext): Promise<ScenarioResult> {
  const hop = await startReferenceHop(ctx.upstream.port, '/unary/1024');
  try {
    const direct = directUrl(ctx, 'unary/1024');
    const bare = `http://127.0.0.1:${hop.port}/remotes/unary1k`;
    const via = gatewayUrl(ctx.gateway, 'unary1k');
    for (const url of [direct, bare, via]) await probe(url, UNARY_REQUEST);
    const notes: string[] = [];
    const seconds = roundSeconds(ctx);
    // Warm every path (JIT, keep-alive pools) before anything is recorded.
    for (const url of [direct, bare, via]) await saturate(url, UNARY_REQUEST, warmSeconds(ctx), CONNECTIONS);
    const [d, h, g] = await alternateMany(rounds(ctx), [
      () => checkedSaturation(ctx, direct, seconds, notes, 'direct'),
      () => checkedSaturation(ctx, bare, seconds, notes, 'bare hop', hop),
      () => checkedSaturation(ctx, via, seconds, notes, 'gateway', ctx.gateway),
    ]);
    const rps = (side: CheckedRound[]) => median(side.map((r) => r.rps));
    const hopCpu = (side: CheckedRound[]) => median(side.map((r) => r.cpuUsPerCall.proxy ?? NaN));
    const ratio = rps(g!) / rps(d!);
    return {
      id: 'unary-saturation',
      rows: [
        {
          scenario: `unary saturation, 1 KiB result, ${CONNECTIONS} conn (req/s)`,
          direct: fmt(rps(d!)),
          gateway: fmt(rps(g!)),
          ratio: ratio.toFixed(2),
          goal: '>= 0.50',
          met: ratio >= 0.5,
        },
        {
          scenario: 'unary saturation, reference: bare Fastify+undici hop (req/s)',
          direct: fmt(rps(d!)),
          gateway: fmt(rps(h!)),
          ratio: (rps(h!) / rps(d!)).toFixed(2),
          goal: 'report',
          met: null,
        },
        {
          scenario: 'unary CPU per call, all processes on the path (µs)',
          direct: fmt(median(d!.map(pathCpu)), 0),
          gateway: fmt(median(g!.map(pathCpu)), 0),
          ratio: (median(d!.map(pathCpu)) / median(g!.map(pathCpu))).toFixed(2),
          goal: 'report',
          met: null,
        },
        {
          scenario: 'unary CPU per call of the proxy process (µs; left = bare hop)',
          direct: fmt(hopCpu(h!), 0),
          gateway: fmt(hopCpu(g!), 0),
          ratio: (hopCpu(g!) / hopCpu(h!)).toFixed(2),
          goal: 'report',
          met: null,
        },
      ],
      rounds: { seconds, connections: CONNECTIONS, direct: d, bareHop: h, gateway: g },
      notes: [
        ...notes,
        'CPU per call is user+system time from /proc/<pid>/stat divided by answered calls; it also inflates when other work shares the machine (cache misses, context switches, fixed per-second costs spread over fewer calls)',
        'the bare hop is bench/reference-hop.ts: Fastify + undici, raw bytes through, nothing checked (the floor of any Fastify+undici gateway)',
      ],
    };
  } finally {
    await hop.stop();
  }
}

export async function unaryFixedRate(ctx: BenchContext): Promise<ScenarioResult> {
  const direct = directUrl(ctx, 'unary/1024');
  const via = gatewayUrl(ctx.gateway, 'unary1k');
  await probe(direct, UNARY_REQUEST);
  await probe(via, UNARY_REQUEST);
  const seconds = roundSeconds(ctx);
  await fixedRate(direct, UNARY_REQUEST, RATE, warmSeconds(ctx));
  await fixedRate(via, UNARY_REQUEST, RATE, warmSeconds(ctx));
  const notes: string[] = [];
  const one = async (url: string, label: string) => {
    const r = await fixedRate(url, UNARY_REQUEST, RATE, seconds);
    ctx.log(`  ${label}: ${fmt(r.achievedRps)} req/s, p50 ${r.p50Ms.toFixed(3)} ms, p99 ${r.p99Ms.toFixed(3)} ms`);
    if (r.bad > 0 || r.late > 0) notes.push(`${label}: ${r.bad} bad replies, ${r.late} requests skipped (all connections busy)`);
    return r;
  };
  const measured = await alternate(rounds(ctx), () => one(direct, 'direct'), () => one(via, 'gateway'));
  const p = (side: typeof measured.a, key: 'p50Ms' | 'p99Ms') => median(side.map((r) => r[key]));
  const added50 = p(measured.b, 'p50Ms') - p(measured.a, 'p50Ms');
  const added99 = p(measured.b, 'p99Ms') - p(measured.a, 'p99Ms');
  return {
    id: 'unary-fixed-rate',
    rows: [
      {
        scenario: `unary ${RATE} req/s, p50 latency (ms)`,
        direct: p(measured.a, 'p50Ms').toFixed(3),
        gateway: p(measured.b, 'p50Ms').toFixed(3),
        ratio: signed(added50, 'ms'),
        goal: 'report',
        met: null,
      },
      {
        scenario: `unary ${RATE} req/s, p99 latency (ms)`,
        direct: p(measured.a, 'p99Ms').toFixed(3),
        gateway: p(measured.b, 'p99Ms').toFixed(3),
        ratio: signed(added99, 'ms'),
        goal: 'added <= 1 ms',
        met: added99 <= 1,
      },
    ],
    rounds: { seconds, rate: RATE, direct: measured.a, gateway: measured.b, addedP50Ms: round(added50, 3), addedP99Ms: round(added99, 3) },
    notes: [...notes, 'latency is timed from dispatch to the last body byte by an undici client in the load-generator process'],
  };
}

/** The same gateway at logLevel info (one line per call, to a file) against one at warn. */
export async function unaryLogCost(ctx: BenchContext): Promise<ScenarioResult> {
  const logFile = join(TMP, 'gateway-info.log');
  rmSync(logFile, { force: true });
  const info = await startGateway({ upstreamPort: ctx.upstream.port, logLevel: 'info', logFile });
  try {
    const quiet = gatewayUrl(ctx.gateway, 'unary1k');
    const loud = gatewayUrl(info, 'unary1k');
    await probe(loud, UNARY_REQUEST);
    await saturate(loud, UNARY_REQUEST, warmSeconds(ctx), CONNECTIONS);
    const seconds = pick(ctx, 3, 1);
    const notes: string[] = [];
    const measured = await alternate(
      2,
      () => checkedSaturation(ctx, quiet, seconds, notes, 'gateway warn', ctx.gateway),
      () => checkedSaturation(ctx, loud, seconds, notes, 'gateway info', info),
    );
    const lines = readFileSync(logFile, 'utf8').split('\n').filter((l) => l.includes('"msg":"call"')).length;
    const w = median(measured.a.map((r) => r.rps));
    const i = median(measured.b.map((r) => r.rps));
    const wCpu = median(measured.a.map((r) => r.cpuUsPerCall.proxy ?? NaN));
    const iCpu = median(measured.b.map((r) => r.cpuUsPerCall.proxy ?? NaN));
    return {
      id: 'unary-log-cost',
      rows: [
        {
          scenario: 'unary saturation with info log to file (req/s; left = gateway at warn)',
          direct: fmt(w),
          gateway: fmt(i),
          ratio: (i / w).toFixed(2),
          goal: 'report',
          met: null,
        },
        {
          scenario: 'gateway CPU per call with info log to file (µs; left = at warn)',
          direct: fmt(wCpu, 0),
          gateway: fmt(iCpu, 0),
          ratio: signed(iCpu - wCpu, 'µs', 0),
          goal: 'report',
          met: null,
        },
      ],
      rounds: { seconds, warn: measured.a, info: measured.b, callLogLines: lines },
      notes: [...notes, `${lines} per-call log lines were written to the file during the info runs`],
    };
  } finally {
    await info.stop();
    rmSync(logFile, { force: true });
  }
}
