import t from 'tap';
import { CardCache, DEFAULT_CARD_STALE_MS, DEFAULT_CARD_TTL_MS, parseMaxAge, type FetchedCard } from '../../src/a2a/card-cache.js';

class FakeClock {
  ms = 1_000_000;
  readonly now = (): number => this.ms;
}

/** A fetcher that counts its calls and answers what the test queued. */
function fetcherOf(...answers: (FetchedCard<string> | Error)[]) {
  let calls = 0;
  const fn = async (): Promise<FetchedCard<string>> => {
    const answer = answers[Math.min(calls, answers.length - 1)]!;
    calls++;
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return { fn, calls: () => calls };
}

t.test('a hit inside the TTL does not fetch; the first moment past it does', async (t) => {
  const clock = new FakeClock();
  const cache = new CardCache<string>({ ttlMs: 1000, now: clock.now });
  const f = fetcherOf({ card: 'v1' }, { card: 'v2' });
  t.match(await cache.get('r', f.fn), { card: 'v1', stale: false, remainingMs: 1000 });
  clock.ms += 999;
  t.match(await cache.get('r', f.fn), { card: 'v1', stale: false, remainingMs: 1 });
  t.equal(f.calls(), 1);
  clock.ms += 1;
  t.match(await cache.get('r', f.fn), { card: 'v2' });
  t.equal(f.calls(), 2);
});

t.test('remotes are cached apart', async (t) => {
  const cache = new CardCache<string>({ now: new FakeClock().now });
  t.equal((await cache.get('a', async () => ({ card: 'A' }))).card, 'A');
  t.equal((await cache.get('b', async () => ({ card: 'B' }))).card, 'B');
  t.equal((await cache.get('a', async () => ({ card: 'X' }))).card, 'A');
});

t.test("the remote's max-age shortens the TTL, and cannot lengthen it", async (t) => {
  const clock = new FakeClock();
  const cache = new CardCache<string>({ ttlMs: 10_000, now: clock.now });
  t.equal((await cache.get('short', async () => ({ card: 's', maxAgeMs: 2000 }))).remainingMs, 2000);
  t.equal((await cache.get('long', async () => ({ card: 'l', maxAgeMs: 10_001 }))).remainingMs, 10_000);
  t.equal((await cache.get('zero', async () => ({ card: 'z', maxAgeMs: 0 }))).remainingMs, 0);
  const f = fetcherOf({ card: 'z2' });
  await cache.get('zero', f.fn);
  t.equal(f.calls(), 1, 'max-age=0 is fetched again on the next call');
});

t.test('defaults and per-call policy', async (t) => {
  t.equal(DEFAULT_CARD_TTL_MS, 300_000);
  t.equal(DEFAULT_CARD_STALE_MS, 3_600_000);
  const clock = new FakeClock();
  const cache = new CardCache<string>({ now: clock.now });
  t.equal((await cache.get('d', async () => ({ card: 'd' }))).remainingMs, DEFAULT_CARD_TTL_MS);
  t.equal((await cache.get('p', async () => ({ card: 'p' }), { ttlMs: 5 })).remainingMs, 5);
});

t.test('concurrent misses share one fetch', async (t) => {
  const cache = new CardCache<string>({ now: new FakeClock().now });
  let calls = 0;
  let release!: (v: FetchedCard<string>) => void;
  const fetcher = () => {
    calls++;
    return new Promise<FetchedCard<string>>((resolve) => (release = resolve));
  };
  const pending = Array.from({ length: 5 }, () => cache.get('r', fetcher));
  release({ card: 'one' });
  const results = await Promise.all(pending);
  t.equal(calls, 1);
  t.same(results.map((r) => r.card), ['one', 'one', 'one', 'one', 'one']);
});

t.test('concurrent misses that fail share the failure, and the next call tries again', async (t) => {
  const cache = new CardCache<string>({ now: new FakeClock().now });
  const f = fetcherOf(new Error('down'), { card: 'up' });
  const results = await Promise.allSettled([cache.get('r', f.fn), cache.get('r', f.fn)]);
  t.same(results.map((r) => r.status), ['rejected', 'rejected']);
  t.equal(f.calls(), 1);
  t.equal((await cache.get('r', f.fn)).card, 'up');
  t.equal(f.calls(), 2);
});

t.test('a fetcher that throws synchronously does not poison the cache', async (t) => {
  const cache = new CardCache<string>({ now: new FakeClock().now });
  await t.rejects(
    cache.get('r', () => {
      throw new Error('sync');
    }),
    { message: 'sync' },
  );
  t.equal((await cache.get('r', async () => ({ card: 'ok' }))).card, 'ok');
});

t.test('on failure the last good card is served up to staleMs past expiry, not a moment longer', async (t) => {
  const clock = new FakeClock();
  const cache = new CardCache<string>({ ttlMs: 1000, staleMs: 5000, now: clock.now });
  await cache.get('r', async () => ({ card: 'good' }));
  const expiresAt = clock.ms + 1000;
  const down = fetcherOf(new Error('down'));
  clock.ms = expiresAt + 5000;
  t.match(await cache.get('r', down.fn), { card: 'good', stale: true, remainingMs: 0 }, 'just inside the stale window');
  clock.ms = expiresAt + 5001;
  await t.rejects(cache.get('r', down.fn), { message: 'down' }, 'just outside it');
  t.equal(down.calls(), 2, 'each stale call still tries the remote');
});

t.test('with no good card yet, a failure is rethrown', async (t) => {
  const cache = new CardCache<string>({ now: new FakeClock().now });
  await t.rejects(cache.get('r', fetcherOf(new Error('never')).fn), { message: 'never' });
});

t.test('a refresh that succeeds after a stale period replaces the card', async (t) => {
  const clock = new FakeClock();
  const cache = new CardCache<string>({ ttlMs: 10, now: clock.now });
  const f = fetcherOf({ card: 'v1' }, new Error('down'), { card: 'v2' });
  await cache.get('r', f.fn);
  clock.ms += 10;
  t.equal((await cache.get('r', f.fn)).stale, true);
  t.match(await cache.get('r', f.fn), { card: 'v2', stale: false });
  cache.delete('r');
  await cache.get('r', f.fn);
  t.equal(f.calls(), 4, 'delete() forgets the card');
});

t.test('parseMaxAge', async (t) => {
  t.equal(parseMaxAge(undefined), undefined);
  t.equal(parseMaxAge(''), undefined);
  t.equal(parseMaxAge('public'), undefined);
  t.equal(parseMaxAge('max-age=60'), 60_000);
  t.equal(parseMaxAge('public, MAX-AGE=5'), 5_000);
  t.equal(parseMaxAge('max-age="30"'), 30_000, 'quoted form');
  t.equal(parseMaxAge('max-age=0'), 0);
  t.equal(parseMaxAge('s-maxage=10, max-age=60'), 10_000, 'the gateway is a shared cache');
  t.equal(parseMaxAge('max-age=60, max-age=20'), 20_000, 'repeated: the shorter one');
  t.equal(parseMaxAge(['public', 'max-age=7']), 7_000, 'several header lines');
  t.equal(parseMaxAge('no-store, max-age=60'), 0);
  t.equal(parseMaxAge('max-age=60, no-cache'), 0);
  t.equal(parseMaxAge('max-age=-1'), undefined);
  t.equal(parseMaxAge('max-age=1.5'), undefined);
  t.equal(parseMaxAge('max-age=abc'), undefined);
  t.equal(parseMaxAge('max-age=9999999999'), 9_999_999_999_000, '10 digits accepted');
  t.equal(parseMaxAge('max-age=99999999999'), undefined, '11 digits ignored');
});

t.test('store: false (no-store, no-cache, private) is not kept: fetched each time, never served stale, yet fresh for its caller', async (t) => {
  const clock = new FakeClock();
  const cache = new CardCache<string>({ ttlMs: 10_000, now: clock.now });
  const f = fetcherOf({ card: 'p1', maxAgeMs: 60_000, store: false }, { card: 'p2', store: false }, new Error('down'));
  t.match(await cache.get('r', f.fn), { card: 'p1', remainingMs: 10_000 }, 'the caller may keep it for its max-age, capped by the TTL');
  t.match(await cache.get('r', f.fn), { card: 'p2' });
  t.equal(f.calls(), 2, 'not reused');
  await t.rejects(cache.get('r', f.fn), /down/, 'nothing kept to serve stale');
  const kept = fetcherOf({ card: 'k1', maxAgeMs: 0 }, { card: 'k2', store: false }, new Error('down'));
  await cache.get('k', kept.fn);
  await cache.get('k', kept.fn);
  await t.rejects(cache.get('k', kept.fn), /down/, 'a card that turned no-store also drops the one kept before');
});

t.test('modifiedAt: kept while the fingerprint is the same, at least a second later when it changes', async (t) => {
  const clock = new FakeClock();
  const cache = new CardCache<string>({ ttlMs: 1, now: clock.now });
  const f = fetcherOf({ card: 'a', fingerprint: 'A' }, { card: 'a', fingerprint: 'A' }, { card: 'b', fingerprint: 'B' }, { card: 'c' });
  const first = await cache.get('r', f.fn);
  t.equal(first.modifiedAt, 1_000_000);
  clock.ms += 5;
  t.equal((await cache.get('r', f.fn)).modifiedAt, 1_000_000, 'refetched, unchanged');
  clock.ms += 5;
  t.equal((await cache.get('r', f.fn)).modifiedAt, 1_001_000, 'changed within the same second: one second later');
  clock.ms += 5000;
  t.equal((await cache.get('r', f.fn)).modifiedAt, clock.ms, 'no fingerprint: treated as changed, now');
});
