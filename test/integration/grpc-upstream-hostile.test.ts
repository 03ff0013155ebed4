/**
 * JSON-RPC and HTTP+JSON callers of hostile gRPC remotes (`binding: grpc`),
 * written at the HTTP/2 frame level (test/support/hostile-grpc.ts): each
 * failure reaches the caller as one typed error in its own binding — a
 * JSON-RPC envelope or a google.rpc.Status body before any event, a final
 * error event after some — with the gateway's reason, fixed text and no
 * remote junk; stream bounds hold just under and just over.
 */
import t from 'tap';
import { encodeMessage } from '../../src/bindings/grpc/framing.js';
import { answer, GRPC_HEADERS, startH2, taskEvent, taskMessage, type H2Handler, type HostileServer } from '../support/hostile-grpc.js';
import { gatewayInfoOf } from '../support/gateway.js';
import { startGrpcGateway, type GrpcGateway } from '../support/grpc-gateway.js';

const handlers: Record<string, H2Handler> = {
  // Trailers-only NOT_FOUND, with an escape sequence in the message and details that are no google.rpc.Status.
  junkDetails: (s) =>
    s.respond({ ...GRPC_HEADERS, 'grpc-status': '5', 'grpc-message': 'no%20task%1B[31m t1', 'grpc-status-details-bin': Buffer.from('\u0000junk\u00ff<script>').toString('base64') }, { endStream: true }),
  task: (s) => answer(s, taskMessage('t1')),
  html: (s) => {
    s.respond({ ':status': 502, 'content-type': 'text/html' });
    s.end('<html><body>LEAKED-HTML-MARKER</body></html>');
  },
  resetMidStream: (s) => {
    s.respond(GRPC_HEADERS);
    s.write(taskEvent('a'), () => setTimeout(() => s.destroy(new Error('reset')), 20));
  },
  brokenEvent: (s) => {
    s.respond(GRPC_HEADERS, { waitForTrailers: true });
    s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '0' }));
    s.write(taskEvent('a'));
    s.end(encodeMessage(Buffer.from([0x0a, 0x7f, 0x01])));
  },
  threeEvents: (s) => {
    s.respond(GRPC_HEADERS, { waitForTrailers: true });
    s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '0' }));
    s.end(Buffer.concat([taskEvent('a'), taskEvent('b'), taskEvent('c')]));
  },
  silent: () => {},
};

const servers: Record<string, HostileServer> = {};
for (const [name, handler] of Object.entries(handlers)) servers[name] = await startH2(handler);

const remote = (name: string, server: string, extra = '') => `
  ${name}:
    url: http://127.0.0.1:1/
    binding: grpc
    allowPrivateNetwork: true
    retries: { attempts: 1 }
    grpc: { target: "${servers[server]!.target}" }${extra}`;

const gw: GrpcGateway = await startGrpcGateway(`
server: { host: 127.0.0.1, port: 0, grpc: { port: 0 } }
defaults:
  circuitBreaker: { failureThreshold: 1000 }
remotes:${remote('notFound', 'junkDetails')}${remote('task', 'task')}${remote('html', 'html')}${remote('reset', 'resetMidStream')}${remote('broken', 'brokenEvent')}${remote('threeOk', 'threeEvents', '\n    limits: { maxStreamEvents: 3 }')}${remote('threeOver', 'threeEvents', '\n    limits: { maxStreamEvents: 2 }')}${remote('silent', 'silent', '\n    timeouts: { totalMs: 300 }')}
`);
t.teardown(async () => {
  await gw.close();
  await Promise.all(Object.values(servers).map((s) => s.close()));
});

type Envelope = { id: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } };

async function rpc(name: string, method: string, params: unknown): Promise<{ status: number; contentType: string; envelopes: Envelope[] }> {
  const res = await fetch(`${gw.url}/remotes/${name}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'c-1', method, params }),
  });
  const contentType = res.headers.get('content-type') ?? '';
  const text = await res.text();
  if (!contentType.startsWith('text/event-stream')) return { status: res.status, contentType, envelopes: [JSON.parse(text) as Envelope] };
  const envelopes = text
    .split('\n\n')
    .map((block) => block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join(''))
    .filter((data) => data !== '')
    .map((data) => JSON.parse(data) as Envelope);
  return { status: res.status, contentType, envelopes };
}

const streamParams = { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } };
const reasonOf = (e: Envelope | undefined) => gatewayInfoOf(e as unknown as Record<string, unknown>)?.reason;

t.test('unary: a trailers-only NOT_FOUND with junk details is TaskNotFound, sanitized, junk dropped', async (t) => {
  const { envelopes } = await rpc('notFound', 'GetTask', { id: 't1' });
  const error = envelopes[0]!.error!;
  t.equal(envelopes[0]!.id, 'c-1');
  t.equal(error.code, -32001);
  t.notMatch(error.message, /\u001b|<script>|junk/);
  t.match(gw.calls().at(-1)!, { remote: 'notFound', method: 'GetTask', outcome: 'REMOTE_ERROR' });
});

t.test('unary: a well-formed reply becomes the JSON-RPC result', async (t) => {
  const { envelopes } = await rpc('task', 'GetTask', { id: 't1' });
  t.match(envelopes[0], { id: 'c-1', result: { id: 't1', status: { state: 'TASK_STATE_WORKING' } } });
});

t.test('unary: an HTML 502 instead of gRPC is one typed error, nothing of the page', async (t) => {
  const { envelopes } = await rpc('html', 'GetTask', { id: 't1' });
  const error = envelopes[0]!.error!;
  t.ok(error, 'an error');
  t.notMatch(JSON.stringify(envelopes[0]), /LEAKED-HTML-MARKER|<html/);
  t.ok(reasonOf(envelopes[0]), 'with the gateway’s reason');
  t.match(gw.calls().at(-1)!, { remote: 'html', outcome: reasonOf(envelopes[0]) });
});

t.test('unary: a remote that never answers is UPSTREAM_TIMEOUT at totalMs', async (t) => {
  const { envelopes } = await rpc('silent', 'GetTask', { id: 't1' });
  t.equal(reasonOf(envelopes[0]), 'UPSTREAM_TIMEOUT');
});

t.test('stream: RST_STREAM after one event is that event, then one final error event', async (t) => {
  const { contentType, envelopes } = await rpc('reset', 'SendStreamingMessage', streamParams);
  t.match(contentType, /^text\/event-stream/);
  t.equal(envelopes.length, 2);
  t.match(envelopes[0], { id: 'c-1', result: { task: { id: 'a' } } });
  t.equal(reasonOf(envelopes[1]), 'UPSTREAM_STREAM_RESET');
  t.match(gw.calls().at(-1)!, { remote: 'reset', method: 'SendStreamingMessage', outcome: 'UPSTREAM_STREAM_RESET', events: 1 });
});

t.test('stream: a broken message after one event ends with one typed error event', async (t) => {
  const { envelopes } = await rpc('broken', 'SendStreamingMessage', streamParams);
  t.equal(envelopes.length, 2);
  t.ok(envelopes[1]!.error, 'an error event');
  const reason = reasonOf(envelopes[1]);
  t.ok(reason && reason !== 'GATEWAY_ERROR', `a typed reason (${reason})`);
  t.match(gw.calls().at(-1)!, { remote: 'broken', outcome: reason });
});

t.test('stream bound maxStreamEvents: 3 events at 3 pass, at 2 the stream ends with STREAM_TOO_MANY_EVENTS', async (t) => {
  const ok = await rpc('threeOk', 'SendStreamingMessage', streamParams);
  t.same(ok.envelopes.map((e) => (e.result as { task: { id: string } }).task.id), ['a', 'b', 'c']);
  t.match(gw.calls().at(-1)!, { remote: 'threeOk', outcome: 'ok', events: 3 });
  const over = await rpc('threeOver', 'SendStreamingMessage', streamParams);
  t.equal(over.envelopes.length, 3);
  t.ok(over.envelopes[2]!.error);
  t.match(gw.calls().at(-1)!, { remote: 'threeOver', outcome: reasonOf(over.envelopes[2]), events: 2 });
});

t.test('HTTP+JSON caller: a trailers-only NOT_FOUND is HTTP 404 with a google.rpc.Status body; a reset stream ends with an error event', async (t) => {
  const res = await fetch(`${gw.url}/remotes/notFound/tasks/t1`, { headers: { 'a2a-version': '1.0' } });
  t.equal(res.status, 404);
  const body = (await res.json()) as { error: { code: number; status: string; details: { reason?: string }[] } };
  t.equal(body.error.code, 404);
  t.equal(body.error.details[0]?.reason, 'TASK_NOT_FOUND');
  t.match(gw.calls().at(-1)!, { remote: 'notFound', binding: 'http+json', outcome: 'REMOTE_ERROR' });

  const stream = await fetch(`${gw.url}/remotes/reset/message:stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify(streamParams),
  });
  t.match(stream.headers.get('content-type'), /^text\/event-stream/);
  const text = await stream.text();
  t.match(text, /"task":\{"id":"a"/);
  t.match(text, /UPSTREAM_STREAM_RESET/);
});
