import t from 'tap';
import { BufferBudget } from '../../src/upstream/buffer-budget.js';
import { parseConfig } from '../../src/config/load.js';

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
  t.throws(() => parseConfig(yaml(2_097_153)), { name: 'ConfigError', message: /maxResponseBytes \(2097153\) is larger than server\.maxBufferedBytes/ });
});
