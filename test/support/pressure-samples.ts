/**
 * Watching the gateway's pressure sampler (src/policy/pressure-sampler.ts) from a test: it calls
 * process.memoryUsage() once per sample, so a test can count samples, or wait for the next one (where a sample
 * window starts is what makes a pressure test deterministic: the mean loop delay is judged over a window, so a
 * block must fill one).
 */

/** process.memoryUsage() calls (one per sample taken) while `body` runs. */
export async function samplesTakenDuring(body: () => Promise<void>): Promise<number> {
  const original = process.memoryUsage;
  let calls = 0;
  process.memoryUsage = Object.assign(() => {
    calls++;
    return original();
  }, original);
  try {
    await body();
  } finally {
    process.memoryUsage = original;
  }
  return calls;
}

/** Resolves right after the next sample is taken. */
export function nextPressureSample(): Promise<void> {
  const original = process.memoryUsage;
  return new Promise((resolve) => {
    const spy = Object.assign(() => {
      process.memoryUsage = original;
      const usage = original();
      setImmediate(resolve);
      return usage;
    }, original);
    process.memoryUsage = spy;
  });
}
