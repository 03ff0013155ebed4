import t from 'tap';
import fc from 'fast-check';
import { fuzzParams, holdsWith } from '../support/fuzz.js';

t.test('fuzzParams: the file default, FUZZ_RUNS for a longer run, FUZZ_SEED (negative too) to replay', async (t) => {
  t.same(fuzzParams(500, {}), { numRuns: 500 });
  t.same(fuzzParams(500, { FUZZ_RUNS: '200000' }), { numRuns: 200000 });
  t.same(fuzzParams(500, { FUZZ_RUNS: 'lots' }), { numRuns: 500 }, 'an unreadable count keeps the default');
  t.same(fuzzParams(500, { FUZZ_SEED: '-1841869262' }), { numRuns: 500, seed: -1841869262 });
});

t.test('holdsWith: one passing assertion for a property that holds, a failing one with the counterexample otherwise', async (t) => {
  const holds = holdsWith({ numRuns: 50, seed: 1 });
  const results: { ok: boolean; message: string }[] = [];
  const probe = { doesNotThrow: (fn: () => void) => { try { fn(); results.push({ ok: true, message: '' }); } catch (err) { results.push({ ok: false, message: String(err) }); } } };
  holds(probe as never, fc.property(fc.integer(), (n) => n + 0 === n));
  holds(probe as never, fc.property(fc.integer({ min: 0, max: 100 }), (n) => n < 10));
  t.same(results.map((r) => r.ok), [true, false]);
  t.match(results[1]?.message ?? '', /Counterexample: \[1\d\]|Counterexample: \[10\]/);
});
