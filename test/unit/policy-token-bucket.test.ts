import t from 'tap';
import { TokenBucket } from '../../src/policy/token-bucket.js';

function clock(start = 1000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

t.test('exactly burst calls pass back to back; burst+1 is refused', async (t) => {
  const c = clock();
  const bucket = new TokenBucket({ perSecond: 10, burst: 5 }, c.now);
  for (let i = 0; i < 5; i++) t.same(bucket.tryTake(), { ok: true }, `call ${i + 1}`);
  t.same(bucket.tryTake(), { ok: false, retryAfterMs: 100 }, '10/s: next token in 100 ms');
});

t.test('a token comes back exactly when retryAfterMs says, not 1 ms earlier', async (t) => {
  const c = clock();
  const bucket = new TokenBucket({ perSecond: 4, burst: 1 }, c.now);
  t.ok(bucket.tryTake().ok);
  const refused = bucket.tryTake();
  t.same(refused, { ok: false, retryAfterMs: 250 });
  c.advance(249);
  t.same(bucket.tryTake(), { ok: false, retryAfterMs: 1 }, 'just under');
  c.advance(1);
  t.same(bucket.tryTake(), { ok: true }, 'at the refill time');
});

t.test('refill is continuous and capped at burst', async (t) => {
  const c = clock();
  const bucket = new TokenBucket({ perSecond: 2, burst: 3 }, c.now);
  for (let i = 0; i < 3; i++) bucket.tryTake();
  c.advance(1000);
  t.equal(bucket.available, 2, 'two tokens after one second at 2/s');
  c.advance(60_000);
  t.equal(bucket.available, 3, 'a long quiet period does not exceed burst');
  for (let i = 0; i < 3; i++) t.ok(bucket.tryTake().ok);
  t.notOk(bucket.tryTake().ok, 'burst+1 after the cap is refused');
});

t.test('fractional rates: 0.5/s admits one call every 2 s', async (t) => {
  const c = clock();
  const bucket = new TokenBucket({ perSecond: 0.5, burst: 1 }, c.now);
  t.ok(bucket.tryTake().ok);
  t.same(bucket.tryTake(), { ok: false, retryAfterMs: 2000 });
  c.advance(1999);
  t.notOk(bucket.tryTake().ok);
  c.advance(1);
  t.ok(bucket.tryTake().ok);
});

t.test('retryAfterMs rounds up and is never 0', async (t) => {
  const c = clock();
  const bucket = new TokenBucket({ perSecond: 3, burst: 1 }, c.now);
  bucket.tryTake();
  t.same(bucket.tryTake(), { ok: false, retryAfterMs: 334 }, '333.3 ms rounds up');
  c.advance(333);
  t.same(bucket.tryTake(), { ok: false, retryAfterMs: 1 }, 'a fraction of a ms left still says 1');
  c.advance(1);
  t.ok(bucket.tryTake().ok);
});

t.test('a clock stepping backwards neither mints nor drains tokens', async (t) => {
  const c = clock(10_000);
  const bucket = new TokenBucket({ perSecond: 1, burst: 2 }, c.now);
  bucket.tryTake();
  c.advance(-5000);
  t.equal(bucket.available, 1);
  c.advance(1000);
  t.equal(bucket.available, 2, 'refill resumes from the stepped-back time');
});

t.test('refused calls do not consume tokens', async (t) => {
  const c = clock();
  const bucket = new TokenBucket({ perSecond: 10, burst: 1 }, c.now);
  bucket.tryTake();
  for (let i = 0; i < 10; i++) bucket.tryTake();
  c.advance(100);
  t.ok(bucket.tryTake().ok);
});

t.test('invalid options are rejected', async (t) => {
  t.throws(() => new TokenBucket({ perSecond: 0, burst: 1 }), RangeError);
  t.throws(() => new TokenBucket({ perSecond: Number.NaN, burst: 1 }), RangeError);
  t.throws(() => new TokenBucket({ perSecond: 1, burst: 0.5 }), RangeError);
  t.doesNotThrow(() => new TokenBucket({ perSecond: 1, burst: 1 }));
});

t.test('the default clock works', async (t) => {
  const bucket = new TokenBucket({ perSecond: 1, burst: 1 });
  t.ok(bucket.tryTake().ok);
  t.notOk(bucket.tryTake().ok);
});
