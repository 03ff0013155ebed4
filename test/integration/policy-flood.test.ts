/**
 * A local caller flood is bounded: `server.maxConnections` refuses sockets
 * past the cap while the admitted ones keep working, and event-loop pressure
 * (`server.maxEventLoopDelayMs`, policy/pressure-sampler.ts) answers a typed
 * GATEWAY_OVERLOADED instead of queueing more work, to callers of every
 * binding (JSON-RPC envelope, HTTP+JSON Status, gRPC status).
 */
import { connect, type Socket } from 'node:net';
import t from 'tap';
import { startHostileUpstream, type HostileUpstream } from '../support/hostile-upstream.js';
import * as grpc from '@grpc/grpc-js';
import { reasonOf, rpc, rpcRequest, startGateway } from '../support/gateway.js';
import { startOpsGateway } from '../support/ops-gateway.js';
import { nextPressureSample, samplesTakenDuring } from '../support/pressure-samples.js';
import { sdkGrpcClientOf, startGrpcGateway } from '../support/grpc-gateway.js';
import { startSdkGrpcUpstream } from '../support/grpc-peers.js';
import { replyText, sendText } from '../support/sdk-client.js';

let upstream: HostileUpstream;
t.before(async () => {
  upstream = await startHostileUpstream();
});
t.teardown(() => upstream.close());

function openSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Sends GET /healthz on an open socket; resolves with the status line, or 'closed' if the server drops it. */
function healthOn(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.includes('\r\n\r\n')) done(text.split('\r\n')[0]!);
    };
    const onClose = () => done(text === '' ? 'closed' : text.split('\r\n')[0]!);
    function done(result: string) {
      socket.off('data', onData);
      socket.off('close', onClose);
      resolve(result);
    }
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.on('error', () => undefined);
    if (!socket.destroyed) socket.write('GET /healthz HTTP/1.1\r\nhost: gw\r\n\r\n');
  });
}

t.test('server.maxConnections: 5 sockets work, a 6th is dropped; once one closes a new one works', async (t) => {
  const gw = await startGateway(`
server: { maxConnections: 5, maxEventLoopDelayMs: 0 }
remotes:
  hostile: { url: '${upstream.url}/', allowPrivateNetwork: true }
`);
  t.teardown(() => gw.close());
  const port = Number(new URL(gw.url).port);
  const sockets: Socket[] = [];
  t.teardown(() => sockets.forEach((s) => s.destroy()));
  for (let i = 0; i < 5; i++) sockets.push(await openSocket(port));
  // The server counts a socket once it has accepted it; wait for all five to be counted.
  const until = Date.now() + 10_000;
  while ((await new Promise<number>((r) => gw.app.server.getConnections((_e, n) => r(n)))) < 5 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));

  const sixth = await openSocket(port);
  sockets.push(sixth);
  t.equal(await healthOn(sixth), 'closed', 'the 6th socket is closed without an answer');
  for (const [i, socket] of sockets.slice(0, 5).entries()) t.equal(await healthOn(socket), 'HTTP/1.1 200 OK', `socket ${i + 1} is served`);

  const closed = new Promise((r) => sockets[0]!.once('close', r));
  sockets[0]!.destroy();
  await closed;
  const until2 = Date.now() + 10_000;
  while ((await new Promise<number>((r) => gw.app.server.getConnections((_e, n) => r(n)))) > 4 && Date.now() < until2) await new Promise((r) => setTimeout(r, 10));
  const replacement = await openSocket(port);
  sockets.push(replacement);
  t.equal(await healthOn(replacement), 'HTTP/1.1 200 OK', 'a freed slot admits a new socket');
});

t.test('event-loop pressure: a call passes on a calm loop; after a blocked window it is GATEWAY_OVERLOADED, not forwarded', async (t) => {
  const gw = await startGateway(`
server: { maxEventLoopDelayMs: 50 }
remotes:
  hostile: { url: '${upstream.url}/', allowPrivateNetwork: true, retries: { attempts: 1 } }
`);
  t.teardown(() => gw.close());
  // Two calm windows in a row: the first may still hold the gateway's own start-up.
  await nextPressureSample();
  await nextPressureSample();
  const calm = await rpc(`${gw.url}/remotes/hostile/ok`, rpcRequest('GetTask', 'calm', { id: 'task-1' }));
  t.ok(calm.json.result, 'just under: a calm loop serves the call');

  await nextPressureSample();
  const before = upstream.requests.length;
  // Fill the whole next window (1 s) with one block of this process, where the gateway runs.
  const until = performance.now() + 1100;
  while (performance.now() < until);
  await new Promise((r) => setTimeout(r, 5));
  const reply = await rpc(`${gw.url}/remotes/hostile/ok`, rpcRequest('GetTask', 'p1', { id: 'task-1' }));
  t.equal(reasonOf(reply), 'GATEWAY_OVERLOADED', 'just over: the lagging loop refuses the call');
  t.equal(reply.json.id, null, 'refused before the body is read, so the id is unknown');
  t.equal(reply.json.jsonrpc, '2.0');
  t.equal(reply.headers['retry-after'], '1');
  await new Promise((r) => setTimeout(r, 100));
  t.equal(upstream.requests.length, before, 'nothing reached the remote');
  t.notOk(gw.logs.some((l) => /already sent/i.test(String(l.msg))), 'the call was answered once');
});

t.test('event-loop pressure sheds HTTP+JSON calls too (GET, DELETE, POST), in the Status shape; cards are not shed', async (t) => {
  const gw = await startGateway(`
server: { maxEventLoopDelayMs: 50 }
remotes:
  rest: { url: '${upstream.url}/ok', allowPrivateNetwork: true, binding: jsonrpc, retries: { attempts: 1 } }
`);
  t.teardown(() => gw.close());
  const base = `${gw.url}/remotes/rest`;
  const get = () => fetch(`${base}/tasks/task-1`);
  const del = () => fetch(`${base}/tasks/task-1/pushNotificationConfigs/cfg-1`, { method: 'DELETE' });
  const send = () =>
    fetch(`${base}/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } }),
    });
  await nextPressureSample();
  await nextPressureSample();
  const calm = await get();
  const calmBody = (await calm.json()) as { id?: string; error?: { details?: { reason?: string }[] } };
  t.equal(calm.status, 200, 'just under: a calm loop serves a REST GET');
  t.notOk(calmBody.error, 'and it is a result');
  t.equal(upstream.requests.at(-1)?.url, '/ok', 'it was forwarded');

  await nextPressureSample();
  const before = upstream.requests.length;
  const until = performance.now() + 1100;
  while (performance.now() < until);
  await new Promise((r) => setTimeout(r, 5));
  for (const [name, call] of [['GET tasks/{id}', get], ['DELETE pushNotificationConfigs/{id}', del], ['POST message:send', send]] as const) {
    const res = await call();
    const body = (await res.json()) as { error?: { code?: number; status?: string; details?: { domain?: string; reason?: string }[] } };
    t.equal(res.status, 503, `${name}: just over: 503`);
    t.equal(body.error?.status, 'UNAVAILABLE', `${name}: a google.rpc.Status body`);
    t.equal(body.error?.details?.find((d) => d.domain === 'a2a-egress')?.reason, 'GATEWAY_OVERLOADED', `${name}: GATEWAY_OVERLOADED`);
    t.equal(res.headers.get('retry-after'), '1', `${name}: Retry-After`);
  }
  const card = await fetch(`${base}/.well-known/agent-card.json`);
  t.not(((await card.json().catch(() => ({}))) as { reason?: string }).reason, 'GATEWAY_OVERLOADED', 'a card request is not shed');
  await new Promise((r) => setTimeout(r, 100));
  t.equal(upstream.requests.filter((r, i) => i >= before && r.url === '/ok').length, 0, 'no call reached the remote');
});

t.test('event-loop pressure sheds gRPC calls too: UNAVAILABLE with GATEWAY_OVERLOADED, nothing forwarded', async (t) => {
  const grpcUpstream = await startSdkGrpcUpstream();
  t.teardown(() => grpcUpstream.close());
  const gw = await startGrpcGateway(`
server: { host: 127.0.0.1, port: 0, maxEventLoopDelayMs: 50 }
remotes:
  agent: { url: 'http://127.0.0.1:1/', allowPrivateNetwork: true, grpc: { target: "${grpcUpstream.target}", listen: { port: 0 } } }
`);
  t.teardown(() => gw.close());
  const sdk = await sdkGrpcClientOf(gw.grpc.remotes.agent!, grpcUpstream.card);
  await nextPressureSample();
  await nextPressureSample();
  t.equal(replyText(await sendText(sdk, 'calm')), 'echo: calm', 'just under: a calm loop serves a gRPC call');
  const before = grpcUpstream.received.length;

  await nextPressureSample();
  const until = performance.now() + 1100;
  while (performance.now() < until);
  await new Promise((r) => setTimeout(r, 5));
  const refused = await sendText(sdk, 'lagging').catch((e: unknown) => e);
  t.match(refused, { status: grpc.status.UNAVAILABLE, message: /gateway is overloaded/ }, 'just over: UNAVAILABLE');
  t.match(gw.calls().at(-1), { binding: 'grpc', outcome: 'GATEWAY_OVERLOADED' }, 'logged with its reason');
  t.equal(grpcUpstream.received.length, before, 'nothing reached the remote');
});

const idle = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const twoOwnListeners = (server: string) => `
server: { ${server} }
remotes:
  a: { url: '${upstream.url}/ok', allowPrivateNetwork: true, listen: { port: 0 } }
  b: { url: '${upstream.url}/ok', allowPrivateNetwork: true, listen: { port: 0 } }
  c: { url: '${upstream.url}/ok', allowPrivateNetwork: true }
`;

t.test('shedding off (the default): a gateway with three listeners samples nothing, idle or serving', async (t) => {
  const gw = await startOpsGateway(twoOwnListeners('maxEventLoopDelayMs: 0'));
  t.teardown(() => gw.close());
  const taken = await samplesTakenDuring(async () => {
    const reply = await rpc(`${gw.remoteUrls.a}/`, rpcRequest('GetTask', 1, { id: 'task-1' }));
    t.ok(reply.json.result, 'a call is served');
    await idle(2500);
  });
  // Each listener used to register its own sampler (@fastify/under-pressure), whether shedding was on or not.
  t.equal(taken, 0, 'no sample taken in two and a half windows');
});

t.test('shedding on with three listeners: one sampler for the process, one sample a second', async (t) => {
  const gw = await startOpsGateway(twoOwnListeners('maxEventLoopDelayMs: 50'));
  t.teardown(() => gw.close());
  await nextPressureSample();
  const taken = await samplesTakenDuring(() => idle(2500));
  // One sampler: a sample a second (fewer on a loaded machine); a sampler per listener took three.
  t.ok(taken >= 1 && taken <= 3, `${taken} samples in 2.5 s, not one per listener`);
  const reply = await rpc(`${gw.remoteUrls.b}/`, rpcRequest('GetTask', 1, { id: 'task-1' }));
  t.ok(reply.json.result, 'a calm loop serves the call on a listener of its own');
});

t.test('a reload sets a threshold: sampling starts with the reload and sheds; a reload clearing it stops sampling', async (t) => {
  const { parseConfig } = await import('../../src/loader/load.js');
  const gw = await startOpsGateway(twoOwnListeners('maxEventLoopDelayMs: 0'));
  t.teardown(() => gw.close());
  const call = (id: string) => rpc(`${gw.url}/remotes/c`, rpcRequest('GetTask', id, { id: 'task-1' }));
  const withThreshold = (ms: number) => {
    const next = parseConfig(twoOwnListeners(`maxEventLoopDelayMs: ${ms}`), 'reload.yaml');
    return { ...next, server: { ...next.server, host: '127.0.0.1', port: 0 } };
  };
  const firstSample = nextPressureSample();
  gw.gateway.reload(withThreshold(50));
  t.ok((await call('after-reload')).json.result, 'a call right after the reload is served (its first window has not ended)');
  // No call needed: the reload started the sampler.
  await firstSample;
  await nextPressureSample();
  const until = performance.now() + 1100;
  while (performance.now() < until);
  await idle(5);
  t.equal(reasonOf(await call('lagging')), 'GATEWAY_OVERLOADED', 'the threshold set by the reload sheds');

  gw.gateway.reload(withThreshold(0));
  // The sampler sees the threshold gone at its next tick (within a second) and stops.
  await idle(1100);
  const taken = await samplesTakenDuring(async () => {
    const blockedUntil = performance.now() + 1100;
    while (performance.now() < blockedUntil);
    await idle(5);
    t.ok((await call('off-again')).json.result, 'shedding off: a lagging loop serves the call');
    await idle(1500);
  });
  t.equal(taken, 0, 'no sample once the threshold is cleared');
});

t.test('a reload with a threshold after the gateway closed starts no sampler', async (t) => {
  const { parseConfig } = await import('../../src/loader/load.js');
  const gw = await startOpsGateway(twoOwnListeners('maxEventLoopDelayMs: 50'));
  await nextPressureSample();
  await gw.close();
  const next = parseConfig(twoOwnListeners('maxEventLoopDelayMs: 60'), 'reload.yaml');
  const taken = await samplesTakenDuring(async () => {
    gw.gateway.reload({ ...next, server: { ...next.server, host: '127.0.0.1', port: 0 } });
    await idle(2200);
  });
  t.equal(taken, 0, 'closed: no sample, whatever the config says');
});
