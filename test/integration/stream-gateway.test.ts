/**
 * Streaming through the real gateway: once the remote started an event
 * stream, the caller gets HTTP 200 text/event-stream; every event is a
 * normalized envelope with the caller's id; every ending the gateway causes
 * is one final error event with a stable reason. When no stream started (the
 * remote answered with one body, or could not be reached), the caller gets
 * one application/json envelope, as a conformant server sends it.
 */
import t, { type Test } from 'tap';
import { Agent, request } from 'undici';
import { startSseUpstream } from '../support/sse-upstream.js';
import { LEAK_MARKERS } from '../support/hostile-cases.js';
import { startHostileUpstream, type HostileUpstream } from '../support/hostile-upstream.js';
import { rpcRequest, startGateway, type RunningGateway } from '../support/gateway.js';
import { clientForJsonRpcUrl, streamText } from '../support/sdk-client.js';
import { reasonOfEvent, streamRpc, type SseReply } from '../support/sse-client.js';

const MAX_EVENT = 8_192;

let upstream: HostileUpstream;
let gw: RunningGateway;

t.before(async () => {
  upstream = await startHostileUpstream();
  gw = await startGateway(`
defaults:
  allowPrivateNetwork: true
  circuitBreaker: { failureThreshold: 10000 }
  retries: { attempts: 1 }
remotes:
  sse:
    url: ${upstream.url}/
    limits: { maxEventBytes: ${MAX_EVENT}, maxStreamBytes: 200000, maxStreamEvents: 50 }
    timeouts: { streamIdleMs: 400, streamNoDataMs: 600, maxStreamMs: 5000, keepAliveMs: 150, totalMs: 2000 }
  down:
    url: http://127.0.0.1:9/
`);
});
t.teardown(async () => {
  await gw.close();
  await upstream.close();
});

const stream = (path: string, id: string | number = 'sid-1', method = 'SendStreamingMessage') =>
  streamRpc(`${gw.url}/remotes/${path}`, rpcRequest(method, id, { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'go' }] } }));

function assertStream(t: Test, reply: SseReply, id: unknown): void {
  t.equal(reply.status, 200);
  t.match(String(reply.headers['content-type']), /^text\/event-stream/);
  t.ok(reply.events.length > 0, 'at least one event');
  reply.events.forEach((e, i) => {
    t.equal(e.jsonrpc, '2.0');
    t.same(e.id, id, `event ${i} has the caller id`);
    t.equal(Object.hasOwn(e, 'result') !== Object.hasOwn(e, 'error'), true, 'exactly one of result/error');
    if (e.error) t.equal(i, reply.events.length - 1, 'an error event is the last one');
  });
  for (const marker of Object.values(LEAK_MARKERS)) t.notOk(reply.raw.includes(marker));
  t.notMatch(reply.raw, /<html/i, 'no remote HTML');
}

t.test('a well-formed stream is relayed event by event with the caller id', async (t) => {
  const reply = await stream('sse/sse-ok/wrongId=1', 'caller-stream');
  assertStream(t, reply, 'caller-stream');
  t.equal(reply.events.length, 4);
  t.notOk(reply.events.some((e) => e.error));
});

t.test('both generations’ streaming methods are recognised', async (t) => {
  for (const method of ['message/stream', 'tasks/resubscribe', 'SendStreamingMessage', 'SubscribeToTask']) {
    const reply = await stream('sse/sse-ok', 7, method);
    t.equal(reply.events.length, 4, method);
  }
});

t.test('remote comments are not forwarded; the gateway sends its own keep-alives', async (t) => {
  const reply = await stream('sse/sse-keepalive');
  assertStream(t, reply, 'sid-1');
  t.equal(reply.events.length, 4);
  const silent = await stream('sse/sse-comments-only/ms=50');
  t.ok(silent.comments.every((c) => c === 'keep-alive'), 'only the gateway’s comments');
});

t.test('event: error with extra members → normalized error event, stream ends', async (t) => {
  const reply = await stream('sse/sse-error-event');
  assertStream(t, reply, 'sid-1');
  const last = reply.events.at(-1)!;
  t.equal((last.error as { code: number }).code, -32603);
  t.notMatch(reply.raw, /"stack"|\\u001b|\\r|\\n/, 'extra members and controls gone; the sanitized message stays');
});

t.test('broken data after good events → the good events, then one INVALID_EVENT', async (t) => {
  const reply = await stream('sse/sse-garbage');
  assertStream(t, reply, 'sid-1');
  t.equal(reply.events.length, 2);
  t.equal(reasonOfEvent(reply.events[1]), 'INVALID_EVENT');
  t.equal((reply.events[1]!.error as { code: number }).code, -32006);
});

/** A reply to a streaming call when no stream started: one JSON envelope, no event stream. */
function assertJsonReply(t: Test, reply: SseReply, id: unknown): Record<string, unknown> {
  t.equal(reply.status, 200);
  t.match(String(reply.headers['content-type']), /^application\/json/, 'application/json, not an event stream');
  t.same(reply.events, []);
  const json = reply.json ?? {};
  t.equal(json.jsonrpc, '2.0');
  t.same(json.id, id, 'the caller id');
  t.ok(json.error, 'an error');
  for (const marker of Object.values(LEAK_MARKERS)) t.notOk(reply.raw.includes(marker));
  t.notMatch(reply.raw, /<html/i, 'no remote HTML');
  return json;
}

t.test('a plain JSON-RPC error body to a stream call → that one error as application/json, its code kept', async (t) => {
  const json = assertJsonReply(t, await stream('sse/sse-json-error'), 'sid-1');
  t.equal((json.error as { code: number }).code, -32004);
  t.match((json.error as { data: unknown[] }).data[0], { reason: 'UNSUPPORTED_OPERATION', domain: 'a2a-protocol.org' });
  t.equal(reasonOfEvent(json), 'REMOTE_ERROR');
});

t.test('an HTML 502 to a stream call → one UPSTREAM_HTTP_ERROR envelope', async (t) => {
  const json = assertJsonReply(t, await stream('sse/html-502'), 'sid-1');
  t.equal(reasonOfEvent(json), 'UPSTREAM_HTTP_ERROR');
});

t.test('a non-stream answer to a stream call is read with the unary bound: maxResponseBytes just under passes, just over is RESPONSE_TOO_LARGE', async (t) => {
  const call = rpcRequest('SubscribeToTask', 'b', { id: 't' });
  const direct = await request(`${upstream.url}/sse-json-error`, { method: 'POST', body: JSON.stringify(call), headers: { 'content-type': 'application/json' } });
  const size = (await direct.body.arrayBuffer()).byteLength;
  const bounded = await startGateway(
    `remotes:\n  a: { url: '${upstream.url}/', allowPrivateNetwork: true, limits: { maxResponseBytes: ${size} } }\n  b: { url: '${upstream.url}/', allowPrivateNetwork: true, limits: { maxResponseBytes: ${size - 1} } }\n`,
  );
  t.teardown(() => bounded.close());
  const under = await streamRpc(`${bounded.url}/remotes/a/sse-json-error`, call);
  t.equal((assertJsonReply(t, under, 'b').error as { code: number }).code, -32004, 'exactly maxResponseBytes: the remote\'s error');
  const over = await streamRpc(`${bounded.url}/remotes/b/sse-json-error`, call);
  t.equal(reasonOfEvent(assertJsonReply(t, over, 'b')), 'RESPONSE_TOO_LARGE', 'one byte over');
});

t.test('an unreachable remote → one transport error envelope, no stream', async (t) => {
  const json = assertJsonReply(t, await stream('down'), 'sid-1');
  t.equal(reasonOfEvent(json), 'UPSTREAM_REFUSED');
  t.equal((json.error as { code: number }).code, -32603);
});

t.test('@a2a-js/sdk: a failure before any stream is the typed error itself; an error in a started stream its cause', async (t) => {
  const down = await clientForJsonRpcUrl(`${gw.url}/remotes/down/`);
  const early = await streamText(down, 'go').catch((err: unknown) => err);
  t.equal((early as Error).name, 'JsonRpcTransportError', 'UPSTREAM_REFUSED (-32603) thrown as such, not wrapped');
  const json = await clientForJsonRpcUrl(`${gw.url}/remotes/sse/sse-json-error`);
  t.equal(((await streamText(json, 'go').catch((err: unknown) => err)) as Error).name, 'UnsupportedOperationError');
  const started = await clientForJsonRpcUrl(`${gw.url}/remotes/sse/sse-error-event`);
  const late = (await streamText(started, 'go').catch((err: unknown) => err)) as Error;
  t.match(late.message, /^SSE event contained an error/, 'the SDK\'s own wrapper for an error event');
  t.equal((late.cause as Error).name, 'JsonRpcTransportError');
});

t.test('a stream that started and then carries an error stays a stream: the error is its last event', async (t) => {
  const reply = await stream('sse/sse-error-event');
  assertStream(t, reply, 'sid-1');
  t.ok(reply.events.length >= 2, 'events before the error');
});

t.test('an event just under maxEventBytes passes', async (t) => {
  const reply = await stream(`sse/sse-big-event/bytes=${MAX_EVENT - 64}`);
  assertStream(t, reply, 'sid-1');
  t.equal(reply.events.length, 3);
  t.notOk(reply.events.some((e) => e.error));
});

t.test('an event over maxEventBytes → EVENT_TOO_LARGE, final', async (t) => {
  const reply = await stream(`sse/sse-big-event/bytes=${MAX_EVENT + 64}`);
  assertStream(t, reply, 'sid-1');
  t.equal(reasonOfEvent(reply.events.at(-1)), 'EVENT_TOO_LARGE');
});

t.test('silence → STREAM_IDLE', async (t) => {
  const reply = await stream('sse/sse-silent');
  assertStream(t, reply, 'sid-1');
  t.equal(reasonOfEvent(reply.events.at(-1)), 'STREAM_IDLE');
});

t.test('comments forever, no data → STREAM_NO_DATA', async (t) => {
  const reply = await stream('sse/sse-comments-only/ms=50');
  assertStream(t, reply, 'sid-1');
  t.equal(reasonOfEvent(reply.events.at(-1)), 'STREAM_NO_DATA');
});

t.test('an endless stream is ended by a stream bound, and its upstream socket closed', async (t) => {
  const reply = await stream('sse/sse-endless');
  assertStream(t, reply, 'sid-1');
  t.match(reasonOfEvent(reply.events.at(-1)), /^STREAM_TOO_(LARGE|MANY_EVENTS)$/);
  t.ok(reply.events.length <= 51);
});

t.test('the caller disconnecting aborts the upstream request at once', async (t) => {
  // An upstream that counts requests whose response is still open: a socket count would
  // also see the spare connection undici's pool opens after an abort.
  const sse = await startSseUpstream();
  const gwd = await startGateway(`remotes:\n  drip: { url: '${sse.origin}/', allowPrivateNetwork: true, timeouts: { streamNoDataMs: 60000 } }\n`);
  t.teardown(async () => {
    await gwd.close();
    await sse.close();
  });
  const agent = new Agent();
  t.teardown(() => agent.destroy());
  const controller = new AbortController();
  const res = await request(`${gwd.url}/remotes/drip/comments`, {
    method: 'POST',
    body: JSON.stringify(rpcRequest('SendStreamingMessage', 'gone')),
    signal: controller.signal,
    dispatcher: agent,
  });
  t.equal(res.statusCode, 200);
  const until = Date.now() + 3000;
  while (sse.activeRequests() === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  t.equal(sse.activeRequests(), 1, 'the stream is open upstream');
  res.body.on('error', () => {});
  const abortedAt = Date.now();
  controller.abort();
  while (sse.activeRequests() > 0 && Date.now() < until + 3000) await new Promise((r) => setTimeout(r, 10));
  t.equal(sse.activeRequests(), 0, 'the upstream request was aborted');
  t.ok(Date.now() - abortedAt < 1000, 'at once, not at a timeout');
});
