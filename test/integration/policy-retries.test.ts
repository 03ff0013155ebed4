/**
 * Retries end to end: only read-only methods, only failures where the
 * request cannot have reached the remote's application (here: the socket is
 * closed before any response byte), never more than `attempts`, never past
 * the call's total deadline. Each upstream counts what actually arrived.
 */
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import t from 'tap';
import { startHostileUpstream, type HostileUpstream } from '../support/hostile-upstream.js';
import { reasonOf, rpc, rpcRequest, startGateway, type RunningGateway } from '../support/gateway.js';
import { closeServer, listenOnLoopback, trackConnections, type ConnectionTracker } from '../support/servers.js';

/** Closes its first `drop` connections before reading a byte, then answers every call with a result. */
interface DroppingUpstream {
  readonly url: string;
  connections(): number;
  answered(): number;
  close(): Promise<void>;
}

async function startDroppingUpstream(drop: number): Promise<DroppingUpstream> {
  let connections = 0;
  let answered = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.once('end', () => {
      answered++;
      const text = JSON.stringify({ jsonrpc: '2.0', id: 'r', result: { task: { id: 'task-1', contextId: 'ctx', status: { state: 'TASK_STATE_COMPLETED' } } } });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
      res.end(text);
    });
  });
  // Registered before the tracker so a dropped socket is gone before http sees it.
  server.prependListener('connection', (socket: Socket) => {
    connections++;
    if (connections <= drop) socket.destroy();
  });
  const tracker: ConnectionTracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  return { url: `http://127.0.0.1:${port}`, connections: () => connections, answered: () => answered, close: () => closeServer(server, tracker) };
}

let hostile: HostileUpstream;
let dropTwo: DroppingUpstream;
let dropThree: DroppingUpstream;
let gw: RunningGateway;

t.before(async () => {
  hostile = await startHostileUpstream();
  dropTwo = await startDroppingUpstream(2);
  dropThree = await startDroppingUpstream(3);
  gw = await startGateway(`
server: { maxEventLoopDelayMs: 0 }
defaults:
  allowPrivateNetwork: true
  circuitBreaker: { failureThreshold: 10000 }
  retries: { attempts: 3, baseMs: 10, maxMs: 20 }
  timeouts: { totalMs: 5000 }
remotes:
  hostile: { url: '${hostile.url}/' }
  single: { url: '${hostile.url}/', retries: { attempts: 1 } }
  recovers: { url: '${dropTwo.url}/' }
  staysDown: { url: '${dropThree.url}/' }
  # Ten attempts allowed, but each wait may be up to 300 ms and the whole call only has 400.
  deadline:
    url: '${hostile.url}/'
    retries: { attempts: 10, baseMs: 300, maxMs: 300 }
    timeouts: { totalMs: 400 }
`);
});
t.teardown(async () => {
  await gw.close();
  await Promise.all([hostile.close(), dropTwo.close(), dropThree.close()]);
});

const seenAt = (path: string) => hostile.requests.filter((r) => r.url.startsWith(path)).length;

function attemptsLogged(requestId: string): unknown {
  const line = gw.logs.find((l) => l.requestId === requestId && l.msg === 'call') as { call?: { attempts?: unknown } } | undefined;
  return line?.call?.attempts;
}

t.test('GetTask: two dropped connections, then success on the 3rd attempt (attempts: 3)', async (t) => {
  const reply = await rpc(`${gw.url}/remotes/recovers`, rpcRequest('GetTask', 'g1', { id: 'task-1' }), { 'x-request-id': 'retry-ok' });
  t.ok(reply.json.result, 'the caller sees the success');
  t.equal(reply.json.id, 'g1');
  t.equal(dropTwo.connections(), 3, 'three connections: two dropped, one answered');
  t.equal(dropTwo.answered(), 1);
  t.equal(attemptsLogged('retry-ok'), 3, 'the call log counts 3 attempts');
});

t.test('GetTask: three dropped connections with attempts: 3 → UPSTREAM_RESET, no 4th attempt', async (t) => {
  const reply = await rpc(`${gw.url}/remotes/staysDown`, rpcRequest('GetTask', 'g2', { id: 'task-1' }));
  t.equal(reasonOf(reply), 'UPSTREAM_RESET');
  t.equal(dropThree.connections(), 3, 'exactly attempts connections');
  t.equal(dropThree.answered(), 0);
});

t.test('GetTask against close-no-bytes: exactly `attempts` requests reach the remote', async (t) => {
  const before = seenAt('/close-no-bytes/n=1');
  const reply = await rpc(`${gw.url}/remotes/hostile/close-no-bytes/n=1`, rpcRequest('GetTask', 'g3', { id: 'task-1' }));
  t.equal(reasonOf(reply), 'UPSTREAM_RESET');
  t.equal(seenAt('/close-no-bytes/n=1') - before, 3);
});

t.test('attempts: 1 means no retry, even for GetTask', async (t) => {
  const before = seenAt('/close-no-bytes/n=2');
  const reply = await rpc(`${gw.url}/remotes/single/close-no-bytes/n=2`, rpcRequest('GetTask', 'g4', { id: 'task-1' }));
  t.equal(reasonOf(reply), 'UPSTREAM_RESET');
  t.equal(seenAt('/close-no-bytes/n=2') - before, 1);
});

for (const method of ['SendMessage', 'message/send']) {
  t.test(`${method} is never retried: the remote sees exactly one request`, async (t) => {
    const path = `/close-no-bytes/m=${method.replace('/', '.')}`;
    const before = seenAt(path);
    const params = { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } };
    const reply = await rpc(`${gw.url}/remotes/hostile${path}`, rpcRequest(method, 's1', params));
    t.equal(reasonOf(reply), 'UPSTREAM_RESET');
    t.equal(seenAt(path) - before, 1);
  });
}

t.test('retries stop at the total deadline, well short of attempts: 10', async (t) => {
  const before = seenAt('/close-no-bytes/n=3');
  const started = performance.now();
  const reply = await rpc(`${gw.url}/remotes/deadline/close-no-bytes/n=3`, rpcRequest('GetTask', 'g5', { id: 'task-1' }));
  const elapsed = performance.now() - started;
  t.match(reasonOf(reply), /^(UPSTREAM_RESET|UPSTREAM_TIMEOUT)$/);
  const sent = seenAt('/close-no-bytes/n=3') - before;
  // Nine waits averaging 150 ms need ~1.35 s; inside 400 ms only a few fit.
  t.ok(sent >= 1 && sent < 10, `${sent} attempts inside the 400 ms budget`);
  t.ok(elapsed < 400 + 1500, `answered near the deadline (${Math.round(elapsed)} ms)`);
});
