import t from 'tap';
import { PressureSampler } from '../../src/policy/pressure-sampler.js';
import { samplesTakenDuring } from '../support/pressure-samples.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
  const taken = await samplesTakenDuring(async () => {
    t.same(sampler.sample(), { eventLoopDelay: 0, heapUsed: 0 }, 'nothing known yet');
    t.equal(sampler.running, true);
    await sleep(2500);
  });
  t.equal(taken, 2, 'two windows ended');
  const sample = sampler.sample();
  t.ok(sample.heapUsed > 0, 'the heap in use');
  t.ok(sample.eventLoopDelay >= 0 && sample.eventLoopDelay < 50, `a calm loop: ${sample.eventLoopDelay} ms`);
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
  sampler.start();
  await sleep(1400);
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
  t.equal(taken, 1);
});
