/**
 * Hostile HTTP+JSON remotes behind the gateway, called by an HTTP+JSON
 * caller (and by a JSON-RPC caller, transcoded): whatever the remote sends,
 * the caller gets a typed, bounded google.rpc.Status (or JSON-RPC error)
 * with the gateway's reason, and nothing of the remote's HTML, stack traces
 * or stray members. Bounds just under and just over.
 */
import t from 'tap';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { request } from 'undici';
import { rpc, rpcRequest, startGateway } from '../support/gateway.js';
import { closeServer, listenOnLoopback, readBody, trackConnections } from '../support/servers.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;
const TASK = '{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}';
const SEND = JSON.stringify({ message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } });
let script: Handler = (_req, res) => res.end();
const received: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] = [];

const upstream = createServer(async (req, res) => {
  const body = await readBody(req);
  received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: body.toString('utf8') });
  script(req, res, body);
});
const tracker = trackConnections(upstream);
const port = await listenOnLoopback(upstream);
const MAX_RESPONSE = 4096;
const MAX_EVENT = 2048;
const MAX_REQUEST = 2048;
const gw = await startGateway(`
server: { host: 127.0.0.1, port: 0 }
remotes:
  rest:
    url: http://127.0.0.1:${port}/api
    binding: http+json
    allowPrivateNetwork: true
    auth: { type: header, name: x-api-key, valueEnv: REST_KEY }
    limits: { maxResponseBytes: ${MAX_RESPONSE}, maxEventBytes: ${MAX_EVENT}, maxRequestBytes: ${MAX_REQUEST} }
`, { env: { REST_KEY: 'sekrit-key-0123456789' } });
t.teardown(async () => {
  await gw.close();
  await closeServer(upstream, tracker);
});

const base = `${gw.url}/remotes/rest`;
interface StatusReply {
  status: number;
  contentType: string;
  text: string;
  error: { code: number; status: string; message: string; details: { reason: string; domain: string; metadata?: Record<string, string> }[] };
}
async function call(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<StatusReply> {
  const all: Record<string, string> = { 'a2a-version': '1.0', ...(body ? { 'content-type': 'application/json' } : {}), ...headers };
  for (const [name, value] of Object.entries(all)) if (value === '') delete all[name];
  const res = await request(`${base}${path}`, { method: method as 'GET', headers: all, ...(body ? { body } : {}) });
  const text = await res.body.text();
  let error = {} as StatusReply['error'];
  try {
    error = (JSON.parse(text) as { error: StatusReply['error'] }).error;
  } catch {}
  return { status: res.statusCode, contentType: String(res.headers['content-type']), text, error };
}
const gatewayReason = (r: StatusReply) => r.error?.details?.find((d) => d.domain === 'a2a-egress')?.reason;
const json = (status: number, body: string, type = 'application/json'): Handler => (_req, res) => {
  res.writeHead(status, { 'content-type': type });
  res.end(body);
};

t.test('the request the remote gets: REST verb and path under its base, credentials added, caller headers filtered', async (t) => {
  script = json(200, `{"task":${TASK}}`);
  const r = await call('POST', '/message:send', SEND, { cookie: 'a=b', 'x-custom': '1' });
  t.equal(r.status, 200);
  t.equal(r.text, `{"task":${TASK}}`, 'the remote\'s bytes as they were');
  const seen = received.at(-1)!;
  t.equal(seen.method, 'POST');
  t.equal(seen.url, '/api/message:send');
  t.equal(seen.headers['x-api-key'], 'sekrit-key-0123456789');
  t.notOk(seen.headers.cookie, 'caller cookie not forwarded');
  t.notOk(seen.headers['x-custom']);
  t.equal(seen.body, SEND, 'the caller\'s body bytes');
  script = json(200, TASK);
  t.equal((await call('GET', '/acme/tasks/t%201?historyLength=2&A2A-Version=1.0', undefined, { 'a2a-version': '' })).status, 200);
  t.equal(received.at(-1)!.url, '/api/acme/tasks/t%201?historyLength=2', 'tenant and id in the path, the query typed, the version as a header');
  t.equal(received.at(-1)!.headers['a2a-version'], '1.0', 'A2A-Version from the query parameter');
});

const cases: [string, Handler, number, string, RegExp?][] = [
  ['an HTML 500 on message:send', json(500, '<html><body><h1>Internal Server Error</h1><script>x</script></body></html>', 'text/html'), 502, 'UPSTREAM_HTTP_ERROR'],
  ['a 404 page with a stack trace', json(404, 'Error: not found\n    at Object.<anonymous> (/srv/app/index.js:10:5)\n    at Module._compile', 'text/plain'), 502, 'UPSTREAM_HTTP_ERROR'],
  // Without an A2A ErrorInfo a remote's status alone names no A2A error: -32603, answered 500 (status-map.ts).
  ['a Status body with extra members', json(404, '{"error":{"code":404,"status":"NOT_FOUND","message":"no such task","stack":"at x"},"debug":"secret-internal"}'), 500, 'REMOTE_ERROR', /^no such task$/],
  ['a Status body without a message', json(409, '{"error":{"code":409,"status":"FAILED_PRECONDITION"}}'), 500, 'REMOTE_ERROR', /^Internal error$/],
  ['a problem+json body', json(400, '{"type":"https://a2a-protocol.org/errors/version-not-supported","title":"Version not supported","status":400,"detail":"use 1.0","instance":"/x"}', 'application/problem+json'), 400, 'REMOTE_ERROR'],
  ['a list body on success', json(200, '[{"task":{}}]'), 502, 'INVALID_RESPONSE_MESSAGE'],
  ['a success status around an error body', json(200, '{"error":{"code":500,"message":"oops"}}'), 502, 'INVALID_RESPONSE_MESSAGE'],
  ['a member twice at the top', json(200, `{"task":${TASK},"task":{"id":"other"}}`), 502, 'INVALID_RESPONSE_MESSAGE'],
  ['non-JSON success', json(200, 'OK'), 502, 'NON_JSON_RESPONSE'],
  ['an echoed credential in a member name', json(200, '{"sekrit-key-0123456789":1}'), 502, 'CREDENTIAL_ECHOED'],
];
for (const [name, handler, status, reason, message] of cases) {
  t.test(`${name} → ${status} ${reason}`, async (t) => {
    script = handler;
    const r = await call('POST', '/message:send', SEND);
    t.equal(r.status, status, r.text);
    t.match(r.contentType, /^application\/json/);
    t.equal(gatewayReason(r), reason);
    t.ok(r.error.message.length > 0 && r.error.message.length <= 1024, 'a bounded message');
    if (message) t.match(r.error.message, message);
    t.notMatch(r.text, /<html|<script|at Object|index\.js|secret-internal|"stack"|"debug"|instance|sekrit/, 'nothing of the remote\'s page, trace or extra members');
    t.same(Object.keys(JSON.parse(r.text) as object), ['error']);
  });
}

t.test('a credential in a result string is redacted', async (t) => {
  script = json(200, '{"message":{"messageId":"a","role":"ROLE_AGENT","parts":[{"text":"key is sekrit-key-0123456789"}]}}');
  const r = await call('POST', '/message:send', SEND);
  t.equal(r.status, 200);
  t.notMatch(r.text, /sekrit/);
  t.match(r.text, /\[redacted\]/);
});

const sse = (events: string): Handler => (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(events);
};

t.test('message:stream: a broken event ends the stream with one typed error event', async (t) => {
  script = sse(`data: {"task":${TASK}}\n\ndata: {not json\n\ndata: {"task":${TASK}}\n\n`);
  const r = await call('POST', '/message:stream', SEND);
  t.equal(r.status, 200);
  t.match(r.contentType, /^text\/event-stream/);
  const events = r.text.split('\n\n').filter((e) => e !== '');
  t.equal(events.length, 2, 'the good event, then the error; nothing after it');
  t.equal(events[0], `data: {"task":${TASK}}`);
  t.match(events[1], /^event: error\ndata: \{"error":\{"code":502,"status":"INTERNAL"/);
  t.match(events[1], /"reason":"INVALID_EVENT"/);
});

t.test('message:stream answered with a JSON error: a plain Status reply, not a stream', async (t) => {
  script = json(404, '{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}');
  const r = await call('POST', '/tasks/t1:subscribe');
  t.equal(r.status, 404);
  t.equal(r.error.details[0]!.reason, 'TASK_NOT_FOUND');
  script = json(200, `[{"task":${TASK}}]`);
  const asJson = await call('POST', '/message:stream', SEND);
  t.equal(asJson.status, 502);
  t.equal(gatewayReason(asJson), 'NOT_AN_EVENT_STREAM', 'a 2xx JSON body that is no StreamResponse');
  t.equal(asJson.error.details.find((d) => d.domain === 'a2a-egress')?.metadata?.cause, 'INVALID_RESPONSE_MESSAGE');
  script = json(200, '<html>fine</html>', 'text/html');
  const html = await call('POST', '/message:stream', SEND);
  t.equal(gatewayReason(html), 'NOT_AN_EVENT_STREAM', 'an HTML 200 where a stream was asked');
  t.notMatch(html.text, /html|fine/);
});

t.test('message:stream answered with a single JSON result: REST callers get a stream of that one event, JSON-RPC callers its envelope', async (t) => {
  script = json(200, `{"task":${TASK}}`);
  const r = await call('POST', '/message:stream', SEND);
  t.equal(r.status, 200);
  t.match(r.contentType, /^text\/event-stream/);
  t.equal(r.text, `data: {"task":${TASK}}\n\n`, 'one event, the remote\'s bytes, then the end');
  const rpcReply = await rpc(`${base}/`, rpcRequest('SendStreamingMessage', 's1', JSON.parse(SEND)), { 'a2a-version': '1.0' });
  t.same(rpcReply.json.result, JSON.parse(`{"task":${TASK}}`), 'a JSON-RPC caller gets the one result envelope, as from a JSON-RPC remote');
  t.equal(rpcReply.json.id, 's1');
  // Before the stream as well as in it, an echoed credential does not pass.
  script = json(200, '{"message":{"messageId":"a","role":"ROLE_AGENT","parts":[{"text":"key sekrit-key-0123456789"}]}}');
  const echoed = await call('POST', '/message:stream', SEND);
  t.equal(echoed.status, 200);
  t.notMatch(echoed.text, /sekrit/);
  t.match(echoed.text, /\[redacted\]/);
  script = json(404, '{"error":{"code":404,"status":"NOT_FOUND","message":"no task for sekrit-key-0123456789"}}');
  const error = await call('POST', '/tasks/t1:subscribe');
  t.equal(error.status, 500);
  t.notMatch(error.text, /sekrit/, 'a remote error before the stream is redacted');
});

t.test('maxResponseBytes: just under passes, just over is RESPONSE_TOO_LARGE', async (t) => {
  const sized = (n: number) => {
    const head = '{"message":{"messageId":"a","role":"ROLE_AGENT","parts":[{"text":"';
    const tail = '"}]}}';
    return head + 'x'.repeat(n - head.length - tail.length) + tail;
  };
  script = json(200, sized(MAX_RESPONSE));
  t.equal((await call('POST', '/message:send', SEND)).status, 200);
  script = json(200, sized(MAX_RESPONSE + 1));
  const over = await call('POST', '/message:send', SEND);
  t.equal(over.status, 502);
  t.equal(gatewayReason(over), 'RESPONSE_TOO_LARGE');
});

t.test('maxEventBytes: just under passes, just over ends the stream with EVENT_TOO_LARGE', async (t) => {
  const event = (n: number) => {
    const head = 'data: {"message":{"messageId":"a","role":"ROLE_AGENT","parts":[{"text":"';
    const tail = '"}]}}';
    return head + 'x'.repeat(n - head.length - tail.length) + tail + '\n\n';
  };
  // The bound counts the event's line bytes as the SSE parser holds them (without the blank line).
  script = sse(event(MAX_EVENT - 64));
  const under = await call('POST', '/message:stream', SEND);
  t.notMatch(under.text, /event: error/);
  script = sse(event(MAX_EVENT + 64));
  const over = await call('POST', '/message:stream', SEND);
  t.match(over.text, /"reason":"EVENT_TOO_LARGE"/);
});

t.test('maxRequestBytes: a caller body just under goes upstream, just over is 413', async (t) => {
  script = json(200, `{"task":${TASK}}`);
  const sized = (n: number) => {
    const head = '{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"';
    const tail = '"}]}}';
    return head + 'x'.repeat(n - head.length - tail.length) + tail;
  };
  t.equal((await call('POST', '/message:send', sized(MAX_REQUEST))).status, 200);
  const before = received.length;
  const over = await call('POST', '/message:send', sized(MAX_REQUEST + 1));
  t.equal(over.status, 413);
  t.equal(gatewayReason(over), 'REQUEST_TOO_LARGE');
  t.equal(received.length, before, 'nothing went upstream');
});

t.test('bad caller requests get the binding\'s own error shape, before anything goes upstream', async (t) => {
  const before = received.length;
  const dup = await call('POST', '/message:send', '{"message":{"messageId":"m","messageId":"n","role":"ROLE_USER","parts":[]}}');
  t.equal(dup.status, 400);
  t.equal(gatewayReason(dup), 'INVALID_PARAMS');
  const verb = await call('DELETE', '/message:send');
  t.equal(verb.status, 405);
  const unknown = await call('POST', '/tasks/x:explode', '{}');
  t.ok(unknown.status === 404 || unknown.status === 200, 'not an HTTP+JSON path: the JSON-RPC route answers it');
  t.equal(received.length, before);
});

t.test('a JSON-RPC caller of the hostile REST remote gets JSON-RPC errors', async (t) => {
  script = json(500, '<html>boom</html>', 'text/html');
  const r = await rpc(`${base}/`, rpcRequest('SendMessage', 7, JSON.parse(SEND)), { 'a2a-version': '1.0' });
  t.equal(r.json.id, 7);
  t.equal(r.json.error?.code, -32006);
  t.notMatch(r.text, /<html|boom/);
  script = json(404, '{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}');
  const missing = await rpc(`${base}/`, rpcRequest('GetTask', 8, { id: 't1' }), { 'a2a-version': '1.0' });
  t.equal(missing.json.error?.code, -32001);
  t.equal(received.at(-1)!.url, '/api/tasks/t1');
});
