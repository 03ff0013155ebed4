/**
 * The unary call path end to end: a real gateway on 127.0.0.1 in front of a
 * real hostile upstream (test/support/hostile-upstream.ts), one case per
 * normalizer rule. Each test checks the caller gets exactly one valid
 * envelope with its own id and none of the remote's marker bytes.
 */
import t, { type Test } from 'tap';
import { LEAK_MARKERS } from '../support/hostile-cases.js';
import { startHostileUpstream, type HostileUpstream } from '../support/hostile-upstream.js';
import { gatewayInfoOf, reasonOf, rpc, rpcRequest, startGateway, type RpcReply, type RunningGateway } from '../support/gateway.js';

const MAX_RESPONSE = 65_536;
const MAX_REQUEST = 4_096;

let upstream: HostileUpstream;
let gw: RunningGateway;

t.before(async () => {
  upstream = await startHostileUpstream();
  gw = await startGateway(`
remotes:
  hostile:
    url: ${upstream.url}/
    allowPrivateNetwork: true
    timeouts: { totalMs: 1500, headersMs: 1000, connectMs: 1000 }
    limits: { maxResponseBytes: ${MAX_RESPONSE}, maxRequestBytes: ${MAX_REQUEST}, maxErrorMessageBytes: 120 }
    retries: { attempts: 1 }
    # Most cases here are failures on purpose; the breaker has its own tests.
    circuitBreaker: { failureThreshold: 10000 }
  forwarding:
    url: ${upstream.url}/
    allowPrivateNetwork: true
    forwardHeaders: [authorization, cookie]
  narrow:
    url: ${upstream.url}/
    allowPrivateNetwork: true
    methods: [GetTask]
  guarded:
    url: ${upstream.url}/
`);
});
t.teardown(async () => {
  await gw.close();
  await upstream.close();
});

const call = (path: string, id: string | number | null = 'caller-1', method = 'SendMessage') =>
  rpc(`${gw.url}/remotes/${path}`, rpcRequest(method, id, { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } }));

/** Every reply the gateway sends: HTTP 200 JSON, the caller's id, exactly one of result/error, no leaked markers. */
function assertEnvelope(t: Test, reply: RpcReply, id: unknown): void {
  t.equal(reply.status, 200, 'HTTP 200');
  t.match(String(reply.headers['content-type']), /^application\/json/, 'gateway content-type');
  t.equal(reply.json.jsonrpc, '2.0');
  t.same(reply.json.id, id, 'caller id');
  t.equal(Object.hasOwn(reply.json, 'result') !== Object.hasOwn(reply.json, 'error'), true, 'exactly one of result/error');
  for (const marker of Object.values(LEAK_MARKERS)) t.notOk(reply.text.includes(marker), `no ${marker}`);
  if (reply.json.error) {
    const info = gatewayInfoOf(reply) as unknown as Record<string, unknown>;
    t.equal(info['@type'], 'type.googleapis.com/google.rpc.ErrorInfo');
    t.equal(info.domain, 'a2a-egress');
    t.ok(Buffer.byteLength(reply.json.error.message) <= 200, 'bounded message');
    t.notMatch(reply.json.error.message, /[\p{Cc}\p{Cf}]/u, 'no control or format characters');
  }
}

t.test('well-behaved remote: result passes, id replaced by the caller’s', async (t) => {
  const reply = await call('hostile/ok/wrongId=1', 42);
  assertEnvelope(t, reply, 42);
  t.ok(reply.json.result, 'has result');
});

for (const [name, path, reason, status] of [
  ['HTML 502 page', 'html-502', 'UPSTREAM_HTTP_ERROR', '502'],
  ['HTML login page with 200', 'html-login-200', 'NON_JSON_RESPONSE', '200'],
  ['8 KiB of garbage', 'garbage-8k', 'NON_JSON_RESPONSE', '200'],
  ['empty 401', 'empty-401', 'UPSTREAM_HTTP_ERROR', '401'],
  ['text stack trace with 500', 'text-500', 'UPSTREAM_HTTP_ERROR', '500'],
  ['302 redirect to the metadata address', 'redirect', 'UPSTREAM_HTTP_ERROR', '302'],
] as const) {
  t.test(`non-JSON: ${name} → ${reason}, HTTP status only`, async (t) => {
    const reply = await call(`hostile/${path}`);
    assertEnvelope(t, reply, 'caller-1');
    t.equal(reply.json.error?.code, -32006);
    t.equal(reasonOf(reply), reason);
    t.equal(gatewayInfoOf(reply)?.metadata.httpStatus, status);
    t.notOk(reply.headers.location, 'no Location header');
    t.notMatch(reply.text, /nginx|<html|TCPConnectWrap|169\.254/i, 'no body bytes');
  });
}

t.test('typed error with extra members keeps the code, drops the extras', async (t) => {
  const reply = await call('hostile/error-extra');
  assertEnvelope(t, reply, 'caller-1');
  t.equal(reply.json.error?.code, -32001);
  t.equal(reply.json.error?.message, 'Task not found');
  t.equal(reasonOf(reply), 'REMOTE_ERROR');
  t.notMatch(reply.text, /row missing|stack/, 'extra members gone');
});

t.test('typed error without message gets the standard name', async (t) => {
  const reply = await call('hostile/error-no-message');
  assertEnvelope(t, reply, 'caller-1');
  t.equal(reply.json.error?.code, -32001);
  t.equal(reply.json.error?.message, 'Task not found');
});

t.test('"error": "boom" with control and bidi characters → sanitized text', async (t) => {
  const reply = await call('hostile/error-string');
  assertEnvelope(t, reply, 'caller-1');
  t.equal(reply.json.error?.code, -32603);
  t.match(reply.json.error?.message, /^boom/);
});

for (const [path, detail] of [
  ['body-array', 'body is an array'],
  ['body-string', 'body is a string'],
  ['body-number', 'body is a number'],
  ['body-null', 'body is null'],
  ['no-result-no-error', 'neither "result" nor "error"'],
  ['error-null', '"error" is null and there is no "result"'],
  ['error-number', 'neither an object nor a string'],
  ['duplicate-result', 'duplicate "result"'],
] as const) {
  t.test(`malformed envelope: ${path} → INVALID_RESPONSE saying what was wrong`, async (t) => {
    const reply = await call(`hostile/${path}`);
    assertEnvelope(t, reply, 'caller-1');
    t.equal(reply.json.error?.code, -32006);
    t.equal(reasonOf(reply), 'INVALID_RESPONSE');
    t.ok(reply.json.error?.message.includes(detail), reply.json.error?.message ?? 'no message');
  });
}

t.test('falsy error beside a result is a success', async (t) => {
  const reply = await call('hostile/falsy-error-with-result');
  assertEnvelope(t, reply, 'caller-1');
  t.ok(reply.json.result);
});

for (const id of ['s-id', 7, null] as const) {
  t.test(`caller id ${JSON.stringify(id)} is echoed exactly`, async (t) => {
    assertEnvelope(t, await call('hostile/ok/wrongId=1', id), id);
  });
}

t.test('Set-Cookie, Server and X-Powered-By are dropped; A2A headers pass', async (t) => {
  const reply = await call('hostile/set-cookie');
  assertEnvelope(t, reply, 'caller-1');
  t.notOk(reply.headers['set-cookie']);
  t.notOk(reply.headers['x-powered-by']);
  t.notOk(reply.headers.server);
  t.equal(reply.headers['a2a-version'], '1.0');
  t.equal(reply.headers['a2a-extensions'], 'https://example.com/ext/hostile/v1');
});

t.test('response exactly at maxResponseBytes passes', async (t) => {
  const reply = await call(`hostile/big-body/bytes=${MAX_RESPONSE}`);
  assertEnvelope(t, reply, 'caller-1');
  t.ok(reply.json.result);
});

t.test('response one byte over maxResponseBytes → RESPONSE_TOO_LARGE', async (t) => {
  const reply = await call(`hostile/big-body/bytes=${MAX_RESPONSE + 1}`);
  assertEnvelope(t, reply, 'caller-1');
  t.equal(reasonOf(reply), 'RESPONSE_TOO_LARGE');
});

t.test('a body that never ends is cut at the cap and its connection closed', async (t) => {
  const before = upstream.openConnections();
  const reply = await call('hostile/endless');
  assertEnvelope(t, reply, 'caller-1');
  t.equal(reasonOf(reply), 'RESPONSE_TOO_LARGE');
  await waitFor(() => upstream.openConnections() <= before);
  t.ok(upstream.openConnections() <= before, 'upstream socket closed');
});

t.test('gzip bomb: the cap applies to decoded bytes', async (t) => {
  const reply = await call(`hostile/gzip-bomb/decoded=${100 * 1024 * 1024}`);
  assertEnvelope(t, reply, 'caller-1');
  t.equal(reasonOf(reply), 'RESPONSE_TOO_LARGE');
});

for (const path of ['gzip-ok', 'br-ok', 'deflate-ok']) {
  t.test(`${path}: compressed body decoded and normalized`, async (t) => {
    const reply = await call(`hostile/${path}`);
    assertEnvelope(t, reply, 'caller-1');
    t.ok(reply.json.result);
  });
}

for (const [path, reason] of [
  ['unknown-encoding', 'UNSUPPORTED_ENCODING'],
  ['invalid-utf8', 'INVALID_UTF8'],
  ['proto', 'UNSAFE_JSON'],
  ['deep/depth=65', 'JSON_TOO_DEEP'],
  ['truncated', 'TRUNCATED_RESPONSE'],
  ['reset-mid-body', 'TRUNCATED_RESPONSE'],
  ['close-no-bytes', 'UPSTREAM_RESET'],
  ['slow-headers/ms=2500', 'UPSTREAM_TIMEOUT'],
  ['slow-body/ms=2500', 'UPSTREAM_TIMEOUT'],
] as const) {
  t.test(`${path} → ${reason}`, async (t) => {
    const reply = await call(`hostile/${path}`);
    assertEnvelope(t, reply, 'caller-1');
    t.equal(reasonOf(reply), reason);
  });
}

t.test('nesting exactly at maxJsonDepth (64) passes', async (t) => {
  const reply = await call('hostile/deep/depth=64');
  assertEnvelope(t, reply, 'caller-1');
  t.ok(Object.hasOwn(reply.json, 'result'));
});

t.test('refused connection → UPSTREAM_REFUSED with no address in the text', async (t) => {
  const closed = await startGateway(`
remotes:
  down: { url: 'http://127.0.0.1:9/a2a', allowPrivateNetwork: true, retries: { attempts: 1 } }
`);
  t.teardown(() => closed.close());
  const reply = await rpc(`${closed.url}/remotes/down`, rpcRequest('GetTask', 'r1'));
  assertEnvelope(t, reply, 'r1');
  t.equal(reasonOf(reply), 'UPSTREAM_REFUSED');
  t.notMatch(reply.text, /127\.0\.0\.1|ECONNREFUSED/);
});

t.test('DNS failure → UPSTREAM_DNS_FAILURE', async (t) => {
  const dns = await startGateway(
    `remotes:\n  nxdomain: { url: 'http://agent.example.test/a2a', retries: { attempts: 1 } }\n`,
    {
      pool: {
        resolver: (_host, _opts, cb) => cb(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }), ''),
      },
    },
  );
  t.teardown(() => dns.close());
  const reply = await rpc(`${dns.url}/remotes/nxdomain`, rpcRequest('GetTask', 'd1'));
  assertEnvelope(t, reply, 'd1');
  t.equal(reasonOf(reply), 'UPSTREAM_DNS_FAILURE');
});

// --- what the gateway sends upstream ---

t.test('caller Authorization and Cookie are not forwarded by default; A2A and trace headers are', async (t) => {
  const reply = await rpc(`${gw.url}/remotes/hostile/echo-headers`, rpcRequest('SendMessage', 'h1'), {
    authorization: 'Bearer caller-secret',
    cookie: 'sid=caller-cookie',
    'a2a-version': '1.0',
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    'x-forwarded-for': '10.1.2.3',
    'x-request-id': 'req-abc-1',
  });
  assertEnvelope(t, reply, 'h1');
  const seen = upstream.requests.at(-1)!.headers;
  t.notOk(seen.authorization);
  t.notOk(seen.cookie);
  t.notOk(seen['x-forwarded-for']);
  t.equal(seen['a2a-version'], '1.0');
  t.equal(seen.traceparent, '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
  t.equal(seen['x-request-id'], 'req-abc-1');
  t.equal(reply.headers['x-request-id'], 'req-abc-1');
});

t.test('forwardHeaders lets a remote receive the caller’s Authorization and Cookie', async (t) => {
  await rpc(`${gw.url}/remotes/forwarding/echo-headers`, rpcRequest('SendMessage', 'h2'), {
    authorization: 'Bearer caller-secret',
    cookie: 'sid=caller-cookie',
  });
  const seen = upstream.requests.at(-1)!.headers;
  t.equal(seen.authorization, 'Bearer caller-secret');
  t.equal(seen.cookie, 'sid=caller-cookie');
});

t.test('the caller’s raw request bytes are forwarded unchanged', async (t) => {
  const body = '{"jsonrpc":"2.0","method":"SendMessage","id":"raw-1","params":{"n":1.50,"s":"\\u00e9"}}';
  await rpc(`${gw.url}/remotes/hostile/ok`, body);
  t.equal(upstream.requests.at(-1)!.body, body);
});

// --- the caller's request ---

t.test('caller body that is not JSON → -32700', async (t) => {
  const reply = await rpc(`${gw.url}/remotes/hostile/ok`, '{"jsonrpc":');
  assertEnvelope(t, reply, null);
  t.equal(reply.json.error?.code, -32700);
});

t.test('a JSON-RPC batch is refused', async (t) => {
  const reply = await rpc(`${gw.url}/remotes/hostile/ok`, [rpcRequest('GetTask', 1)]);
  assertEnvelope(t, reply, null);
  t.equal(reasonOf(reply), 'BATCH_NOT_SUPPORTED');
});

for (const [name, body, id] of [
  ['no jsonrpc member', { id: 5, method: 'GetTask' }, 5],
  ['a fractional id', { jsonrpc: '2.0', id: 1.5, method: 'GetTask' }, null],
  ['an id past 2^53', { jsonrpc: '2.0', id: 2 ** 53 + 2, method: 'GetTask' }, null],
  ['method not a string', { jsonrpc: '2.0', id: 'm', method: 7 }, 'm'],
  ['params a string', { jsonrpc: '2.0', id: 'p', method: 'GetTask', params: 'x' }, 'p'],
  ['a bare string', 'just text in quotes', null],
] as const) {
  t.test(`invalid request: ${name} → -32600`, async (t) => {
    const reply = await rpc(`${gw.url}/remotes/hostile/ok`, typeof body === 'string' ? JSON.stringify(body) : body);
    assertEnvelope(t, reply, id);
    t.equal(reply.json.error?.code, -32600);
  });
}

t.test('a request without an id (A2A has no notifications) is forwarded unchanged and answered with id null', async (t) => {
  const body = JSON.stringify({ jsonrpc: '2.0', method: 'GetTask', params: { id: 't1' } });
  const reply = await rpc(`${gw.url}/remotes/hostile/ok`, body);
  assertEnvelope(t, reply, null);
  t.ok(reply.json.result, 'the remote\'s answer passes');
  t.equal(upstream.requests.at(-1)!.body, body, 'the remote received the caller\'s bytes, still without an id');
  const count = upstream.requests.length;
  const unknown = await rpc(`${gw.url}/remotes/hostile/ok`, { jsonrpc: '2.0', method: 'message/ssend', params: {} });
  assertEnvelope(t, unknown, null);
  t.equal(unknown.json.error?.code, -32601, 'an unknown method is -32601 (as the SDK server answers), not -32600');
  t.equal(upstream.requests.length, count);
});

// A2A 0.3 §3.2.1 and 1.0 §9.1: JSON-RPC requests are application/json; the SDK servers answer -32005 otherwise.
for (const [contentType, accepted] of [
  ['application/json', true],
  ['application/json; charset=utf-8', true],
  ['Application/JSON ;charset=UTF-8', true],
  [undefined, true],
  ['text/plain', false],
  ['text/plain;charset=UTF-8', false],
  ['application/a2a+json', false],
  ['application/x-www-form-urlencoded', false],
  ['application/jsonx', false],
] as const) {
  t.test(`Content-Type ${contentType ?? '(none)'} is ${accepted ? 'accepted' : 'refused with -32005, nothing sent'}`, async (t) => {
    const count = upstream.requests.length;
    const { request } = await import('undici');
    const res = await request(`${gw.url}/remotes/hostile/ok`, {
      method: 'POST',
      body: JSON.stringify(rpcRequest('GetTask', 'ct1', { id: 't1' })),
      headers: { 'a2a-version': '1.0', ...(contentType ? { 'content-type': contentType } : {}) },
    });
    const reply: RpcReply = { status: res.statusCode, headers: res.headers, text: await res.body.text(), json: {} as RpcReply['json'] };
    Object.assign(reply, { json: JSON.parse(reply.text) });
    if (accepted) {
      assertEnvelope(t, reply, 'ct1');
      t.ok(reply.json.result);
      t.equal(upstream.requests.length, count + 1);
      return;
    }
    assertEnvelope(t, reply, null);
    t.equal(reply.json.error?.code, -32005);
    t.equal(reasonOf(reply), 'UNSUPPORTED_CONTENT_TYPE');
    t.match(reply.json.error?.data[0], { reason: 'CONTENT_TYPE_NOT_SUPPORTED', domain: 'a2a-protocol.org' }, 'A2A\'s ErrorInfo first');
    t.equal(upstream.requests.length, count, 'nothing reached the remote');
  });
}

t.test('Content-Type text/plain with a body that is not JSON: -32005, as the SDK server answers (not -32700)', async (t) => {
  const { request } = await import('undici');
  const res = await request(`${gw.url}/remotes/hostile/ok`, { method: 'POST', body: "{'jsonrpc': '2.0', 'id': 1}", headers: { 'content-type': 'text/plain' } });
  const json = (await res.body.json()) as { id: unknown; error: { code: number; data: unknown[] } };
  t.equal(json.error.code, -32005);
  t.equal(json.id, null);
  t.equal(json.error.data.length, 1, 'no A2A-Version header: a 0.3 caller gets the gateway\'s ErrorInfo alone');
});

function paddedRequest(totalBytes: number): string {
  const empty = JSON.stringify({ jsonrpc: '2.0', id: 'big', method: 'SendMessage', params: { pad: '' } });
  return JSON.stringify({ jsonrpc: '2.0', id: 'big', method: 'SendMessage', params: { pad: 'x'.repeat(totalBytes - empty.length) } });
}

t.test('request exactly at maxRequestBytes is forwarded', async (t) => {
  const body = paddedRequest(MAX_REQUEST);
  t.equal(Buffer.byteLength(body), MAX_REQUEST);
  const reply = await rpc(`${gw.url}/remotes/hostile/ok`, body);
  assertEnvelope(t, reply, 'big');
  t.ok(reply.json.result);
});

t.test('request one byte over maxRequestBytes → REQUEST_TOO_LARGE, not forwarded', async (t) => {
  const count = upstream.requests.length;
  const reply = await rpc(`${gw.url}/remotes/hostile/ok`, paddedRequest(MAX_REQUEST + 1));
  assertEnvelope(t, reply, null);
  t.equal(reasonOf(reply), 'REQUEST_TOO_LARGE');
  t.equal(upstream.requests.length, count, 'nothing reached the remote');
});

t.test('unknown remote → UNKNOWN_REMOTE, never an open proxy', async (t) => {
  const count = upstream.requests.length;
  const reply = await rpc(`${gw.url}/remotes/nope`, rpcRequest('GetTask', 'u1'));
  assertEnvelope(t, reply, 'u1');
  t.equal(reasonOf(reply), 'UNKNOWN_REMOTE');
  t.equal(upstream.requests.length, count);
});

t.test('a method that is not A2A → -32601, not forwarded', async (t) => {
  const count = upstream.requests.length;
  const reply = await rpc(`${gw.url}/remotes/hostile/ok`, rpcRequest('system.exec', 'x1'));
  assertEnvelope(t, reply, 'x1');
  t.equal(reply.json.error?.code, -32601);
  t.equal(upstream.requests.length, count);
});

t.test('a method outside the remote’s allowlist → -32601; an allowed one passes', async (t) => {
  const refused = await rpc(`${gw.url}/remotes/narrow/ok`, rpcRequest('SendMessage', 'n1'));
  t.equal(refused.json.error?.code, -32601);
  const allowed = await rpc(`${gw.url}/remotes/narrow/ok`, rpcRequest('GetTask', 'n2'));
  t.ok(allowed.json.result);
});

for (const path of ['hostile/../etc', 'hostile/%2e%2e/etc', 'hostile/a%2fb', 'hostile/a%5cb', 'hostile/http:%2f%2fevil.example']) {
  t.test(`path ${path} is refused before anything is sent`, async (t) => {
    const count = upstream.requests.length;
    // A raw request path: WHATWG URL parsing in a client would resolve `..` before sending.
    const { Client } = await import('undici');
    const client = new Client(gw.url);
    t.teardown(() => client.close());
    const res = await client.request({ path: `/remotes/${path}`, method: 'POST', body: JSON.stringify(rpcRequest('GetTask', 'p1')) });
    const text = await res.body.text();
    t.equal(res.statusCode, 200);
    t.match(text, /"reason":"INVALID_PATH"/);
    t.equal(upstream.requests.length, count);
  });
}

t.test('loopback remote without allowPrivateNetwork → EGRESS_DENIED, nothing sent', async (t) => {
  const count = upstream.requests.length;
  const reply = await rpc(`${gw.url}/remotes/guarded/ok`, rpcRequest('GetTask', 'g1'));
  assertEnvelope(t, reply, 'g1');
  t.equal(reasonOf(reply), 'EGRESS_DENIED');
  t.equal(upstream.requests.length, count);
});

t.test('DNS rebinding: a name resolving to 127.0.0.1 is refused at connect time', async (t) => {
  const rebinding = await startGateway(
    `remotes:\n  rebind: { url: 'http://agent.rebind.test:${upstream.port}/', retries: { attempts: 1 } }\n  trusted: { url: 'http://agent.rebind.test:${upstream.port}/', allowPrivateNetwork: true }\n`,
    { pool: { resolver: (_host, opts, cb) => (opts.all ? cb(null, [{ address: '127.0.0.1', family: 4 }]) : cb(null, '127.0.0.1', 4)) } },
  );
  t.teardown(() => rebinding.close());
  const count = upstream.requests.length;
  const denied = await rpc(`${rebinding.url}/remotes/rebind/ok`, rpcRequest('GetTask', 'rb1'));
  assertEnvelope(t, denied, 'rb1');
  t.equal(reasonOf(denied), 'EGRESS_DENIED');
  t.equal(upstream.requests.length, count, 'never connected');
  const allowed = await rpc(`${rebinding.url}/remotes/trusted/ok`, rpcRequest('GetTask', 'rb2'));
  t.ok(allowed.json.result, 'allowPrivateNetwork lets the same name through');
});

t.test('one log line per call with remote, method, status, outcome and bytes; no secrets', async (t) => {
  await rpc(`${gw.url}/remotes/hostile/html-502`, rpcRequest('GetTask', 'log-1'), { authorization: 'Bearer log-secret', 'x-request-id': 'log-req-1' });
  const line = gw.logs.find((l) => l.requestId === 'log-req-1' && l.msg === 'call') as { call: Record<string, unknown> } | undefined;
  t.ok(line, 'call line');
  t.match(line?.call, { remote: 'hostile', method: 'GetTask', upstreamStatus: 502, outcome: 'UPSTREAM_HTTP_ERROR' });
  t.ok(typeof line?.call.bytesOut === 'number' && typeof line?.call.bytesIn === 'number');
  t.notOk(JSON.stringify(gw.logs).includes('log-secret'), 'secret never logged');
  t.notOk(JSON.stringify(gw.logs).includes(LEAK_MARKERS.html), 'remote body never logged');
});

async function waitFor(check: () => boolean, ms = 2000): Promise<void> {
  const until = Date.now() + ms;
  while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
}
