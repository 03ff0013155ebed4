/**
 * Streaming scenarios (message/stream through the SSE relay): CPU per event
 * and events/s with the upstream writing as fast as the socket takes it
 * (direct, a raw byte passthrough, a minimal validating relay and the gateway),
 * and the per-event latency the gateway adds when events are paced. Rounds
 * alternate. Skipped, with a note, when the gateway does not answer
 * message/stream with an event stream.
 */
import { Pool } from 'undici';
import { STREAM_REQUEST } from './bodies.js';
import { alternate, alternateMany, directUrl, gatewayUrl, pick, type BenchContext } from './context.js';
import { startSseRelay, treeCpuMicros, type Child } from './processes.js';
import { fmt, signed, type ScenarioResult } from './report.js';
import { countEvents, eventLatencies } from './sse-client.js';
import { median, percentile, round } from './stats.js';

/** Must match the upstream routes the gateway's `sse` and `ssepaced` remotes point at (bench/processes.ts). */
const BURST_ROUTE = 'sse/2000/256';
const BURST_EVENTS = 2000;
const PACED_ROUTE = 'sse-paced/100/10';
const PACED_EVENTS = 100;
const BURST_STREAMS = 4;
const PACED_STREAMS = 5;

/** True when the gateway relays message/stream as text/event-stream. */
export async function streamingWired(ctx: BenchContext): Promise<boolean> {
  try {
    const res = await fetch(gatewayUrl(ctx.gateway, 'sse'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: STREAM_REQUEST,
    });
    const type = res.headers.get('content-type') ?? '';
    const text = await res.text();
    return res.status === 200 && type.startsWith('text/event-stream') && text.startsWith('data: {"jsonrpc":"2.0","id":1,"result":');
  } catch {
    return false;
  }
}

const notWired = (id: string): ScenarioResult => ({
  id,
  rows: [],
  rounds: {},
  notes: ['SKIPPED: the gateway does not answer message/stream with an SSE stream of results; nothing to measure'],
});

function poolFor(url: string, connections: number): { pool: Pool; path: string } {
  const u = new URL(url);
  return { pool: new Pool(u.origin, { connections, keepAliveTimeout: 30_000 }), path: u.pathname };
}

interface BurstRound {
  eventsPerSecond: number;
  events: number;
  streams: number;
  badStreams: number;
  /** CPU µs per event of the relay's process (NaN for direct). */
  proxyCpuUsPerEvent: number;
}

/** `streams` callers each reading `perCaller` whole streams back to back: a fixed amount of work. */
async function burstRound(url: string, perCaller: number, streams: number, proxy?: Child): Promise<BurstRound> {
  const { pool, path } = poolFor(url, streams);
  const cpu0 = proxy ? treeCpuMicros(proxy.pid) : NaN;
  const started = performance.now();
  const totals = { events: 0, streams: 0, badStreams: 0 };
  const caller = async () => {
    for (let i = 0; i < perCaller; i++) {
      const r = await countEvents(pool, path);
      totals.events += r.events;
      totals.streams++;
      if (r.errorEvents > 0 || r.events !== BURST_EVENTS) totals.badStreams++;
    }
  };
  await Promise.all(Array.from({ length: streams }, caller));
  const elapsed = (performance.now() - started) / 1000;
  const proxyCpuUsPerEvent = proxy ? round((treeCpuMicros(proxy.pid) - cpu0) / Math.max(1, totals.events), 2) : NaN;
  await pool.close();
  return { eventsPerSecond: totals.events / elapsed, ...totals, proxyCpuUsPerEvent };
}

export async function streamingThroughput(ctx: BenchContext): Promise<ScenarioResult> {
  if (!(await streamingWired(ctx))) return notWired('stream-throughput');
  const route = `/${BURST_ROUTE}`;
  const raw = await startSseRelay(ctx.upstream.port, route, 'raw');
  const relay = await startSseRelay(ctx.upstream.port, route, 'validate').catch(async (err: unknown) => {
    await raw.stop();
    throw err;
  });
  try {
    const sides: { id: string; label: string; url: string; proxy?: Child }[] = [
      { id: 'direct', label: 'direct (no hop)', url: directUrl(ctx, BURST_ROUTE) },
      { id: 'raw', label: 'raw byte passthrough', url: `http://127.0.0.1:${raw.port}/remotes/sse`, proxy: raw },
      { id: 'relay', label: 'minimal validating relay', url: `http://127.0.0.1:${relay.port}/remotes/sse`, proxy: relay },
      { id: 'gateway', label: 'a2a-egress', url: gatewayUrl(ctx.gateway, 'sse'), proxy: ctx.gateway },
    ];
    const perCaller = pick(ctx, 12, 3);
    for (const s of sides) await burstRound(s.url, pick(ctx, 3, 1), BURST_STREAMS, s.proxy);
    const notes: string[] = [];
    const one = async (side: (typeof sides)[number]) => {
      const r = await burstRound(side.url, perCaller, BURST_STREAMS, side.proxy);
      ctx.log(`  ${side.label}: ${fmt(r.eventsPerSecond)} events/s over ${r.streams} streams, proxy CPU ${fmt(r.proxyCpuUsPerEvent)} µs/event`);
      if (r.badStreams > 0) notes.push(`${side.label}: ${r.badStreams} of ${r.streams} streams did not carry exactly ${BURST_EVENTS} result events`);
      return r;
    };
    const measured = await alternateMany(pick(ctx, 3, 2), sides.map((s) => () => one(s)));
    const eps = (i: number) => median(measured[i]!.map((r) => r.eventsPerSecond));
    const cpu = (i: number) => median(measured[i]!.map((r) => r.proxyCpuUsPerEvent));
    const range = (i: number) => measured[i]!.map((r) => r.proxyCpuUsPerEvent);
    const [d, , v, g] = [0, 1, 2, 3];
    const events = perCaller * BURST_STREAMS * BURST_EVENTS;
    return {
      id: 'stream-throughput',
      rows: [
        {
          scenario: `stream events/s, ${BURST_STREAMS} streams x ${BURST_EVENTS} events of 256 B`,
          direct: fmt(eps(d)),
          gateway: fmt(eps(g)),
          ratio: (eps(g) / eps(d)).toFixed(2),
          goal: '>= 0.80',
          met: eps(g) / eps(d) >= 0.8,
        },
        {
          scenario: 'stream CPU µs per event: gateway vs minimal validating relay',
          direct: fmt(cpu(v)),
          gateway: fmt(cpu(g)),
          ratio: (cpu(g) / cpu(v)).toFixed(2),
          goal: '<= 1.20',
          met: cpu(g) / cpu(v) <= 1.2,
        },
      ],
      tables: [
        {
          title: `SSE, ${BURST_STREAMS} callers x ${perCaller} streams x ${BURST_EVENTS} events of 256 B per round (${events.toLocaleString('en-US')} events), ${measured[0]!.length} alternating rounds (median, range of rounds)`,
          header: ['peer', 'proxy CPU µs per event', 'events/s', '× direct'],
          rows: sides.map((s, i) => [
            s.label,
            s.proxy ? `${fmt(cpu(i))} (${fmt(Math.min(...range(i)))}–${fmt(Math.max(...range(i)))})` : '— (no hop)',
            fmt(eps(i)),
            (eps(i) / eps(d)).toFixed(2),
          ]),
          notes: [
            'raw byte passthrough: node:http + undici Pool.dispatch, each upstream chunk written to the caller as it comes (bench/sse-relay-hop.ts raw)',
            'minimal validating relay: the same, but each event parsed as JSON and the caller id spliced in, nothing else (bench/sse-splice.ts)',
          ],
        },
      ],
      rounds: { perCaller, streams: BURST_STREAMS, route: BURST_ROUTE, ...Object.fromEntries(sides.map((s, i) => [s.id, measured[i]])) },
      notes: [...notes, 'the upstream writes one event per socket write (as A2A servers do), as fast as backpressure allows'],
    };
  } finally {
    await relay.stop();
    await raw.stop();
  }
}

interface LatencyRound {
  p50Ms: number;
  p99Ms: number;
  events: number;
  errorEvents: number;
}

async function pacedRound(url: string): Promise<LatencyRound> {
  const { pool, path } = poolFor(url, PACED_STREAMS);
  const latencies: number[] = [];
  const counts = await Promise.all(Array.from({ length: PACED_STREAMS }, () => eventLatencies(pool, path, latencies)));
  await pool.close();
  return {
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    events: counts.reduce((n, c) => n + c.events, 0),
    errorEvents: counts.reduce((n, c) => n + c.errorEvents, 0),
  };
}

export async function streamingLatency(ctx: BenchContext): Promise<ScenarioResult> {
  if (!(await streamingWired(ctx))) return notWired('stream-latency');
  const direct = directUrl(ctx, PACED_ROUTE);
  const via = gatewayUrl(ctx.gateway, 'ssepaced');
  await pacedRound(direct);
  await pacedRound(via);
  const notes: string[] = [];
  const one = async (url: string, label: string) => {
    const r = await pacedRound(url);
    ctx.log(`  ${label}: ${r.events} events, p50 ${r.p50Ms.toFixed(3)} ms, p99 ${r.p99Ms.toFixed(3)} ms`);
    if (r.errorEvents > 0 || r.events !== PACED_EVENTS * PACED_STREAMS) notes.push(`${label}: ${r.events} events, ${r.errorEvents} error events`);
    return r;
  };
  const measured = await alternate(pick(ctx, 3, 2), () => one(direct, 'direct'), () => one(via, 'gateway'));
  const p = (side: LatencyRound[], key: 'p50Ms' | 'p99Ms') => median(side.map((r) => r[key]));
  const added50 = p(measured.b, 'p50Ms') - p(measured.a, 'p50Ms');
  const added99 = p(measured.b, 'p99Ms') - p(measured.a, 'p99Ms');
  const rate = `${PACED_STREAMS} streams x 1 event/10 ms`;
  return {
    id: 'stream-latency',
    rows: [
      {
        scenario: `stream per-event latency p50 (ms), ${rate}`,
        direct: p(measured.a, 'p50Ms').toFixed(3),
        gateway: p(measured.b, 'p50Ms').toFixed(3),
        ratio: signed(added50, 'ms'),
        goal: 'report',
        met: null,
      },
      {
        scenario: `stream per-event latency p99 (ms), ${rate}`,
        direct: p(measured.a, 'p99Ms').toFixed(3),
        gateway: p(measured.b, 'p99Ms').toFixed(3),
        ratio: signed(added99, 'ms'),
        goal: 'report',
        met: null,
      },
    ],
    rounds: { route: PACED_ROUTE, streams: PACED_STREAMS, direct: measured.a, gateway: measured.b, addedP50Ms: round(added50, 3), addedP99Ms: round(added99, 3) },
    notes: [...notes, 'per-event latency: upstream process.hrtime stamp (CLOCK_MONOTONIC, shared by all processes) to the chunk arriving at the reader'],
  };
}
