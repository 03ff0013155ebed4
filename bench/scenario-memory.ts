/**
 * Gateway memory under hostile volume: 100 callers at once, each calling a
 * remote whose reply is a 1 GiB body, over and over for the whole window.
 * The gateway must cut each read at maxResponseBytes, so RSS stays bounded by
 * roughly callers × maxResponseBytes and flat over time. Each measurement
 * runs in a fresh gateway process, so the kernel's high-water mark is its own.
 * With streaming: 100 callers on streams whose one event never ends (cut at
 * maxEventBytes), and 1,000 idle open streams held at once.
 */
import { Pool } from 'undici';
import { UNARY_REQUEST } from './bodies.js';
import { pick, sleep, type BenchContext } from './context.js';
import { sampleRssWhile, rssRow, type RssProfile } from './memory.js';
import { startGateway } from './processes.js';
import { fmt, type Row, type ScenarioResult } from './report.js';
import { streamingWired } from './scenario-stream.js';
import { countEvents, openStream } from './sse-client.js';

const CALLERS = 100;

interface EndlessCounts {
  calls: number;
  capped: number;
  other: number;
  /** ErrorInfo reasons of the replies that were not RESPONSE_TOO_LARGE. */
  otherReasons: Record<string, number>;
}

async function hammerEndless(port: number, seconds: number): Promise<EndlessCounts> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CALLERS, keepAliveTimeout: 30_000 });
  const end = performance.now() + seconds * 1000;
  const counts: EndlessCounts = { calls: 0, capped: 0, other: 0, otherReasons: {} };
  const other = (reason: string) => {
    counts.other++;
    counts.otherReasons[reason] = (counts.otherReasons[reason] ?? 0) + 1;
  };
  const caller = async () => {
    while (performance.now() < end) {
      try {
        const res = await pool.request({ path: '/remotes/endless', method: 'POST', headers: { 'content-type': 'application/json' }, body: UNARY_REQUEST });
        const text = await res.body.text();
        counts.calls++;
        if (text.includes('"reason":"RESPONSE_TOO_LARGE"')) counts.capped++;
        else other(/"reason":"([A-Z_]+)"/.exec(text)?.[1] ?? `HTTP ${res.statusCode}`);
      } catch (err) {
        other(`client ${(err as { code?: string }).code ?? 'error'}`);
      }
    }
  };
  await Promise.all(Array.from({ length: CALLERS }, caller));
  await pool.close();
  return counts;
}

export async function memoryUnary(ctx: BenchContext): Promise<ScenarioResult> {
  const seconds = pick(ctx, 5, 1.5);
  const rows: Row[] = [];
  const rounds: Record<string, unknown> = {};
  const notes: string[] = [];
  for (const cap of [{ label: '4 MiB (default)', bytes: undefined }, { label: '1 MiB', bytes: 1024 * 1024 }]) {
    const gw = await startGateway({ upstreamPort: ctx.upstream.port, logLevel: 'warn', ...(cap.bytes ? { maxResponseBytes: cap.bytes } : {}) });
    try {
      let counts: EndlessCounts = { calls: 0, capped: 0, other: 0, otherReasons: {} };
      const profile: RssProfile = await sampleRssWhile(gw.pid, async () => {
        counts = await hammerEndless(gw.port, seconds);
      });
      ctx.log(`  maxResponseBytes ${cap.label}: ${JSON.stringify(profile)} calls ${JSON.stringify(counts)}`);
      if (counts.other > 0) notes.push(`maxResponseBytes ${cap.label}: ${counts.other} replies were not RESPONSE_TOO_LARGE: ${JSON.stringify(counts.otherReasons)}`);
      rounds[cap.label] = { seconds, callers: CALLERS, ...counts, rss: profile };
      rows.push(rssRow(`RSS, ${CALLERS} callers x 1 GiB body, maxResponseBytes ${cap.label}`, profile));
    } finally {
      await gw.stop();
    }
  }
  return { id: 'memory-unary', rows, rounds, notes };
}

/** 100 callers, each reopening a stream whose single event never ends, for the whole window. */
async function hammerEndlessEvents(port: number, seconds: number): Promise<{ streams: number; cut: number; other: Record<string, number> }> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CALLERS, keepAliveTimeout: 30_000 });
  const end = performance.now() + seconds * 1000;
  const counts = { streams: 0, cut: 0, other: {} as Record<string, number> };
  const caller = async () => {
    while (performance.now() < end) {
      let reason: string;
      try {
        reason = (await countEvents(pool, '/remotes/sseendless')).reason ?? 'no error event';
      } catch (err) {
        reason = `client ${(err as { code?: string }).code ?? 'error'}`;
      }
      counts.streams++;
      if (reason === 'EVENT_TOO_LARGE') counts.cut++;
      else counts.other[reason] = (counts.other[reason] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: CALLERS }, caller));
  await pool.close();
  return counts;
}

const IDLE_STREAMS = 1_000;

export async function memoryStreams(ctx: BenchContext): Promise<ScenarioResult> {
  if (!(await streamingWired(ctx))) {
    return { id: 'memory-stream', rows: [], rounds: {}, notes: ['SKIPPED: the gateway does not relay message/stream as SSE yet'] };
  }
  const seconds = pick(ctx, 5, 1.5);
  const rows: Row[] = [];
  const rounds: Record<string, unknown> = {};
  const notes: string[] = [];

  const endless = await startGateway({ upstreamPort: ctx.upstream.port, logLevel: 'warn' });
  try {
    let counts = { streams: 0, cut: 0, other: {} as Record<string, number> };
    const profile = await sampleRssWhile(endless.pid, async () => {
      counts = await hammerEndlessEvents(endless.port, seconds);
    });
    ctx.log(`  endless events: ${JSON.stringify(profile)} streams ${JSON.stringify(counts)}`);
    if (Object.keys(counts.other).length > 0) notes.push(`endless event: streams not ended by EVENT_TOO_LARGE: ${JSON.stringify(counts.other)}`);
    rounds.endlessEvent = { seconds, callers: CALLERS, ...counts, rss: profile };
    rows.push(rssRow(`RSS, ${CALLERS} streams x endless SSE event (maxEventBytes 1 MiB)`, profile));
  } finally {
    await endless.stop();
  }

  const idle = await startGateway({ upstreamPort: ctx.upstream.port, logLevel: 'warn' });
  const pool = new Pool(`http://127.0.0.1:${idle.port}`, { connections: IDLE_STREAMS, keepAliveTimeout: 30_000 });
  const open: { status: number; close: () => void }[] = [];
  try {
    const profile = await sampleRssWhile(idle.pid, async () => {
      // Open in batches so the connect storm itself does not dominate the measurement.
      for (let i = 0; i < IDLE_STREAMS; i += 100) {
        open.push(...(await Promise.all(Array.from({ length: Math.min(100, IDLE_STREAMS - i) }, () => openStream(pool, '/remotes/sseidle')))));
      }
      await sleep(seconds * 1000);
    });
    const ok = open.filter((s) => s.status === 200).length;
    const perStreamKiB = ((Math.max(profile.peakMiB, profile.hwmMiB) - profile.baselineMiB) * 1024) / IDLE_STREAMS;
    ctx.log(`  idle streams: ${ok} open, ${JSON.stringify(profile)}, ~${fmt(perStreamKiB, 1)} KiB per stream`);
    if (ok !== IDLE_STREAMS) notes.push(`idle streams: only ${ok} of ${IDLE_STREAMS} opened with 200`);
    rounds.idleStreams = { streams: IDLE_STREAMS, opened: ok, holdSeconds: seconds, perStreamKiB: Math.round(perStreamKiB * 10) / 10, rss: profile };
    rows.push(rssRow(`RSS, ${IDLE_STREAMS} idle open streams (~${fmt(perStreamKiB, 0)} KiB each)`, profile));
  } finally {
    for (const s of open) s.close();
    await pool.destroy();
    await idle.stop();
  }
  return { id: 'memory-stream', rows, rounds, notes };
}
