/**
 * Prometheus metrics. Every label value comes from a bounded set: remote
 * names from the config, method names from the A2A table (else "other"),
 * outcomes from the error catalogue, outcome classes from ./outcome-class.ts.
 * A registry per gateway keeps tests and several gateways in one process apart.
 * Process and Node.js metrics keep their standard names (process_cpu_seconds_total,
 * nodejs_heap_size_used_bytes, ...) so stock dashboards work unchanged.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { methodLabel } from '../a2a/methods.js';
import type { CircuitState } from '../policy/circuit-breaker.js';
import { outcomeClass } from './outcome-class.js';
import { TalliedCounter, TalliedHistogram } from './tallied-metrics.js';

const CIRCUIT_VALUE: Readonly<Record<CircuitState, number>> = { closed: 0, 'half-open': 1, open: 2 };

// From a fast local call to a stream that lasts minutes (a stream's duration is its whole life).
const CALL_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export class GatewayMetrics {
  readonly registry = new Registry();

  // The series every call updates are tallied (./tallied-metrics.ts); the rest are prom-client's own.
  readonly calls = new TalliedCounter({
    name: 'a2a_egress_calls_total',
    help: 'Calls answered, by remote, A2A method and outcome (ok, REMOTE_ERROR or a gateway reason)',
    labelNames: ['remote', 'method', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly normalizations = new TalliedCounter({
    name: 'a2a_egress_normalizations_total',
    help: 'Replies the gateway rewrote into its own error, by ErrorInfo reason',
    labelNames: ['remote', 'reason'] as const,
    registers: [this.registry],
  });

  readonly upstreamLatency = new TalliedHistogram({
    name: 'a2a_egress_upstream_duration_seconds',
    help: 'Time from sending the request upstream to receiving the response head (retries included), for unary calls and streams alike',
    labelNames: ['remote'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  readonly bytes = new TalliedCounter({
    name: 'a2a_egress_bytes_total',
    help: 'Body bytes by direction: caller_in (requests), caller_out (replies and events written)',
    labelNames: ['remote', 'direction'] as const,
    registers: [this.registry],
  });

  readonly bridgeDropped = new Counter({
    name: 'a2a_egress_bridge_dropped_total',
    help: 'Members the version bridge dropped for having no counterpart in the other A2A generation, by direction (request, response, event)',
    labelNames: ['remote', 'direction'] as const,
    registers: [this.registry],
  });

  readonly openStreams = new Gauge({
    name: 'a2a_egress_open_streams',
    help: 'SSE streams currently relayed',
    labelNames: ['remote'] as const,
    registers: [this.registry],
  });

  readonly streamEvents = new Counter({
    name: 'a2a_egress_stream_events_total',
    help: 'SSE events relayed to callers',
    labelNames: ['remote'] as const,
    registers: [this.registry],
  });

  readonly redactions = new Counter({
    name: 'a2a_egress_redactions_total',
    help: 'Places where a remote sent back a credential of this gateway, removed (or the reply refused) before a caller saw it, by remote and path (reply, stream, card)',
    labelNames: ['remote', 'path'] as const,
    registers: [this.registry],
  });

  readonly breakerState = new Gauge({
    name: 'a2a_egress_circuit_state',
    help: 'Circuit breaker state per remote: 0 closed, 1 half-open, 2 open',
    labelNames: ['remote'] as const,
    // server.workers > 1: the worst worker's state (summing states would mean nothing).
    aggregator: 'max',
    registers: [this.registry],
  });

  readonly callDuration = new TalliedHistogram({
    name: 'a2a_egress_call_duration_seconds',
    help: 'Time the gateway took to answer a call, from request to the last byte written (for a stream, its whole life), by remote, A2A method and outcome class',
    labelNames: ['remote', 'method', 'outcome_class'] as const,
    buckets: CALL_BUCKETS,
    registers: [this.registry],
  });

  readonly configReloads = new Counter({
    name: 'a2a_egress_config_reloads_total',
    help: 'Config reload attempts by result (ok, invalid)',
    labelNames: ['result'] as const,
    // server.workers > 1: every worker applies each reload; count it once.
    aggregator: 'max',
    registers: [this.registry],
  });

  readonly internalErrors = new Counter({
    name: 'a2a_egress_internal_errors_total',
    help: 'Failures of the gateway itself (bugs, not remotes or callers), by where: call, stream, card, reload, process',
    labelNames: ['where'] as const,
    registers: [this.registry],
  });

  readonly cardRequests = new Counter({
    name: 'a2a_egress_card_requests_total',
    help: 'Agent card requests answered to callers, by remote and outcome (ok, stale, or a gateway reason)',
    labelNames: ['remote', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly cardFetches = new Counter({
    name: 'a2a_egress_card_fetches_total',
    help: 'Agent card fetches sent upstream, by remote and outcome (ok or a gateway reason)',
    labelNames: ['remote', 'outcome'] as const,
    registers: [this.registry],
  });

  constructor(collectProcessMetrics = true) {
    if (collectProcessMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** Remotes whose circuit state is exported; a reload may remove some. */
  readonly #circuitRemotes = new Set<string>();

  setCircuitState(remote: string, state: CircuitState): void {
    this.#circuitRemotes.add(remote);
    this.breakerState.set({ remote }, CIRCUIT_VALUE[state]);
  }

  /**
   * One circuit-state series per configured remote from the start (0 when
   * closed), so dashboards and alerts see every remote before its first
   * change; remotes a reload removed lose theirs.
   */
  trackRemotes(remotes: Iterable<readonly [string, CircuitState]>): void {
    const current = new Set<string>();
    for (const [remote, state] of remotes) {
      current.add(remote);
      this.setCircuitState(remote, state);
    }
    for (const remote of this.#circuitRemotes) {
      if (current.has(remote)) continue;
      this.breakerState.remove({ remote });
      this.#circuitRemotes.delete(remote);
    }
  }

  recordCall(remote: string, method: string | undefined, outcome: string, bytesIn: number, bytesOut: number, seconds?: number): void {
    const methodName = methodLabel(method);
    this.calls.add(1, remote, methodName, outcome);
    if (seconds !== undefined) this.callDuration.record(seconds, remote, methodName, outcomeClass(outcome));
    if (outcome !== 'ok' && outcome !== 'REMOTE_ERROR') this.normalizations.add(1, remote, outcome);
    this.bytes.add(bytesIn, remote, 'caller_in');
    this.bytes.add(bytesOut, remote, 'caller_out');
  }
}
