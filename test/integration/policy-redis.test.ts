/**
 * The shared (Redis) rate-limit store against a real redis-server child
 * process on 127.0.0.1: two gateways in front of one upstream spend one
 * bucket; the Lua script refills over the server's time; a slow or dead
 * Redis lets calls through (fail open) and is reported once per outage.
 * Without redis-server on PATH these tests skip with a loud notice, unless
 * A2A_EGRESS_REQUIRE_REDIS=1 (set by .ci/run after installing it), which makes
 * a missing redis-server a failure.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, connect } from 'node:net';
import t from 'tap';
import { request } from 'undici';
import { parseConfig } from '../../src/loader/load.js';
import { RedisClients, RedisTokenBucket, redactRedisUrl } from '../../src/policy/redis-bucket.js';
import { startHeldUpstream, type HeldUpstream } from '../support/held-upstream.js';
import { REDIS, skipWithout } from '../support/required-command.js';
import { gatewayInfoOf, reasonOf, rpc, rpcRequest, startGateway, type RunningGateway } from '../support/gateway.js';

const PASSWORD = 'redis-secret-pw';
// Every test but the config one needs the real server.
const skip = skipWithout(REDIS);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

/** Sends raw RESP commands and resolves with the first reply line. */
function redisSay(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('utf8');
      if (text.includes('\r\n')) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('error', reject);
    socket.write(`AUTH ${PASSWORD}\r\n${command}\r\n`);
  });
}

async function startRedis(port: number): Promise<ChildProcess> {
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (found.error) {
    throw new Error('redis-server is not on PATH: these tests need a real one (Debian: apt-get install redis-server; .ci/run installs it)');
  }
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--requirepass', PASSWORD, '--enable-debug-command', 'local'],
    { stdio: 'ignore' },
  );
  const until = Date.now() + 10_000;
  for (;;) {
    const reply = await redisSay(port, 'PING').catch(() => '');
    if (reply.includes('+PONG')) return child;
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    if (Date.now() > until) throw new Error('redis-server did not answer PING within 10 s');
    await sleep(25);
  }
}

async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

let port: number;
let redisUrl: string;
let redis: ChildProcess;
let upstream: HeldUpstream;
let gwA: RunningGateway;
let gwB: RunningGateway;

const gatewayYaml = () => `
server: { maxEventLoopDelayMs: 0 }
defaults:
  allowPrivateNetwork: true
  retries: { attempts: 1 }
  circuitBreaker: { failureThreshold: 10000 }
remotes:
  shared:
    url: ${upstream.url}/
    rateLimit:
      perSecond: 1
      burst: 3
      store: { type: redis, url: '${redisUrl}', keyPrefix: 'gw-test-${process.pid}:', timeoutMs: 300 }
`;

t.before(async () => {
  if (skip) return;
  port = await freePort();
  redisUrl = `redis://:${PASSWORD}@127.0.0.1:${port}/0`;
  redis = await startRedis(port);
  upstream = await startHeldUpstream();
  gwA = await startGateway(gatewayYaml());
  gwB = await startGateway(gatewayYaml());
});
t.teardown(async () => {
  await gwA?.close();
  await gwB?.close();
  await upstream?.close();
  if (redis) await stopRedis(redis);
});

const call = (gw: RunningGateway, id: string) => rpc(`${gw.url}/remotes/shared/ok`, rpcRequest('GetTask', id, { id: 'task-1' }));

t.test('config: the store is validated strictly', async (t) => {
  const yaml = (store: string) => `remotes:\n  r:\n    url: https://example.invalid/\n    rateLimit: { perSecond: 1, burst: 1, store: ${store} }\n`;
  t.ok(parseConfig(yaml(`{ type: redis, url: 'rediss://h:6380' }`), 'x.yaml'), 'rediss:// accepted, keyPrefix and timeoutMs optional');
  t.ok(parseConfig(yaml(`{ type: redis, url: 'redis://h', keyPrefix: 'p:', timeoutMs: 60000 }`), 'x.yaml'), 'timeoutMs at its maximum');
  t.throws(() => parseConfig(yaml(`{ type: redis, url: 'redis://h', timeoutMs: 60001 }`), 'x.yaml'), 'timeoutMs just over its maximum');
  t.throws(() => parseConfig(yaml(`{ type: redis, url: 'redis://h', timeoutMs: 0 }`), 'x.yaml'), 'timeoutMs 0');
  t.throws(() => parseConfig(yaml(`{ type: redis, url: 'http://h' }`), 'x.yaml'), 'not a redis url');
  t.throws(() => parseConfig(yaml(`{ type: memcached, url: 'redis://h' }`), 'x.yaml'), 'unknown store type');
  t.throws(() => parseConfig(yaml(`{ type: redis, url: 'redis://h', db: 2 }`), 'x.yaml'), 'unknown key');
  t.throws(() => parseConfig(yaml(`{ type: redis }`), 'x.yaml'), 'url required');
  t.equal(redactRedisUrl('redis://user:pw@h:1/0'), 'redis://h:1/0');
  t.equal(redactRedisUrl('rediss://:pw@h'), 'rediss://h');
});

t.test('two gateways share one bucket: 3 calls pass across both, the 4th is RATE_LIMITED on either', { skip }, async (t) => {
  const before = upstream.requests.length;
  const first = [await call(gwA, 'a1'), await call(gwB, 'b1'), await call(gwA, 'a2')];
  for (const reply of first) t.ok(reply.json.result, `call ${String(reply.json.id)} passed (burst not yet spent)`);
  const fourth = await call(gwB, 'b2');
  t.equal(reasonOf(fourth), 'RATE_LIMITED', 'the 4th call, on the other gateway, finds the shared bucket empty');
  const retryAfterMs = Number(gatewayInfoOf(fourth)?.metadata.retryAfterMs);
  t.ok(Number.isInteger(retryAfterMs) && retryAfterMs >= 1 && retryAfterMs <= 1000, `retryAfterMs ${retryAfterMs} within one token's refill time`);
  t.equal(reasonOf(await call(gwA, 'a3')), 'RATE_LIMITED', 'and on the first gateway too');
  t.equal(upstream.requests.length, before + 3, 'refused calls never reached the remote');

  const res = await request(`${gwA.url}/readyz?detail=1`);
  const text = await res.body.text();
  t.match(text, `redis://127.0.0.1:${port}/0`, 'the state names the store');
  t.notMatch(text, PASSWORD, 'without its password');
});

t.test('the Lua script: refill over the server clock, expiry, retryAfterMs', { skip }, async (t) => {
  const clients = new RedisClients();
  t.teardown(() => clients.close());
  const errors: Error[] = [];
  const store = { type: 'redis' as const, url: redisUrl, keyPrefix: `lua-${process.pid}:`, timeoutMs: 1000 };
  const bucket = new RedisTokenBucket({ perSecond: 5, burst: 2, store, remote: 'refill', onError: (e) => errors.push(e) }, clients);
  // A second client = a second replica: same key, same tokens.
  const otherClients = new RedisClients();
  t.teardown(() => otherClients.close());
  const replica = new RedisTokenBucket({ perSecond: 5, burst: 2, store, remote: 'refill' }, otherClients);

  t.same(await bucket.tryTake(), { ok: true }, '1st of burst 2');
  t.same(await replica.tryTake(), { ok: true }, '2nd of burst 2, from the other replica');
  const empty = await bucket.tryTake();
  t.equal(empty.ok, false, 'burst + 1 refused');
  const wait = empty.ok ? 0 : empty.retryAfterMs;
  t.ok(wait >= 100 && wait <= 200, `retryAfterMs ${wait}: one token at 5/s is 200 ms, minus the time already elapsed`);

  await sleep(wait + 60);
  t.same(await replica.tryTake(), { ok: true }, 'after retryAfterMs a token has been refilled');
  t.equal((await bucket.tryTake()).ok, false, 'and only one');

  const ttl = Number((await redisSay(port, `PTTL lua-${process.pid}:refill`)).split('\r\n')[1]?.slice(1));
  t.ok(ttl > 0 && ttl <= 2 * 200 + 1000, `the key expires once idle past a full refill (${ttl} ms)`);
  const fields = await redisSay(port, `HGETALL lua-${process.pid}:refill`);
  t.match(fields, 'tokens', 'state is a hash of tokens');
  t.match(fields, 'at', 'and the server time of the last refill');
  t.same(errors, [], 'no store errors');
});

t.test('a store slower than timeoutMs fails open; just under it the answer is awaited', { skip }, async (t) => {
  const clients = new RedisClients();
  t.teardown(() => clients.close());
  const errors: Error[] = [];
  const base = { type: 'redis' as const, url: redisUrl, keyPrefix: `slow-${process.pid}:` };
  const patient = new RedisTokenBucket({ perSecond: 0.001, burst: 1, store: { ...base, timeoutMs: 700 }, remote: 'r' }, clients);
  const hasty = new RedisTokenBucket({ perSecond: 0.001, burst: 1, store: { ...base, timeoutMs: 100 }, remote: 'r', onError: (e) => errors.push(e) }, clients);
  t.same(await patient.tryTake(), { ok: true }, 'the only token');
  t.equal((await hasty.tryTake()).ok, false, 'bucket empty while Redis is quick');

  // Redis blocks for 300 ms: under the patient deadline, over the hasty one.
  const blocked = redisSay(port, 'DEBUG SLEEP 0.3');
  await sleep(30);
  const startedAt = performance.now();
  const [late, rushed] = await Promise.all([patient.tryTake(), hasty.tryTake()]);
  const took = performance.now() - startedAt;
  t.equal(late.ok, false, 'just under timeoutMs: the real (refusing) answer');
  t.same(rushed, { ok: true }, 'just over timeoutMs: allowed (fail open)');
  t.equal(errors.length, 1, 'reported');
  t.match(errors[0]?.message ?? '', /within 100 ms/);
  t.ok(took < 700, `nothing waited past the longest deadline (${Math.round(took)} ms)`);
  await blocked;
  t.equal((await hasty.tryTake()).ok, false, 'once Redis answers again the limit holds');
});

t.test('Redis stopped mid-test: calls pass (fail open) and each gateway reports it once', { skip }, async (t) => {
  const before = upstream.requests.length;
  await stopRedis(redis);
  const replies = [];
  for (let i = 0; i < 6; i++) replies.push(await call(i % 2 ? gwB : gwA, `down-${i}`));
  for (const reply of replies) t.ok(reply.json.result, `call ${String(reply.json.id)} passed with the limiter down`);
  t.equal(upstream.requests.length, before + 6, 'all reached the remote');
  for (const [name, gw] of [['A', gwA], ['B', gwB]] as const) {
    const lines = gw.logs.filter((l) => l.msg === 'rate-limit store failed; allowing calls until it answers');
    t.equal(lines.length, 1, `gateway ${name} logged the outage once`);
    t.equal(lines[0]?.remote, 'shared');
    t.equal(lines[0]?.store, `redis://127.0.0.1:${port}/0`);
    t.notMatch(JSON.stringify(gw.logs), PASSWORD, `gateway ${name} never logged the password`);
  }
});

t.test('Redis back: the limit holds again; the next outage is reported again', { skip }, async (t) => {
  const outageLines = () => gwA.logs.filter((l) => l.msg === 'rate-limit store failed; allowing calls until it answers').length;
  redis = await startRedis(port);
  // Calls pass while the client reconnects (at most a second apart) and while the fresh bucket has tokens.
  const until = Date.now() + 5_000;
  let limited = false;
  while (!limited && Date.now() < until) {
    limited = reasonOf(await call(gwA, 'back')) === 'RATE_LIMITED';
    if (!limited) await sleep(50);
  }
  t.ok(limited, 'the shared bucket limits calls again once Redis answers');
  t.equal(outageLines(), 1, 'recovery itself logs nothing new');
  await stopRedis(redis);
  t.ok((await call(gwA, 'down-again')).json.result, 'fail open again');
  t.equal(outageLines(), 2, 'a second outage is a second report');
});
