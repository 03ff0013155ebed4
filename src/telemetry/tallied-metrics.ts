/**
 * Counters and histograms for what every call records, counted in plain
 * numbers. prom-client's own metrics take a label object per update, build a
 * hash string from it and check each label name: five such updates were about a
 * tenth of a unary call's CPU. Here a series is found by its label values, one
 * Map per label (nothing allocated once the series exists), and prom-client
 * reads the numbers only when the registry is asked for them.
 *
 * They register in a prom-client Registry like its own metrics and give it the
 * same values in the same order, so the exposition text, the JSON a worker
 * sends its primary and the cluster's aggregation are unchanged
 * (test/unit/tallied-metrics.property.test.ts compares them with prom-client's
 * Counter and Histogram for random updates).
 */
import type { Registry } from 'prom-client';

interface TalliedConfig<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  readonly registers: readonly Registry[];
}

/** What prom-client's registry reads from a metric (the shape its Counter and Histogram give). */
interface ExportedValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
  sharedLabels?: Record<string, string>;
  exemplar?: null;
}

interface Exported {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: ExportedValue[];
  aggregator: 'sum';
}

/** The series of one metric, found by label values (1 to 3 labels), kept in the order they first appeared. */
abstract class TalliedSeries<L extends string, S extends { readonly labels: Record<string, string> }> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  readonly aggregator = 'sum' as const;
  protected series: S[] = [];
  #byValue = new Map<string, unknown>();

  constructor(config: TalliedConfig<L>) {
    if (config.labelNames.length < 1 || config.labelNames.length > 3) throw new RangeError(`${config.name}: 1 to 3 labels`);
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames;
    // prom-client's Registry takes any object with a name and get(); its types want its own Metric class.
    for (const registry of config.registers) registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  protected abstract create(labels: Record<string, string>): S;

  /** The series for these label values (in labelNames' order), made on first use. */
  protected at(a: string, b?: string, c?: string): S {
    const depth = this.labelNames.length;
    let level = this.#byValue;
    const first = level.get(a);
    if (depth === 1) return (first as S | undefined) ?? this.#add(level, a, [a]);
    level = (first as Map<string, unknown> | undefined) ?? this.#level(level, a);
    const second = level.get(b!);
    if (depth === 2) return (second as S | undefined) ?? this.#add(level, b!, [a, b!]);
    level = (second as Map<string, unknown> | undefined) ?? this.#level(level, b!);
    return (level.get(c!) as S | undefined) ?? this.#add(level, c!, [a, b!, c!]);
  }

  /** The label values of a label object, in labelNames' order (for the slower object form). */
  protected valuesOf(labels: Readonly<Record<L, string>>): [string, string | undefined, string | undefined] {
    for (const key of Object.keys(labels)) {
      if (!(this.labelNames as readonly string[]).includes(key)) throw new Error(`${this.name}: label "${key}" is not one of ${this.labelNames.join(', ')}`);
    }
    const [a, b, c] = this.labelNames.map((name) => String(labels[name]));
    return [a!, b, c];
  }

  #level(parent: Map<string, unknown>, key: string): Map<string, unknown> {
    const level = new Map<string, unknown>();
    parent.set(key, level);
    return level;
  }

  #add(level: Map<string, unknown>, key: string, values: string[]): S {
    const labels: Record<string, string> = {};
    this.labelNames.forEach((name, i) => (labels[name] = values[i]!));
    const series = this.create(labels);
    level.set(key, series);
    this.series.push(series);
    return series;
  }

  /** Forgets every series (prom-client's Registry.resetMetrics). */
  reset(): void {
    this.series = [];
    this.#byValue = new Map();
  }
}

interface CounterSeries {
  readonly labels: Record<string, string>;
  value: number;
}

export class TalliedCounter<L extends string> extends TalliedSeries<L, CounterSeries> {
  readonly type = 'counter' as const;

  protected create(labels: Record<string, string>): CounterSeries {
    return { labels, value: 0 };
  }

  /** Adds `value` (default 1) to the series of these label values, in labelNames' order. */
  add(value: number, a: string, b?: string, c?: string): void {
    if (!(value >= 0) || !Number.isFinite(value)) throw new RangeError(`${this.name}: a counter only adds finite amounts >= 0 (got ${value})`);
    this.at(a, b, c).value += value;
  }

  /** prom-client's form, for callers off the per-call path. */
  inc(labels: Readonly<Record<L, string>>, value = 1): void {
    const [a, b, c] = this.valuesOf(labels);
    this.add(value, a, b, c);
  }

  async get(): Promise<Exported> {
    return { help: this.help, name: this.name, type: this.type, values: this.series.map((s) => ({ value: s.value, labels: { ...s.labels } })), aggregator: this.aggregator };
  }
}

interface HistogramSeries {
  readonly labels: Record<string, string>;
  /** Observations per bucket (not cumulative); the last slot is above every bound (+Inf). */
  readonly counts: number[];
  sum: number;
  count: number;
}

export class TalliedHistogram<L extends string> extends TalliedSeries<L, HistogramSeries> {
  readonly type = 'histogram' as const;
  readonly upperBounds: readonly number[];

  constructor(config: TalliedConfig<L> & { readonly buckets: readonly number[] }) {
    super(config);
    for (let i = 1; i < config.buckets.length; i++) {
      if (!(config.buckets[i]! > config.buckets[i - 1]!)) throw new RangeError(`${config.name}: buckets must increase`);
    }
    this.upperBounds = [...config.buckets];
  }

  protected create(labels: Record<string, string>): HistogramSeries {
    return { labels, counts: new Array<number>(this.upperBounds.length + 1).fill(0), sum: 0, count: 0 };
  }

  /** Records one value in the series of these label values, in labelNames' order. */
  record(value: number, a: string, b?: string, c?: string): void {
    if (!Number.isFinite(value)) throw new TypeError(`${this.name}: not a finite number: ${value}`);
    const series = this.at(a, b, c);
    const bounds = this.upperBounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    series.counts[i]!++;
    series.sum += value;
    series.count++;
  }

  /** prom-client's form, for callers off the per-call path. */
  observe(labels: Readonly<Record<L, string>>, value: number): void {
    const [a, b, c] = this.valuesOf(labels);
    this.record(value, a, b, c);
  }

  /** The values as prom-client's Histogram gives them to the text format: each series' labels shared by its lines. */
  async getForPromString(): Promise<Exported> {
    const bucketName = `${this.name}_bucket`;
    const values: ExportedValue[] = [];
    for (const s of this.series) {
      let cumulative = 0;
      this.upperBounds.forEach((le, i) => {
        cumulative += s.counts[i]!;
        values.push({ labels: { le }, sharedLabels: s.labels, value: cumulative, metricName: bucketName, exemplar: null });
      });
      values.push({ labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: bucketName, exemplar: null });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The same values with each line's labels whole (what getMetricsAsJSON and the cluster's aggregation read). */
  async get(): Promise<Exported> {
    const data = await this.getForPromString();
    data.values = data.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } }));
    return data;
  }
}
