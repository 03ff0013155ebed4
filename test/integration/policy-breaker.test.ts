/**
 * The per-remote circuit breaker end to end: closed → open after
 * failureThreshold failures (HTML 502s, or refused connections), fail-fast
 * without touching the remote, half-open after the cooldown with exactly one
 * probe, closed again by a good probe and re-opened by a bad one. The state
 * is checked where operators see it: /readyz?detail=1 and /metrics.
 */
import t, { type Test } from 'tap';
import { request } from 'undici';
import { startHeldUpstream, type HeldUpstream } from '../support/held-upstream.js';
import { gatewayInfoOf, reasonOf, rpc, rpcRequest, startGateway, type RunningGateway } from '../support/gateway.js';

const COOLDOWN_MS = 400;

let upstream: HeldUpstream;
let gw: RunningGateway;

t.before(async () => {
  upstream = await startHeldUpstream();
  gw = await startGateway(`
# Event-loop pressure has its own test; a slow start on a loaded machine must not answer OVERLOADED here.
server: { maxEventLoopDelayMs: 0 }
defaults:
  allowPrivateNetwork: true
  retries: { attempts: 1 }
  circuitBreaker: { failureThreshold: 3, windowMs: 10000, cooldownMs: ${COOLDOWN_MS} }
remotes:
  flaky:
    url: ${upstream.url}/
  # Port 9 (discard) is closed on loopback: every call is refused.
  down:
    url: http://127.0.0.1:9/
`);
});
t.teardown(async () => {
  await gw.close();
  await upstream.close();
});

const call = (path: string, id: string | number = 'c1') => rpc(`${gw.url}/remotes/${path}`, rpcRequest('GetTask', id, { id: 'task-1' }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function circuitOf(name: string): Promise<unknown> {
  const res = await request(`${gw.url}/readyz?detail=1`);
  const body = (await res.body.json()) as { remotes: { name: string; circuit: unknown }[] };
  return body.remotes.find((r) => r.name === name)?.circuit;
}

async function metricOf(name: string): Promise<string | undefined> {
  const text = await (await request(`${gw.url}/metrics`)).body.text();
  return new RegExp(`^a2a_egress_circuit_state\\{remote="${name}"\\} (\\d+)$`, 'm').exec(text)?.[1];
}

/** Three failures that reach the remote; the third opens the circuit. */
async function openCircuit(t: Test): Promise<void> {
  for (let i = 1; i <= 3; i++) {
    const before = upstream.requests.length;
    const reply = await call('flaky/fail', `f${i}`);
    t.equal(reasonOf(reply), 'UPSTREAM_HTTP_ERROR', `failure ${i} is the remote's 502`);
    t.equal(upstream.requests.length, before + 1, `failure ${i} reached the remote (circuit still closed)`);
  }
}

t.test('3 failures open the circuit; calls fail fast without reaching the remote', async (t) => {
  t.equal(await circuitOf('flaky'), 'closed');
  await openCircuit(t);
  const before = upstream.requests.length;
  const refused = await call('flaky/ok', 'open-1');
  t.equal(reasonOf(refused), 'CIRCUIT_OPEN');
  t.equal(refused.json.id, 'open-1');
  const retryAfterMs = Number(gatewayInfoOf(refused)?.metadata.retryAfterMs);
  t.ok(retryAfterMs >= 1 && retryAfterMs <= COOLDOWN_MS, `retryAfterMs ${retryAfterMs} is the rest of the cooldown`);
  t.equal(upstream.requests.length, before, 'nothing reached the remote');
  t.equal(await circuitOf('flaky'), 'open', '/readyz?detail=1 shows open');
  t.equal(await metricOf('flaky'), '2', 'a2a_egress_circuit_state is 2 (open)');
});

t.test('after the cooldown exactly one probe passes; its success closes the circuit', async (t) => {
  await sleep(COOLDOWN_MS + 50);
  t.equal(await circuitOf('flaky'), 'half-open', 'half-open after the cooldown');
  t.equal(await metricOf('flaky'), '1', 'a2a_egress_circuit_state is 1 (half-open)');
  const before = upstream.requests.length;
  const probe = call('flaky/hold', 'probe');
  await upstream.waitForHeld(1);
  const second = await call('flaky/ok', 'while-probing');
  t.equal(reasonOf(second), 'CIRCUIT_OPEN', 'a second call while the probe is out is refused');
  t.equal(upstream.requests.length, before + 1, 'only the probe reached the remote');
  upstream.release();
  t.ok((await probe).json.result, 'the probe succeeded');
  t.equal(await circuitOf('flaky'), 'closed');
  t.equal(await metricOf('flaky'), '0', 'a2a_egress_circuit_state is 0 (closed)');
  t.ok((await call('flaky/ok', 'closed-again')).json.result, 'calls pass again');
});

t.test('a failing probe re-opens the circuit for another cooldown', async (t) => {
  await openCircuit(t);
  await sleep(COOLDOWN_MS + 50);
  const before = upstream.requests.length;
  const probe = await call('flaky/fail', 'bad-probe');
  t.equal(reasonOf(probe), 'UPSTREAM_HTTP_ERROR');
  t.equal(upstream.requests.length, before + 1, 'the probe reached the remote');
  const next = await call('flaky/ok', 'after-bad-probe');
  t.equal(reasonOf(next), 'CIRCUIT_OPEN', 're-opened at once');
  t.equal(upstream.requests.length, before + 1, 'nothing else reached the remote');
  t.equal(await circuitOf('flaky'), 'open');
  // Leave the remote healthy for whoever runs after: wait out the cooldown and probe successfully.
  await sleep(COOLDOWN_MS + 50);
  t.ok((await call('flaky/ok', 'recover')).json.result);
  t.equal(await circuitOf('flaky'), 'closed');
});

t.test('refused connections count too: 3 of them open the circuit', async (t) => {
  for (let i = 1; i <= 3; i++) t.equal(reasonOf(await call('down', `d${i}`)), 'UPSTREAM_REFUSED', `attempt ${i} refused by the OS`);
  t.equal(reasonOf(await call('down', 'd4')), 'CIRCUIT_OPEN');
  t.equal(await circuitOf('down'), 'open');
  t.equal(await circuitOf('flaky'), 'closed', 'breakers are per remote');
});
