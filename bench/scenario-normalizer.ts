/**
 * Normalizer cost, in-process (no network): normalizeReply on a valid
 * JSON-RPC reply against the floor JSON.stringify(JSON.parse(body)) of the
 * same bytes. Also times the normalizer's parts alone, so a slow size points
 * at the step to look at.
 */
import sjson from 'secure-json-parse';
import { normalizeReply, type NormalizePolicy } from '../src/envelope/normalize.js';
import { Redactor } from '../src/envelope/redact.js';
import { scanJson } from '../src/envelope/json-scan.js';
import { KiB, MiB, replyBody, taskResultJson } from './bodies.js';
import { alternate, pick, type BenchContext } from './context.js';
import { fmt, type Row, type ScenarioResult } from './report.js';
import { median, round } from './stats.js';

const POLICY: NormalizePolicy = { remote: 'bench', maxErrorMessageBytes: 200, maxJsonDepth: 64, keepRemoteErrorData: false };
/** A remote with `auth`: its credential (not in the body, the usual case) is looked for in every reply. */
const REDACTOR = new Redactor(['bench-token-7f3a9c0d51e2b8a4c6d0e1f2']);
const AUTH_POLICY: NormalizePolicy = { ...POLICY, redactor: REDACTOR };
const SIZES = [
  { label: '1 KiB', bytes: KiB },
  { label: '64 KiB', bytes: 64 * KiB },
  { label: '1 MiB', bytes: MiB },
];

let sink = 0;

/** Calls fn for about `ms`, returns MB/s of `bytes` processed per call (MB = 10^6 bytes). */
function throughput(fn: () => number, bytes: number, ms: number): number {
  const started = performance.now();
  let calls = 0;
  let now = started;
  while (now - started < ms) {
    for (let i = 0; i < 8; i++) sink += fn();
    calls += 8;
    now = performance.now();
  }
  return (calls * bytes) / ((now - started) / 1000) / 1e6;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export async function normalizerCost(ctx: BenchContext): Promise<ScenarioResult> {
  const ms = pick(ctx, 700, 200);
  const rows: Row[] = [];
  const rounds: Record<string, unknown> = {};
  const notes: string[] = [];
  for (const size of SIZES) {
    const body = Buffer.from(replyBody(7, taskResultJson(size.bytes)));
    const reply = { status: 200, body };
    const check = normalizeReply(reply, 'caller-1', POLICY);
    if (check.outcome !== 'ok' || !check.json.startsWith('{"jsonrpc":"2.0","id":"caller-1","result":{')) {
      throw new Error(`normalizer did not accept the ${size.label} bench body: ${check.outcome}`);
    }
    const floor = () => JSON.stringify(JSON.parse(body.toString('utf8'))).length;
    const normalize = () => normalizeReply(reply, 'caller-1', POLICY).json.length;
    throughput(floor, body.length, ms / 3);
    throughput(normalize, body.length, ms / 3);
    const r = await alternate(2, async () => throughput(floor, body.length, ms), async () => throughput(normalize, body.length, ms));
    const f = median(r.a);
    const n = median(r.b);
    const text = body.toString('utf8');
    const parsed: unknown = JSON.parse(text);
    const parts = {
      decodeMBps: round(throughput(() => utf8.decode(body).length, body.length, ms / 2), 1),
      scanJsonMBps: round(throughput(() => scanJson(text, 64).resultEnd, body.length, ms / 2), 1),
      secureParseMBps: round(throughput(() => (sjson.parse(text, null, { protoAction: 'error', constructorAction: 'error' }) ? 1 : 0), body.length, ms / 2), 1),
      jsonParseMBps: round(throughput(() => (JSON.parse(text) ? 1 : 0), body.length, ms / 2), 1),
      jsonStringifyMBps: round(throughput(() => JSON.stringify(parsed).length, body.length, ms / 2), 1),
      redactProbeMBps: round(throughput(() => (REDACTOR.mayHold(text) ? 1 : 0), body.length, ms / 2), 1),
      normalizeWithAuthMBps: round(throughput(() => normalizeReply(reply, 'caller-1', AUTH_POLICY).json.length, body.length, ms / 2), 1),
    };
    ctx.log(`  ${size.label}: floor ${fmt(f)} MB/s, normalizeReply ${fmt(n)} MB/s; parts ${JSON.stringify(parts)}`);
    rounds[size.label] = { bodyBytes: body.length, floorMBps: r.a.map((v) => round(v, 1)), normalizeMBps: r.b.map((v) => round(v, 1)), parts };
    rows.push({
      scenario: `normalizer ${size.label} (MB/s; left = parse+stringify floor)`,
      direct: fmt(f, 1),
      gateway: fmt(n, 1),
      ratio: (n / f).toFixed(2),
      goal: '>= 0.80',
      met: n / f >= 0.8,
    });
  }
  notes.push(`normalizer bodies are Task-shaped results of text parts (see bench/bodies.ts)`);
  return { id: 'normalizer', rows, rounds, notes };
}
