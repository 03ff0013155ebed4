/**
 * The "before" column: what an unmodified @a2a-js/sdk 1.3 client does when it
 * talks *directly* to each hostile upstream case (card fetched from
 * `${url}/<case>/.well-known/agent-card.json`, as a real caller would).
 * Prints markdown tables; run with `npx tsx scripts/sdk-direct-findings.ts`.
 *
 * The clients use the loopback-only fetch guard (the SDK itself would follow
 * the `redirect` case to 169.254.169.254; the guard stops it first).
 */
import { startHostileUpstream, HOSTILE_CASE_NAMES, type HostileUpstream } from '../test/support/hostile-upstream.js';
import type { Message, StreamResponse } from '@a2a-js/sdk';
import { clientFromBaseUrl, collect, userMessage } from '../test/support/sdk-client.js';

const MiB = 1024 * 1024;
/** The caller's own AbortSignal: short for the cases that never end by themselves, roomy for the rest. */
const CALLER_ABORT_MS = 1000;
const ROOMY_ABORT_MS = 10_000;
const NEVER_ENDS = new Set(['endless', 'slow-headers', 'slow-body', 'sse-comments-only', 'sse-silent', 'sse-endless']);
/** How long after the caller's abort a call may take to settle before we call it stuck. */
const WATCHDOG_MS = 5000;

/** Parameters that make each bounded case show its point (sizes well past any sane limit). */
const PARAMS: Record<string, Record<string, string | number>> = {
  'big-body': { bytes: 8 * MiB },
  'gzip-bomb': { decoded: 64 * MiB },
  'slow-headers': { ms: 3000 },
  'slow-body': { ms: 3000 },
  deep: { depth: 100_000 },
  'sse-big-event': { bytes: 8 * MiB },
  'sse-comments-only': { ms: 20 },
};

interface Outcome {
  readonly outcome: string;
  readonly errorClass: string;
  readonly excerpt: string;
  readonly length: number | '';
  readonly ms: number;
  readonly rssMiB: number;
}

const cell = (s: string): string => JSON.stringify(s).slice(1, -1).replaceAll('|', '\\|');
const excerptOf = (s: string): string => cell(s.slice(0, 120));

function describeError(err: unknown): Pick<Outcome, 'errorClass' | 'excerpt' | 'length'> {
  if (!(err instanceof Error)) return { errorClass: typeof err, excerpt: excerptOf(String(err)), length: String(err).length };
  const cls = err.constructor.name === err.name ? err.name : `${err.constructor.name} (name ${err.name})`;
  const cause = err.cause instanceof Error ? `; cause ${err.cause.constructor.name}` : '';
  return { errorClass: cls + cause, excerpt: excerptOf(err.message), length: err.message.length };
}

/** Extra runs: does the SDK notice a reply id that is not its own? */
const EXTRA_RUNS: Array<[string, Record<string, string | number>]> = [
  ['ok', { wrongId: 1 }],
  ['error-extra', { wrongId: 1 }],
  ['sse-ok', { wrongId: 1 }],
];

/** What came back, briefly: a message's first part, or a stream's event kinds. */
function summarize(value: unknown): string {
  if (Array.isArray(value)) return `${value.length} events: ${value.map((e: StreamResponse) => e.payload?.$case).join(', ')}`;
  const m = value as Message;
  const part = m.parts?.[0]?.content;
  const shown = part === undefined ? JSON.stringify(value) : part.$case === 'text' ? part.value : JSON.stringify(part.value);
  return `${part?.$case ?? 'value'} (${shown.length} chars): ${shown}`;
}

async function run(up: HostileUpstream, name: string, params = PARAMS[name]): Promise<Outcome> {
  const started = performance.now();
  const rssBefore = process.memoryUsage().rss;
  const abortMs = NEVER_ENDS.has(name) ? CALLER_ABORT_MS : ROOMY_ABORT_MS;
  const signal = AbortSignal.timeout(abortMs);
  const done = (o: Omit<Outcome, 'ms' | 'rssMiB'>): Outcome => ({
    ...o,
    ms: Math.round(performance.now() - started),
    rssMiB: Math.round((process.memoryUsage().rss - rssBefore) / MiB),
  });
  let watchdog: NodeJS.Timeout | undefined;
  const stuck = new Promise<'stuck'>((resolve) => {
    watchdog = setTimeout(() => resolve('stuck'), abortMs + WATCHDOG_MS);
  });
  try {
    const client = await clientFromBaseUrl(up.caseBaseUrl(name, params));
    const call = name.startsWith('sse-')
      ? collect(client.sendMessageStream(userMessage('hello'), { signal }))
      : client.sendMessage(userMessage('hello'), { signal });
    const value = await Promise.race([call, stuck]);
    if (value === 'stuck') {
      return done({ outcome: `never settles: no return, no throw ${WATCHDOG_MS} ms after the caller's abort`, errorClass: '', excerpt: '', length: '' });
    }
    const text = summarize(value);
    return done({ outcome: 'returns', errorClass: '', excerpt: excerptOf(text), length: JSON.stringify(value).length });
  } catch (err) {
    const aborted = signal.aborted;
    return done({ outcome: aborted ? `throws when the caller aborts (${abortMs} ms)` : 'throws', ...describeError(err) });
  } finally {
    clearTimeout(watchdog);
  }
}

async function errorCodes(up: HostileUpstream): Promise<string[]> {
  const rows = ['| code | SDK error class | err.name | message |', '|---|---|---|---|'];
  for (const code of [-32700, -32600, -32601, -32602, -32603, -32001, -32002, -32003, -32004, -32005, -32006, -32007, -32008, -32009, -32000, -32099, 1]) {
    const client = await clientFromBaseUrl(up.caseBaseUrl('error-code', { code }));
    try {
      await client.sendMessage(userMessage('x'));
      rows.push(`| ${code} | (returned) | | |`);
    } catch (err) {
      const e = err as Error;
      rows.push(`| ${code} | ${e.constructor.name} | ${e.name} | ${excerptOf(e.message)} |`);
    }
  }
  return rows;
}

async function headersSent(up: HostileUpstream): Promise<string> {
  const client = await clientFromBaseUrl(up.caseBaseUrl('echo-headers'));
  await client.sendMessage(userMessage('x'));
  const [card, call] = up.requests.slice(-2);
  return [
    `card GET ${card?.url}: ${JSON.stringify(card?.headers)}`,
    `SendMessage POST ${call?.url}: ${JSON.stringify(call?.headers)}`,
  ].join('\n');
}

const up = await startHostileUpstream();
try {
  console.log(`@a2a-js/sdk 1.3.0 client, directly against each hostile case (caller AbortSignal ${CALLER_ABORT_MS} ms for cases that never end, ${ROOMY_ABORT_MS} ms otherwise)\n`);
  console.log('| case | outcome | error class | error message, or what came back (first 120 chars) | length (message, or JSON of the value) | ms | rss Δ MiB |');
  console.log('|---|---|---|---|---|---|---|');
  const only = process.argv.slice(2);
  const runs: Array<[string, Record<string, string | number> | undefined]> = [
    ...HOSTILE_CASE_NAMES.map((n): [string, Record<string, string | number> | undefined] => [n, PARAMS[n]]),
    ...EXTRA_RUNS,
  ];
  for (const [name, p] of runs.filter(([n]) => only.length === 0 || only.includes(n))) {
    const params = p ? ` (${new URLSearchParams(Object.entries(p).map(([k, v]): [string, string] => [k, String(v)]))})` : '';
    const o = await run(up, name, p);
    console.log(`| ${name}${params} | ${o.outcome} | ${o.errorClass} | ${o.excerpt} | ${o.length} | ${o.ms} | ${o.rssMiB} |`);
  }
  console.log('\nJSON-RPC error codes (HTTP 200, {code, message, data:[ErrorInfo]}):\n');
  console.log((await errorCodes(up)).join('\n'));
  console.log('\nHeaders the SDK sends:\n');
  console.log(await headersSent(up));
} finally {
  await up.close();
}
