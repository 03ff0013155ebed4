/**
 * The phase of a streaming call before its stream starts, for both stream
 * paths (a JSON-RPC caller: proxy/stream.ts; an HTTP+JSON caller:
 * proxy/stream-runner.ts), against a real remote on 127.0.0.1 that misbehaves
 * on purpose: the wait for the response head is bounded (headersMs), so is a
 * body that is not a stream (totalMs), a relayed stream is not (its own
 * timers bound it), and a caller that leaves before the head cuts the
 * upstream request. Outcomes only: no durations are asserted.
 */
import t from 'tap';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { request } from 'undici';
import { rpcRequest, startGateway, type RunningGateway } from '../support/gateway.js';
import { closeServer, delay, listenOnLoopback, readBody, trackConnections } from '../support/servers.js';
import { parseSse, reasonOfEvent } from '../support/sse-client.js';

const RESULT = (text: string) => `{"message":{"messageId":"${text}","contextId":"c1","role":"ROLE_AGENT","parts":[{"text":"${text}"}]}}`;

/** Each upstream request: its path, and whether the gateway has closed it (aborted, or done). */
const seen: { path: string; closed: boolean }[] = [];

/** The upstream side of every '/open' stream, for the test to end. */
const openStreams: ServerResponse[] = [];

const upstream = createServer(async (req: IncomingMessage, res: ServerResponse) => {
  const entry = { path: req.url ?? '', closed: false };
  seen.push(entry);
  res.once('close', () => (entry.closed = true));
  const text = (await readBody(req)).toString('utf8');
  const id = JSON.stringify(req.method === 'POST' && text ? ((JSON.parse(text) as { id?: unknown }).id ?? null) : null);
  switch (entry.path) {
    case '/silent':
      return; // never a head: the gateway's headers deadline (or the caller leaving) must end it
    case '/head-soon':
      // The head well inside headersMs, then a whole event stream.
      await delay(100);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: {"jsonrpc":"2.0","id":${id},"result":${RESULT('soon')}}\n\n`);
      return;
    case '/json-never-ends':
      // A JSON answer (not a stream) whose body never ends: the total deadline bounds it.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"jsonrpc":"2.0","id":${id},`);
      return;
    case '/events-past-total':
      // An event stream that outlives totalMs: once it started, only the relay's timers bound it.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: {"jsonrpc":"2.0","id":${id},"result":${RESULT('first')}}\n\n`);
      await delay(900);
      res.end(`data: {"jsonrpc":"2.0","id":${id},"result":${RESULT('second')}}\n\n`);
      return;
    case '/open':
      // A stream that stays open until the test ends it: it holds a concurrency slot.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: {"jsonrpc":"2.0","id":${id},"result":${RESULT('open')}}\n\n`);
      openStreams.push(res);
      return;
    default:
      res.writeHead(404).end();
  }
});
const tracker = trackConnections(upstream);
const port = await listenOnLoopback(upstream);

const remote = (name: string, path: string, timeouts: string) => `
  ${name}:
    url: http://127.0.0.1:${port}${path}
    binding: jsonrpc
    allowPrivateNetwork: true
    timeouts: ${timeouts}
    circuitBreaker: { failureThreshold: 10000 }`;
const gw: RunningGateway = await startGateway(`
server: { host: 127.0.0.1, port: 0 }
remotes:${remote('silent', '/silent', '{ totalMs: 60000, headersMs: 300 }')}${remote('soon', '/head-soon', '{ totalMs: 5000, headersMs: 3000 }')}${remote('body', '/json-never-ends', '{ totalMs: 400, headersMs: 60000 }')}${remote('long', '/events-past-total', '{ totalMs: 300, headersMs: 300 }')}${remote('held', '/silent', '{ totalMs: 60000, headersMs: 60000 }')}${remote('slot', '/open', '{ totalMs: 60000, headersMs: 400, queueTimeoutMs: 60000 }')}
    limits: { maxConcurrent: 1, maxQueued: 1 }${remote('slotwait', '/open', '{ totalMs: 60000, headersMs: 60000, queueTimeoutMs: 60000 }')}
    limits: { maxConcurrent: 1, maxQueued: 1 }
`);
t.teardown(async () => {
  await gw.close();
  await closeServer(upstream, tracker);
});

const MESSAGE = { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } };
const V1 = { 'a2a-version': '1.0', accept: 'text/event-stream' };

/** A JSON-RPC caller's streaming call. */
async function jsonRpcStream(name: string): Promise<{ contentType: string; raw: string }> {
  const res = await request(`${gw.url}/remotes/${name}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...V1 },
    body: JSON.stringify(rpcRequest('SendStreamingMessage', 'caller-7', MESSAGE)),
  });
  return { contentType: String(res.headers['content-type']), raw: await res.body.text() };
}

/** An HTTP+JSON caller's streaming call (message:stream). */
async function restStream(name: string): Promise<{ status: number; contentType: string; raw: string }> {
  const res = await request(`${gw.url}/remotes/${name}/message:stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...V1 },
    body: JSON.stringify(MESSAGE),
  });
  return { status: res.statusCode, contentType: String(res.headers['content-type']), raw: await res.body.text() };
}

const restReason = (raw: string) => (JSON.parse(raw) as { error?: { details?: { reason?: string }[] } }).error?.details?.find((d) => d.reason)?.reason;

async function waitFor(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  for (const until = Date.now() + ms; !check(); await delay(10)) if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
}

t.test('no head within headersMs: one UPSTREAM_TIMEOUT reply (not a stream), and the upstream request is cut', async (t) => {
  const before = seen.length;
  const rpcReply = await jsonRpcStream('silent');
  t.match(rpcReply.contentType, /^application\/json/, 'JSON-RPC caller: an envelope, not an event stream');
  const envelope = JSON.parse(rpcReply.raw) as Record<string, unknown>;
  t.equal(envelope.id, 'caller-7', 'the caller’s id');
  t.equal(reasonOfEvent(envelope), 'UPSTREAM_TIMEOUT');

  const restReply = await restStream('silent');
  t.match(restReply.contentType, /^application\/json/, 'HTTP+JSON caller: a status, not an event stream');
  t.equal(restReason(restReply.raw), 'UPSTREAM_TIMEOUT');

  await waitFor('the upstream requests to close', () => seen.slice(before).length === 2 && seen.slice(before).every((s) => s.closed));
  t.pass('both upstream requests were cut');
});

t.test('the head well inside headersMs: the stream is relayed', async (t) => {
  const rpcReply = await jsonRpcStream('soon');
  t.match(rpcReply.contentType, /^text\/event-stream/);
  const events = parseSse(rpcReply.raw).events;
  t.equal(events.length, 1);
  t.match(events[0], { id: 'caller-7', result: { message: { messageId: 'soon' } } });

  const restReply = await restStream('soon');
  t.match(restReply.contentType, /^text\/event-stream/);
  t.match(parseSse(restReply.raw).events, [{ message: { messageId: 'soon' } }]);
});

t.test('a JSON body that never ends is bounded by totalMs: UPSTREAM_TIMEOUT', async (t) => {
  const rpcReply = await jsonRpcStream('body');
  t.match(rpcReply.contentType, /^application\/json/);
  t.equal(reasonOfEvent(JSON.parse(rpcReply.raw) as Record<string, unknown>), 'UPSTREAM_TIMEOUT');
  const restReply = await restStream('body');
  t.match(restReply.contentType, /^application\/json/);
  t.equal(restReason(restReply.raw), 'UPSTREAM_TIMEOUT');
});

t.test('a stream that outlives totalMs is not cut by it: every event arrives, no error event', async (t) => {
  const rpcReply = await jsonRpcStream('long');
  t.match(rpcReply.contentType, /^text\/event-stream/);
  const events = parseSse(rpcReply.raw).events;
  t.match(events, [{ result: { message: { messageId: 'first' } } }, { result: { message: { messageId: 'second' } } }]);
  t.notOk(events.some((e) => reasonOfEvent(e)), 'no gateway error');

  const restReply = await restStream('long');
  t.match(restReply.contentType, /^text\/event-stream/);
  const restEvents = parseSse(restReply.raw).events;
  t.match(restEvents, [{ message: { messageId: 'first' } }, { message: { messageId: 'second' } }]);
  t.equal(restEvents.length, 2, 'no error event');
});

t.test('a caller that leaves before the head: the upstream request is cut at once (no deadline is near), CALLER_CLOSED in the log', async (t) => {
  for (const [label, path, body] of [
    ['JSON-RPC caller', '/', rpcRequest('SendStreamingMessage', 'caller-8', MESSAGE)],
    ['HTTP+JSON caller', '/message:stream', MESSAGE],
  ] as const) {
    const before = seen.length;
    const logsBefore = gw.logs.length;
    const leave = new AbortController();
    const pending = request(`${gw.url}/remotes/held${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...V1 },
      body: JSON.stringify(body),
      signal: leave.signal,
    }).catch((err: unknown) => err);
    await waitFor(`${label}: the upstream request`, () => seen.length > before);
    t.notOk(seen[before]!.closed, `${label}: held open while the caller waits`);
    leave.abort();
    await pending;
    await waitFor(`${label}: the upstream request to close`, () => seen[before]!.closed);
    await waitFor(`${label}: the call's log line`, () => gw.logs.slice(logsBefore).some((l) => (l.call as { outcome?: string } | undefined)?.outcome === 'CALLER_CLOSED'));
    t.pass(`${label}: upstream cut, CALLER_CLOSED logged`);
  }
});


/** A stream that holds the remote's one concurrency slot until the test ends it. */
async function holdSlot(name: string): Promise<() => void> {
  const before = openStreams.length;
  const leave = new AbortController();
  const pending = request(`${gw.url}/remotes/${name}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...V1 },
    body: JSON.stringify(rpcRequest('SendStreamingMessage', 'holder', MESSAGE)),
    signal: leave.signal,
  }).then((res) => res.body.text()).catch((err: unknown) => err);
  await waitFor('the holding stream upstream', () => openStreams.length > before);
  const upstreamSide = openStreams[before]!;
  return () => {
    upstreamSide.end();
    leave.abort();
    void pending;
  };
}

async function queuedOf(name: string): Promise<number> {
  const res = await request(`${gw.url}/readyz?detail=1`);
  const body = (await res.body.json()) as { remotes: { name: string; queued?: number }[] };
  return body.remotes.find((r) => r.name === name)?.queued ?? -1;
}

t.test('a stream waiting for a concurrency slot: the headers deadline bounds the wait too (UPSTREAM_TIMEOUT), nothing reaches the remote', async (t) => {
  const release = await holdSlot('slot');
  t.teardown(release);
  const upstreamBefore = seen.length;
  const rpcReply = await jsonRpcStream('slot');
  t.match(rpcReply.contentType, /^application\/json/);
  t.equal(reasonOfEvent(JSON.parse(rpcReply.raw) as Record<string, unknown>), 'UPSTREAM_TIMEOUT', 'JSON-RPC caller');
  const restReply = await restStream('slot');
  t.equal(restReason(restReply.raw), 'UPSTREAM_TIMEOUT', 'HTTP+JSON caller');
  t.equal(seen.length, upstreamBefore, 'neither queued call reached the remote');
  t.equal(await queuedOf('slot'), 0, 'the queue is empty again');
});

t.test('a caller that leaves while its stream waits for a slot gives its queue place up at once', async (t) => {
  const release = await holdSlot('slotwait');
  t.teardown(release);
  for (const [label, path, body] of [
    ['JSON-RPC caller', '/', rpcRequest('SendStreamingMessage', 'queued', MESSAGE)],
    ['HTTP+JSON caller', '/message:stream', MESSAGE],
  ] as const) {
    const upstreamBefore = seen.length;
    const leave = new AbortController();
    const pending = request(`${gw.url}/remotes/slotwait${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...V1 },
      body: JSON.stringify(body),
      signal: leave.signal,
    }).catch((err: unknown) => err);
    for (const until = Date.now() + 10_000; (await queuedOf('slotwait')) !== 1; await delay(10)) if (Date.now() > until) throw new Error(`${label}: never queued`);
    leave.abort();
    await pending;
    for (const until = Date.now() + 10_000; (await queuedOf('slotwait')) !== 0; await delay(10)) if (Date.now() > until) throw new Error(`${label}: still queued after the caller left`);
    t.pass(`${label}: out of the queue`);
    t.equal(seen.length, upstreamBefore, `${label}: nothing reached the remote`);
  }
});
