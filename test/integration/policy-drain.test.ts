/**
 * SIGTERM through the CLI with work in flight: an open SSE stream and a
 * slow unary call. The stream's caller gets one final error event
 * (GATEWAY_SHUTDOWN) and the stream ends; the unary call is allowed to finish
 * within server.drainMs; then the process exits 0.
 */
import t from 'tap';
import { request } from 'undici';
import { startHeldUpstream, type HeldUpstream } from '../support/held-upstream.js';
import { startHostileUpstream, type HostileUpstream } from '../support/hostile-upstream.js';
import { rpc, rpcRequest, spawnGatewayCli, writeTempConfig } from '../support/gateway.js';
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

t.test('SIGTERM: a unary call still running when drainMs is up is cut, and the process still exits 0', async (t) => {
  const file = writeTempConfig(`
server: { host: 127.0.0.1, drainMs: 300, maxEventLoopDelayMs: 0 }
remotes:
  slow: { url: '${slow.url}/', allowPrivateNetwork: true, retries: { attempts: 1 } }
`);
  const gw = spawnGatewayCli(['--config', file, '--port', '0']);
  t.teardown(() => void gw.child.kill('SIGKILL'));
  const url = await gw.url;
  const heldBefore = slow.held();
  const unary = rpc(`${url}/remotes/slow/hold`, rpcRequest('GetTask', 'cut-1', { id: 'task-1' })).then(
    () => 'answered',
    () => 'connection closed',
  );
  await slow.waitForHeld(heldBefore + 1);
  const termAt = performance.now();
  gw.child.kill('SIGTERM');
  t.equal(await unary, 'connection closed', 'past drainMs the caller’s connection is closed');
  t.equal(await gw.exited, 0, 'exit 0');
  const exitMs = performance.now() - termAt;
  t.ok(exitMs >= 250, `not before drainMs (${Math.round(exitMs)} ms)`);
  slow.release();
});
