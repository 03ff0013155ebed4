/**
 * The gateway's logs as an operator reads them (at debug level, the most
 * talkative): exactly one `call` line per call with the documented fields,
 * the request id accepted, echoed and forwarded (or replaced when unsafe),
 * no credential and no remote body byte in any line; trace context reaches
 * the remote unchanged.
 */
import t from 'tap';
import { request } from 'undici';
import { LEAK_MARKERS } from '../support/hostile-cases.js';
import { startHostileUpstream, type HostileUpstream, type RecordedRequest } from '../support/hostile-upstream.js';
import { reasonOf, rpc, rpcRequest, type RpcReply } from '../support/gateway.js';
import { callLines, startOpsGateway, type OpsGateway } from '../support/ops-gateway.js';

const CALLER_TOKEN = 'caller-bearer-SECRET-7f3a';
const CALLER_COOKIE = 'session=caller-cookie-SECRET-91bc';
const CONFIG_TOKEN = 'configured-remote-token-SECRET-c0de';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Text only the remote sends (bodies of its replies and events): none of it may be logged. */
const REMOTE_BODY_TEXT = [...Object.values(LEAK_MARKERS), 'hostile upstream says ok', 'streamed by a hostile upstream', 'stream exploded', 'PHP/5.2.17'];

let upstream: HostileUpstream;
let gw: OpsGateway;

t.before(async () => {
  upstream = await startHostileUpstream();
  gw = await startOpsGateway(
    `
server: { drainMs: 300 }
remotes:
  hostile:
    url: ${upstream.url}/
    allowPrivateNetwork: true
    timeouts: { totalMs: 3000 }
    retries: { attempts: 1 }
    circuitBreaker: { failureThreshold: 10000 }
    forwardHeaders: [authorization, cookie]
  tokened:
    url: ${upstream.url}/
    allowPrivateNetwork: true
    auth: { type: bearer, tokenEnv: LOGS_TEST_TOKEN }
`,
    { env: { LOGS_TEST_TOKEN: CONFIG_TOKEN } },
  );
});
t.teardown(async () => {
  await gw.close();
  await upstream.close();
});

const send = (path: string, id: string | number, headers: Record<string, string> = {}, method = 'GetTask') =>
  rpc(`${gw.url}/remotes/${path}`, rpcRequest(method, id, { id: 'task-1' }), headers);

/** The one request the upstream saw for this case path (the latest one). */
const seenUpstream = (casePath: string): RecordedRequest | undefined => upstream.requests.findLast((r) => r.url.startsWith(`/${casePath}`));

async function streamCall(casePath: string, id: string, headers: Record<string, string> = {}): Promise<{ headers: Record<string, unknown>; text: string }> {
  const res = await request(`${gw.url}/remotes/hostile/${casePath}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(rpcRequest('SendStreamingMessage', id, { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } })),
  });
  return { headers: res.headers, text: await res.body.text() };
}

t.test('exactly one call line per call, with the documented fields', async (t) => {
  const before = callLines(gw.logs).length;
  const replies: { id: string; reply: RpcReply }[] = [];
  for (const [path, id] of [['hostile/ok', 'u-ok'], ['hostile/html-502', 'u-502'], ['hostile/close-no-bytes', 'u-reset'], ['nowhere', 'u-unknown']] as const) {
    replies.push({ id, reply: await send(path, id) });
  }
  const stream = await streamCall('sse-ok', 's-ok');
  const lines = callLines(gw.logs).slice(before);
  t.equal(lines.length, 5, 'five calls, five lines');

  const requestIds = new Set(lines.map((l) => l.requestId));
  t.equal(requestIds.size, 5, 'one request id each');
  for (const { reply } of replies) t.ok(requestIds.has(reply.headers['x-request-id']), 'the reply names its log line');
  t.ok(requestIds.has(stream.headers['x-request-id']), 'the stream names its log line');

  const [ok, html, reset, unknown, sse] = lines.map((l) => l.call as Record<string, unknown>);
  t.match(ok, { remote: 'hostile', method: 'GetTask', upstreamStatus: 200, outcome: 'ok', bytesIn: Number, bytesOut: Number, attempts: 1, upstreamMs: Number, totalMs: Number });
  t.equal(ok?.bytesOut, Buffer.byteLength(replies[0]!.reply.text), 'bytesOut is the reply size');
  t.equal(ok?.bytesIn, JSON.stringify(rpcRequest('GetTask', 'u-ok', { id: 'task-1' })).length, 'bytesIn is the request size');
  t.ok((ok?.totalMs as number) >= (ok?.upstreamMs as number), 'total covers the upstream time');
  t.match(html, { remote: 'hostile', upstreamStatus: 502, outcome: 'UPSTREAM_HTTP_ERROR' });
  t.match(reset, { remote: 'hostile', outcome: reasonOf(replies[2]!.reply) });
  t.notOk(reset && 'upstreamStatus' in reset, 'no status when the remote sent none');
  t.match(unknown, { remote: 'unknown', outcome: 'UNKNOWN_REMOTE' });
  t.match(sse, { remote: 'hostile', method: 'SendStreamingMessage', upstreamStatus: 200, outcome: 'ok', events: 4, bytesOut: Buffer.byteLength(stream.text) });
  for (const line of lines) t.equal(line.level, 30, 'call lines are info');
});

t.test('x-request-id: a plain one up to 128 characters is kept, echoed and forwarded', async (t) => {
  for (const given of ['req-42', 'a.b:c_d-E', 'r'.repeat(128)]) {
    const reply = await send('hostile/ok', `id-${given.length}`, { 'x-request-id': given });
    t.equal(reply.headers['x-request-id'], given, `echoed (${given.length} chars)`);
    t.equal(seenUpstream('ok')?.headers['x-request-id'], given, 'forwarded upstream');
    t.equal(callLines(gw.logs).at(-1)?.requestId, given, 'logged');
  }
  const stream = await streamCall('sse-ok', 's-rid', { 'x-request-id': 'stream-rid-1' });
  t.equal(stream.headers['x-request-id'], 'stream-rid-1', 'echoed on a stream');
  t.equal(seenUpstream('sse-ok')?.headers['x-request-id'], 'stream-rid-1', 'forwarded on a stream');
});

t.test('x-request-id: an unsafe or oversized one is replaced by a generated UUID', async (t) => {
  for (const [why, given] of [['129 characters', 'r'.repeat(129)], ['300 characters', 'x'.repeat(300)], ['spaces', 'two words'], ['a quote', 'a"b'], ['empty', '']] as const) {
    const reply = await send('hostile/ok', why, { 'x-request-id': given });
    const id = reply.headers['x-request-id'];
    t.match(id, UUID, `${why}: a UUID instead`);
    t.equal(seenUpstream('ok')?.headers['x-request-id'], id, `${why}: the generated id is forwarded`);
    t.equal(callLines(gw.logs).at(-1)?.requestId, id, `${why}: and logged`);
    if (given !== '') t.notOk(JSON.stringify(gw.logs.at(-1)).includes(given), `${why}: the rejected value is not logged`);
  }
  const a = await send('hostile/ok', 'gen-a');
  const b = await send('hostile/ok', 'gen-b');
  t.match(a.headers['x-request-id'], UUID, 'generated when absent');
  t.not(a.headers['x-request-id'], b.headers['x-request-id'], 'a fresh one each call');
});

t.test('traceparent and tracestate reach the remote unchanged', async (t) => {
  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const tracestate = 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7';
  await send('hostile/ok', 'trace-1', { traceparent, tracestate });
  t.equal(seenUpstream('ok')?.headers.traceparent, traceparent);
  t.equal(seenUpstream('ok')?.headers.tracestate, tracestate);
  await streamCall('sse-ok', 'trace-2', { traceparent, tracestate });
  t.equal(seenUpstream('sse-ok')?.headers.traceparent, traceparent, 'on a stream too');
  t.equal(seenUpstream('sse-ok')?.headers.tracestate, tracestate);
});

t.test('no credential and no remote body byte in any log line, even at debug level', async (t) => {
  const secrets = { authorization: `Bearer ${CALLER_TOKEN}`, cookie: CALLER_COOKIE };
  // Calls that make the gateway log at debug level (transport failures) and ones that forward the credentials.
  for (const path of ['ok', 'html-502', 'text-500', 'error-extra', 'set-cookie', 'html-login-200', 'close-no-bytes', 'reset-mid-body', 'truncated', 'garbage-8k']) {
    await send(`hostile/${path}`, `leak-${path}`, secrets);
    await send(`tokened/${path}`, `leak-t-${path}`, secrets);
  }
  await streamCall('sse-ok', 'leak-s1', secrets);
  await streamCall('sse-error-event', 'leak-s2', secrets);
  await streamCall('sse-garbage', 'leak-s3', secrets);
  await send('hostile/ok', 'leak-bad-json', secrets, 'GetTask');

  // The test would prove nothing if the secrets never travelled: check they did.
  t.ok(upstream.requests.some((r) => r.headers.authorization === `Bearer ${CONFIG_TOKEN}`), 'the configured token went upstream');
  t.ok(upstream.requests.some((r) => r.headers.authorization === `Bearer ${CALLER_TOKEN}` && r.headers.cookie === CALLER_COOKIE), 'the allowlisted caller credentials went upstream');
  t.ok(gw.logs.some((l) => l.level === 20), 'debug lines were written');

  const raw = gw.rawLog();
  for (const secret of [CALLER_TOKEN, CALLER_COOKIE, CONFIG_TOKEN]) t.notOk(raw.includes(secret), `no "${secret}" in the log`);
  for (const text of REMOTE_BODY_TEXT) t.notOk(raw.includes(text), `no remote text "${text}" in the log`);
});

t.test('the redaction paths censor credentials wherever a log call puts them', async (t) => {
  // Direct use of the gateway's logger: a future log call that includes headers must stay clean.
  const log = gw.gateway.app.log;
  const before = gw.rawLog().length;
  log.info({ req: { headers: { authorization: CALLER_TOKEN, cookie: CALLER_COOKIE, 'x-api-key': CONFIG_TOKEN } } }, 'headers');
  log.info({ upstream: { authorization: CALLER_TOKEN, token: CONFIG_TOKEN, password: 'pw-SECRET', secret: 's-SECRET', apiKey: 'k-SECRET' } }, 'nested');
  const written = gw.rawLog().slice(before);
  for (const secret of [CALLER_TOKEN, CALLER_COOKIE, CONFIG_TOKEN, 'pw-SECRET', 's-SECRET', 'k-SECRET']) t.notOk(written.includes(secret), `censored: ${secret}`);
  const nested = gw.logs.findLast((l) => l.msg === 'nested');
  t.same(nested?.upstream, { authorization: '[redacted]', token: '[redacted]', password: '[redacted]', secret: '[redacted]', apiKey: '[redacted]' }, 'each value replaced, the keys kept');
});
