import t from 'tap';
import { BufferBudget } from '../../src/upstream/buffer-budget.js';
import { parseConfig } from '../../src/loader/load.js';

t.test('leases share one budget: exactly full is allowed, one byte more is refused', async (t) => {
  const budget = new BufferBudget(100);
  const a = budget.lease();
  const b = budget.lease();
  t.ok(a.take(60));
  t.ok(b.take(40), 'exactly at the budget');
  t.notOk(b.take(1), 'one byte over');
  t.equal(budget.used, 100);
  a.release();
  t.equal(budget.used, 40);
  t.ok(b.take(60));
  b.release();
  b.release();
  t.equal(budget.used, 0, 'a double release frees nothing twice');
  t.notOk(b.take(1), 'a released lease takes nothing');
});

t.test('resize follows the event being assembled up and down', async (t) => {
  const budget = new BufferBudget(10);
  const lease = budget.lease();
  t.ok(lease.resize(8));
  t.ok(lease.resize(3));
  t.equal(budget.used, 3);
  t.ok(lease.resize(10));
  t.notOk(lease.resize(11));
  t.equal(lease.held, 10);
});

t.test('a remote limit larger than server.maxBufferedBytes is a config error', async (t) => {
  const yaml = (max: number) => `server: { maxBufferedBytes: 2097152 }\nremotes:\n  a: { url: 'https://a.example.com/', limits: { maxResponseBytes: ${max}, maxEventBytes: 1024 } }\n`;
  t.ok(parseConfig(yaml(2_097_152)), 'equal to the budget is fine');
  t.throws(() => parseConfig(yaml(2_097_153)), { name: 'ConfigError', message: /maxResponseBytes: 2097153 is larger than server\.maxBufferedBytes/ });
});

t.test('a body read stops with GATEWAY_OVERLOADED when the shared budget runs out: exactly full passes, one byte more fails', async (t) => {
  const { Readable } = await import('node:stream');
  const { gzipSync } = await import('node:zlib');
  const { readCappedBody } = await import('../../src/upstream/read-body.js');
  const body = Buffer.alloc(1000, 0x20);
  for (const [encoding, bytes] of [[undefined, body], ['gzip', gzipSync(body)]] as const) {
    const fits = new BufferBudget(1000).lease();
    const ok = await readCappedBody(Readable.from([bytes]), encoding, 10_000, fits);
    t.equal(ok.ok, true, `${encoding ?? 'identity'}: a budget of exactly the body passes`);
    t.equal(fits.held, 1000);
    const tight = new BufferBudget(999).lease();
    const refused = await readCappedBody(Readable.from([bytes]), encoding, 10_000, tight);
    t.same(refused.ok ? 'ok' : refused.reason, 'GATEWAY_OVERLOADED', `${encoding ?? 'identity'}: one byte short is refused`);
  }
});
