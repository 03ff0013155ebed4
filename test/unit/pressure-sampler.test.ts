import t from 'tap';
import { PressureSampler } from '../../src/policy/pressure-sampler.js';
import { nextPressureSample, samplesTakenDuring } from '../support/pressure-samples.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
// The sampler's timer is unref'd (it never keeps a process alive): this file waits for it, so it holds the loop open.
const keepAlive = setInterval(() => undefined, 60_000);
t.teardown(() => clearInterval(keepAlive));

t.test('not wanted: sample() answers calm and starts nothing', async (t) => {
  const sampler = new PressureSampler(() => false);
  const taken = await samplesTakenDuring(async () => {
    t.same(sampler.sample(), { eventLoopDelay: 0, heapUsed: 0 });
    t.equal(sampler.running, false);
    await sleep(1200);
  });
  t.equal(taken, 0, 'no sample in a window and more');
});

t.test('wanted: the first sample() starts it, calm until its first window ends, then one sample a second', async (t) => {
  const sampler = new PressureSampler(() => true);
  t.teardown(() => sampler.stop());
  const first = nextPressureSample();
  t.same(sampler.sample(), { eventLoopDelay: 0, heapUsed: 0 }, 'nothing known yet');
  t.equal(sampler.running, true);
  await first;
  const sample = sampler.sample();
  t.ok(sample.heapUsed > 0, 'the heap in use');
  t.ok(Number.isFinite(sample.eventLoopDelay) && sample.eventLoopDelay >= 0 && sample.eventLoopDelay < 1000, `a loop that ran: ${sample.eventLoopDelay} ms`);
  // A second a sample (a loaded machine may be late by some hundreds of ms; never a sample per 10 ms tick).
  const taken = await samplesTakenDuring(() => sleep(2500));
  t.ok(taken >= 1 && taken <= 3, `${taken} samples in 2.5 s`);
});

t.test('a window the loop was blocked for is read as lagging', async (t) => {
  const sampler = new PressureSampler(() => true);
  t.teardown(() => sampler.stop());
  sampler.start();
  const until = performance.now() + 1100;
  while (performance.now() < until);
  await sleep(50);
  t.ok(sampler.sample().eventLoopDelay > 100, `blocked: ${sampler.sample().eventLoopDelay} ms`);
});

t.test('no longer wanted: it stops at its next tick and forgets its figures; wanted again, it starts afresh', async (t) => {
  let wanted = true;
  const sampler = new PressureSampler(() => wanted);
  t.teardown(() => sampler.stop());
  const first = nextPressureSample();
  sampler.start();
  await first;
  t.ok(sampler.sample().heapUsed > 0, 'sampled');
  wanted = false;
  const taken = await samplesTakenDuring(async () => {
    await sleep(2200);
  });
  t.equal(taken, 0, 'the tick that saw it unwanted took no sample, and none came after');
  t.equal(sampler.running, false);
  t.same(sampler.sample(), { eventLoopDelay: 0, heapUsed: 0 }, 'nothing judged while off');
  wanted = true;
  t.same(sampler.sample(), { eventLoopDelay: 0, heapUsed: 0 }, 'calm until the new window ends');
  t.equal(sampler.running, true);
});

t.test('start() twice keeps one timer and one histogram', async (t) => {
  const sampler = new PressureSampler(() => true);
  t.teardown(() => sampler.stop());
  const taken = await samplesTakenDuring(async () => {
    sampler.start();
    sampler.start();
    await sleep(1500);
  });
  // Two timers would take two samples a window (one per timer).
  t.ok(taken <= 1, `${taken} sample in a window and a half`);
  t.equal(sampler.running, true);
});
