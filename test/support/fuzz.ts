/**
 * fast-check settings every property file shares: FUZZ_RUNS for a longer run
 * (`FUZZ_RUNS=200000 npm test -- test/unit/x.property.test.ts`), FUZZ_SEED to
 * replay a counterexample fast-check reported; each file keeps its own default.
 */
import fc from 'fast-check';
import type { Test } from 'tap';

export interface FuzzParams {
  readonly numRuns: number;
  readonly seed?: number;
}

export function fuzzParams(defaultRuns: number, env: NodeJS.ProcessEnv = process.env): FuzzParams {
  const numRuns = Number.parseInt(env.FUZZ_RUNS ?? '', 10) || defaultRuns;
  const seed = env.FUZZ_SEED ? Number.parseInt(env.FUZZ_SEED, 10) : undefined;
  return { numRuns, ...(seed === undefined ? {} : { seed }) };
}

/** `holds(t, property)`: one assertion that the property holds for these settings (its counterexample in the message). */
export function holdsWith(params: FuzzParams) {
  return <Ts extends [unknown, ...unknown[]]>(t: Test, property: fc.IProperty<Ts>): void => {
    t.doesNotThrow(() => fc.assert(property, params));
  };
}
