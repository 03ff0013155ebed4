/**
 * Replacing dead workers (src/cluster/restart-policy.ts): the delay doubles
 * with each death in the window, and past maxRestarts deaths in the window
 * the primary gives up (just under: replaced; just over: not).
 */
import t from 'tap';
import { DEFAULT_RESTART_POLICY, RestartPolicy } from '../../src/cluster/restart-policy.js';

t.test('the delay doubles per death in the window, up to maxDelayMs', async (t) => {
  let now = 0;
  const policy = new RestartPolicy({ maxRestarts: 10, windowMs: 60_000, baseDelayMs: 100, maxDelayMs: 1_000 }, () => now);
  const delays = Array.from({ length: 6 }, () => {
    now += 10;
    const decision = policy.onDeath();
    return decision.restart ? decision.delayMs : -1;
  });
  t.same(delays, [100, 200, 400, 800, 1000, 1000]);
});

t.test('maxRestarts deaths in the window are replaced; one more gives up and says why', async (t) => {
  let now = 0;
  const policy = new RestartPolicy(DEFAULT_RESTART_POLICY, () => now);
  for (let i = 0; i < DEFAULT_RESTART_POLICY.maxRestarts; i++) {
    now += 1_000;
    t.equal(policy.onDeath().restart, true, `death ${i + 1}: replaced`);
  }
  now += 1_000;
  const last = policy.onDeath();
  t.equal(last.restart, false);
  t.match(last, { why: '6 workers died within 60000 ms (at most 5 are replaced)' });
});

t.test('deaths older than the window are forgotten: a worker dying now and then is always replaced, quickly', async (t) => {
  let now = 0;
  const policy = new RestartPolicy(DEFAULT_RESTART_POLICY, () => now);
  for (let i = 0; i < 50; i++) {
    now += DEFAULT_RESTART_POLICY.windowMs;
    t.same(policy.onDeath(), { restart: true, delayMs: DEFAULT_RESTART_POLICY.baseDelayMs });
  }
});
