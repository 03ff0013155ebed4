/**
 * The test upstreams themselves, exercised directly (no gateway): every
 * hostile case sends what its name claims, byte for byte, and the SDK
 * upstream serves a real @a2a-js/sdk client.
 */
import { isUtf8 } from 'node:buffer';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import t from 'tap';
import { LEAK_MARKERS, METADATA_URL, NASTY_CHARS } from '../support/hostile-cases.js';
import { OK_TEXT } from '../support/hostile-replies.js';
import { startHostileUpstream, type HostileUpstream } from '../support/hostile-upstream.js';
import { rawRequest, type RawReply } from '../support/servers.js';

const rpc = (id: unknown = 7): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'SendMessage', params: {} });

let up: HostileUpstream;
t.before(async () => {
  up = await startHostileUpstream();
});
t.teardown(() => up.close());

const post = (name: string, params?: Record<string, string | number>, id: unknown = 7): Promise<RawReply> =>
  rawRequest(up.caseUrl(name, params), { body: rpc(id) });
const json = (r: RawReply): any => JSON.parse(r.body.toString('utf8'));

/** Deepest container nesting of JSON text (strings skipped). */
function depthOf(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') max = Math.max(max, ++depth);
    else if (c === '}' || c === ']') depth--;
  }
  return max;
}

t.test('ok echoes the caller id (number and string) and carries 1 KiB of text', async (t) => {
  const r = await post('ok');
  t.equal(r.status, 200);
  t.equal(r.headers['content-type'], 'application/json');
  t.equal(Number(r.headers['content-length']), r.body.length);
  const body = json(r);
  t.equal(body.id, 7);
  t.equal(body.result.message.parts[0].text.length, 1024);
  t.equal(body.result.message.parts[0].text, OK_TEXT);
  t.equal(json(await post('ok', undefined, 'abc')).id, 'abc');
});

t.test('wrongId=1 replies with a different id of the same type', async (t) => {
  t.equal(json(await post('ok', { wrongId: 1 })).id, 1007);
  t.equal(json(await post('ok', { wrongId: 1 }, 'abc')).id, 'abc-wrong');
  t.equal(json(await post('error-extra', { wrongId: 1 })).id, 1007);
  t.equal(json(await rawRequest(up.caseUrl('ok'), { body: 'not json' })).id, null, 'unreadable request: id null');
});

t.test('status, content type and body of the simple cases', async (t) => {
  const cases: Array<[string, number, string | undefined, (r: RawReply) => void]> = [
    ['html-502', 502, 'text/html; charset=utf-8', (r) => t.match(r.body.toString(), /<h1>502 Bad Gateway<\/h1>/)],
    ['html-login-200', 200, 'text/html; charset=utf-8', (r) => t.match(r.body.toString(), /type="password"/)],
    ['garbage-8k', 200, 'application/json', (r) => t.equal(r.body.length, 8192)],
    ['empty-401', 401, undefined, (r) => t.equal(r.body.length, 0)],
    ['text-500', 500, 'text/plain', (r) => t.match(r.body.toString(), /\r\n    at .*\r\n/)],
    ['body-array', 200, 'application/json', (r) => t.equal(json(r)[0].id, 7)],
    ['body-string', 200, 'application/json', (r) => t.type(json(r), 'string')],
    ['body-number', 200, 'application/json', (r) => t.equal(json(r), 42)],
    ['body-null', 200, 'application/json', (r) => t.equal(json(r), null)],
    ['no-result-no-error', 200, 'application/json', (r) => t.same(json(r), { jsonrpc: '2.0', id: 7 })],
    ['error-null', 200, 'application/json', (r) => t.equal(json(r).error, null)],
    ['error-number', 200, 'application/json', (r) => t.equal(json(r).error, 500)],
  ];
  for (const [name, status, type, check] of cases) {
    const r = await post(name);
    t.equal(r.status, status, `${name} status`);
    t.equal(r.headers['content-type'], type, `${name} content-type`);
    check(r);
  }
});

t.test('error cases: extra members, missing message, string error, falsy error beside a result, typed codes', async (t) => {
  const extra = json(await post('error-extra')).error;
  t.equal(extra.code, -32001);
  t.ok(extra.reason && extra.stack.includes(LEAK_MARKERS.stack));
  t.same(json(await post('error-no-message')).error, { code: -32001 });
  t.equal(json(await post('error-string')).error, `boom${NASTY_CHARS}`);
  const falsy = json(await post('falsy-error-with-result'));
  t.equal(falsy.error, false);
  t.ok(falsy.result.message);
  for (const code of [-32006, -32603, 1]) {
    const e = json(await post('error-code', { code })).error;
    t.equal(e.code, code);
    t.equal(e.data[0]['@type'], 'type.googleapis.com/google.rpc.ErrorInfo');
  }
});

t.test('text-500 carries a secret marker and raw CR/LF', async (t) => {
  const text = (await post('text-500')).body.toString();
  t.ok(text.includes(LEAK_MARKERS.stack));
  t.ok(text.includes('\r\n') && text.includes('\u001b['));
});

t.test('set-cookie sends a valid result plus headers a gateway must not pass on', async (t) => {
  const r = await post('set-cookie');
  t.equal(json(r).id, 7);
  t.match(r.headers['set-cookie']?.[0], LEAK_MARKERS.cookie);
  t.equal(r.headers['set-cookie']?.length, 2);
  t.equal(r.headers.server, 'hostile-upstream/6.6.6');
  t.equal(r.headers['x-powered-by'], 'PHP/5.2.17');
  t.equal(r.headers['a2a-version'], '1.0');
  t.equal(r.headers['a2a-extensions'], 'https://example.com/ext/hostile/v1');
});

t.test('big-body is exactly N bytes of valid JSON-RPC, for small and large N', async (t) => {
  const min = Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', id: 7, result: JSON.parse('{"message":{"messageId":"hostile-msg-1","contextId":"hostile-ctx-1","role":"ROLE_AGENT","parts":[{"text":""}]}}') }));
  for (const n of [min, min + 1, 4095, 4096, 4097, 1024 * 1024]) {
    const r = await post('big-body', { bytes: n });
    t.equal(r.body.length, n, `bytes=${n}`);
    t.equal(Number(r.headers['content-length']), n);
    t.equal(json(r).id, 7);
  }
  t.equal((await post('big-body', { bytes: min - 1 })).status, 400, 'just under the smallest possible body: refused');
  t.equal((await post('big-body', { bytes: 'lots' })).status, 500, 'a bad parameter fails loudly');
});

t.test('gzip-bomb is small on the wire and decodes to exactly N bytes of valid JSON', async (t) => {
  const decoded = 8 * 1024 * 1024;
  const r = await post('gzip-bomb', { decoded });
  t.equal(r.headers['content-encoding'], 'gzip');
  t.ok(r.body.length < decoded / 500, `wire ${r.body.length} bytes`);
  const plain = gunzipSync(r.body);
  t.equal(plain.length, decoded);
  t.equal(JSON.parse(plain.toString()).result.message.parts[0].text, 'bomb');
  const small = gunzipSync((await post('gzip-bomb', { decoded: 200 })).body);
  t.equal(small.length, 200, 'just above the smallest size');
});

t.test('encoded replies: gzip, br, deflate decode to ok; x-custom is plain JSON under an unknown label', async (t) => {
  const decoders: Record<string, (b: Buffer) => Buffer> = { 'gzip-ok': gunzipSync, 'br-ok': brotliDecompressSync, 'deflate-ok': inflateSync };
  for (const [name, decode] of Object.entries(decoders)) {
    const r = await post(name);
    t.equal(JSON.parse(decode(r.body).toString()).result.message.parts[0].text, OK_TEXT, name);
  }
  const custom = await post('unknown-encoding');
  t.equal(custom.headers['content-encoding'], 'x-custom');
  t.equal(json(custom).id, 7);
});

t.test('invalid-utf8, proto, duplicate-result, deep', async (t) => {
  const bad = await post('invalid-utf8');
  t.notOk(isUtf8(bad.body));
  t.ok(bad.body.includes(Buffer.from([0xff, 0xfe])));
  const proto = await post('proto');
  t.ok(proto.body.toString().includes('"__proto__":{"polluted":true}'));
  t.ok(Object.hasOwn(json(proto).result, '__proto__'), 'JSON.parse makes it an own member');
  const dup = (await post('duplicate-result')).body.toString();
  t.equal(dup.match(/"result":/g)?.length, 2);
  for (const depth of [2, 64, 65, 1000]) {
    const r = await post('deep', { depth });
    t.equal(depthOf(r.body.toString()), depth, `depth=${depth}`);
  }
  t.equal((await post('deep', { depth: 1 })).status, 500, 'depth below 2 is a test bug');
});

t.test('echo-headers lists what the upstream received; requests are recorded', async (t) => {
  const before = up.requests.length;
  const r = await rawRequest(up.caseUrl('echo-headers'), { body: rpc(), headers: { 'x-test-probe': 'p1', authorization: 'Bearer t' } });
  const headers = json(r).result.message.parts[0].data.headers;
  t.equal(headers['x-test-probe'], 'p1');
  const seen = up.requests[before];
  t.equal(seen?.method, 'POST');
  t.equal(seen?.url, '/echo-headers');
  t.equal(seen?.headers.authorization, 'Bearer t');
  t.equal(seen?.body, rpc());
});

t.test('slow-headers and slow-body wait as told', async (t) => {
  const h = await post('slow-headers', { ms: 300 });
  t.ok(h.headersAfterMs >= 280, `headers after ${h.headersAfterMs.toFixed(0)} ms`);
  t.equal(json(h).id, 7);
  const started = performance.now();
  const b = await post('slow-body', { ms: 300 });
  t.ok(b.headersAfterMs < 200, `headers first (${b.headersAfterMs.toFixed(0)} ms)`);
  t.ok(performance.now() - started >= 280, 'body later');
  t.equal(json(b).id, 7);
});

t.test('truncated, reset-mid-body and close-no-bytes break the transfer as named', async (t) => {
  const tr = await post('truncated');
  t.equal(tr.headers['content-length'], '1000');
  t.equal(tr.body.length, 100);
  t.equal(tr.complete, false);
  const reset = await post('reset-mid-body');
  t.equal(reset.complete, false);
  t.ok(reset.body.length > 0 && reset.body.length <= 600, `${reset.body.length} bytes before the reset`);
  await t.rejects(post('close-no-bytes'), { message: /socket hang up/ });
});

t.test('redirect points at the metadata address; redirect-loopback keeps method and body', async (t) => {
  const r = await post('redirect');
  t.equal(r.status, 302);
  t.equal(r.headers.location, METADATA_URL);
  const l = await post('redirect-loopback');
  t.equal(l.status, 307);
  t.equal(l.headers.location, `${up.url}/ok`);
});

t.test('endless: a caller that stops after 1 MiB leaves no open connection behind', async (t) => {
  const r = await rawRequest(up.caseUrl('endless'), { body: rpc(), maxBytes: 1024 * 1024 });
  t.equal(r.endedBy, 'maxBytes');
  t.ok(r.body.subarray(0, 40).toString().startsWith('{"jsonrpc":"2.0","id":7'));
  const deadline = Date.now() + 1000;
  while (up.openConnections() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.equal(up.openConnections(), 0);
});

t.test('connections are counted', async (t) => {
  const before = up.totalConnections();
  await post('ok');
  await post('ok');
  t.equal(up.totalConnections() - before, 2, 'rawRequest opens a fresh connection each time');
});

t.test('each case serves a card whose only interface is the case URL, params kept', async (t) => {
  const card = json(await rawRequest(`${up.caseBaseUrl('big-body', { bytes: 500 })}.well-known/agent-card.json`));
  t.same(card.supportedInterfaces, [{ url: `${up.url}/big-body/bytes=500`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }]);
  t.equal(card.capabilities.streaming, false);
  t.equal(json(await rawRequest(`${up.url}/sse-ok/.well-known/agent-card.json`)).capabilities.streaming, true);
  const q = json(await rawRequest(`${up.url}/deep/.well-known/agent-card.json?depth=3`));
  t.equal(q.supportedInterfaces[0].url, `${up.url}/deep?depth=3`);
  t.equal(depthOf((await rawRequest(`${up.url}/deep/depth=3`, { body: rpc() })).body.toString()), 3, 'k=v path segments are parameters');
  t.equal((await post('no-such-case')).status, 404);
});

t.test('SSE cases', async (t) => {
  const events = (r: RawReply): string[] => r.body.toString().split('\n\n').filter((e) => e !== '');
  const ok = await post('sse-ok');
  t.equal(ok.headers['content-type'], 'text/event-stream');
  const data = events(ok).map((e) => JSON.parse(e.replace(/^data: /, '')));
  t.same(data.map((d) => Object.keys(d.result)[0]), ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
  t.ok(data.every((d) => d.id === 7));
  t.equal(events(await post('sse-keepalive')).filter((e) => e.startsWith(':')).length, 4);
  t.match(events(await post('sse-error-event'))[1], /^event: error\ndata: /);
  t.match(events(await post('sse-garbage'))[1], /^data: <html>/);
  for (const bytes of [1000, 65536]) {
    const big = events(await post('sse-big-event', { bytes }))[1] ?? '';
    t.equal(Buffer.byteLength(big) - 'data: '.length, bytes, `sse-big-event bytes=${bytes}`);
  }
  t.equal((await post('sse-json-error')).headers['content-type'], 'application/json');
  const comments = await rawRequest(up.caseUrl('sse-comments-only', { ms: 20 }), { body: rpc(), maxBytes: 5 * ': keep-alive\n\n'.length });
  t.notOk(comments.body.toString().includes('data:'));
  const endless = await rawRequest(up.caseUrl('sse-endless'), { body: rpc(), maxBytes: 256 * 1024 });
  t.equal(endless.endedBy, 'maxBytes');
});

t.test('close() returns promptly while a reply is still streaming', async (t) => {
  const other = await startHostileUpstream();
  const pending = rawRequest(other.caseUrl('sse-silent'), { body: rpc(), timeoutMs: 3000 });
  while (other.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
  const started = performance.now();
  await other.close();
  t.ok(performance.now() - started < 500, 'close did not wait for the open stream');
  t.equal(other.openConnections(), 0);
  const reply = await pending;
  t.equal(reply.status, 200);
  t.equal(reply.complete, false, 'the stream was cut by close()');
});
