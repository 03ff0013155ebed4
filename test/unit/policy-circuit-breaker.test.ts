import t from 'tap';
import { CircuitBreaker, type CircuitStateChange } from '../../src/policy/circuit-breaker.js';

function setup(opts: { failureThreshold?: number; windowMs?: number; cooldownMs?: number } = {}) {
  let now = 5_000;
  const changes: string[] = [];
  const breaker = new CircuitBreaker(
    {
      failureThreshold: opts.failureThreshold ?? 3,
      windowMs: opts.windowMs ?? 1000,
      cooldownMs: opts.cooldownMs ?? 500,
      onStateChange: (c: CircuitStateChange) => changes.push(`${c.from}->${c.to}`),
    },
    () => now,
  );
  return { breaker, changes, advance: (ms: number) => void (now += ms) };
}

const fail = (b: CircuitBreaker, n: number) => {
  for (let i = 0; i < n; i++) b.onFailure();
};

t.test('threshold-1 failures keep it closed; the threshold-th opens it', async (t) => {
  const { breaker, changes } = setup({ failureThreshold: 3 });
  fail(breaker, 2);
  t.equal(breaker.state, 'closed', 'just under');
  t.ok(breaker.canPass());
  breaker.onFailure();
  t.equal(breaker.state, 'open', 'at the threshold');
  t.notOk(breaker.canPass());
  t.same(changes, ['closed->open']);
});

t.test('closed -> open -> half-open -> closed', async (t) => {
  const { breaker, changes, advance } = setup({ cooldownMs: 500 });
  fail(breaker, 3);
  advance(499);
  t.equal(breaker.state, 'open', '1 ms before the cooldown ends');
  t.notOk(breaker.canPass());
  t.equal(breaker.retryAfterMs, 1);
  advance(1);
  t.equal(breaker.state, 'half-open', 'at the end of the cooldown');
  t.equal(breaker.retryAfterMs, 0);
  t.ok(breaker.canPass(), 'the probe passes');
  t.notOk(breaker.canPass(), 'a second call is refused while the probe is out');
  breaker.onSuccess();
  t.equal(breaker.state, 'closed');
  t.ok(breaker.canPass());
  t.same(changes, ['closed->open', 'open->half-open', 'half-open->closed']);
});

t.test('probe failure re-opens for another full cooldown', async (t) => {
  const { breaker, changes, advance } = setup({ cooldownMs: 500 });
  fail(breaker, 3);
  advance(500);
  t.ok(breaker.canPass());
  advance(100);
  breaker.onFailure();
  t.equal(breaker.state, 'open');
  advance(499);
  t.notOk(breaker.canPass(), 'cooldown counts from the probe failure');
  advance(1);
  t.ok(breaker.canPass(), 'a new probe after the second cooldown');
  t.same(changes, ['closed->open', 'open->half-open', 'half-open->open', 'open->half-open']);
});

t.test('after closing again, it takes a full threshold of new failures to open', async (t) => {
  const { breaker, advance } = setup({ failureThreshold: 2 });
  fail(breaker, 2);
  advance(500);
  breaker.canPass();
  breaker.onSuccess();
  breaker.onFailure();
  t.equal(breaker.state, 'closed');
  breaker.onFailure();
  t.equal(breaker.state, 'open');
});

t.test('failures spread wider than the window do not open it', async (t) => {
  const { breaker, advance } = setup({ failureThreshold: 3, windowMs: 1000 });
  breaker.onFailure();
  advance(500);
  breaker.onFailure();
  advance(500); // the first failure is now exactly windowMs old: outside
  breaker.onFailure();
  t.equal(breaker.state, 'closed');
  advance(499); // the 2nd is 999 ms old: inside
  breaker.onFailure();
  t.equal(breaker.state, 'open', 'three failures within 999 ms open it');
});

t.test('threshold failures just within the window open it', async (t) => {
  const { breaker, advance } = setup({ failureThreshold: 2, windowMs: 1000 });
  breaker.onFailure();
  advance(999);
  breaker.onFailure();
  t.equal(breaker.state, 'open');
});

t.test('a success resets the count of consecutive failures', async (t) => {
  const { breaker } = setup({ failureThreshold: 3 });
  fail(breaker, 2);
  breaker.onSuccess();
  fail(breaker, 2);
  t.equal(breaker.state, 'closed', 'never 3 in a row');
  breaker.onFailure();
  t.equal(breaker.state, 'open');
});

t.test('late results while open do not change it', async (t) => {
  const { breaker, changes } = setup();
  fail(breaker, 3);
  breaker.onSuccess();
  breaker.onFailure();
  t.equal(breaker.state, 'open');
  t.same(changes, ['closed->open']);
});

t.test('a probe that never reports is given up after another cooldown', async (t) => {
  const { breaker, advance } = setup({ cooldownMs: 500 });
  fail(breaker, 3);
  advance(500);
  t.ok(breaker.canPass(), 'probe taken');
  advance(499);
  t.notOk(breaker.canPass(), 'still waiting for the probe');
  advance(1);
  t.ok(breaker.canPass(), 'a replacement probe');
  t.notOk(breaker.canPass());
});

t.test('failureThreshold 1 opens on the first failure', async (t) => {
  const { breaker } = setup({ failureThreshold: 1 });
  breaker.onFailure();
  t.equal(breaker.state, 'open');
});

t.test('invalid options are rejected', async (t) => {
  t.throws(() => new CircuitBreaker({ failureThreshold: 0, windowMs: 1, cooldownMs: 1 }), RangeError);
  t.throws(() => new CircuitBreaker({ failureThreshold: 1, windowMs: 0, cooldownMs: 1 }), RangeError);
  t.throws(() => new CircuitBreaker({ failureThreshold: 1, windowMs: 1, cooldownMs: Infinity }), RangeError);
  t.doesNotThrow(() => new CircuitBreaker({ failureThreshold: 1, windowMs: 1, cooldownMs: 1 }));
});
