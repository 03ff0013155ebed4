/**
 * The README's before/after table: the same unmodified @a2a-js/sdk client
 * call against every hostile case, directly ("before") and through the
 * gateway ("after"), as one markdown table.
 * Run with `npx tsx scripts/sdk-gateway-findings.ts [case ...]` (about 20 s).
 *
 * Before: the client's own AbortSignal ends the cases that never end (the SDK
 * has no timeout). After: the gateway runs with its default limits and the
 * short timeouts below, and the caller passes a roomy signal, so every
 * ending in that column is the gateway's.
 */
import { startGateway } from '../test/support/gateway.js';
import { startHostileUpstream } from '../test/support/hostile-upstream.js';
import {
  callWithSdk,
  caseRuns,
  gatewayBaseUrl,
  gatewayYamlFor,
  typedErrorOf,
  type CaseOutcome,
  type CaseRun,
} from '../test/support/sdk-gateway-cases.js';

const MiB = 1024 * 1024;
const CALLER_ABORT_MS = 1000;
const ROOMY_ABORT_MS = 10_000;
const NEVER_ENDS = new Set(['endless', 'slow-headers', 'slow-body', 'sse-comments-only', 'sse-silent', 'sse-endless']);
const EXCERPT_CHARS = 90;

/** The same parameters as scripts/sdk-direct-findings.ts: sizes well past any sane limit. */
const PARAMS = {
  'big-body': { bytes: 8 * MiB },
  'gzip-bomb': { decoded: 64 * MiB },
  'slow-headers': { ms: 3000 },
  'slow-body': { ms: 3000 },
  deep: { depth: 100_000 },
  'sse-big-event': { bytes: 8 * MiB },
  'sse-comments-only': { ms: 20 },
};

const GATEWAY_TIMEOUTS = { totalMs: 1000, streamIdleMs: 500, streamNoDataMs: 500, maxStreamMs: 1000 };
const defaultsYaml = `timeouts:\n${Object.entries(GATEWAY_TIMEOUTS).map(([k, v]) => `  ${k}: ${v}`).join('\n')}\n`;

const cell = (s: string): string => JSON.stringify(s).slice(1, -1).replaceAll('|', '\\|');
const excerpt = (s: string): string => cell(s.length > EXCERPT_CHARS ? `${s.slice(0, EXCERPT_CHARS)}…` : s);

/** Class, message excerpt and size, as three cells. */
function cells(o: CaseOutcome): string[] {
  if (o.outcome === 'returns') return ['returns', excerpt(o.text), `${o.bytes} (value)`];
  if (o.outcome === 'never settles') return ['never settles', '', ''];
  const aborted = o.outcome === 'throws when the caller aborts' ? ' (caller aborted)' : '';
  return [`${o.errorClass}${aborted}`, excerpt(o.text), String(o.bytes)];
}

/** How a caller can branch on the after column: the typed error's name and message size. */
function typedCell(o: CaseOutcome): string {
  if (o.outcome === 'returns') return '—';
  const typed = typedErrorOf(o.error);
  return typed ? `${typed.name} (${Buffer.byteLength(typed.message)} B)` : '**untyped**';
}

const only = process.argv.slice(2);
const runs: CaseRun[] = caseRuns(PARAMS).filter((r) => only.length === 0 || only.includes(r.name));
const up = await startHostileUpstream();
const gw = await startGateway(gatewayYamlFor(up, runs, defaultsYaml));
try {
  console.log(
    `@a2a-js/sdk 1.3.0 client, sendMessage (sendMessageStream for sse-*). Before: directly, caller AbortSignal ${CALLER_ABORT_MS} ms for cases that never end, ${ROOMY_ABORT_MS} ms otherwise. ` +
      `After: through a2a-egress (default limits; ${Object.entries(GATEWAY_TIMEOUTS).map(([k, v]) => `${k} ${v}`).join(', ')}), caller AbortSignal ${ROOMY_ABORT_MS} ms.\n`,
  );
  console.log('| case | before: class | before: message or value | before: bytes | after: class | after: message or value | after: bytes | after: typed error (message bytes) |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const run of runs) {
    const before = await callWithSdk(up.caseBaseUrl(run.name, run.params), run, NEVER_ENDS.has(run.name) ? CALLER_ABORT_MS : ROOMY_ABORT_MS);
    const after = await callWithSdk(gatewayBaseUrl(gw.url, run), run, ROOMY_ABORT_MS);
    console.log(`| ${run.label} | ${cells(before).join(' | ')} | ${cells(after).join(' | ')} | ${typedCell(after)} |`);
  }
  console.log(
    '\nStreams: for an error event the SDK always throws a plain `Error("SSE event contained an error: <message> (Code: N) Data: <data JSON>")` ' +
      'whose `cause` is the typed error; the after column\'s last cell names that cause and its message size.',
  );
} finally {
  await gw.close();
  await up.close();
}
