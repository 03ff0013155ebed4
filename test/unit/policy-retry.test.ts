import t from 'tap';
import { retryDelays, withRetries } from '../../src/policy/retry.js';

class Transient extends Error {
  override readonly name = 'Transient';
}
class Permanent extends Error {
  override readonly name = 'Permanent';
}
const isRetryable = (err: unknown) => err instanceof Transient;

/** A fake clock whose sleep advances it, recording every wait. */
function fakeTime(start = 1_000_000) {
  let now = start;
  const slept: number[] = [];
  return {
    now: () => now,
    slept,
    sleep: async (ms: number) => {
      slept.push(ms);
      now += ms;
    },
  };
}

/** fn that fails with the given errors in turn, then returns 'ok'. */
function failing(...errors: Error[]) {
  const calls: number[] = [];
  const fn = async (attempt: number) => {
    calls.push(attempt);
    const err = errors[attempt - 1];
    if (err) throw err;
    return 'ok';
  };
  return { fn, calls };
}

t.test('retryDelays: attempts-1 delays, full jitter under a doubling cap', async (t) => {
  t.same(retryDelays({ attempts: 1, baseMs: 100, maxMs: 1000 }), [], 'one attempt, no waits');
  t.same(retryDelays({ attempts: 5, baseMs: 100, maxMs: 1000 }, () => 0), [0, 0, 0, 0], 'random 0 → 0');
  const nearOne = () => 0.999999;
  t.same(retryDelays({ attempts: 6, baseMs: 100, maxMs: 500 }, nearOne), [99, 199, 399, 499, 499], 'caps 100,200,400,500,500');
  t.same(retryDelays({ attempts: 3, baseMs: 100, maxMs: 1000 }, () => 0.5), [50, 100]);
});

t.test('retryDelays with Math.random stays within the caps', async (t) => {
  for (let run = 0; run < 50; run++) {
    const delays = retryDelays({ attempts: 5, baseMs: 10, maxMs: 50 });
    delays.forEach((d, i) => t.ok(d >= 0 && d < Math.min(50, 10 * 2 ** i), `delay ${i} = ${d}`));
  }
});

t.test('retryDelays rejects invalid options', async (t) => {
  t.throws(() => retryDelays({ attempts: 0, baseMs: 1, maxMs: 1 }), RangeError);
  t.throws(() => retryDelays({ attempts: 1.5, baseMs: 1, maxMs: 1 }), RangeError);
  t.throws(() => retryDelays({ attempts: 1, baseMs: -1, maxMs: 1 }), RangeError);
  t.throws(() => retryDelays({ attempts: 1, baseMs: 1, maxMs: Number.NaN }), RangeError);
});

const base = (time: ReturnType<typeof fakeTime>) => ({
  attempts: 3,
  baseMs: 100,
  maxMs: 1000,
  deadline: time.now() + 10_000,
  isRetryable,
  now: time.now,
  sleep: time.sleep,
  random: () => 0.5,
});

t.test('success on the first attempt: no retries, no sleep', async (t) => {
  const time = fakeTime();
  const { fn, calls } = failing();
  t.equal(await withRetries(fn, base(time)), 'ok');
  t.same(calls, [1]);
  t.same(time.slept, []);
});

t.test('retryable errors are retried, with the backoff delays, attempt numbers 1-based', async (t) => {
  const time = fakeTime();
  const { fn, calls } = failing(new Transient('a'), new Transient('b'));
  const retries: number[] = [];
  const result = await withRetries(fn, { ...base(time), onRetry: (info) => retries.push(info.attempt) });
  t.equal(result, 'ok');
  t.same(calls, [1, 2, 3], 'exactly attempts calls');
  t.same(time.slept, [50, 100]);
  t.same(retries, [1, 2]);
});

t.test('at most `attempts` calls: the last error is rethrown', async (t) => {
  const time = fakeTime();
  const last = new Transient('third');
  const { fn, calls } = failing(new Transient('1'), new Transient('2'), last, new Transient('never'));
  await t.rejects(withRetries(fn, base(time)), last);
  t.same(calls, [1, 2, 3]);
});

t.test('a non-retryable error is thrown at once', async (t) => {
  const time = fakeTime();
  const permanent = new Permanent('no');
  const { fn, calls } = failing(new Transient('1'), permanent);
  await t.rejects(withRetries(fn, base(time)), permanent);
  t.same(calls, [1, 2]);
  t.same(time.slept, [50]);
});

t.test('a retry whose delay would reach the deadline is skipped', async (t) => {
  const time = fakeTime();
  const first = new Transient('1');
  // delay 50 → would land exactly on the deadline: skipped
  const { fn, calls } = failing(first);
  await t.rejects(withRetries(fn, { ...base(time), deadline: time.now() + 50 }), first);
  t.same(calls, [1]);
  t.same(time.slept, []);
});

t.test('a retry whose delay ends 1 ms before the deadline runs', async (t) => {
  const time = fakeTime();
  const { fn, calls } = failing(new Transient('1'));
  t.equal(await withRetries(fn, { ...base(time), deadline: time.now() + 51 }), 'ok');
  t.same(calls, [1, 2]);
});

t.test('time spent inside attempts counts toward the deadline', async (t) => {
  const time = fakeTime();
  const calls: number[] = [];
  const err = new Transient('slow');
  const start = time.now();
  const fn = async (attempt: number) => {
    calls.push(attempt);
    await time.sleep(400); // the attempt itself takes 400 ms
    throw err;
  };
  await t.rejects(withRetries(fn, { ...base(time), attempts: 5, deadline: start + 900 }), err);
  // 400 (call 1) + 50 wait + 400 (call 2) = 850; the next wait of 100 would reach 950 > 900
  t.same(calls, [1, 2]);
});

t.test('an aborted signal stops before the next attempt and during a wait', async (t) => {
  const time = fakeTime();
  const ac = new AbortController();
  ac.abort(new Error('stop'));
  const { fn, calls } = failing();
  await t.rejects(withRetries(fn, { ...base(time), signal: ac.signal }), { message: 'stop' });
  t.same(calls, [], 'no attempt once aborted');

  const ac2 = new AbortController();
  const { fn: fn2, calls: calls2 } = failing(new Transient('1'));
  const abortingSleep = async () => {
    ac2.abort(new Error('gone'));
    throw new Error('sleep-specific error');
  };
  await t.rejects(withRetries(fn2, { ...base(time), signal: ac2.signal, sleep: abortingSleep }), { message: 'gone' });
  t.same(calls2, [1]);
});

t.test('an error thrown by a failing sleep (no abort) propagates', async (t) => {
  const time = fakeTime();
  const { fn } = failing(new Transient('1'));
  const broken = async () => {
    throw new Error('sleep broke');
  };
  await t.rejects(withRetries(fn, { ...base(time), sleep: broken }), { message: 'sleep broke' });
});

t.test('abort after a failed attempt rethrows that failure without waiting', async (t) => {
  const time = fakeTime();
  const ac = new AbortController();
  const err = new Transient('1');
  const fn = async () => {
    ac.abort();
    throw err;
  };
  await t.rejects(withRetries(fn, { ...base(time), signal: ac.signal }), err);
  t.same(time.slept, []);
});

t.test('default sleep and clock: a real short retry, and abort during the real sleep', async (t) => {
  const { fn, calls } = failing(new Transient('1'));
  const result = await withRetries(fn, { attempts: 2, baseMs: 5, maxMs: 5, deadline: Date.now() + 1000, isRetryable });
  t.equal(result, 'ok');
  t.same(calls, [1, 2]);

  const ac = new AbortController();
  const { fn: fn2 } = failing(new Transient('1'));
  setTimeout(() => ac.abort(new Error('cancelled')), 10);
  const started = Date.now();
  await t.rejects(
    withRetries(fn2, {
      attempts: 2,
      baseMs: 5000,
      maxMs: 5000,
      deadline: Date.now() + 60_000,
      isRetryable,
      random: () => 0.9,
      signal: ac.signal,
    }),
    { message: 'cancelled' },
  );
  t.ok(Date.now() - started < 1000, 'the 4.5 s wait was cut short');
});
