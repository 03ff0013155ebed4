/**
 * The headline: what one unary call costs each proxy, in CPU time. Every
 * peer (bench/unary-peers.ts) takes the same fixed number of calls, in
 * alternating rounds of one run; a proxy's CPU time (utime+stime from
 * /proc/<pid>/stat, its child processes included) before and after, divided
 * by the calls answered, is its cost per call. On a shared machine this is
 * far steadier than throughput, which also depends on who else gets the CPUs.
 * Throughput and closed-loop latency of the same rounds stand beside it.
 */
import { pick, roundOrder, type BenchContext } from './context.js';
import { upstreamServed, type SaturationRound } from './load.js';
import { isSkipped, type PeerStart, type SkippedPeer, type UnaryPeer } from './peers.js';
import { cpuMicros, treeCpuMicros } from './processes.js';
import { fmt, type Row, type ScenarioResult, type Table } from './report.js';
import { median, round } from './stats.js';
import { startUnaryPeers } from './unary-peers.js';

const CONNECTIONS = 32;
/**
 * Rounds of about 2 s and 7 of them (were 8,000 calls, under 1 s, and 5): on this kind of shared 2-CPU machine the
 * host's own bursts moved a peer's median by up to a third between two runs of the same build.
 */
const calls = (ctx: BenchContext) => pick(ctx, 16_000, 1_500);
const rounds = (ctx: BenchContext) => pick(ctx, 7, 2);
/** One whole round per peer, not recorded: the gateway's JIT was still settling after 3,000 calls. */
const warmCalls = (ctx: BenchContext) => calls(ctx);

export interface PeerRound extends SaturationRound {
  readonly seconds: number;
  /** CPU µs per answered call: the peer's own process (none for direct), the shared upstream, this load generator. */
  readonly cpuUsPerCall: { readonly proxy?: number; readonly upstream?: number; readonly loadGenerator: number };
}

/** One round of one peer: exactly `n` calls, and the CPU each process on the path spent on them. */
export async function measureRound(ctx: BenchContext, peer: UnaryPeer, n: number, notes: string[]): Promise<PeerRound> {
  const served0 = peer.viaSharedUpstream ? await upstreamServed(ctx.upstream.port) : 0;
  const load0 = process.cpuUsage();
  const upstream0 = cpuMicros(ctx.upstream.pid);
  const proxy0 = peer.pid !== undefined ? treeCpuMicros(peer.pid) : NaN;
  const t0 = performance.now();
  const r = await peer.drive(n, CONNECTIONS);
  const seconds = (performance.now() - t0) / 1000;
  const proxy = peer.pid !== undefined ? treeCpuMicros(peer.pid) - proxy0 : NaN;
  const upstream = cpuMicros(ctx.upstream.pid) - upstream0;
  const load = process.cpuUsage(load0);
  const per = (us: number) => round(us / Math.max(1, r.ok), 1);
  const cpuUsPerCall = {
    ...(peer.pid !== undefined ? { proxy: per(proxy) } : {}),
    ...(peer.viaSharedUpstream ? { upstream: per(upstream) } : {}),
    loadGenerator: per(load.user + load.system),
  };
  if (peer.viaSharedUpstream) {
    const served = (await upstreamServed(ctx.upstream.port)) - served0;
    // A call the load generator gave up on may still have reached the upstream: allow one per connection.
    if (Math.abs(served - r.ok) > CONNECTIONS) notes.push(`${peer.label}: the upstream served ${served} calls but the load generator counted ${r.ok} 2xx replies`);
  }
  if (r.errors + r.non2xx > 0) notes.push(`${peer.label}: ${r.errors} errors/timeouts, ${r.non2xx} non-2xx in a round of ${n}`);
  ctx.log(`  ${peer.label}: ${fmt(r.rps)} req/s, p50 ${r.latencyP50Ms} ms, p99 ${r.latencyP99Ms} ms, CPU µs/call ${JSON.stringify(cpuUsPerCall)}`);
  return { ...r, seconds: round(seconds, 2), cpuUsPerCall };
}

export interface PeerSummary {
  readonly id: string;
  readonly label: string;
  readonly what: string;
  readonly cpuUsPerCall: number;
  readonly cpuRange: readonly [number, number];
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly rounds: PeerRound[];
}

function summarize(peer: UnaryPeer, measured: PeerRound[]): PeerSummary {
  const cpu = measured.map((r) => r.cpuUsPerCall.proxy ?? NaN);
  return {
    id: peer.id,
    label: peer.label,
    what: peer.what,
    cpuUsPerCall: median(cpu),
    cpuRange: [Math.min(...cpu), Math.max(...cpu)],
    rps: median(measured.map((r) => r.rps)),
    p50Ms: median(measured.map((r) => r.latencyP50Ms)),
    p99Ms: median(measured.map((r) => r.latencyP99Ms)),
    rounds: measured,
  };
}

/** Probes every peer; one whose probe fails is skipped with what it answered, so one broken path costs only its row. */
async function probed(started: PeerStart[]): Promise<{ running: UnaryPeer[]; skipped: SkippedPeer[] }> {
  const running: UnaryPeer[] = [];
  const skipped: SkippedPeer[] = [];
  for (const p of started) {
    if (isSkipped(p)) {
      skipped.push(p);
      continue;
    }
    try {
      await p.probe();
      running.push(p);
    } catch (err) {
      if (p.id === 'direct') throw err;
      skipped.push({ id: p.id, label: p.label, skipped: `FAILED its probe: ${err instanceof Error ? err.message : String(err)}` });
    }
  }
  return { running, skipped };
}

const cpuCell = (s: PeerSummary) =>
  Number.isFinite(s.cpuUsPerCall) ? `${fmt(s.cpuUsPerCall, 0)} (${fmt(s.cpuRange[0], 0)}–${fmt(s.cpuRange[1], 0)})` : '— (no hop)';

function peerTable(summaries: PeerSummary[], skipped: SkippedPeer[], n: number, roundCount: number): Table {
  const direct = summaries.find((s) => s.id === 'direct');
  return {
    title: `Unary, 1 KiB result: ${n.toLocaleString('en-US')} calls per peer per round, ${CONNECTIONS} connections, ${roundCount} alternating rounds (median, range of rounds)`,
    header: ['peer', 'proxy CPU µs per call', 'req/s', '× direct', 'p50 ms', 'p99 ms'],
    rows: [
      ...summaries.map((s) => [s.label, cpuCell(s), fmt(s.rps, 0), direct ? (s.rps / direct.rps).toFixed(2) : 'n/a', s.p50Ms.toFixed(1), s.p99Ms.toFixed(1)]),
      ...skipped.map((s) => [s.label, 'skipped', '—', '—', '—', '—']),
    ],
    notes: [...summaries.filter((s) => s.id !== 'direct').map((s) => `${s.label}: ${s.what}`), ...skipped.map((s) => `${s.label}: ${s.skipped}`)],
  };
}

/** The judged comparisons of issue 13 (and 12 for HTTP+JSON), for the peers that ran. */
function goalRows(by: Map<string, PeerSummary>): Row[] {
  const rows: Row[] = [];
  const gw = by.get('gateway-jsonrpc');
  const cpuRow = (scenario: string, base: PeerSummary | undefined, other: PeerSummary | undefined, limit: number | null) => {
    if (!base || !other) return;
    const ratio = other.cpuUsPerCall / base.cpuUsPerCall;
    rows.push({
      scenario,
      direct: fmt(base.cpuUsPerCall, 0),
      gateway: fmt(other.cpuUsPerCall, 0),
      ratio: ratio.toFixed(2),
      goal: limit === null ? 'report' : `<= ${limit.toFixed(2)}`,
      met: limit === null ? null : ratio <= limit,
    });
  };
  cpuRow('unary CPU µs per call: gateway (JSON-RPC) vs @fastify/http-proxy', by.get('http-proxy'), gw, 1);
  cpuRow('unary CPU µs per call: gateway (JSON-RPC) vs bare dispatch hop', by.get('dispatch-hop'), gw, 1.5);
  cpuRow('unary CPU µs per call: gateway (JSON-RPC) vs bare Fastify hop', by.get('fastify-hop'), gw, null);
  cpuRow("unary CPU µs per call: gateway (JSON-RPC) as launched vs with V8's default young generation", by.get('gateway-jsonrpc-v8-default'), gw, null);
  cpuRow('unary CPU µs per call: gateway HTTP+JSON → JSON-RPC remote vs JSON-RPC', gw, by.get('gateway-rest'), 1.1);
  cpuRow('unary CPU µs per call: gateway HTTP+JSON → HTTP+JSON remote vs JSON-RPC', gw, by.get('gateway-rest-rest'), 1.1);
  cpuRow('unary CPU µs per call: gateway 2 workers vs 1 (all processes)', gw, by.get('gateway-workers-2'), null);
  const direct = by.get('direct');
  if (direct && gw) {
    const ratio = gw.rps / direct.rps;
    rows.push({ scenario: `unary saturation req/s, ${CONNECTIONS} conn: gateway (JSON-RPC) vs direct`, direct: fmt(direct.rps, 0), gateway: fmt(gw.rps, 0), ratio: ratio.toFixed(2), goal: '>= 0.50', met: ratio >= 0.5 });
  }
  const workers = by.get('gateway-workers-2');
  if (gw && workers) {
    rows.push({ scenario: 'unary saturation req/s: gateway 2 workers vs 1', direct: fmt(gw.rps, 0), gateway: fmt(workers.rps, 0), ratio: (workers.rps / gw.rps).toFixed(2), goal: 'report', met: null });
  }
  return rows;
}

export async function unaryPeers(ctx: BenchContext): Promise<ScenarioResult> {
  const started = await startUnaryPeers(ctx);
  try {
    const { running, skipped } = await probed(started);
    for (const s of skipped) ctx.log(`  ${s.label}: skipped (${s.skipped})`);
    const notes: string[] = [];
    const n = calls(ctx);
    // Warm every path (JIT, keep-alive pools) before anything is recorded.
    for (const p of running) await p.drive(warmCalls(ctx), CONNECTIONS);
    const measured = running.map(() => [] as PeerRound[]);
    for (let i = 0; i < rounds(ctx); i++) {
      for (const j of roundOrder(running.length, i)) measured[j]!.push(await measureRound(ctx, running[j]!, n, notes));
    }
    const summaries = running.map((p, j) => summarize(p, measured[j]!));
    const by = new Map(summaries.map((s) => [s.id, s]));
    return {
      id: 'unary-peers',
      rows: goalRows(by),
      tables: [peerTable(summaries, skipped, n, rounds(ctx))],
      rounds: { calls: n, connections: CONNECTIONS, peers: summaries, skipped },
      notes: [
        ...notes,
        ...skipped.map((s) => `${s.label} skipped: ${s.skipped}`),
        'CPU per call is user+system time from /proc/<pid>/stat (children included) divided by answered calls; it also inflates when other work shares the machine (cache misses, context switches)',
      ],
    };
  } finally {
    for (const p of started) if (!isSkipped(p)) await p.stop();
  }
}
