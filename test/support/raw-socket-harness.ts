/**
 * Shared plumbing for the raw-socket integration tests: one raw upstream, one
 * gateway with three remotes on it (different timeouts, small limits), and
 * `runCase`, which plays one hostile script and checks everything every case
 * must satisfy: HTTP 200, one valid envelope with the caller's id, the
 * expected outcome, no remote bytes, the bad connection never reused, and a
 * normal call served right after.
 */
import type { Test } from 'tap';
import { envelopeViolations } from './envelope-invariants.js';
import { gatewayInfoOf, reasonOf, rpc, rpcRequest, startGateway, type RpcReply, type RunningGateway } from './gateway.js';
import { jsonRpcResult, startRawUpstream, type RawUpstream, type Script } from './raw-upstream.js';

/** Planted in every hostile script; must never reach the caller. */
export const MARK = 'RAWMARK7f3a';
export const MAX_RESPONSE_BYTES = 65_536;
export const MAX_JSON_DEPTH = 64;
export const HEADERS_MS = 800;
export const SLOW_TOTAL_MS = 1_000;

/** `raw`: generous timeouts; `slowhead`: headersMs 800; `slowbody`: totalMs 1000; `roomy`: maxResponseBytes 1 MiB. */
export type RemoteName = 'raw' | 'slowhead' | 'slowbody' | 'roomy';

export interface RawSuite {
  readonly raw: RawUpstream;
  readonly gw: RunningGateway;
}

export async function startRawSuite(t: Test): Promise<RawSuite> {
  const raw = await startRawUpstream();
  t.teardown(() => raw.close());
  const origin = raw.url;
  const gw = await startGateway(`
# Load shedding off: a busy test machine (module loading, parallel test files) lags the loop past 1 s.
server: { logLevel: debug, maxEventLoopDelayMs: 0 }
defaults:
  allowPrivateNetwork: true
  limits: { maxResponseBytes: ${MAX_RESPONSE_BYTES}, maxJsonDepth: ${MAX_JSON_DEPTH} }
  timeouts: { connectMs: 1000, headersMs: 3000, totalMs: 4000 }
  # One attempt and no breaker: each case must see exactly its own connection, and dozens of failures in a row are the point.
  retries: { attempts: 1 }
  circuitBreaker: { failureThreshold: 10000 }
remotes:
  raw: { url: "${origin}/" }
  slowhead: { url: "${origin}/", timeouts: { headersMs: ${HEADERS_MS}, totalMs: 5000 } }
  slowbody: { url: "${origin}/", timeouts: { totalMs: ${SLOW_TOTAL_MS} } }
  roomy: { url: "${origin}/", limits: { maxResponseBytes: 1048576 } }
`);
  t.teardown(() => gw.close());
  return { raw, gw };
}

export interface CaseSpec {
  readonly name: string;
  readonly script: Script;
  /** 'ok' for a success; otherwise the ErrorInfo reason. */
  readonly expect: string;
  readonly remote?: RemoteName;
  /** Extra strings the reply must not contain (MARK is always checked). */
  readonly forbidden?: readonly string[];
  /** The upstream HTTP status the gateway should report in metadata, when it got that far. */
  readonly httpStatus?: number;
  /**
   * 'drop' (default): the connection misbehaved at the HTTP level and must never carry another request.
   * 'may-reuse': the HTTP framing was correct (the trouble is in the JSON), so keep-alive reuse is allowed.
   */
  readonly connection?: 'drop' | 'may-reuse';
}

export interface CaseOutcome {
  readonly reply: RpcReply;
  readonly elapsedMs: number;
}

let sequence = 0;

/**
 * Plays `spec.script` for one call and asserts the contract every hostile case
 * shares. Resolves with the reply so a case can assert more.
 */
export async function runCase(t: Test, suite: RawSuite, spec: CaseSpec): Promise<CaseOutcome> {
  const { raw, gw } = suite;
  const remote = spec.remote ?? 'raw';
  const path = `/${spec.name}-${++sequence}`;
  const callerId = `caller-${spec.name}-${sequence}`;
  raw.route(path, spec.script);

  const started = performance.now();
  const reply = await rpc(`${gw.url}/remotes/${remote}${path}`, rpcRequest('GetTask', callerId, { id: 'task-1' }));
  const elapsedMs = performance.now() - started;

  t.equal(reply.status, 200, 'HTTP 200');
  const outcome = reasonOf(reply) ?? (Object.hasOwn(reply.json, 'result') ? 'ok' : 'REMOTE_ERROR');
  t.equal(outcome, spec.expect, `outcome ${spec.expect}`);
  const metaStatus = gatewayInfoOf(reply)?.metadata.httpStatus;
  const violations = envelopeViolations(
    { json: reply.text, outcome: outcome as never },
    {
      callerId,
      status: metaStatus === undefined ? 200 : Number(metaStatus),
      policy: { remote, maxErrorMessageBytes: 200, maxJsonDepth: MAX_JSON_DEPTH, keepRemoteErrorData: false },
      forbidden: [MARK, ...(spec.forbidden ?? [])],
    },
  ).filter((v) => !(metaStatus === undefined && outcome !== 'ok' && v.startsWith('metadata.httpStatus')));
  t.same(violations, [], 'one valid envelope with the caller id and no remote bytes');
  if (spec.httpStatus !== undefined) t.equal(metaStatus, String(spec.httpStatus), 'metadata.httpStatus');
  assertNoRemoteHeaders(t, reply);

  const badRequest = raw.requests.find((r) => r.path === path);
  t.ok(badRequest, 'the hostile script was played');
  if (badRequest) await assertNextCall(t, suite, remote, spec.connection === 'may-reuse' ? undefined : badRequest.connection, path);
  return { reply, elapsedMs };
}

function assertNoRemoteHeaders(t: Test, reply: RpcReply): void {
  const leaked = Object.entries(reply.headers).filter(([name, value]) => name === 'location' || name.startsWith('x-raw') || String(value).includes(MARK));
  t.same(leaked, [], 'no remote headers in the reply');
}

/**
 * The next call on the same remote succeeds; when `badConnection` is given, it
 * arrives on another connection, and the bad one got nothing after `badPath` and is closed.
 */
async function assertNextCall(t: Test, suite: RawSuite, remote: RemoteName, badConnection: number | undefined, badPath: string): Promise<void> {
  const { raw, gw } = suite;
  const path = `/next-${++sequence}`;
  raw.route(path, [{ write: jsonRpcResult(`{"next":${sequence}}`) }]);
  const next = await rpc(`${gw.url}/remotes/${remote}${path}`, rpcRequest('GetTask', `next-${sequence}`, { id: 'task-1' }));
  t.same(next.json, { jsonrpc: '2.0', id: `next-${sequence}`, result: { next: sequence } }, 'the next call is served normally');
  if (badConnection === undefined) return;
  t.not(raw.connectionOf(path)?.id, badConnection, 'the next call arrives on another connection');
  const bad = raw.connections[badConnection - 1]!;
  t.equal(bad.requests.at(-1)?.path, badPath, 'nothing else was sent on the bad connection');
  await waitFor(() => bad.closed, 1_000);
  t.ok(bad.closed, 'the bad connection is closed');
}

export async function waitFor(condition: () => boolean, ms: number): Promise<void> {
  const until = performance.now() + ms;
  while (!condition() && performance.now() < until) await new Promise((r) => setTimeout(r, 10));
}

/** A raw response head; `lines` are written exactly (no normalisation of case or spacing). */
export function head(status: string, ...lines: string[]): string {
  return `HTTP/1.1 ${status}\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n`;
}

/** A small valid JSON-RPC body with the marker inside, for cases where the framing is what is wrong. */
export const MARKED_BODY = `{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"${MARK}"}}`;
