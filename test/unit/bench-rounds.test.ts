import t from 'tap';
import { alternate, alternateMany, roundOrder } from '../../bench/context.js';
import { calibrationVerdict, pairedP99Row } from '../../bench/scenario-unary.js';
import { lowerInRounds, signTestP } from '../../bench/stats.js';

t.test('each round runs every side once, in an order of its own that is the same in every run', async (t) => {
  const orders = Array.from({ length: 7 }, (_, r) => roundOrder(9, r));
  for (const order of orders) t.same([...order].sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7, 8], 'a permutation');
  t.same(orders, Array.from({ length: 7 }, (_, r) => roundOrder(9, r)), 'deterministic');
  t.equal(new Set(orders.map((o) => o.join())).size, 7, 'no two rounds alike');
  t.same(orders.map((o) => o[0]), [0, 1, 2, 3, 4, 5, 6], 'the first side goes round in turn');
  t.same(Array.from({ length: 5 }, (_, r) => roundOrder(3, r)[0]), [0, 1, 2, 0, 1], 'with few sides too');
  t.ok(new Set(orders.map((o) => o[8])).size >= 3, 'different sides go last');
  t.same(roundOrder(1, 3), [0]);
});

t.test('alternateMany and alternate keep each side\'s results apart, in round order', async (t) => {
  const ran: string[] = [];
  const side = (name: string) => async () => {
    ran.push(name);
    return `${name}${ran.length}`;
  };
  const many = await alternateMany(3, [side('d'), side('h'), side('g')]);
  const expected = [0, 1, 2].flatMap((r) => roundOrder(3, r).map((j) => ['d', 'h', 'g'][j]!));
  t.same(ran, expected, 'the sides ran in each round\'s order');
  for (const [j, name] of ['d', 'h', 'g'].entries()) {
    t.same(many[j]!.map((x) => x.slice(0, 1)), [name, name, name]);
    t.same(many[j]!.map((x) => Number(x.slice(1))), [0, 1, 2].map((r) => r * 3 + roundOrder(3, r).indexOf(j) + 1), `${name}: its own results, round by round`);
  }
  ran.length = 0;
  const two = await alternate(4, side('a'), side('b'));
  t.equal(two.a.length, 4);
  t.equal(two.b.length, 4);
  t.same(ran.filter((x) => x === 'a').length, 4);
});

t.test('lowerInRounds counts the rounds where the first side\'s p99 is strictly below the second\'s', async (t) => {
  const p99 = (...values: number[]) => values.map((p99Ms) => ({ p99Ms }));
  t.equal(lowerInRounds(p99(1, 2, 3), p99(2, 2, 1)), 1, 'a tie is not lower');
  t.equal(lowerInRounds(p99(1, 1), p99(2, 2, 0)), 2, 'only the rounds both ran');
  t.equal(lowerInRounds([], p99(1)), 0);
});

t.test('signTestP is the chance of so few lower rounds between two sides that differ by nothing but luck', async (t) => {
  t.equal(signTestP(0, 1), 0.5);
  t.equal(signTestP(1, 10), 11 / 1024, 'C(10,0) + C(10,1) over 2^10');
  t.equal(signTestP(2, 10), 56 / 1024);
  t.equal(signTestP(2, 12), 79 / 4096);
  t.equal(signTestP(10, 10), 1, 'every round lower: nothing against it');
  t.equal(signTestP(0, 0), 1, 'no rounds: no evidence');
  t.equal(signTestP(-1, 5), 0);
  // The two tails of a fair coin make up the whole: P(X <= k) + P(X >= k + 1) = 1, and P(X >= k + 1) = P(X <= n - k - 1).
  for (const n of [1, 5, 10, 15, 40]) {
    for (let k = 0; k < n; k++) t.ok(Math.abs(signTestP(k, n) + signTestP(n - k - 1, n) - 1) < 1e-12, `n ${n}, k ${k}`);
  }
  // Where the verdict falls (p < 0.05 flags the gateway): at 10 rounds one lower round flags, two do not; at the 16
  // the fixed-rate scenario runs, four flag, five do not.
  t.ok(signTestP(1, 10) < 0.05 && signTestP(2, 10) >= 0.05);
  t.ok(signTestP(4, 16) < 0.05 && signTestP(5, 16) >= 0.05);
});

t.test('the fixed-rate p99 row flags a side only when too few of its paired rounds were the lower, and judges nothing from too few rounds', async (t) => {
  const rounds = (...p99s: number[]) => p99s.map((p99Ms) => ({ p99Ms, p50Ms: 0, achievedRps: 1000, ok: 1, bad: 0, late: 0 }));
  const hop = rounds(2, 2, 2, 2, 2, 2, 2, 2, 2, 2);
  const row = (a: ReturnType<typeof rounds>, b = hop) => pairedP99Row('s', 'gateway', a, b, 1.5, 1.25);
  const higherIn = (k: number) => rounds(...hop.map((r, i) => (i < k ? r.p99Ms + 1 : r.p99Ms - 1)));
  t.equal(row(higherIn(10)).met, false, 'lower in none of ten: worse');
  t.equal(row(higherIn(9)).met, false, 'lower in one of ten: worse (p 0.011)');
  t.equal(row(higherIn(8)).met, true, 'lower in two of ten: not shown worse (p 0.055)');
  t.match(row(higherIn(9)).ratio, /^\+0\.250 ms; gateway lower in 1 of 10 rounds, sign test p 0\.011$/);
  t.equal(row(higherIn(0)).ratio.endsWith('sign test p 1.000'), true);
  t.equal(row(higherIn(10)).ratio.endsWith('sign test p < 0.001'), true);
  t.same(row(higherIn(10)).gateway, '+1.500 ms');
  // At the scenario's sixteen rounds: lower in four, flagged (p 0.038); in five, not (p 0.105).
  const hop16 = rounds(...Array.from({ length: 16 }, () => 2));
  const lowerIn16 = (k: number) => rounds(...hop16.map((r, i) => (i < k ? r.p99Ms - 1 : r.p99Ms + 1)));
  t.equal(row(lowerIn16(4), hop16).met, false, 'lower in four of sixteen: worse');
  t.equal(row(lowerIn16(5), hop16).met, true, 'lower in five of sixteen: not shown worse');
  const two = row(rounds(3, 3), rounds(2, 2));
  t.equal(two.met, null, 'two rounds (--quick): lower in none, yet not judged');
  t.equal(two.goal, 'not judged: too few rounds');
  t.equal(row(rounds(3, 3, 3, 3, 3), rounds(2, 2, 2, 2, 2)).met, false, 'five rounds is the fewest that can flag (p 0.031)');
  t.equal(row(rounds(3, 3, 3, 3), rounds(2, 2, 2, 2)).met, null, 'four cannot (p 0.0625)');
});

t.test('a calibration row says what the verdict said, and "not judged" from too few rounds', async (t) => {
  t.equal(calibrationVerdict(true), 'not flagged');
  t.equal(calibrationVerdict(false), 'flagged worse');
  t.equal(calibrationVerdict(null), 'not judged');
});
