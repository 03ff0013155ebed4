/**
 * The one upstream exchange seen through the gateway, for both stream paths
 * (a JSON-RPC caller: proxy/stream.ts; an HTTP+JSON caller:
 * proxy/stream-runner.ts) and both unary paths, against real remotes on
 * 127.0.0.1:
 * - a caller that does not read pauses the remote (it is left blocked on its
 *   socket, having offered a bounded part of the stream), and once the caller
 *   reads, every event arrives, in order;
 * - a stream the remote cuts mid-event ends with STREAM_TRUNCATED and counts
 *   against the breaker, as a truncated unary reply does (the one verdict);
 * - `a2a_egress_upstream_duration_seconds` is observed once per call, at the
 *   response head, for unary calls and streams alike (read from /metrics
 *   while the body is still held back by the remote).
 * Outcomes and counts only: no durations are asserted.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import t, { type Test } from 'tap';
import { request } from 'undici';
import { rpc, rpcRequest, startGateway, type RunningGateway } from '../support/gateway.js';
import { closeServer, delay, listenOnLoopback, readBody, trackConnections } from '../support/servers.js';
import { parseSse, reasonOfEvent, streamRpc } from '../support/sse-client.js';

const RESULT = (text: string) => `{"message":{"messageId":"${text}","contextId":"c1","role":"ROLE_AGENT","parts":[{"text":"${text}"}]}}`;
const PAD = 'x'.repeat(60 * 1024);
const MiB = 1024 * 1024;

/** The most two loopback connections' kernel buffers can hold (each: the sender's send and the receiver's receive buffer). */
function kernelBufferBound(): number {
  try {
    const max = (file: string) => Number(readFileSync(file, 'utf8').trim().split(/\s+/).at(-1));
    return 2 * (max('/proc/sys/net/ipv4/tcp_rmem') + max('/proc/sys/net/ipv4/tcp_wmem'));
  } catch {
    return 64 * MiB;
  }
}
/** What the remote could offer while the caller reads nothing, the gateway buffering at most a few reads of its own. */
const OFFER_BOUND = kernelBufferBound() + 4 * MiB;
/** A stream longer than that: a gateway that buffered it would let the remote finish. */
const FLOOD_EVENTS = Math.ceil((OFFER_BOUND + 16 * MiB) / PAD.length);

/** The flood remote's state: bytes it could hand to its socket, and whether it waits for 'drain'. */
const flood = { offered: 0, blocked: false, done: false };
/** Held replies, released by the test. */
const held: (() => void)[] = [];

const upstream = createServer(async (req: IncomingMessage, res: ServerResponse) => {
  const text = (await readBody(req)).toString('utf8');
  const id = JSON.stringify(text ? ((JSON.parse(text) as { id?: unknown }).id ?? null) : null);
  const event = (result: string) => `data: {"jsonrpc":"2.0","id":${id},"result":${result}}\n\n`;
  switch (req.url) {
    case '/flood': {
      flood.offered = 0;
      flood.done = false;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let n = 0;
      const pump = () => {
        while (n < FLOOD_EVENTS) {
          const chunk = event(RESULT(`e${n++}-${PAD}`));
          flood.offered += chunk.length;
          if (!res.write(chunk)) {
            flood.blocked = true;
            res.once('drain', () => {
              flood.blocked = false;
              pump();
            });
            return;
          }
        }
        flood.done = true;
        res.end();
      };
      return pump();
    }
    case '/cut':
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(event(RESULT('first')));
      // Half an event, then the connection is cut.
      return void res.write('data: {"jsonrpc":"2.0","id":', () => setImmediate(() => res.socket?.destroy()));
    case '/held-unary':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"jsonrpc":"2.0","id":${id},`);
      return void held.push(() => res.end(`"result":${RESULT('unary')}}`));
    case '/held-stream':
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(event(RESULT('first')));
      return void held.push(() => res.end(event(RESULT('second'))));
    default:
      res.writeHead(404).end();
  }
});
const tracker = trackConnections(upstream);
const port = await listenOnLoopback(upstream);

const remote = (name: string, path: string, extra = '') => `
  ${name}:
    url: http://127.0.0.1:${port}${path}
    binding: jsonrpc
    allowPrivateNetwork: true${extra}`;
const gw: RunningGateway = await startGateway(`
server: { host: 127.0.0.1, port: 0 }
remotes:${remote('flood', '/flood', '\n    limits: { maxStreamBytes: 1073741824 }')}${remote('cutrpc', '/cut', '\n    circuitBreaker: { failureThreshold: 1, cooldownMs: 600000 }')}${remote('cutrest', '/cut', '\n    circuitBreaker: { failureThreshold: 1, cooldownMs: 600000 }')}${remote('unaryheld', '/held-unary')}${remote('restheld', '/held-unary')}${remote('streamheld', '/held-stream')}${remote('reststreamheld', '/held-stream')}
`);
t.teardown(async () => {
  for (const release of held.splice(0)) release();
  await gw.close();
  await closeServer(upstream, tracker);
});

const MESSAGE = { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } };
const V1 = { 'a2a-version': '1.0' };

async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  for (const until = Date.now() + ms; !(await check()); await delay(10)) if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
}

/** A streaming call whose response the test reads when it wants to (node:http: nothing is read until asked). */
function lazyStream(path: string, body: unknown): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...V1 } }, resolve);
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const CALLERS = [
  { kind: 'JSON-RPC caller', path: '/remotes/flood/', body: rpcRequest('SendStreamingMessage', 'caller-7', MESSAGE), messageOf: (e: Record<string, unknown>) => (e.result as { message: { messageId: string } }).message.messageId },
  { kind: 'HTTP+JSON caller', path: '/remotes/flood/message:stream', body: MESSAGE, messageOf: (e: Record<string, unknown>) => (e as { message: { messageId: string } }).message.messageId },
];

for (const caller of CALLERS) {
  t.test(`${caller.kind}: a caller that does not read pauses the remote; once it reads, every event arrives in order`, async (t) => {
    flood.blocked = false;
    const res = await lazyStream(caller.path, caller.body);
    t.match(String(res.headers['content-type']), /^text\/event-stream/);
    // The sockets between the three fill up; then nothing moves while the caller does not read.
    let offered = -1;
    await waitFor('the remote to stay blocked on its socket', async () => {
      const before = flood.offered;
      await delay(200);
      const settled = flood.blocked && flood.offered === before && before === offered;
      offered = before;
      return settled;
    });
    t.ok(flood.blocked, 'the remote is blocked');
    t.notOk(flood.done, 'the stream is not over');
    t.ok(offered <= OFFER_BOUND, `the remote offered ${offered} bytes of ${FLOOD_EVENTS * PAD.length}: at most the kernel's socket buffers (${OFFER_BOUND})`);

    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    await new Promise((resolve) => res.on('end', resolve));
    const { events } = parseSse(Buffer.concat(chunks).toString('utf8'));
    t.equal(events.length, FLOOD_EVENTS, 'every event');
    const ids = events.map(caller.messageOf);
    t.ok(ids.every((id, i) => id === `e${i}-${PAD}`), 'in order, each whole');
    t.ok(flood.done, 'the remote finished');
  });
}

t.test('a stream cut mid-event ends with STREAM_TRUNCATED and counts against the breaker (both stream paths)', async (t) => {
  const rpcReply = await streamRpc(`${gw.url}/remotes/cutrpc/`, rpcRequest('SendStreamingMessage', 'caller-7', MESSAGE), V1);
  t.equal(rpcReply.events.length, 2, 'the whole event, then the error event');
  t.match(rpcReply.events[0], { id: 'caller-7', result: { message: { messageId: 'first' } } });
  t.equal(reasonOfEvent(rpcReply.events[1]), 'STREAM_TRUNCATED');
  const rpcAfter = await streamRpc(`${gw.url}/remotes/cutrpc/`, rpcRequest('SendStreamingMessage', 'caller-8', MESSAGE), V1);
  t.equal(reasonOfEvent(rpcAfter.json), 'CIRCUIT_OPEN', 'failureThreshold 1: the cut opened the circuit');

  const rest = await request(`${gw.url}/remotes/cutrest/message:stream`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...V1 }, body: JSON.stringify(MESSAGE) });
  const restRaw = await rest.body.text();
  t.match(restRaw, /"messageId":"first"/, 'HTTP+JSON caller: the whole event');
  t.match(restRaw, /STREAM_TRUNCATED/, 'then the error event');
  const restAfter = await request(`${gw.url}/remotes/cutrest/message:stream`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...V1 }, body: JSON.stringify(MESSAGE) });
  t.match(await restAfter.body.text(), /CIRCUIT_OPEN/, 'HTTP+JSON caller: the circuit is open');
});

async function durationCount(name: string): Promise<number> {
  const text = (await gw.app.inject({ method: 'GET', url: '/metrics' })).body;
  const match = new RegExp(`a2a_egress_upstream_duration_seconds_count\\{remote="${name}"\\} (\\d+)`).exec(text);
  return match ? Number(match[1]) : 0;
}

/** Starts a call, waits until the remote holds its body back, and checks the duration was observed at the head. */
async function observedAtHead(t: Test, name: string, call: () => Promise<unknown>): Promise<void> {
  const heldBefore = held.length;
  let settled = false;
  const pending = call().finally(() => (settled = true));
  await waitFor('the remote to send the head and hold the rest', () => held.length > heldBefore);
  await waitFor(`the duration of ${name} to be observed`, async () => (await durationCount(name)) === 1);
  t.notOk(settled, `${name}: observed while the body is still held back (request sent → response head)`);
  held.splice(heldBefore, 1)[0]!();
  await pending;
  t.equal(await durationCount(name), 1, `${name}: observed once for the call`);
}

t.test('the upstream duration is observed once per call, at the response head, for unary calls and streams alike', async (t) => {
  await observedAtHead(t, 'unaryheld', async () => {
    const reply = await rpc(`${gw.url}/remotes/unaryheld/`, rpcRequest('SendMessage', 1, MESSAGE), V1);
    t.match(reply.json, { id: 1, result: { message: { messageId: 'unary' } } }, 'JSON-RPC unary: the reply');
  });
  await observedAtHead(t, 'restheld', async () => {
    const res = await request(`${gw.url}/remotes/restheld/message:send`, { method: 'POST', headers: { 'content-type': 'application/json', ...V1 }, body: JSON.stringify(MESSAGE) });
    t.match(JSON.parse(await res.body.text()), { message: { messageId: 'unary' } }, 'HTTP+JSON unary (the runner): the reply');
  });
  await observedAtHead(t, 'streamheld', async () => {
    const reply = await streamRpc(`${gw.url}/remotes/streamheld/`, rpcRequest('SendStreamingMessage', 'caller-7', MESSAGE), V1);
    t.equal(reply.events.length, 2, 'JSON-RPC stream: both events');
  });
  await observedAtHead(t, 'reststreamheld', async () => {
    const res = await request(`${gw.url}/remotes/reststreamheld/message:stream`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...V1 }, body: JSON.stringify(MESSAGE) });
    t.equal(parseSse(await res.body.text()).events.length, 2, 'HTTP+JSON stream (the runner): both events');
  });
  const lines = gw.logs.map((l) => l.call as Record<string, unknown> | undefined).filter((l) => l !== undefined && ['unaryheld', 'restheld', 'streamheld', 'reststreamheld'].includes(String(l.remote))) as Record<string, unknown>[];
  t.equal(lines.length, 4, 'one call line per call');
  for (const line of lines) {
    t.type(line.upstreamMs, 'number', `${String(line.remote)}: the call line carries upstreamMs`);
    t.ok((line.upstreamMs as number) <= (line.totalMs as number), `${String(line.remote)}: within the call's total`);
  }
});
