/**
 * Per-remote admission limits end to end, against real upstreams on
 * 127.0.0.1: concurrency slots with a bounded queue and queue timeout, and
 * the token bucket rate limit. Each bound is exercised just under (the call
 * passes) and just over (the typed error, and nothing reaches the remote).
 * Slow calls are held by the upstream until the test releases them, so no
 * assertion depends on how fast a loaded machine is.
 */
import t from 'tap';
import { request } from 'undici';
import { startHeldUpstream, type HeldUpstream } from '../support/held-upstream.js';
import { gatewayInfoOf, reasonOf, rpc, rpcRequest, startGateway, type RunningGateway } from '../support/gateway.js';

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
  circuitBreaker: { failureThreshold: 10000 }
remotes:
  # A queued call may wait long enough here for a slot to free up.
  roomy:
    url: ${upstream.url}/
    limits: { maxConcurrent: 2, maxQueued: 1 }
    timeouts: { queueTimeoutMs: 10000 }
  # The same slots, but a queued call gives up after 300 ms.
  tight:
    url: ${upstream.url}/
    limits: { maxConcurrent: 2, maxQueued: 1 }
    timeouts: { queueTimeoutMs: 300 }
  # One token per 500 ms: slow enough that four calls sent together all meet an unrefilled bucket.
  rated:
    url: ${upstream.url}/
    rateLimit: { perSecond: 2, burst: 3 }
  # A bucket of one that refills slowly: the second call, a stream, meets it empty.
  trickle:
    url: ${upstream.url}/
    rateLimit: { perSecond: 0.1, burst: 1 }
`);
});
t.teardown(async () => {
  await gw.close();
  await upstream.close();
});

const call = (path: string, id: string | number = 'c1') => rpc(`${gw.url}/remotes/${path}`, rpcRequest('GetTask', id, { id: 'task-1' }));

async function remoteState(name: string): Promise<Record<string, unknown>> {
  const res = await request(`${gw.url}/readyz?detail=1`);
  const body = (await res.body.json()) as { remotes: { name: string }[] };
  return body.remotes.find((r) => r.name === name) as Record<string, unknown>;
}

async function waitForState(name: string, expected: Record<string, unknown>): Promise<void> {
  const until = Date.now() + 15_000;
  for (;;) {
    const state = await remoteState(name);
    if (Object.entries(expected).every(([k, v]) => state[k] === v)) return;
    if (Date.now() > until) throw new Error(`remote ${name}: state ${JSON.stringify(state)}, wanted ${JSON.stringify(expected)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

t.test('concurrency: 2 in flight + 1 queued succeed; the 4th is OVERLOADED at once', async (t) => {
  let settled = 0;
  const track = <T>(p: Promise<T>) => p.finally(() => settled++);
  const inFlight = [track(call('roomy/hold', 'a')), track(call('roomy/hold', 'b'))];
  await upstream.waitForHeld(2);
  const queued = track(call('roomy/hold', 'c'));
  await waitForState('roomy', { inFlight: 2, queued: 1 });

  const before = upstream.requests.length;
  const fourth = await call('roomy/hold', 'd');
  t.equal(reasonOf(fourth), 'OVERLOADED', 'queue full → OVERLOADED');
  t.equal(fourth.json.id, 'd');
  t.equal(gatewayInfoOf(fourth)?.metadata.remote, 'roomy');
  t.equal(settled, 0, 'answered while the three admitted calls are still held upstream');
  t.equal(upstream.requests.length, before, 'the refused call never reached the remote');

  upstream.release();
  await upstream.waitForHeld(1);
  t.equal(upstream.requests.length, before + 1, 'the queued call reached the remote once a slot freed');
  upstream.release();
  const replies = await Promise.all([...inFlight, queued]);
  for (const reply of replies) t.ok(reply.json.result, `call ${String(reply.json.id)} succeeded`);
  t.match(await remoteState('roomy'), { inFlight: 0, queued: 0 }, 'slots released');
});

t.test('concurrency: a queued call past queueTimeoutMs is OVERLOADED; a call after the slots free passes', async (t) => {
  const inFlight = [call('tight/hold', 'a'), call('tight/hold', 'b')];
  await upstream.waitForHeld(2);
  const before = upstream.requests.length;
  const queuedAt = performance.now();
  const queued = await call('tight/hold', 'q');
  const waited = performance.now() - queuedAt;
  t.equal(reasonOf(queued), 'OVERLOADED');
  // Timers never fire early; a little slack for the clock's granularity.
  t.ok(waited >= 290, `it waited queueTimeoutMs first (${Math.round(waited)} ms)`);
  t.equal(upstream.held(), 2, 'the slots it waited for were never freed');
  t.equal(upstream.requests.length, before, 'the timed-out call never reached the remote');
  upstream.release();
  for (const reply of await Promise.all(inFlight)) t.ok(reply.json.result);
  const after = await call('tight/ok', 'after');
  t.ok(after.json.result, 'slots are free again');
});

t.test('rate limit: a burst of 3 passes, the 4th is RATE_LIMITED with retryAfterMs; after waiting one passes', async (t) => {
  const before = upstream.requests.length;
  const replies = await Promise.all([1, 2, 3, 4].map((i) => call('rated/ok', i)));
  const passed = replies.filter((r) => r.json.result);
  const limited = replies.filter((r) => reasonOf(r) === 'RATE_LIMITED');
  t.equal(passed.length, 3, 'burst: 3 pass');
  t.equal(limited.length, 1, 'the 4th is refused');
  t.equal(upstream.requests.length, before + 3, 'the refused call never reached the remote');

  const refused = limited[0]!;
  const retryAfterMs = Number(gatewayInfoOf(refused)?.metadata.retryAfterMs);
  t.ok(Number.isInteger(retryAfterMs) && retryAfterMs >= 1 && retryAfterMs <= 500, `retryAfterMs ${retryAfterMs} within one token's refill time`);
  t.equal(refused.headers['retry-after'], '1', 'Retry-After in whole seconds, rounded up');
  t.equal(gatewayInfoOf(refused)?.metadata.remote, 'rated');

  await new Promise((r) => setTimeout(r, retryAfterMs + 20));
  const later = await call('rated/ok', 'later');
  t.ok(later.json.result, 'a token refilled: one call passes');
});

t.test('rate limit on a streaming call: one RATE_LIMITED envelope (no stream started) carrying retryAfterMs, as a unary call gets', async (t) => {
  t.ok((await call('trickle/ok', 'first')).json.result, 'the one token is spent');
  const res = await request(`${gw.url}/remotes/trickle/ok`, {
    method: 'POST',
    body: JSON.stringify(rpcRequest('SendStreamingMessage', 'stream-1', { message: { messageId: 'm', role: 'ROLE_USER', parts: [] } })),
  });
  const reply = (await res.body.json()) as Record<string, unknown>;
  t.match(String(res.headers['content-type']), /^application\/json/, 'refused before any stream: one JSON envelope');
  t.equal(reply.id, 'stream-1');
  const info = gatewayInfoOf(reply);
  t.equal(info?.reason, 'RATE_LIMITED');
  const retryAfterMs = Number(info?.metadata.retryAfterMs);
  t.ok(retryAfterMs > 0 && retryAfterMs <= 10_000, `retryAfterMs ${retryAfterMs} within one token's refill time`);
  t.equal(res.headers['retry-after'], String(Math.ceil(retryAfterMs / 1000)));
});
