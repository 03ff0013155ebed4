/**
 * Reload is a contract (src/config/reload.ts): every key takes effect on
 * reload except the listen addresses, which keep their start values and are
 * named as needing a restart. One test per kind of key:
 * - server keys the gateway applies live (logLevel, auth, maxBufferedBytes,
 *   requestTimeoutMs, maxConnections, maxRequestsPerSocket, the pressure
 *   thresholds);
 * - restart-only keys (reported, not applied);
 * - runtime parts carried over by what they depend on (breaker, slots),
 *   credentials rebuilt on every reload without resetting them;
 * - cached cards dropped for changed remotes only.
 * The file watcher (atomic rename, Kubernetes `..data` symlink swap) is in
 * policy-reload-watch.test.ts.
 */
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import t, { type Test } from 'tap';
import { request } from 'undici';
import { parseConfig } from '../../src/loader/load.js';
import { RESTART_KEYS, planReload, reloadEffect } from '../../src/config/reload.js';
import { ServerSchema } from '../../src/config/schema.js';
import { createGateway, type Gateway } from '../../src/server.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { startCardServer, type CardServer } from '../support/card-server.js';
import { reasonOf, rpc, rpcRequest } from '../support/gateway.js';
import { startHeldUpstream, type HeldUpstream } from '../support/held-upstream.js';

let held: HeldUpstream;
let cards: CardServer;
let cards2: CardServer;
t.before(async () => {
  [held, cards, cards2] = await Promise.all([startHeldUpstream(), startCardServer(), startCardServer()]);
});
t.teardown(async () => {
  await Promise.all([held.close(), cards.close(), cards2.close()]);
});

interface Started {
  readonly gateway: Gateway;
  readonly url: string;
  readonly logs: Record<string, unknown>[];
  reload(yaml: string): readonly string[];
}

async function start(t: Test, yaml: string, env: Record<string, string | undefined> = {}): Promise<Started> {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const initial = parseConfig(yaml, 'reload.yaml');
  const gateway = await createGateway(initial, { logger: createLogger(initial.server.logLevel, sink), processMetrics: false, env });
  t.teardown(() => gateway.close());
  const { url } = await gateway.listen();
  return { gateway, url, logs, reload: (next) => gateway.reload(parseConfig(next, 'reload.yaml')).restartNeeded };
}

const call = (url: string, remote: string, path: string, id: string, headers: Record<string, string> = {}) =>
  rpc(`${url}/remotes/${remote}/${path}`, rpcRequest('GetTask', id, { id: 'task-1' }), headers);

t.test('the contract: every server key is live except the listen addresses (the push and gRPC listeners’ included) and the trace exporter', async (t) => {
  t.same(RESTART_KEYS, ['server.host', 'server.port', 'server.opsPort', 'server.push', 'remotes.<name>.listen', 'telemetry', 'server.grpc', 'remotes.<name>.grpc.listen', 'server.workers']);
  t.equal(reloadEffect('server.grpc.tls.certFile'), 'restart');
  t.equal(reloadEffect('remotes.<name>.grpc.listen.port'), 'restart');
  t.equal(reloadEffect('remotes.<name>.grpc.target'), 'live', 'the remote’s gRPC endpoint changes on reload');
  t.equal(reloadEffect('remotes.<name>.listen.port'), 'restart');
  t.equal(reloadEffect('server.push.delivery.maxAttempts'), 'restart');
  t.equal(reloadEffect('telemetry.traces.endpoint'), 'restart');
  for (const key of Object.keys(ServerSchema.properties)) {
    t.equal(reloadEffect(`server.${key}`), ['host', 'port', 'opsPort', 'grpc', 'push', 'workers'].includes(key) ? 'restart' : 'live', `server.${key}`);
  }
  t.equal(reloadEffect('limits.maxResponseBytes'), 'live');
});

t.test('server.push and telemetry keep their started values on reload and are named when changed', async (t) => {
  const yaml = (push: string, traces: string) =>
    `server:\n  push: { port: 0, publicBaseUrl: 'http://127.0.0.1:1/push', keys: { env: K }${push} }\ntelemetry:\n  traces: { endpoint: 'http://127.0.0.1:4318'${traces} }\nremotes:\n  a: { url: 'https://a.example.com/' }\n`;
  const before = parseConfig(yaml('', ''));
  t.same(planReload(before, parseConfig(yaml('', ''))).restartNeeded, [], 'unchanged: nothing to restart');
  const next = planReload(before, parseConfig(yaml(', maxBodyBytes: 2048', ', sampleRatio: 0.5')));
  t.same(next.restartNeeded, ['server.push', 'telemetry']);
  t.same(next.config.server.push, before.server.push, 'the push listener’s settings stay as started');
  t.same(next.config.telemetry, before.telemetry, 'and the exporter’s');
});

t.test('server keys applied live: logLevel, auth, maxRequestsPerSocket, maxConnections', async (t) => {
  const base = (server: string) => `
server: { host: 127.0.0.1, port: 0, maxEventLoopDelayMs: 0${server} }
remotes:
  a: { url: '${held.url}/', allowPrivateNetwork: true, retries: { attempts: 1 } }
`;
  const env: Record<string, string | undefined> = { CALLER_TOKENS: 'caller-token-1' };
  const gw = await start(t, base(''), env);
  const calls = () => gw.logs.filter((l) => l.msg === 'call').length;

  // logLevel
  await call(gw.url, 'a', 'ok', 'l1');
  t.equal(calls(), 1, 'info: one line per call');
  t.same(gw.reload(base(', logLevel: warn')), [], 'nothing needs a restart');
  await call(gw.url, 'a', 'ok', 'l2');
  t.equal(calls(), 1, 'warn: no call line');
  gw.reload(base(', logLevel: info'));
  await call(gw.url, 'a', 'ok', 'l3');
  t.equal(calls(), 2, 'info again');

  // server.auth turned on by reload takes effect at once, and off again.
  gw.reload(base(', auth: { type: bearer, tokensEnv: CALLER_TOKENS }'));
  const refused = await call(gw.url, 'a', 'ok', 'auth-1');
  t.equal(refused.status, 401, 'an unauthenticated call is refused after the reload');
  t.equal(reasonOf(refused), 'UNAUTHENTICATED');
  t.ok((await call(gw.url, 'a', 'ok', 'auth-2', { authorization: 'Bearer caller-token-1' })).json.result, 'a token from the env passes');
  const card = await request(`${gw.url}/remotes/a/.well-known/agent-card.json`);
  await card.body.dump();
  t.equal(card.statusCode, 401, 'cards are behind it too');
  t.throws(() => gw.reload(base(', auth: { type: bearer, tokensEnv: NOT_SET_ANYWHERE }')), { name: 'CredentialError' }, 'a missing token env refuses the reload');
  t.equal((await call(gw.url, 'a', 'ok', 'auth-3')).status, 401, 'and the auth in force stays');
  gw.reload(base(''));
  t.ok((await call(gw.url, 'a', 'ok', 'auth-4')).json.result, 'turned off again');

  // maxRequestsPerSocket: the Nth reply on a keep-alive socket says Connection: close.
  const keepAlive = await request(`${gw.url}/healthz`);
  await keepAlive.body.dump();
  t.not(keepAlive.headers.connection, 'close');
  gw.reload(base(', maxRequestsPerSocket: 1'));
  const last = await request(`${gw.url}/healthz`, { reset: false });
  await last.body.dump();
  t.equal(last.headers.connection, 'close', 'one request per socket after the reload');

  // maxConnections: lowered to 2, a 3rd socket is closed without an answer.
  gw.reload(base(', maxConnections: 2'));
  const port = Number(new URL(gw.url).port);
  const sockets: Socket[] = [];
  t.teardown(() => sockets.forEach((s) => s.destroy()));
  const open = () =>
    new Promise<Socket>((resolve) => {
      const s = connect(port, '127.0.0.1', () => resolve(s));
      s.on('error', () => {});
      sockets.push(s);
    });
  await open();
  await open();
  const until = Date.now() + 5000;
  while ((await new Promise<number>((r) => gw.gateway.app.server.getConnections((_e, n) => r(n)))) < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  const third = await open();
  const answer = await new Promise<string>((resolve) => {
    let text = '';
    third.on('data', (d: Buffer) => (text += d.toString('latin1')));
    third.on('close', () => resolve(text === '' ? 'closed' : text.split('\r\n')[0]!));
    third.write('GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n');
  });
  t.equal(answer, 'closed', 'the third socket is dropped');
});

t.test('server keys applied live: requestTimeoutMs, maxBufferedBytes, the pressure thresholds', async (t) => {
  const MiB = 1024 * 1024;
  const base = (server: { requestTimeoutMs?: number; maxBufferedBytes?: number; maxHeapUsedBytes?: number } = {}) => `
server: { host: 127.0.0.1, port: 0, maxEventLoopDelayMs: 0, requestTimeoutMs: ${server.requestTimeoutMs ?? 60000}, maxBufferedBytes: ${server.maxBufferedBytes ?? 4 * MiB}, maxHeapUsedBytes: ${server.maxHeapUsedBytes ?? 0} }
defaults: { allowPrivateNetwork: true, retries: { attempts: 1 }, timeouts: { cardCacheTtlMs: 1, cardCacheStaleMs: 1 }, limits: { maxCardBytes: ${2 * MiB}, maxResponseBytes: 65536, maxEventBytes: 65536 } }
remotes:
  a: { url: '${held.url}/' }
  big: { url: '${cards.url}/a2a', agentCardUrl: '${cards.url}/big-card?bytes=${Math.round(1.5 * MiB)}' }
`;
  const gw = await start(t, base());

  // requestTimeoutMs: 60 s at start (checked every 1 s), lowered to 1 s by reload.
  gw.reload(base({ requestTimeoutMs: 1000 }));
  const port = Number(new URL(gw.url).port);
  const started = performance.now();
  const silent = await new Promise<string>((resolve) => {
    const s = connect(port, '127.0.0.1');
    let text = '';
    s.on('error', () => {});
    s.on('data', (d: Buffer) => (text += d.toString('latin1')));
    s.on('close', () => resolve(text.split('\r\n')[0] ?? ''));
    setTimeout(() => s.destroy(), 10_000).unref();
  });
  const elapsed = performance.now() - started;
  t.equal(silent, 'HTTP/1.1 408 Request Timeout', 'the lowered bound applies');
  t.ok(elapsed < 3000, `within the new bound plus the start-time check interval (${Math.round(elapsed)} ms)`);

  // maxBufferedBytes: a 1.5 MiB card fits in 4 MiB, not in 1 MiB.
  const cardStatus = async () => {
    const res = await request(`${gw.url}/remotes/big/.well-known/agent-card.json`);
    const body = (await res.body.json()) as { reason?: string };
    return res.statusCode === 200 ? 'ok' : String(body.reason);
  };
  t.equal(await cardStatus(), 'ok', '4 MiB budget: served');
  gw.reload(base({ maxBufferedBytes: MiB }));
  // Past the 1 ms TTL and stale window of the card fetched above.
  await new Promise((r) => setTimeout(r, 20));
  t.equal(await cardStatus(), 'GATEWAY_OVERLOADED', '1 MiB budget after the reload: refused');

  // Pressure: off at start; a 1-byte heap bound turned on by reload refuses calls after the next sample.
  t.ok((await call(gw.url, 'a', 'ok', 'p1')).json.result);
  gw.reload(base({ maxHeapUsedBytes: 1 }));
  await new Promise((r) => setTimeout(r, 1200));
  const overloaded = await call(gw.url, 'a', 'ok', 'p2');
  t.equal(reasonOf(overloaded), 'GATEWAY_OVERLOADED', 'the threshold turned on by reload applies');
  t.equal(overloaded.headers['retry-after'], '1');
  gw.reload(base());
  t.ok((await call(gw.url, 'a', 'ok', 'p3')).json.result, 'and off again');
});

t.test('restart-only keys keep their start values and are named', async (t) => {
  const gw = await start(t, `remotes:\n  a: { url: '${held.url}/', allowPrivateNetwork: true }\nserver: { host: 127.0.0.1, port: 0, maxEventLoopDelayMs: 0 }\n`);
  const restart = gw.reload(`remotes:\n  a: { url: '${held.url}/', allowPrivateNetwork: true }\nserver: { host: 127.0.0.2, port: 1, opsPort: 2, maxEventLoopDelayMs: 0, drainMs: 1 }\n`);
  t.same(restart, ['server.host', 'server.port', 'server.opsPort']);
  t.match(gw.gateway.config().server, { host: '127.0.0.1', port: 0, opsPort: undefined, drainMs: 1 }, 'addresses kept, the rest applied');
  t.ok((await call(gw.url, 'a', 'ok', 'r1')).json.result, 'still listening where it was');
  const listener = gw.reload(`remotes:\n  a: { url: '${held.url}/', allowPrivateNetwork: true, listen: { port: 0 } }\nserver: { host: 127.0.0.1, port: 0, maxEventLoopDelayMs: 0 }\n`);
  t.same(listener, ['remotes.a.listen'], 'a remote’s own listener is named too');
  t.equal(gw.gateway.config().remotes.get('a')?.listen, undefined, 'and not started by the reload');
});

t.test('runtime parts are carried over by what they depend on; credentials are rebuilt without resetting them', async (t) => {
  const env: Record<string, string | undefined> = { REMOTE_TOKEN: 'token-one' };
  const yaml = (breaker: string, extra = '') => `
server: { host: 127.0.0.1, port: 0, maxEventLoopDelayMs: 0 }
defaults: { allowPrivateNetwork: true, retries: { attempts: 1 } }
remotes:
  secured:
    url: '${held.url}/'
    auth: { type: bearer, tokenEnv: REMOTE_TOKEN }
    circuitBreaker: { failureThreshold: 1, ${breaker} }
    limits: { maxConcurrent: 1, maxQueued: 0 }
${extra}`;
  const gw = await start(t, yaml('cooldownMs: 800'), env);
  const seenToken = () => held.requests.at(-1)?.headers.authorization;

  t.ok((await call(gw.url, 'secured', 'ok', 'c1')).json.result);
  t.equal(seenToken(), 'Bearer token-one');
  t.equal(reasonOf(await call(gw.url, 'secured', 'fail', 'c2')), 'UPSTREAM_HTTP_ERROR', 'one failure opens the circuit');
  t.equal(reasonOf(await call(gw.url, 'secured', 'ok', 'c3')), 'CIRCUIT_OPEN');

  // Same policy, a new token and an unrelated change: the open circuit stays open.
  env.REMOTE_TOKEN = 'token-two';
  gw.reload(yaml('cooldownMs: 800', `  other: { url: '${held.url}/' }\n`));
  t.equal(reasonOf(await call(gw.url, 'secured', 'ok', 'c4')), 'CIRCUIT_OPEN', 'a remote with auth keeps its breaker across a reload');
  await new Promise((r) => setTimeout(r, 900));
  t.ok((await call(gw.url, 'secured', 'ok', 'c5')).json.result, 'after the cooldown the probe passes');
  t.equal(seenToken(), 'Bearer token-two', 'with the credential rebuilt by the reload');

  // Slots: a held call keeps the only slot across a reload.
  const holding = call(gw.url, 'secured', 'hold', 'c6');
  await held.waitForHeld(1);
  gw.reload(yaml('cooldownMs: 800'));
  t.equal(reasonOf(await call(gw.url, 'secured', 'ok', 'c7')), 'OVERLOADED', 'the slot taken before the reload is still taken');
  held.release();
  t.ok((await holding).json.result);

  // A changed breaker setting builds a new breaker (closed).
  t.equal(reasonOf(await call(gw.url, 'secured', 'fail', 'c8')), 'UPSTREAM_HTTP_ERROR');
  t.equal(reasonOf(await call(gw.url, 'secured', 'ok', 'c9')), 'CIRCUIT_OPEN');
  gw.reload(yaml('cooldownMs: 60000'));
  t.ok((await call(gw.url, 'secured', 'ok', 'c10')).json.result, 'circuitBreaker changed: a fresh breaker');
});

t.test('cached cards of changed remotes are dropped; unchanged remotes keep theirs', async (t) => {
  const yaml = (movedUrl: string) => `
server: { host: 127.0.0.1, port: 0, maxEventLoopDelayMs: 0 }
defaults: { allowPrivateNetwork: true }
remotes:
  moving: { url: '${movedUrl}/a2a' }
  staying: { url: '${cards.url}/a2a', agentCardUrl: '${cards.url}/staying/card.json' }
`;
  const gw = await start(t, yaml(cards.url));
  const getCard = async (remote: string) => {
    const res = await request(`${gw.url}/remotes/${remote}/.well-known/agent-card.json`);
    await res.body.dump();
    return res.statusCode;
  };
  const hits = (server: CardServer, path: string) => server.cardHits.filter((h) => h.path === path).length;
  t.equal(await getCard('moving'), 200);
  t.equal(await getCard('staying'), 200);
  t.equal(hits(cards, '/.well-known/agent-card.json'), 1);
  t.equal(await getCard('moving'), 200);
  t.equal(hits(cards, '/.well-known/agent-card.json'), 1, 'cached');

  gw.reload(yaml(cards2.url));
  t.equal(await getCard('moving'), 200);
  t.equal(hits(cards2, '/.well-known/agent-card.json'), 1, 'the moved remote’s card comes from its new origin');
  t.equal(hits(cards, '/.well-known/agent-card.json'), 1, 'not the stale one');
  t.equal(await getCard('staying'), 200);
  t.equal(hits(cards, '/staying/card.json'), 1, 'the unchanged remote’s card stayed cached');
});
