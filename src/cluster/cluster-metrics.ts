/**
 * /metrics with server.workers > 1: the primary asks every worker for its
 * registry (as JSON) and merges them with prom-client's
 * AggregatorRegistry.aggregate, each metric by its `aggregator`: counters
 * and histograms summed (calls, bytes, durations of every worker),
 * a2a_egress_open_streams summed (streams open in the gateway),
 * a2a_egress_circuit_state the maximum (the worst worker's state),
 * a2a_egress_config_reloads_total the maximum (every worker applies each
 * reload), process metrics as prom-client sets them (CPU and memory summed,
 * event-loop lag averaged, start time omitted). The primary adds its own:
 * a2a_egress_workers and a2a_egress_worker_restarts_total, and the reloads
 * it refused and its internal errors under the gateway's metric names.
 * A worker that does not answer within COLLECT_TIMEOUT_MS (being replaced,
 * say) is left out of that scrape rather than holding it.
 */
import type { Worker } from 'node:cluster';
import { AggregatorRegistry, Counter, Gauge } from 'prom-client';
import { GatewayMetrics } from '../telemetry/metrics.js';
import type { MetricsJson } from './messages.js';

const COLLECT_TIMEOUT_MS = 2_000;

export class ClusterMetrics {
  /** The primary's own series, under the gateway's names where they mean the same thing. */
  readonly gateway = new GatewayMetrics(false);

  readonly workers = new Gauge({
    name: 'a2a_egress_workers',
    help: 'Worker processes serving callers (server.workers > 1)',
    registers: [this.gateway.registry],
  });

  readonly restarts = new Counter({
    name: 'a2a_egress_worker_restarts_total',
    help: 'Workers that died unexpectedly and were replaced',
    registers: [this.gateway.registry],
  });

  #nextId = 0;
  readonly #pending = new Map<number, { readonly got: MetricsJson[]; readonly settle: () => void; waiting: number }>();

  /** The exposition text of every worker in `workers`, aggregated, with the primary's own series. */
  async exposition(workers: readonly Worker[]): Promise<string> {
    const id = this.#nextId++;
    const got: MetricsJson[] = [];
    const connected = workers.filter((w) => w.isConnected());
    await new Promise<void>((resolve) => {
      const timer = setTimeout(settle, COLLECT_TIMEOUT_MS);
      function settle() {
        clearTimeout(timer);
        resolve();
      }
      this.#pending.set(id, { got, settle, waiting: connected.length });
      for (const worker of connected) worker.send({ type: 'a2a-egress:collect', id });
      if (connected.length === 0) settle();
    });
    this.#pending.delete(id);
    got.push((await this.gateway.registry.getMetricsAsJSON()) as MetricsJson);
    return AggregatorRegistry.aggregate(got).metrics();
  }

  /** A worker's answer to a collect request. */
  collected(id: number, metrics: MetricsJson): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    pending.got.push(metrics);
    if (--pending.waiting === 0) pending.settle();
  }
}
