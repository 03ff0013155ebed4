/**
 * SIGTERM through the CLI with work in flight: an open SSE stream and a
 * slow unary call. The stream's caller gets one final error event
 * (GATEWAY_SHUTDOWN) and the stream ends; the unary call is allowed to finish
 * within server.drainMs, and one still running when drainMs is up gets a
 * GATEWAY_SHUTDOWN envelope; a request arriving during the drain on a
 * kept-alive socket gets one too; then the process exits 0.
 */
import { connect, type Socket } from 'node:net';
import t from 'tap';
import { request } from 'undici';
import { startHeldUpstream, type HeldUpstream } from '../support/held-upstream.js';
import { startHostileUpstream, type HostileUpstream } from '../support/hostile-upstream.js';
import { reasonOf, rpc, rpcRequest, spawnGatewayCli, writeTempConfig } from '../support/gateway.js';
import { reasonOfEvent } from '../support/sse-client.js';

let sse: HostileUpstream;
let slow: HeldUpstream;
t.before(async () => {
  [sse, slow] = await Promise.all([startHostileUpstream(), startHeldUpstream()]);
});
t.teardown(async () => {
  await Promise.all([sse.close(), slow.close()]);
});

t.test('SIGTERM: the open stream ends with GATEWAY_SHUTDOWN, the unary call completes, exit 0', async (t) => {
  const file = writeTempConfig(`
server: { host: 127.0.0.1, drainMs: 10000, maxEventLoopDelayMs: 0 }
defaults:
  allowPrivateNetwork: true
  retries: { attempts: 1 }
remotes:
  sse: { url: '${sse.url}/' }
  slow: { url: '${slow.url}/' }
`);
  const gw = spawnGatewayCli(['--config', file, '--port', '0']);
  t.teardown(() => void gw.child.kill('SIGKILL'));
  const url = await gw.url;

  const stream = await request(`${url}/remotes/sse/sse-comments-only/ms=50`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(rpcRequest('SendStreamingMessage', 'stream-1', { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } })),
  });
  t.equal(stream.statusCode, 200);
  t.match(String(stream.headers['content-type']), /^text\/event-stream/);
  let streamText = '';
  const streamDone = (async () => {
    for await (const chunk of stream.body) streamText += (chunk as Buffer).toString('utf8');
  })();

  const unary = rpc(`${url}/remotes/slow/hold`, rpcRequest('GetTask', 'unary-1', { id: 'task-1' }));
  await slow.waitForHeld(1);

  let exited = false;
  void gw.exited.then(() => (exited = true));
  gw.child.kill('SIGTERM');
  await streamDone;
  const events = streamText
    .split('\n\n')
    .map((block) => block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n'))
    .filter((data) => data !== '');
  t.ok(events.length >= 1, 'the stream carried an event before it ended');
  const last = JSON.parse(events.at(-1)!) as { id: unknown; error?: { data: { reason: string }[] } };
  t.equal(last.id, 'stream-1', 'the final event carries the caller’s id');
  t.equal(reasonOfEvent(last), 'GATEWAY_SHUTDOWN', 'the final event says the gateway is shutting down');

  t.notOk(exited, 'the process waits for the in-flight unary call');
  slow.release();
  const releasedAt = performance.now();
  const reply = await unary;
  t.equal(reply.json.id, 'unary-1');
  t.ok(reply.json.result, 'the unary call completed normally during the drain');
  t.equal(await gw.exited, 0, 'exit 0');
  const exitMs = performance.now() - releasedAt;
  t.ok(exitMs < 5000, `exits soon after the last call ends, not after the whole drainMs (${Math.round(exitMs)} ms)`);
});

t.test('SIGTERM: a unary call still running when drainMs is up gets a GATEWAY_SHUTDOWN envelope, then the socket closes; exit 0', async (t) => {
  const file = writeTempConfig(`
server: { host: 127.0.0.1, drainMs: 300, maxEventLoopDelayMs: 0 }
remotes:
  slow: { url: '${slow.url}/', allowPrivateNetwork: true, retries: { attempts: 1 } }
`);
  const gw = spawnGatewayCli(['--config', file, '--port', '0']);
  t.teardown(() => void gw.child.kill('SIGKILL'));
  const url = await gw.url;
  const heldBefore = slow.held();
  const unary = rpc(`${url}/remotes/slow/hold`, rpcRequest('GetTask', 'cut-1', { id: 'task-1' }));
  await slow.waitForHeld(heldBefore + 1);
  const termAt = performance.now();
  gw.child.kill('SIGTERM');
  const reply = await unary;
  const answeredMs = performance.now() - termAt;
  t.equal(reply.status, 200);
  t.equal(reply.json.id, 'cut-1', 'the caller’s id');
  t.equal(reasonOf(reply), 'GATEWAY_SHUTDOWN', 'an envelope, not a reset');
  t.equal(reply.json.error?.code, -32603);
  t.equal(reply.headers.connection, 'close', 'Connection: close');
  t.ok(answeredMs >= 250, `answered when drainMs is up, not before (${Math.round(answeredMs)} ms)`);
  t.equal(await gw.exited, 0, 'exit 0');
  slow.release();
});

/** Reads HTTP/1.1 responses off a raw socket until it closes; returns each response's head and body text. */
function readResponses(socket: Socket): Promise<{ head: string; body: string }[]> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('error', () => {});
    socket.once('close', () => {
      const out: { head: string; body: string }[] = [];
      let rest = text;
      while (rest.length > 0) {
        const end = rest.indexOf('\r\n\r\n');
        if (end === -1) break;
        const head = rest.slice(0, end);
        const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        out.push({ head, body: rest.slice(end + 4, end + 4 + length) });
        rest = rest.slice(end + 4 + length);
      }
      resolve(out);
    });
  });
}

const rawPost = (path: string, body: string) =>
  `POST ${path} HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

t.test('SIGTERM: a request arriving on a kept-alive socket during the drain gets GATEWAY_SHUTDOWN with its id and Connection: close', async (t) => {
  const file = writeTempConfig(`
server: { host: 127.0.0.1, drainMs: 10000, maxEventLoopDelayMs: 0 }
remotes:
  slow: { url: '${slow.url}/', allowPrivateNetwork: true, retries: { attempts: 1 } }
`);
  const gw = spawnGatewayCli(['--config', file, '--port', '0']);
  t.teardown(() => void gw.child.kill('SIGKILL'));
  const url = new URL(await gw.url);
  const socket = connect(Number(url.port), url.hostname);
  t.teardown(() => socket.destroy());
  const responses = readResponses(socket);
  const heldBefore = slow.held();
  // The first request keeps the socket busy (a held call), so shutdown cannot close it as idle.
  socket.write(rawPost('/remotes/slow/hold', JSON.stringify(rpcRequest('GetTask', 'first', { id: 'task-1' }))));
  await slow.waitForHeld(heldBefore + 1);
  const mark = gw.stdout().length;
  gw.child.kill('SIGTERM');
  const until = Date.now() + 10_000;
  while (!gw.stdout().slice(mark).includes('shutting down') && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  // The second arrives on the same kept-alive socket, during the drain.
  socket.write(rawPost('/remotes/slow/ok', JSON.stringify(rpcRequest('GetTask', 'during-drain', { id: 'task-1' }))));
  await new Promise((r) => setTimeout(r, 200));
  slow.release();
  const [first, second] = await responses;
  t.match(first?.head, /^HTTP\/1\.1 200/, 'the held call completes');
  t.equal((JSON.parse(first?.body ?? '{}') as { id?: unknown }).id, 'first');
  t.match(second?.head, /^HTTP\/1\.1 200/, 'the late request: HTTP 200, like every JSON-RPC reply');
  t.match(second?.head, /\r\nconnection: close/i, 'with Connection: close');
  t.match(second?.head, /content-type: application\/json/i);
  const envelope = JSON.parse(second?.body ?? '{}') as { jsonrpc?: string; id?: unknown; error?: { code: number; data: { reason: string }[] } };
  t.equal(envelope.jsonrpc, '2.0');
  t.equal(envelope.id, 'during-drain', 'the caller’s id');
  t.equal(envelope.error?.data[0]?.reason, 'GATEWAY_SHUTDOWN', 'a GATEWAY_SHUTDOWN envelope, not Fastify’s 503 body');
  t.equal(slow.requests.filter((r) => r.url === '/ok').length, 0, 'nothing was forwarded for it');
  t.equal(await gw.exited, 0, 'exit 0');
});
