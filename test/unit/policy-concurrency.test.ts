import t from 'tap';
import { ConcurrencyLimiter, type Release } from '../../src/policy/concurrency.js';
import { LimitError } from '../../src/policy/limit-error.js';

// Short default timeout so waiters a test leaves behind settle quickly.
const limiter = (maxConcurrent: number, maxQueued: number, queueTimeoutMs = 200) =>
  new ConcurrencyLimiter({ maxConcurrent, maxQueued, queueTimeoutMs });

/** Lets already-settled promises run their callbacks. */
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A waiter the test does not await: its eventual queue timeout must not be an unhandled rejection. */
function background<T>(p: Promise<T>): Promise<T> {
  p.catch(() => {});
  return p;
}

t.test('up to maxConcurrent acquire at once; the next one queues', async (t) => {
  const l = limiter(2, 1);
  await l.acquire();
  await l.acquire();
  t.equal(l.inFlight, 2, 'just at the bound');
  t.equal(l.queued, 0);
  let third = false;
  void background(l.acquire().then(() => (third = true)));
  await tick();
  t.equal(third, false, 'one over the bound waits');
  t.equal(l.queued, 1);
});

t.test('refused at once with OVERLOADED when running and queue are both full', async (t) => {
  const l = limiter(1, 2);
  await l.acquire();
  const waiting = [background(l.acquire()), background(l.acquire())];
  t.equal(l.queued, 2, 'queue at its bound');
  const err = await l.acquire().catch((e: unknown) => e);
  t.type(err, LimitError);
  t.equal((err as LimitError).name, 'LimitError');
  t.equal((err as LimitError).reason, 'OVERLOADED');
  t.equal((err as LimitError).detail, 'queue full');
  t.equal(l.queued, 2, 'the refused call did not join the queue');
  void waiting;
});

t.test('maxQueued 0 refuses instead of waiting', async (t) => {
  const l = limiter(1, 0);
  await l.acquire();
  await t.rejects(l.acquire(), { name: 'LimitError', reason: 'OVERLOADED' });
  t.equal(l.queued, 0);
});

t.test('release wakes exactly one waiter, in FIFO order', async (t) => {
  const l = limiter(1, 3);
  const first = await l.acquire();
  const order: number[] = [];
  const releases: Release[] = [];
  for (const n of [1, 2, 3]) {
    void background(
      l.acquire().then((r) => {
        order.push(n);
        releases.push(r);
      }),
    );
  }
  first();
  await tick();
  t.same(order, [1], 'one release, one waiter woken');
  t.equal(l.inFlight, 1, 'the slot moved to the waiter');
  t.equal(l.queued, 2);
  releases[0]?.();
  await tick();
  releases[1]?.();
  await tick();
  t.same(order, [1, 2, 3], 'FIFO');
  releases[2]?.();
  t.equal(l.inFlight, 0);
  t.equal(l.queued, 0);
});

t.test('a newcomer cannot take a slot freed for a waiter', async (t) => {
  const l = limiter(1, 2);
  const first = await l.acquire();
  const order: string[] = [];
  void background(l.acquire().then(() => order.push('waiter')));
  first();
  void background(l.acquire().then(() => order.push('newcomer')));
  await tick();
  t.same(order, ['waiter']);
  t.equal(l.queued, 1);
});

t.test('double release does not over-free', async (t) => {
  const l = limiter(1, 1);
  const a = await l.acquire();
  a();
  a();
  t.equal(l.inFlight, 0, 'not negative');
  const b = await l.acquire();
  a(); // a stale release must not free b's slot
  t.equal(l.inFlight, 1);
  let queuedGotIn = false;
  void background(l.acquire().then(() => (queuedGotIn = true)));
  await tick();
  t.equal(queuedGotIn, false);
  b();
  await tick();
  t.equal(queuedGotIn, true);
});

t.test('queue timeout: a waiter rejects with OVERLOADED / queue timeout and leaves the queue', async (t) => {
  const l = limiter(1, 1, 30);
  const held = await l.acquire();
  const started = Date.now();
  const err = await l.acquire().catch((e: unknown) => e);
  const waited = Date.now() - started;
  t.match(err, { name: 'LimitError', reason: 'OVERLOADED', detail: 'queue timeout' });
  t.ok(waited >= 25, `waited about the timeout (${waited} ms)`);
  t.equal(l.queued, 0);
  held();
  t.equal(l.inFlight, 0, 'the timed-out waiter did not take the slot');
});

t.test('a waiter served before its timeout is not rejected later', async (t) => {
  const l = limiter(1, 1, 40);
  const held = await l.acquire();
  const pending = l.acquire();
  setTimeout(held, 10);
  const release = await pending;
  await new Promise((resolve) => setTimeout(resolve, 60));
  t.equal(l.inFlight, 1);
  release();
  t.equal(l.inFlight, 0);
});

t.test('abort removes the waiter with the signal reason and frees its queue place', async (t) => {
  const l = limiter(1, 1);
  await l.acquire();
  const ac = new AbortController();
  const pending = l.acquire(ac.signal);
  t.equal(l.queued, 1);
  ac.abort(new Error('caller went away'));
  await t.rejects(pending, { message: 'caller went away' });
  t.equal(l.queued, 0, 'no leak');
  const again = background(l.acquire());
  t.equal(l.queued, 1, 'the place can be reused');
  void again;
});

t.test('an already aborted signal is refused without queuing', async (t) => {
  const l = limiter(1, 1);
  const ac = new AbortController();
  ac.abort();
  await t.rejects(l.acquire(ac.signal), { name: 'AbortError' });
  t.equal(l.inFlight, 0);
});

t.test('the abort listener is removed once a waiter is served', async (t) => {
  const l = limiter(1, 1);
  const held = await l.acquire();
  const ac = new AbortController();
  const pending = l.acquire(ac.signal);
  held();
  const release = await pending;
  ac.abort();
  await tick();
  t.equal(l.inFlight, 1, 'a late abort does not disturb the held slot');
  release();
});

t.test('invalid options are rejected', async (t) => {
  t.throws(() => limiter(0, 0), RangeError);
  t.throws(() => limiter(1, -1), RangeError);
  t.throws(() => limiter(1.5, 0), RangeError);
  t.throws(() => new ConcurrencyLimiter({ maxConcurrent: 1, maxQueued: 0, queueTimeoutMs: -1 }), RangeError);
});

t.test('a lazy signal is made only when the call has to wait, and still aborts the wait', async (t) => {
  const l = limiter(1, 1, 5_000);
  let made = 0;
  const controller = new AbortController();
  const lazy = () => {
    made++;
    return controller.signal;
  };
  const first = await l.acquire(lazy);
  t.equal(made, 0, 'a free slot (just at the bound) needs no signal');
  const waiting = background(l.acquire(lazy));
  t.equal(made, 1, 'one over the bound: the signal is made for the wait');
  controller.abort(new Error('gone'));
  await t.rejects(waiting, { message: 'gone' });
  t.equal(l.queued, 0);
  first();
  t.equal(l.inFlight, 0);
});
