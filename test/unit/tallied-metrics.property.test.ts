/**
 * The tallied counters and histograms (src/telemetry/tallied-metrics.ts)
 * against prom-client's own Counter and Histogram, fed the same random
 * updates: the same exposition text (Prometheus and OpenMetrics), the same
 * JSON a worker sends its primary, the same sum across workers after the
 * cluster's aggregation, and the same refusals of bad amounts and labels.
 */
import fc from 'fast-check';
import { AggregatorRegistry, Counter, Histogram, Registry, type MetricObjectWithValues, type MetricValue, type RegistryContentType } from 'prom-client';
import t from 'tap';
import { TalliedCounter, TalliedHistogram } from '../../src/telemetry/tallied-metrics.js';
import { fuzzParams } from '../support/fuzz.js';

const params = fuzzParams(200);
const BUCKETS = [0.001, 0.01, 0.1, 1, 10];
// Label values as remotes, methods and outcomes may be spelled, and the characters the text format escapes.
const labelValue = fc.oneof(fc.constantFrom('weather', 'message/send', 'ok', 'REMOTE_ERROR', 'a"b', 'c\\d', 'e\nf', ''), fc.string({ maxLength: 6 }));
const amount = fc.oneof(fc.nat({ max: 10_000 }), fc.double({ min: 0, max: 1e6, noNaN: true }));
const observed = fc.oneof(fc.double({ min: -1, max: 100, noNaN: true }), fc.constantFrom(...BUCKETS), fc.constant(0));
const counterUpdates = fc.array(fc.tuple(labelValue, labelValue, amount), { maxLength: 40 });
const histogramUpdates = fc.array(fc.tuple(labelValue, labelValue, labelValue, observed), { maxLength: 40 });

interface Pair {
  readonly ours: Registry;
  readonly theirs: Registry;
}

async function sameExports(pair: Pair): Promise<void> {
  const [ours, theirs] = [await pair.ours.metrics(), await pair.theirs.metrics()];
  if (ours !== theirs) throw new Error(`text differs:\n${ours}\n---\n${theirs}`);
  for (const registry of [pair.ours, pair.theirs]) (registry as unknown as Registry<RegistryContentType>).setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  const [openOurs, openTheirs] = [await pair.ours.metrics(), await pair.theirs.metrics()];
  if (openOurs !== openTheirs) throw new Error(`OpenMetrics text differs:\n${openOurs}\n---\n${openTheirs}`);
  // What crosses the IPC channel to the primary is JSON.
  const [jsonOurs, jsonTheirs] = [JSON.stringify(await pair.ours.getMetricsAsJSON()), JSON.stringify(await pair.theirs.getMetricsAsJSON())];
  if (jsonOurs !== jsonTheirs) throw new Error(`JSON differs:\n${jsonOurs}\n---\n${jsonTheirs}`);
  const worker = (json: string) => JSON.parse(json) as MetricObjectWithValues<MetricValue<string>>[];
  const [sumOurs, sumTheirs] = [
    await AggregatorRegistry.aggregate([worker(jsonOurs), worker(jsonOurs)]).metrics(),
    await AggregatorRegistry.aggregate([worker(jsonTheirs), worker(jsonTheirs)]).metrics(),
  ];
  if (sumOurs !== sumTheirs) throw new Error(`aggregated text differs:\n${sumOurs}\n---\n${sumTheirs}`);
}

t.test('a counter exports what prom-client exports for the same increments', async (t) => {
  await fc.assert(
    fc.asyncProperty(counterUpdates, async (updates) => {
      const pair = { ours: new Registry(), theirs: new Registry() };
      const help = 'Body bytes by direction';
      const ours = new TalliedCounter({ name: 'x_bytes_total', help, labelNames: ['remote', 'direction'] as const, registers: [pair.ours] });
      const theirs = new Counter({ name: 'x_bytes_total', help, labelNames: ['remote', 'direction'] as const, registers: [pair.theirs] });
      for (const [i, [remote, direction, n]] of updates.entries()) {
        // Both forms of ours: values in label order on the per-call path, a label object elsewhere.
        if (i % 2 === 0) ours.add(n, remote, direction);
        else ours.inc({ direction, remote }, n);
        theirs.inc({ remote, direction }, n);
      }
      await sameExports(pair);
    }),
    params,
  );
});

t.test('a histogram exports what prom-client exports for the same observations', async (t) => {
  await fc.assert(
    fc.asyncProperty(histogramUpdates, async (updates) => {
      const pair = { ours: new Registry(), theirs: new Registry() };
      const config = { name: 'x_duration_seconds', help: 'Time taken', labelNames: ['remote', 'method', 'outcome_class'] as const, buckets: BUCKETS };
      const ours = new TalliedHistogram({ ...config, registers: [pair.ours] });
      const theirs = new Histogram({ ...config, registers: [pair.theirs] });
      for (const [i, [remote, method, cls, value]] of updates.entries()) {
        if (i % 2 === 0) ours.record(value, remote, method, cls);
        else ours.observe({ outcome_class: cls, remote, method }, value);
        theirs.observe({ remote, method, outcome_class: cls }, value);
      }
      await sameExports(pair);
    }),
    params,
  );
});

t.test('one label, and a reset, export as prom-client does', async (t) => {
  const pair = { ours: new Registry(), theirs: new Registry() };
  const ours = new TalliedHistogram({ name: 'x_upstream_seconds', help: 'h', labelNames: ['remote'] as const, buckets: BUCKETS, registers: [pair.ours] });
  const theirs = new Histogram({ name: 'x_upstream_seconds', help: 'h', labelNames: ['remote'] as const, buckets: BUCKETS, registers: [pair.theirs] });
  const calls = new TalliedCounter({ name: 'x_calls_total', help: 'c', labelNames: ['remote'] as const, registers: [pair.ours] });
  const theirCalls = new Counter({ name: 'x_calls_total', help: 'c', labelNames: ['remote'] as const, registers: [pair.theirs] });
  for (const v of [0.0005, 0.001, 0.0011, 10, 11]) {
    ours.record(v, 'a');
    theirs.observe({ remote: 'a' }, v);
  }
  calls.add(0, 'zero');
  theirCalls.inc({ remote: 'zero' }, 0);
  await sameExports(pair);
  t.match(await pair.ours.metrics(), /x_upstream_seconds_bucket\{le="0\.001",remote="a"\} 2\n/, 'a value equal to a bound is in that bound');
  t.match(await pair.ours.metrics(), /x_upstream_seconds_bucket\{le="\+Inf",remote="a"\} 5\n/);
  pair.ours.resetMetrics();
  pair.theirs.resetMetrics();
  await sameExports(pair);
  t.notMatch(await pair.ours.metrics(), /remote="a"/, 'reset forgets every series');
  ours.record(1, 'b');
  theirs.observe({ remote: 'b' }, 1);
  await sameExports(pair);
});

t.test('bad amounts and labels are refused, and nothing is counted', async (t) => {
  const registry = new Registry();
  const counter = new TalliedCounter({ name: 'x_total', help: 'c', labelNames: ['remote', 'direction'] as const, registers: [registry] });
  const histogram = new TalliedHistogram({ name: 'x_seconds', help: 'h', labelNames: ['remote'] as const, buckets: BUCKETS, registers: [registry] });
  for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) t.throws(() => counter.add(bad, 'a', 'b'), RangeError, `counter ${bad}`);
  for (const bad of [Number.NaN, Number.NEGATIVE_INFINITY]) t.throws(() => histogram.record(bad, 'a'), TypeError, `histogram ${bad}`);
  t.throws(() => counter.inc({ remote: 'a', direction: 'in', extra: 'x' } as unknown as { remote: string; direction: string }), /label "extra"/);
  t.throws(() => new TalliedHistogram({ name: 'y_seconds', help: 'h', labelNames: ['remote'] as const, buckets: [1, 1], registers: [] }), /increase/);
  t.throws(() => new TalliedCounter({ name: 'z_total', help: 'c', labelNames: [] as const, registers: [] }), /1 to 3 labels/);
  t.throws(() => new TalliedCounter({ name: 'x_total', help: 'again', labelNames: ['remote'] as const, registers: [registry] }), /already been registered/);
  t.notMatch(await registry.metrics(), /remote=/, 'no series was made by a refused update');
});
