/**
 * /healthz, /readyz (plain and ?detail=1) and the separate ops port: what an
 * orchestrator's probes and an operator see, on real sockets.
 */
import t from 'tap';
import { request } from 'undici';
import { parseConfig } from '../../src/loader/load.js';
import { createGateway } from '../../src/server.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { startHostileUpstream, type HostileUpstream } from '../support/hostile-upstream.js';
import { rpc, rpcRequest } from '../support/gateway.js';
import { getText, startOpsGateway } from '../support/ops-gateway.js';

const SECRET = 'ops-test-bearer-secret-value';

let upstream: HostileUpstream;
t.before(async () => {
  upstream = await startHostileUpstream();
});
t.teardown(() => upstream.close());

// server.drainMs is short where a test does not need it: close() waits up to drainMs for a caller
// socket that connected but never sent a request (Node's closeIdleConnections skips those).
const remotesYaml = () => `
remotes:
  hostile:
    url: ${upstream.url}/
    allowPrivateNetwork: true
    timeouts: { totalMs: 3000 }
    auth: { type: bearer, tokenEnv: OPS_TEST_TOKEN }
  other:
    url: ${upstream.url}/ok
    allowPrivateNetwork: true
`;
const env = { OPS_TEST_TOKEN: SECRET };

t.test('on the caller port: healthz 200, readyz 200 while listening, detail lists remotes without secrets', async (t) => {
  const gw = await startOpsGateway(`server: { drainMs: 300 }\n${remotesYaml()}`, { env });
  t.teardown(() => gw.close());

  const health = await getText(`${gw.url}/healthz`);
  t.equal(health.status, 200);
  t.same(JSON.parse(health.text), { status: 'ok' });
  t.equal(health.headers['cache-control'], 'no-store');

  const ready = await getText(`${gw.url}/readyz`);
  t.equal(ready.status, 200);
  t.match(JSON.parse(ready.text), { status: 'ready', remotes: 2 });

  const detail = await getText(`${gw.url}/readyz?detail=1`);
  t.equal(detail.status, 200);
  const body = JSON.parse(detail.text) as { remotes: Record<string, unknown>[] };
  t.equal(body.remotes.length, 2);
  t.match(body.remotes, [
    { name: 'hostile', origin: upstream.url, circuit: 'closed', credential: /env OPS_TEST_TOKEN/ },
    { name: 'other', origin: upstream.url, circuit: 'closed' },
  ]);
  t.notOk(detail.text.includes(SECRET), 'no credential value');
  t.notOk(detail.text.includes('/ok'), 'origin only, not the path');

  // detail=0 is the plain form.
  t.match(JSON.parse((await getText(`${gw.url}/readyz?detail=0`)).text), { remotes: 2 });
});

t.test('readyz is 503 before listening', async (t) => {
  const gateway = await createGateway(parseConfig(remotesYaml(), 'x.yaml'), { env, processMetrics: false, logger: createLogger('silent') });
  t.teardown(() => gateway.close());
  const res = await gateway.app.inject({ method: 'GET', url: '/readyz' });
  t.equal(res.statusCode, 503);
  t.match(res.json(), { status: 'not ready' });
  t.equal((await gateway.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'alive all the same');
});

t.test('with server.opsPort: ops routes only on the ops port, /remotes only on the caller port', async (t) => {
  const gw = await startOpsGateway(`server: { opsPort: 0, drainMs: 300 }\n${remotesYaml()}`, { env });
  t.teardown(() => gw.close());
  t.not(gw.opsUrl, gw.url, 'a second port');

  for (const path of ['/healthz', '/readyz', '/readyz?detail=1', '/metrics']) {
    t.equal((await getText(`${gw.opsUrl}${path}`)).status, 200, `${path} on the ops port`);
    t.equal((await getText(`${gw.url}${path}`)).status, 404, `${path} not on the caller port`);
  }
  const call = await rpc(`${gw.url}/remotes/other`, rpcRequest('GetTask', 'c1', { id: 't' }));
  t.equal(call.json.id, 'c1', 'calls work on the caller port');
  const res = await request(`${gw.opsUrl}/remotes/other`, { method: 'POST', body: JSON.stringify(rpcRequest('GetTask', 'c2')) });
  await res.body.text();
  t.equal(res.statusCode, 404, '/remotes is not served on the ops port');
});

t.test('readyz turns 503 as soon as close() starts, while a slow call drains', async (t) => {
  const gw = await startOpsGateway(`server: { opsPort: 0, drainMs: 5000 }\n${remotesYaml()}`, { env });
  t.teardown(() => gw.close());
  t.equal((await getText(`${gw.opsUrl}/readyz`)).status, 200, 'ready before');

  const slow = rpc(`${gw.url}/remotes/hostile/slow-headers/ms=600`, rpcRequest('GetTask', 'slow-1', { id: 't' }));
  // Wait until the slow call has reached the upstream, so it is truly in flight.
  while (!upstream.requests.some((r) => r.url.startsWith('/slow-headers'))) await new Promise((r) => setTimeout(r, 10));
  const closeStarted = performance.now();
  const closing = gw.close();

  const during = await getText(`${gw.opsUrl}/readyz`);
  t.equal(during.status, 503, 'not ready while draining');
  t.match(JSON.parse(during.text), { status: 'not ready' });
  t.equal((await getText(`${gw.opsUrl}/healthz`)).status, 200, 'still alive while draining');

  const reply = await slow;
  t.equal(reply.json.id, 'slow-1', 'the in-flight call finished with its own id');
  t.ok(reply.json.result, 'and its result');
  await closing;
  t.ok(performance.now() - closeStarted < 4000, 'close() returns once the last call is done, not after drainMs');
  await t.rejects(getText(`${gw.opsUrl}/readyz`), 'the ops port is closed after close()');
});
