/**
 * The call front (src/routes/call-front.ts): JSON-RPC calls to remotes reached
 * over JSON-RPC, and HTTP+JSON POSTs to any remote, are served from node:http
 * ahead of Fastify. Each test sends the
 * same bytes, on a raw socket, to two gateways built from the same config: one
 * as users start it (front on) and one with `callFront: false` (every request
 * through Fastify, as before the front existed), and compares the replies'
 * wire bytes (status line, headers in their order, body), the Date value aside.
 *
 * That the front took a call is seen from outside the gateway: Fastify
 * publishes `tracing:fastify.request.handler:start` on node:diagnostics_channel
 * for every request its route handler runs; a call the front served never
 * reaches it. The hand-over cases show the opposite (or, where an onRequest
 * hook answers before the handler — 401, overload, drain — the same bytes as
 * Fastify's own answer).
 */
import { tracingChannel } from 'node:diagnostics_channel';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { fuzzParams } from '../support/fuzz.js';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { startOpsGateway } from '../support/ops-gateway.js';
import { listenOnLoopback, readBody, trackConnections, closeServer, delay } from '../support/servers.js';
import type { GatewayOptions } from '../../src/server.js';
import type { CallStart } from '../../src/telemetry/call-telemetry.js';
import { Telemetry } from '../../src/telemetry/tracing.js';

// --- what Fastify's route handler saw (both gateways live in this process; requests are sent one at a time)
let handlerRuns = 0;
tracingChannel('fastify.request.handler').subscribe({
  start: () => void handlerRuns++,
  end: () => undefined,
  asyncStart: () => undefined,
  asyncEnd: () => undefined,
  error: () => undefined,
});

/** Characters of one, two, three and four UTF-8 bytes, past latin1 too: the result's bytes go out as they came. */
const UNICODE_NOTE = 'café — 😀 日本';

// --- the remote: JSON-RPC over HTTP, with A2A headers the gateway passes on, SSE for streaming methods
let slowRelease: (() => void) | undefined;
const upstream = createServer((req: IncomingMessage, res: ServerResponse) => {
  void readBody(req).then(async (body) => {
    let call: { id?: unknown; method?: string; params?: { error?: boolean; unicode?: boolean } } = {};
    try {
      call = JSON.parse(body.toString('utf8')) as typeof call;
    } catch {
      // answered below with an id of null
    }
    const id = call.id ?? null;
    if (req.url?.includes('/slow')) await new Promise<void>((resolve) => (slowRelease = resolve));
    if (call.method === 'message/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'a2a-version': '0.3' });
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { kind: 'status-update', taskId: 't1', contextId: 'c1', status: { state: 'working' }, final: false } })}\n\n`);
      res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { kind: 'status-update', taskId: 't1', contextId: 'c1', status: { state: 'completed' }, final: true } })}\n\n`);
      return;
    }
    const reply = call.params?.error
      ? { jsonrpc: '2.0', id, error: { code: -32001, message: 'Task not found' } }
      : call.params?.unicode || body.toString('utf8').includes('past-ascii')
        ? { jsonrpc: '2.0', id, result: { kind: 'task', id: 'task-1', contextId: 'ctx-1', status: { state: 'completed', note: UNICODE_NOTE } } }
        : { jsonrpc: '2.0', id, result: { kind: 'task', id: 'task-1', contextId: 'ctx-1', status: { state: 'completed' } } };
    res.writeHead(200, { 'content-type': 'application/json', 'a2a-version': '0.3', 'a2a-extensions': 'https://example.com/ext/v1', 'x-dropped': 'never seen' });
    res.end(JSON.stringify(reply));
  });
});
const tracker = trackConnections(upstream);
/** Waits until the remote holds a call on /slow. */
async function heldCall(): Promise<void> {
  while (slowRelease === undefined) await delay(5);
}
function releaseHeldCall(): void {
  const release = slowRelease;
  slowRelease = undefined;
  release?.();
}
let upstreamUrl = '';

t.before(async () => {
  upstreamUrl = `http://127.0.0.1:${await listenOnLoopback(upstream)}`;
});
t.teardown(() => closeServer(upstream, tracker));

const remotesYaml = () => `
defaults:
  allowPrivateNetwork: true
  retries: { attempts: 1 }
remotes:
  a: { url: '${upstreamUrl}/a2a', limits: { maxRequestBytes: 4096 } }
  rated: { url: '${upstreamUrl}/a2a', rateLimit: { perSecond: 0.01, burst: 1 } }
  rest: { url: '${upstreamUrl}/rest', binding: http+json }
`;

interface Pair {
  readonly front: RunningGateway;
  readonly fastify: RunningGateway;
}

async function startPair(t: Test, yaml: string, options: Omit<GatewayOptions, 'logger'> = {}): Promise<Pair> {
  const [front, fastify] = await Promise.all([startGateway(yaml, options), startGateway(yaml, { ...options, callFront: false })]);
  t.teardown(() => Promise.all([front.close(), fastify.close()]));
  return { front, fastify };
}

const portOf = (gw: RunningGateway) => Number(new URL(gw.url).port);

/**
 * One request on a fresh socket (kept alive, as clients do); the reply's bytes up to the end of its body
 * (Content-Length, or the last chunk), or whatever came before the gateway closed the socket.
 */
function exchange(port: number, request: string | Buffer, opts: { readonly endAfterMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('latin1'));
    };
    const timer = setTimeout(done, opts.endAfterMs ?? 5000);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (complete(Buffer.concat(chunks).toString('latin1'))) done();
    });
    socket.once('end', done);
    socket.once('error', (err) => (chunks.length > 0 ? done() : reject(err)));
    socket.write(request);
  });
}

function complete(text: string): boolean {
  const head = text.indexOf('\r\n\r\n');
  if (head === -1) return false;
  const length = /\r\ncontent-length: (\d+)\r\n/i.exec(text.slice(0, head + 2));
  if (length) return text.length - head - 4 >= Number(length[1]);
  return /\r\ntransfer-encoding: chunked\r\n/i.test(text.slice(0, head + 2)) && text.endsWith('\r\n0\r\n\r\n');
}

/** The wire bytes with the one value that differs between two runs: the Date header (and fresh request ids). */
function comparable(text: string, freshIds = false): string {
  const out = text.replace(/\r\nDate: [^\r]*\r\n/, '\r\nDate: <date>\r\n').replace(/"retryAfterMs":"\d+"/, '"retryAfterMs":"<ms>"');
  return freshIds ? out.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>') : out;
}

function post(path: string, body: string | Buffer, headers: Record<string, string> = {}): Buffer {
  const all = { host: '127.0.0.1', 'content-type': 'application/json', 'x-request-id': 'front-test-1', 'content-length': String(Buffer.byteLength(body)), ...headers };
  const head = `POST ${path} HTTP/1.1\r\n${Object.entries(all)
    .filter(([, v]) => v !== '')
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), Buffer.isBuffer(body) ? body : Buffer.from(body)]);
}

/** A tasks/get request of exactly `bytes` bytes. */
function sized(bytes: number): string {
  const bare = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'task-1', pad: '' } });
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'task-1', pad: 'p'.repeat(bytes - bare.length) } });
}

const restSend = JSON.stringify({ message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } });
/** A message the remote answers with UNICODE_NOTE in its result. */
const restSendPastAscii = JSON.stringify({ message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'past-ascii' }] } });
/** The UTF-8 bytes of UNICODE_NOTE as the exchange reads them (one character per byte), as a pattern. */
const NOTE_BYTES = Buffer.from(UNICODE_NOTE).toString('latin1').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const rpcBody = (method: string, id: unknown = 1, params: unknown = { id: 'task-1' }) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

/** Sends `request` to both gateways; the two replies and how many of them Fastify's route handler ran for. */
async function both(pair: Pair, request: Buffer | string, freshIds = false) {
  const before = handlerRuns;
  const front = comparable(await exchange(portOf(pair.front), request), freshIds);
  const frontHandlerRuns = handlerRuns - before;
  const fastify = comparable(await exchange(portOf(pair.fastify), request), freshIds);
  return { front, fastify, frontHandlerRuns, fastifyHandlerRuns: handlerRuns - before - frontHandlerRuns };
}

t.test('calls the front serves: the same bytes as through Fastify, and Fastify never saw them', async (t) => {
  const pair = await startPair(t, remotesYaml());
  // [name, request, fresh request ids, Fastify's handler runs with the front off (0: its error handler answers)]
  const cases: [string, Buffer | string, boolean?, number?][] = [
    ['unary result (upstream A2A headers passed on)', post('/remotes/a', rpcBody('tasks/get'))],
    ['unary result, sub-path and query', post('/remotes/a/sub/path?x=1', rpcBody('tasks/get', 'str-id'))],
    ['JSON-RPC error from the remote', post('/remotes/a', rpcBody('tasks/get', 7, { id: 'x', error: true }))],
    ['unary result with text past ASCII, and a caller id too', post('/remotes/a', rpcBody('tasks/get', 'ïd-€', { id: 'task-1', unicode: true }))],
    ['charset parameter', post('/remotes/a', rpcBody('tasks/get'), { 'content-type': 'application/json; charset=utf-8' })],
    ['A2A 1.0 method', post('/remotes/a', rpcBody('GetTask', 2, { id: 'task-1' }), { 'a2a-version': '1.0' })],
    ['streaming call (SSE relayed)', post('/remotes/a', rpcBody('message/stream', 3, { message: { kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] } }))],
    ['PARSE_ERROR: not JSON', post('/remotes/a', '{"jsonrpc": "2.0", "id": 1, ')],
    ['INVALID_REQUEST: not a JSON-RPC request', post('/remotes/a', '[1,2,3]')],
    ['METHOD_NOT_ALLOWED', post('/remotes/a', rpcBody('tasks/nonsense'))],
    ['empty body', post('/remotes/a', '')],
    ['REQUEST_TOO_LARGE: Content-Length just over maxRequestBytes', post('/remotes/a', 'x'.repeat(4097)), false, 0],
    ['at maxRequestBytes', post('/remotes/a', sized(4096))],
    [
      'REQUEST_TOO_LARGE: chunked body cut at the bound',
      Buffer.from(`POST /remotes/a HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nx-request-id: front-test-1\r\ntransfer-encoding: chunked\r\n\r\n1001\r\n${'y'.repeat(4097)}\r\n0\r\n\r\n`),
      false,
      0,
    ],
    ['x-request-id not plain: a fresh one', post('/remotes/a', rpcBody('tasks/get'), { 'x-request-id': 'has spaces and / slashes' }), true],
    ['no x-request-id', post('/remotes/a', rpcBody('tasks/get'), { 'x-request-id': '' }), true],
    ['rate limited: GATEWAY_RATE_LIMITED with retry-after', post('/remotes/rated', rpcBody('tasks/get'))],
    // HTTP+JSON POSTs (routes/http-json.ts), to a remote of either binding.
    ['HTTP+JSON message:send to a JSON-RPC remote', post('/remotes/a/message:send', restSend, { 'a2a-version': '1.0' })],
    ['HTTP+JSON 0.3 path: refused as the binding version it is', post('/remotes/a/v1/message:send', restSend)],
    ['HTTP+JSON message:send to an HTTP+JSON remote (its reply is no A2A answer)', post('/remotes/rest/message:send', restSend, { 'a2a-version': '1.0' })],
    ['HTTP+JSON message:send to a JSON-RPC remote, text past ASCII', post('/remotes/a/message:send', restSendPastAscii, { 'a2a-version': '1.0' })],
    ['HTTP+JSON message:send to an HTTP+JSON remote, text past ASCII', post('/remotes/rest/message:send', restSendPastAscii, { 'a2a-version': '1.0' })],
    ['HTTP+JSON cancel', post('/remotes/a/tasks/task-1:cancel', '{}', { 'a2a-version': '1.0' })],
    ['HTTP+JSON stream (SSE relayed)', post('/remotes/a/message:stream', restSend, { 'a2a-version': '1.0' })],
    ['HTTP+JSON push config without server.push', post('/remotes/a/tasks/task-1/pushNotificationConfigs', JSON.stringify({ url: 'https://hooks.example/x' }), { 'a2a-version': '1.0' })],
    ['HTTP+JSON body not JSON', post('/remotes/a/message:send', '{"message":', { 'a2a-version': '1.0' })],
    ['HTTP+JSON rate limited', post('/remotes/rated/message:send', restSend, { 'a2a-version': '1.0' })],
    ['HTTP+JSON REQUEST_TOO_LARGE: Content-Length just over maxRequestBytes', post('/remotes/a/message:send', 'x'.repeat(4097)), false, 0],
    ['HTTP+JSON at maxRequestBytes: read, then refused as no JSON', post('/remotes/a/message:send', 'x'.repeat(4096)), false],
  ];
  // What some of them must be (the rest: any reply, as long as both gateways give the same one).
  const expectedReply: Record<string, RegExp> = {
    // The exchange reads the bytes one character each (latin1): the UTF-8 of the id and the note, whole.
    'unary result with text past ASCII, and a caller id too': new RegExp(
      `^HTTP/1\\.1 200 [^]*\\r\\n\\r\\n\\{"jsonrpc":"2\\.0","id":"${Buffer.from('ïd-€').toString('latin1')}","result":\\{[^]*"note":"${Buffer.from(UNICODE_NOTE).toString('latin1').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"\\}\\}\\}$`,
    ),
    'HTTP+JSON message:send to a JSON-RPC remote': /^HTTP\/1\.1 200 [^]*\r\ncontent-type: application\/a2a\+json; charset=utf-8\r\n[^]*\r\n\r\n\{"kind":"task","id":"task-1"/,
    // The result's bytes as the remote sent them, the Content-Length theirs (the exchange ends there: complete()).
    'HTTP+JSON message:send to a JSON-RPC remote, text past ASCII': new RegExp(`^HTTP/1\\.1 200 [^]*\\r\\n\\r\\n\\{"kind":"task"[^]*"note":"${NOTE_BYTES}"\\}\\}$`),
    'HTTP+JSON message:send to an HTTP+JSON remote, text past ASCII': new RegExp(`^HTTP/1\\.1 200 [^]*\\r\\n\\r\\n\\{"jsonrpc":"2\\.0"[^]*"note":"${NOTE_BYTES}"\\}\\}\\}$`),
    'HTTP+JSON 0.3 path: refused as the binding version it is': /^HTTP\/1\.1 400 [^]*UNSUPPORTED_BINDING_VERSION/,
    'HTTP+JSON cancel': /^HTTP\/1\.1 200 [^]*"id":"task-1"/,
    'HTTP+JSON stream (SSE relayed)': /^HTTP\/1\.1 200 [^]*\r\ncontent-type: text\/event-stream\r\n[^]*data: \{[^]*"state":"completed"/,
    'HTTP+JSON body not JSON': /^HTTP\/1\.1 400 [^]*\r\ncontent-type: application\/json; charset=utf-8\r\n/,
    'HTTP+JSON rate limited': /^HTTP\/1\.1 429 [^]*\r\nretry-after: \d+\r\n/,
    'HTTP+JSON REQUEST_TOO_LARGE: Content-Length just over maxRequestBytes': /^HTTP\/1\.1 413 [^]*\r\nconnection: close\r\n/,
    'HTTP+JSON at maxRequestBytes: read, then refused as no JSON': /^HTTP\/1\.1 400 [^]*\r\ncontent-type: application\/json; charset=utf-8\r\n/,
  };
  for (const [name, request, freshIds, fastifyRuns] of cases) {
    // The rate-limited remote: the first call takes the one token, the second is refused (in each gateway).
    if (name.startsWith('rate limited') || name === 'HTTP+JSON rate limited') await both(pair, request);
    const got = await both(pair, request, freshIds);
    t.equal(got.front, got.fastify, `${name}: byte for byte`);
    t.match(got.front, expectedReply[name] ?? /^HTTP\/1\.1 \d{3} /, `${name}: a reply`);
    t.equal(got.frontHandlerRuns, 0, `${name}: the front served it (Fastify's handler never ran)`);
    t.equal(got.fastifyHandlerRuns, fastifyRuns ?? 1, `${name}: with the front off, Fastify's route answered`);
  }
});

t.test('a caller leaving mid-body: the same call line (CALLER_CLOSED) with the front as without', async (t) => {
  const pair = await startPair(t, remotesYaml());
  const lines: Record<string, unknown>[] = [];
  for (const gw of [pair.front, pair.fastify]) {
    const before = gw.logs.length;
    const socket = connect(portOf(gw), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write('POST /remotes/a HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-request-id: leaving\r\ncontent-length: 100\r\n\r\n{"jsonrpc":');
    await delay(50);
    socket.destroy();
    const until = Date.now() + 3000;
    while (!gw.logs.slice(before).some((l) => l.msg === 'call') && Date.now() < until) await delay(10);
    const line = gw.logs.slice(before).find((l) => l.msg === 'call');
    lines.push({ ...(line?.call as Record<string, unknown>), totalMs: 0, requestId: line?.requestId });
  }
  t.same(lines[0], lines[1], 'the same call line');
  t.match(lines[0], { remote: 'a', outcome: 'CALLER_CLOSED', requestId: 'leaving' });
});

t.test("a remote's own listener: the front serves its root; the same bytes, log line and metrics", async (t) => {
  const yaml = `server: { maxRequestsPerSocket: 2 }\n${remotesYaml()}  own: { url: '${upstreamUrl}/a2a', listen: { port: 0 } }\n`;
  const [front, fastify] = await Promise.all([startOpsGateway(yaml), startOpsGateway(yaml, { callFront: false })]);
  t.teardown(() => Promise.all([front.close(), fastify.close()]));
  const port = (gw: typeof front) => Number(new URL(gw.remoteUrls.own!).port);
  for (const [name, request] of [
    ['root', post('/', rpcBody('tasks/get'))],
    ['sub-path', post('/deeper/path', rpcBody('tasks/get', 'x'))],
    ['unknown method', post('/', rpcBody('tasks/what'))],
  ] as const) {
    const before = handlerRuns;
    const viaFront = comparable(await exchange(port(front), request));
    const frontRuns = handlerRuns - before;
    const viaFastify = comparable(await exchange(port(fastify), request));
    t.equal(viaFront, viaFastify, `${name}: byte for byte`);
    t.equal(frontRuns, 0, `${name}: the front served it`);
  }
  // The call line and metrics are the same records (durations aside).
  const line = (gw: typeof front) => {
    const calls = gw.logs.filter((l) => l.msg === 'call').map((l) => ({ ...(l.call as Record<string, unknown>), totalMs: 0, upstreamMs: 0 }));
    return calls;
  };
  t.same(line(front), line(fastify), 'the same call log lines');
  t.ok(line(front).length >= 3, 'one per call');
  const metrics = async (gw: typeof front) =>
    (await (await fetch(`${gw.opsUrl}/metrics`)).text())
      .split('\n')
      .filter((l) => l.startsWith('a2a_egress_calls_total') || l.startsWith('a2a_egress_bytes_total') || l.startsWith('a2a_egress_normalizations_total'))
      .join('\n');
  const counters = await metrics(front);
  t.match(counters, /a2a_egress_calls_total\{[^}]*remote="own"/, 'the calls were counted');
  t.equal(counters, await metrics(fastify), 'the same call counters');

  // maxRequestsPerSocket: 2 — the second reply on a socket says Connection: close, through the front as before.
  const twoOnOneSocket = async (gw: typeof front) => {
    const socket = connect(port(gw), '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (c: Buffer) => received.push(c));
    const closed = new Promise((r) => socket.once('close', r));
    socket.write(post('/', rpcBody('tasks/get', 1)));
    while (!complete(Buffer.concat(received).toString('latin1'))) await delay(5);
    socket.write(post('/', rpcBody('tasks/get', 2)));
    await Promise.race([closed, delay(3000)]);
    socket.destroy();
    return Buffer.concat(received).toString('latin1').replace(/\r\nDate: [^\r]*\r\n/g, '\r\nDate: <date>\r\n');
  };
  const socketFront = await twoOnOneSocket(front);
  t.equal(socketFront, await twoOnOneSocket(fastify), 'maxRequestsPerSocket: byte for byte');
  t.match(socketFront, /\r\nConnection: close\r\n/, 'the last request of the socket is told so');
});

t.test("calls handed to Fastify: the same bytes as before, from Fastify's own routes", async (t) => {
  const pair = await startPair(t, remotesYaml());
  const cases: [string, Buffer | string, number][] = [
    ['unknown remote', post('/remotes/nobody', rpcBody('tasks/get')), 1],
    ['remote reached over HTTP+JSON (transcoded)', post('/remotes/rest', rpcBody('tasks/get')), 1],
    ['HTTP+JSON POST with a non-JSON content type', post('/remotes/a/message:send', restSend, { 'content-type': 'text/plain' }), 1],
    ['HTTP+JSON GET (not a POST)', Buffer.from('GET /remotes/a/tasks/task-1 HTTP/1.1\r\nhost: 127.0.0.1\r\nx-request-id: front-test-1\r\na2a-version: 1.0\r\n\r\n'), 1],
    ['non-JSON content type', post('/remotes/a', rpcBody('tasks/get'), { 'content-type': 'text/plain' }), 1],
    ['no content type', post('/remotes/a', rpcBody('tasks/get'), { 'content-type': '' }), 1],
    ['content type with other parameters', post('/remotes/a', rpcBody('tasks/get'), { 'content-type': 'application/json; boundary=x' }), 1],
    ['percent-encoded remote name', post('/remotes/%61', rpcBody('tasks/get')), 1],
    ['GET of a card is not a call', Buffer.from('GET /remotes/nobody/.well-known/agent-card.json HTTP/1.1\r\nhost: 127.0.0.1\r\nx-request-id: front-test-1\r\n\r\n'), 1],
  ];
  for (const [name, request, runs] of cases) {
    const got = await both(pair, request);
    t.equal(got.front, got.fastify, `${name}: byte for byte`);
    t.equal(got.frontHandlerRuns, runs, `${name}: handed over to Fastify's route`);
  }
});

/**
 * Telemetry whose first `faults` call starts throw: a bug the call path meets before its first await (handleCall
 * begins the call's trace at once), and, with two, the refusal of that call failing in turn.
 */
function faultyTelemetry(faults: number): Telemetry {
  let left = faults;
  const startCall = (start: CallStart) => {
    if (left-- > 0) throw new TypeError('injected fault: call start');
    return Telemetry.off.startCall(start);
  };
  return Object.create(Telemetry.off, { active: { get: () => true }, startCall: { value: startCall } }) as Telemetry;
}

t.test('a bug the call path throws at once: GATEWAY_ERROR, with the front as without, and the next call is served', async (t) => {
  const [front, fastify] = await Promise.all([
    startGateway(remotesYaml(), { telemetry: faultyTelemetry(1) }),
    startGateway(remotesYaml(), { telemetry: faultyTelemetry(1), callFront: false }),
  ]);
  t.teardown(() => Promise.all([front.close(), fastify.close()]));
  const failed = await both({ front, fastify }, post('/remotes/a', rpcBody('tasks/get')));
  t.equal(failed.front, failed.fastify, 'byte for byte');
  t.match(failed.front, /GATEWAY_ERROR/);
  t.notMatch(failed.front, /injected/, 'no internal text reaches the caller');
  const next = await both({ front, fastify }, post('/remotes/a', rpcBody('tasks/get')));
  t.equal(next.front, next.fastify);
  t.match(next.front, /"result"/);
});

t.test('a refusal that fails in turn: an unhandled rejection (reported), never an exception that stops the gateway', async (t) => {
  const gateway = await startGateway(remotesYaml(), { telemetry: faultyTelemetry(2) });
  t.teardown(() => gateway.close());
  const rejected = new Promise<unknown>((resolve) => process.once('unhandledRejection', resolve));
  // Nobody answers this caller (nothing is left that could): the socket is let go after a while.
  void exchange(portOf(gateway), post('/remotes/a', rpcBody('tasks/get')), { endAfterMs: 300 });
  t.match(await rejected, { name: 'TypeError', message: 'injected fault: call start' });
  t.match(await exchange(portOf(gateway), post('/remotes/a', rpcBody('tasks/get'))), /"result"/, 'the next call is served');
});

t.test('caller auth failure: handed over, 401 from the onRequest hook as before', async (t) => {
  const pair = await startPair(t, `server: { auth: { type: bearer, tokensEnv: FRONT_CALLERS } }\n${remotesYaml()}`, { env: { FRONT_CALLERS: 'good-token' } });
  const denied = await both(pair, post('/remotes/a', rpcBody('tasks/get'), { authorization: 'Bearer bad-token' }));
  t.equal(denied.front, denied.fastify, 'wrong token: byte for byte');
  t.match(denied.front, /^HTTP\/1\.1 401 /);
  t.match(denied.front, /\r\nwww-authenticate: Bearer realm="a2a-egress"\r\n/);
  const missing = await both(pair, post('/remotes/a', rpcBody('tasks/get')));
  t.equal(missing.front, missing.fastify, 'no token: byte for byte');
  const allowed = await both(pair, post('/remotes/a', rpcBody('tasks/get'), { authorization: 'Bearer good-token' }));
  t.equal(allowed.front, allowed.fastify, 'accepted token: byte for byte');
  t.equal(allowed.frontHandlerRuns, 0, 'accepted token: the front served it');
});

t.test('overload: handed over, GATEWAY_OVERLOADED from the load-shed hook as before', async (t) => {
  // Any heap is over 1 byte: every call is shed from the first pressure sample on.
  const pair = await startPair(t, `server: { maxHeapUsedBytes: 1 }\n${remotesYaml()}`);
  await delay(1200);
  const got = await both(pair, post('/remotes/a', rpcBody('tasks/get')));
  t.equal(got.front, got.fastify, 'byte for byte');
  t.match(got.front, /GATEWAY_OVERLOADED/);
  t.match(got.front, /\r\nretry-after: 1\r\n/);
});

t.test('drain: a call arriving during it is handed over (Connection: close); one the front took answers GATEWAY_SHUTDOWN at drainMs', async (t) => {
  const transcripts: Record<string, { pipelined: string; cut: string }> = {};
  for (const [label, options] of [['front', {}], ['fastify', { callFront: false }]] as const) {
    // A socket kept busy by a held call (shutdown cannot close it as idle); the second request arrives on it during
    // the drain; the held call is released before drainMs, and both answers come back in order.
    const gw = await startGateway(`server: { drainMs: 10000 }\n${remotesYaml()}`, options);
    const socket = connect(portOf(gw), '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (c: Buffer) => received.push(c));
    const ended = new Promise((r) => socket.once('close', r));
    socket.write(post('/remotes/a/slow', rpcBody('tasks/get', 'first')));
    await heldCall();
    const closing = gw.close();
    await delay(50);
    socket.write(post('/remotes/a', rpcBody('tasks/get', 'during-drain')));
    await delay(200);
    releaseHeldCall();
    await Promise.race([ended, delay(3000)]);
    socket.destroy();
    await closing;

    // A call still running when drainMs is up: answered GATEWAY_SHUTDOWN with Connection: close.
    const short = await startGateway(`server: { drainMs: 300 }\n${remotesYaml()}`, options);
    const running = exchange(portOf(short), post('/remotes/a/slow', rpcBody('tasks/get', 'held')), { endAfterMs: 3000 });
    await heldCall();
    const shortClosing = short.close();
    const cut = comparable(await running);
    releaseHeldCall();
    await shortClosing;
    transcripts[label] = { pipelined: comparable(Buffer.concat(received).toString('latin1')).replace(/\r\nDate: [^\r]*\r\n/g, '\r\nDate: <date>\r\n'), cut };
  }
  const { front, fastify } = transcripts as Record<'front' | 'fastify', { pipelined: string; cut: string }>;
  t.equal(front.pipelined, fastify.pipelined, 'a held call, then one arriving during the drain on the same socket: byte for byte');
  t.match(front.pipelined, /"id":"first","result"/, 'the held call completes');
  t.match(front.pipelined, /"id":"during-drain".*GATEWAY_SHUTDOWN/, 'the late one is refused');
  t.match(front.pipelined, /\r\nConnection: close\r\n/, "with Fastify's Connection: close");
  t.equal(front.cut, fastify.cut, 'a call still running at drainMs: byte for byte');
  t.match(front.cut, /"id":"held".*GATEWAY_SHUTDOWN/);
  t.match(front.cut, /\r\nconnection: close\r\n/);
});

t.test('property: random bodies, methods, ids and headers give the same bytes with the front on and off', async (t) => {
  const pair = await startPair(t, remotesYaml());
  const params = fuzzParams(40);
  const method = fc.constantFrom('tasks/get', 'tasks/cancel', 'GetTask', 'message/send', 'nope', '');
  const id = fc.oneof(fc.integer(), fc.string({ maxLength: 20 }), fc.constant(null), fc.constant({}));
  const body = fc.oneof(
    fc.tuple(method, id, fc.jsonValue({ maxDepth: 2 })).map(([m, i, p]) => JSON.stringify({ jsonrpc: '2.0', id: i, method: m, params: p })),
    fc.string({ maxLength: 200 }),
    fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  );
  const headers = fc.record(
    {
      'a2a-version': fc.constantFrom('0.3', '1.0', 'garbage'),
      'x-request-id': fc.constantFrom('plain-id', 'bad id', ''),
      'content-type': fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', ''),
      path: fc.constantFrom('/remotes/a', '/remotes/a/x', '/remotes/a?q=1', '/remotes/nobody', '/remotes/a/message:send', '/remotes/rest/message:send', '/remotes/a/tasks/t1:cancel'),
    },
    { requiredKeys: [] },
  );
  await fc.assert(
    fc.asyncProperty(body, headers, async (payload, { path, ...extra }) => {
      const got = await both(pair, post(path ?? '/remotes/a', payload, extra), true);
      if (got.front !== got.fastify) throw new Error(`differ:\n${got.front}\n---\n${got.fastify}`);
    }),
    params,
  );
  t.pass('byte-identical for every generated request');
});
