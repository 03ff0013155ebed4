/**
 * The load shapes: closed-loop saturation for a duration (autocannon, as many
 * requests as the target answers), closed-loop for a fixed number of calls
 * (undici, what CPU per call is measured on), and open-loop fixed rate
 * (undici, one request every 1/rate seconds whatever the replies do, latency
 * timed to the microsecond).
 */
import autocannon, { type Result as AutocannonResult } from 'autocannon';
import { Pool } from 'undici';
import { percentile, round } from './stats.js';

const JSON_HEADERS = { 'content-type': 'application/json' };
/** A good reply from either path: the caller's id (1) then a result, never an error envelope. */
const GOOD_PREFIX = '{"jsonrpc":"2.0","id":1,"result":';

export interface SaturationRound {
  readonly rps: number;
  readonly ok: number;
  readonly errors: number;
  readonly non2xx: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
}

export async function saturate(url: string, body: Buffer, seconds: number, connections: number, headers: Record<string, string> = JSON_HEADERS): Promise<SaturationRound> {
  const r = await autocannon({ url, method: 'POST', headers, body, connections, duration: seconds, timeout: 10 });
  return saturationRound(r);
}

/**
 * Closed-loop load of exactly `calls` requests over `connections` (each
 * connection sends its next request when its reply is read): the fixed amount
 * of work whose CPU cost the unary scenario divides by the calls. Timed here,
 * not by autocannon, whose `amount` mode ends on its next 1-second tick and so
 * rounds every duration up. A 2xx reply that `good` rejects counts as non-2xx.
 */
export async function closedLoop(
  url: string,
  body: Buffer,
  calls: number,
  connections: number,
  headers: Readonly<Record<string, string>> = JSON_HEADERS,
  good?: (status: number, text: string) => boolean,
): Promise<SaturationRound> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const latencies: number[] = [];
  let next = 0;
  let ok = 0;
  let errors = 0;
  let non2xx = 0;
  const connection = async (): Promise<void> => {
    while (next < calls) {
      next++;
      const t0 = performance.now();
      try {
        const res = await pool.request({ path: target.pathname, method: 'POST', headers, body });
        const text = await res.body.text();
        latencies.push(performance.now() - t0);
        if (res.statusCode >= 200 && res.statusCode < 300 && (!good || good(res.statusCode, text))) ok++;
        else non2xx++;
      } catch {
        errors++;
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(connections, calls) }, connection));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return { rps: ok / seconds, ok, errors, non2xx, latencyP50Ms: round(percentile(latencies, 50), 3), latencyP99Ms: round(percentile(latencies, 99), 3) };
}

function saturationRound(r: AutocannonResult): SaturationRound {
  return {
    rps: r['2xx'] / r.duration,
    ok: r['2xx'],
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
    latencyP50Ms: r.latency.p50,
    latencyP99Ms: r.latency.p99,
  };
}

export interface FixedRateRound {
  readonly achievedRps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly ok: number;
  /** Replies that were not a result envelope with id 1 (or failed outright). */
  readonly bad: number;
  /** Requests that could not be sent on time because every connection was busy. */
  readonly late: number;
}

/**
 * Sends `rate` requests per second for `seconds`, never more than
 * `connections` in flight. Latency is from dispatch to the last body byte.
 */
export async function fixedRate(url: string, body: Buffer, rate: number, seconds: number, connections = 32): Promise<FixedRateRound> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const latencies: number[] = [];
  let sent = 0;
  let inFlight = 0;
  let ok = 0;
  let bad = 0;
  let late = 0;
  const total = Math.round(rate * seconds);

  const one = async (): Promise<void> => {
    inFlight++;
    const t0 = performance.now();
    try {
      const res = await pool.request({ path: target.pathname, method: 'POST', headers: JSON_HEADERS, body });
      const text = await res.body.text();
      latencies.push(performance.now() - t0);
      if (res.statusCode === 200 && text.startsWith(GOOD_PREFIX)) ok++;
      else bad++;
    } catch {
      bad++;
    } finally {
      inFlight--;
    }
  };

  const started = performance.now();
  const pending: Promise<void>[] = [];
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const due = Math.min(total, Math.floor(((performance.now() - started) * rate) / 1000));
      while (sent < due) {
        if (inFlight >= connections) {
          late += due - sent;
          sent = due;
          break;
        }
        sent++;
        pending.push(one());
      }
      if (sent >= total) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  await Promise.all(pending);
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  return {
    achievedRps: latencies.length / elapsed,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    ok,
    bad,
    late,
  };
}

/** One call that must come back as a result envelope; run before measuring so a broken path fails loudly. */
export async function probe(url: string, body: Buffer): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers: JSON_HEADERS, body });
  const text = await res.text();
  if (res.status !== 200 || !text.startsWith(GOOD_PREFIX)) {
    throw new Error(`probe of ${url} failed: HTTP ${res.status} ${text.slice(0, 300)}`);
  }
}

export async function upstreamServed(upstreamPort: number): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${upstreamPort}/stats`);
  return ((await res.json()) as { served: number }).served;
}
