/**
 * The webhook listener's bounds, each just under and just over, and
 * delivery to local agents that are slow, down, refusing or not where
 * their name says: the gateway never buffers without bound, and every
 * outcome has its reason in the metrics.
 */
import { request as httpRequest } from 'node:http';
import type { LookupAddress } from 'node:dns';
import t from 'tap';
import type { LookupFunction } from '../../src/push/delivery.js';
import { mintConfig, pushSettings, startPush, startReceiver, statusPush, type MintedConfig, type StartedPush } from '../support/push-kit.js';
import { delay, rawRequest, type RawReply } from '../support/servers.js';

function post(config: MintedConfig, body: string | Buffer): Promise<RawReply> {
  return rawRequest(config.url, { body, headers: { 'content-type': 'application/a2a+json', authorization: `Bearer ${config.credential}` } });
}

/** A request whose body is sent in parts: `first` now, the rest when `finish` is called. */
function heldPost(config: MintedConfig, body: string): { reply: Promise<number>; finish: () => void } {
  const bytes = Buffer.from(body);
  const req = httpRequest(config.url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', authorization: `Bearer ${config.credential}`, 'content-length': String(bytes.length) } });
  const reply = new Promise<number>((resolve, reject) => {
    req.once('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('error', reject);
  });
  req.write(bytes.subarray(0, 10));
  return { reply, finish: () => void req.end(bytes.subarray(10)) };
}

async function eventually(what: string, check: () => Promise<boolean> | boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`not in time: ${what}`);
    await delay(20);
  }
}

const delivered = (push: StartedPush, outcome: string) => push.count('a2a_egress_push_deliveries_total', { remote: 'weather', outcome });
const received = (push: StartedPush, outcome: string) => push.count('a2a_egress_push_received_total', { remote: 'weather', outcome });

t.test('body size: exactly maxBodyBytes is taken, one byte more is 413 (declared and chunked)', async (t) => {
  const push = await startPush(pushSettings({ maxBodyBytes: 1024 }));
  const receiver = await startReceiver();
  t.teardown(async () => {
    await push.close();
    await receiver.close();
  });
  const config = mintConfig(push.settings, receiver.url);
  const padded = (n: number, text: string) => {
    const json = JSON.stringify(statusPush(text));
    return json + ' '.repeat(n - Buffer.byteLength(json));
  };
  t.equal((await post(config, padded(1024, 'a'))).status, 202, 'just under: 1024 bytes');
  t.equal((await post(config, padded(1025, 'b'))).status, 413, 'just over: 1025 bytes');
  const chunked = async (body: string): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = httpRequest(config.url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', authorization: `Bearer ${config.credential}`, 'transfer-encoding': 'chunked' } });
      req.once('response', (res) => (res.resume(), resolve(res.statusCode ?? 0)));
      req.once('error', reject);
      req.write(body.slice(0, 500));
      req.end(body.slice(500));
    });
  t.equal(await chunked(padded(1024, 'c')), 202, 'chunked, just under');
  t.equal(await chunked(padded(1025, 'd')), 413, 'chunked, just over');
  await receiver.waitFor(2);
});

t.test('rate per config: the burst passes, one more is 429 with Retry-After; other configs are not affected', async (t) => {
  const push = await startPush(pushSettings({ rate: { perSecond: 0.001, burst: 3 } }));
  const receiver = await startReceiver();
  t.teardown(async () => {
    await push.close();
    await receiver.close();
  });
  const config = mintConfig(push.settings, receiver.url);
  for (let i = 0; i < 3; i++) t.equal((await post(config, JSON.stringify(statusPush(`n${i}`)))).status, 202, `push ${i + 1} of a burst of 3`);
  const over = await post(config, JSON.stringify(statusPush('n3')));
  t.equal(over.status, 429, 'the fourth');
  t.ok(Number(over.headers['retry-after']) >= 1);
  const another = mintConfig(push.settings, receiver.url);
  t.equal((await post(another, JSON.stringify(statusPush('other')))).status, 202, 'another config has its own bucket');
  t.equal(await received(push, 'PUSH_RATE_LIMITED'), 1);
});

t.test('concurrency: maxConcurrent pushes being read at once; one more is 503 PUSH_BUSY', async (t) => {
  const push = await startPush(pushSettings({ maxConcurrent: 2 }));
  const receiver = await startReceiver();
  t.teardown(async () => {
    await push.close();
    await receiver.close();
  });
  const config = mintConfig(push.settings, receiver.url);
  const first = heldPost(config, JSON.stringify(statusPush('slow 1')));
  await delay(150); // let the listener start reading it
  const second = heldPost(config, JSON.stringify(statusPush('slow 2')));
  await delay(150);
  const third = await post(config, JSON.stringify(statusPush('fast')));
  t.equal(third.status, 503, 'a third while two are being read');
  t.equal(third.headers['retry-after'], '1');
  first.finish();
  second.finish();
  t.equal(await first.reply, 202, 'the held ones complete');
  t.equal(await second.reply, 202);
  t.equal((await post(config, JSON.stringify(statusPush('after')))).status, 202, 'capacity is back');
  t.equal(await received(push, 'PUSH_BUSY'), 1);
});

t.test('a push whose body does not arrive in time: 408 PUSH_TIMEOUT', async (t) => {
  const push = await startPush(pushSettings({ requestTimeoutMs: 300 }));
  const receiver = await startReceiver();
  t.teardown(async () => {
    await push.close();
    await receiver.close();
  });
  const held = heldPost(mintConfig(push.settings, receiver.url), JSON.stringify(statusPush('never finished')));
  t.equal(await held.reply, 408);
  t.equal(await received(push, 'PUSH_TIMEOUT'), 1);
  t.equal(receiver.received.length, 0);
});

t.test('a slow local agent: its queue fills to maxQueuedPerTarget, one more is 503 PUSH_QUEUE_FULL; order is kept', async (t) => {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const push = await startPush(pushSettings({ delivery: { maxQueuedPerTarget: 2 } }));
  const receiver = await startReceiver(async () => (await gate, 200));
  t.teardown(async () => {
    release();
    await push.close();
    await receiver.close();
  });
  const config = mintConfig(push.settings, receiver.url);
  t.equal((await post(config, JSON.stringify(statusPush('one')))).status, 202);
  t.equal((await post(config, JSON.stringify(statusPush('two')))).status, 202, 'just under: 2 waiting for this agent');
  const three = JSON.stringify(statusPush('three'));
  const full = await post(config, three);
  t.equal(full.status, 503, 'just over');
  t.ok(Number(full.headers['retry-after']) > 0);
  t.equal(push.listener.delivery.queuedItems, 2, 'nothing more is held');
  release();
  await receiver.waitFor(2);
  await eventually('queue drained', () => push.listener.delivery.queuedItems === 0);
  t.equal((await post(config, three)).status, 202, 'the refused push, sent again as it was, is taken (not mistaken for a duplicate)');
  await receiver.waitFor(3);
  t.same(receiver.received.map((r) => (JSON.parse(r.body) as { statusUpdate: { status: { message: { parts: { text: string }[] } } } }).statusUpdate.status.message.parts[0]!.text), ['one', 'two', 'three']);
  t.equal(await received(push, 'PUSH_QUEUE_FULL'), 1);
});

t.test('bytes waiting for all local agents are bounded too', async (t) => {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const push = await startPush(pushSettings({ maxBodyBytes: 64 * 1024, delivery: { maxQueuedBytes: 64 * 1024 } }));
  const receiver = await startReceiver(async () => (await gate, 200));
  t.teardown(async () => {
    release();
    await push.close();
    await receiver.close();
  });
  const config = mintConfig(push.settings, receiver.url);
  const big = (tag: string) => JSON.stringify(statusPush(`${tag}${'x'.repeat(40 * 1024)}`));
  t.equal((await post(config, big('a'))).status, 202);
  t.equal((await post(config, big('b'))).status, 503, '80 KiB would be waiting: refused');
  t.ok(push.listener.delivery.queuedBytes <= 64 * 1024);
});

t.test('a local agent that is down: bounded retries, then PUSH_DELIVERY_FAILED; 4xx is not retried; 5xx then 2xx is delivered', async (t) => {
  const fast = { maxAttempts: 3, baseMs: 10, maxMs: 20 };
  const push = await startPush(pushSettings({ delivery: fast }));
  const flaky = await startReceiver((_req, n) => (n === 1 ? 503 : 200));
  const refusing = await startReceiver(() => 400);
  const down = await startReceiver();
  await down.close();
  t.teardown(async () => {
    await push.close();
    await flaky.close();
    await refusing.close();
  });
  t.equal((await post(mintConfig(push.settings, down.url), JSON.stringify(statusPush('to nobody')))).status, 202, 'the remote is told: taken');
  t.equal((await post(mintConfig(push.settings, refusing.url), JSON.stringify(statusPush('refused')))).status, 202);
  t.equal((await post(mintConfig(push.settings, flaky.url), JSON.stringify(statusPush('second time lucky')))).status, 202);
  await eventually('three outcomes', async () => (await delivered(push, 'PUSH_DELIVERY_FAILED')) + (await delivered(push, 'PUSH_TARGET_REJECTED')) + (await delivered(push, 'delivered')) === 3);
  t.equal(await delivered(push, 'PUSH_DELIVERY_FAILED'), 1);
  t.equal(await delivered(push, 'PUSH_TARGET_REJECTED'), 1);
  t.equal(await delivered(push, 'delivered'), 1);
  t.equal(refusing.received.length, 1, 'a 400 is final');
  t.equal(flaky.received.length, 2, 'a 503 is retried');
  t.equal(await push.count('a2a_egress_push_retries_total', { remote: 'weather' }), 3, '2 for the agent that is down, 1 for the flaky one');
  const failed = push.logs.find((l) => l.outcome === 'PUSH_DELIVERY_FAILED');
  t.match(failed, { msg: 'push not delivered', attempts: 3, cause: 'ECONNREFUSED' });
  t.equal(push.listener.delivery.queuedItems, 0, 'nothing left behind');
});

t.test('connect-time address check: a name that resolves where its rule does not allow is never connected to', async (t) => {
  const receiver = await startReceiver();
  const port = new URL(receiver.url).port;
  const answers: Record<string, string> = { localhost: '10.0.0.1', 'hooks.test': '127.0.0.1' };
  const resolver: LookupFunction = (hostname, options, callback) => {
    const address = answers[hostname] ?? '203.0.113.9';
    if (options.all) callback(null, [{ address, family: 4 }] as LookupAddress[]);
    else callback(null, address, 4);
  };
  const push = await startPush(pushSettings({ allowedTargets: ['loopback', `http://hooks.test:${port}`] }), { delivery: { resolver } });
  t.teardown(async () => {
    await push.close();
    await receiver.close();
  });
  t.equal((await post(mintConfig(push.settings, `http://localhost:${port}/h`), JSON.stringify(statusPush('rebound')))).status, 202);
  t.equal((await post(mintConfig(push.settings, `http://hooks.test:${port}/h`), JSON.stringify(statusPush('to loopback')))).status, 202);
  await eventually('both denied', async () => (await delivered(push, 'PUSH_DELIVERY_DENIED')) === 2);
  t.equal(receiver.received.length, 0, 'no socket reached the receiver');
});

t.test('shutdown: what is still waiting is reported PUSH_DROPPED_SHUTDOWN; new pushes get 503', async (t) => {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const push = await startPush(pushSettings());
  const receiver = await startReceiver(async () => (await gate, 200));
  t.teardown(async () => {
    release();
    await receiver.close();
  });
  const config = mintConfig(push.settings, receiver.url);
  for (const text of ['a', 'b', 'c']) t.equal((await post(config, JSON.stringify(statusPush(text)))).status, 202);
  await receiver.waitFor(1);
  await push.close();
  t.equal(await delivered(push, 'PUSH_DROPPED_SHUTDOWN'), 3, 'the one in flight and the two waiting');
  t.equal(push.listener.delivery.enqueue({ remote: 'weather', configRef: 'x', target: new URL(receiver.url), rule: 'loopback', headers: {}, body: '{}' }), 'PUSH_SHUTTING_DOWN');
});
