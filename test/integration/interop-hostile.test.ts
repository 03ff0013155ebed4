/**
 * The same unmodified @a2a-js/sdk client, given `http://gw/remotes/<case>/`
 * for every hostile case: whatever the remote does, the client either gets a
 * valid result or throws one of the SDK's typed JSON-RPC errors (for a
 * stream that started: the SDK's own "SSE event contained an error" wrapper
 * around one; for a streaming call answered before any stream, the error itself),
 * with a short, clean message. Directly, the same calls throw TypeError,
 * SyntaxError or plain Errors embedding the remote's body
 * (/work/notes/sdk-findings.md; scripts/sdk-gateway-findings.ts prints both).
 */
import { isJsonRpcError } from '@a2a-js/sdk/errors';
import t from 'tap';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { LEAK_MARKERS } from '../support/hostile-cases.js';
import { startHostileUpstream, type HostileUpstream } from '../support/hostile-upstream.js';
import {
  CONTROL_CHARS,
  callWithSdk,
  caseRuns,
  gatewayBaseUrl,
  gatewayYamlFor,
  isWrappedStreamError,
  typedErrorOf,
  type CaseRun,
} from '../support/sdk-gateway-cases.js';

const MAX_RESPONSE = 64 * 1024;
const DEFAULTS = `
limits:
  maxResponseBytes: ${MAX_RESPONSE}
  maxEventBytes: 16384
timeouts:
  # Room for the CPU-heavy cases (an 8 MiB gzip bomb) on a loaded machine; the slow cases stall well past it.
  totalMs: 1000
  streamIdleMs: 200
  streamNoDataMs: 200
  maxStreamMs: 400
`;

const PARAMS = {
  'big-body': { bytes: MAX_RESPONSE + 1 },
  'gzip-bomb': { decoded: 8 * 1024 * 1024 },
  'slow-headers': { ms: 2500 },
  'slow-body': { ms: 2500 },
  deep: { depth: 100_000 },
  'sse-big-event': { bytes: 32 * 1024 },
  'sse-comments-only': { ms: 20 },
};

/** Cases whose reply is (or is accepted by the gateway as) a valid result. */
const RETURNS = new Set([
  'ok',
  'set-cookie',
  'gzip-ok',
  'br-ok',
  'deflate-ok',
  'echo-headers',
  'sse-ok',
  'sse-keepalive',
  // `"error": false` beside a result: the normalizer reads a falsy error as absent.
  'falsy-error-with-result',
  // The gateway answers with the caller's id whatever id the remote echoed.
  'ok-wrongid',
  'sse-ok-wrongid',
]);

/** err.name of the typed SDK error each failing case must produce. */
const INVALID = 'InvalidAgentResponseError';
const TRANSPORT = 'JsonRpcTransportError';
const EXPECTED_ERROR: Record<string, string> = {
  'html-502': INVALID,
  'html-login-200': INVALID,
  'garbage-8k': INVALID,
  'empty-401': INVALID,
  'text-500': INVALID,
  'error-extra': 'TaskNotFoundError',
  'error-code': 'TaskNotFoundError',
  'error-no-message': 'TaskNotFoundError',
  'error-string': TRANSPORT,
  'body-array': INVALID,
  'body-string': INVALID,
  'body-number': INVALID,
  'body-null': INVALID,
  'no-result-no-error': INVALID,
  'error-null': INVALID,
  'error-number': INVALID,
  'big-body': INVALID,
  endless: INVALID,
  'slow-headers': TRANSPORT,
  'slow-body': TRANSPORT,
  truncated: INVALID,
  'reset-mid-body': INVALID,
  'close-no-bytes': TRANSPORT,
  redirect: INVALID,
  'redirect-loopback': INVALID,
  'gzip-bomb': INVALID,
  'unknown-encoding': INVALID,
  'invalid-utf8': INVALID,
  proto: INVALID,
  deep: INVALID,
  'duplicate-result': INVALID,
  'sse-error-event': TRANSPORT,
  'sse-garbage': INVALID,
  'sse-big-event': INVALID,
  'sse-json-error': 'UnsupportedOperationError',
  'sse-comments-only': TRANSPORT,
  'sse-silent': TRANSPORT,
  'sse-endless': TRANSPORT,
  'error-extra-wrongid': 'TaskNotFoundError',
};

const runs: CaseRun[] = [
  ...caseRuns(PARAMS),
  // The response cap, just under it: the same case returns.
  { name: 'big-body', params: { bytes: MAX_RESPONSE }, remote: 'big-body-at-limit', label: `big-body (bytes=${MAX_RESPONSE})`, streaming: false },
];
RETURNS.add('big-body-at-limit');

let up: HostileUpstream;
let gw: RunningGateway;
t.before(async () => {
  up = await startHostileUpstream();
  gw = await startGateway(gatewayYamlFor(up, runs, DEFAULTS));
});
t.teardown(async () => {
  await gw?.close();
  await up?.close();
});

t.test('every case is expected either to return or to throw a named typed error', async (t) => {
  for (const run of runs) t.ok(RETURNS.has(run.remote) !== Object.hasOwn(EXPECTED_ERROR, run.remote), run.label);
});

/** Streaming cases where the remote starts no stream: the gateway answers one JSON envelope, as the remote did. */
const NO_STREAM = new Set(['sse-json-error']);

const leaks = (text: string): string[] => Object.values(LEAK_MARKERS).filter((m) => text.includes(m));

for (const run of runs) {
  t.test(`${run.label}: through the gateway the SDK ${RETURNS.has(run.remote) ? 'returns a result' : `throws ${EXPECTED_ERROR[run.remote]}`}`, async (t) => {
    // A generous caller deadline: the gateway, not the caller, must end every case.
    const o = await callWithSdk(gatewayBaseUrl(gw.url, run), run, 5000);
    t.ok(o.ms < 3000, `settled by the gateway in ${o.ms} ms`);
    if (RETURNS.has(run.remote)) {
      t.equal(o.outcome, 'returns', `${o.errorClass} ${o.text.slice(0, 200)}`);
      return;
    }
    t.equal(o.outcome, 'throws');
    const typed = typedErrorOf(o.error);
    t.ok(typed, `a typed SDK JSON-RPC error, not ${o.errorClass}`);
    if (!typed) return;
    const wrapped = run.streaming && !NO_STREAM.has(run.remote);
    t.ok(wrapped ? isWrappedStreamError(o.error) : isJsonRpcError(o.error), 'unary or no stream: the error itself; a started stream: the SDK wrapper around it');
    t.notOk(o.error instanceof TypeError || o.error instanceof SyntaxError);
    t.equal(typed.name, EXPECTED_ERROR[run.remote]);
    t.ok(Buffer.byteLength(typed.message) <= 200, `message is ${Buffer.byteLength(typed.message)} bytes`);
    t.ok(typed.message.length > 0);
    t.notMatch(typed.message, CONTROL_CHARS, 'no control or bidi characters');
    // The wrapper repeats message and data: it must be as clean, and carry nothing of the remote's.
    t.notMatch(o.text, CONTROL_CHARS);
    t.same(leaks(o.text + JSON.stringify((typed as { data?: unknown }).data ?? null)), []);
  });
}
