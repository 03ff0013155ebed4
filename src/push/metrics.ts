/**
 * Metrics of the push path, registered in the gateway's registry (the
 * wiring passes GatewayMetrics.registry). Label values are bounded: remote
 * names from the config (or "unknown" before a push is authenticated),
 * outcomes from ./reasons.ts.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export class PushMetrics {
  readonly received: Counter<'remote' | 'outcome'>;
  readonly deliveries: Counter<'remote' | 'outcome'>;
  readonly retries: Counter<'remote'>;
  readonly cleaned: Counter<'remote' | 'kind'>;
  readonly queued: Gauge;

  constructor(registry: Registry, queued: () => number) {
    const registers = [registry];
    this.received = new Counter({
      name: 'a2a_egress_push_received_total',
      help: 'Pushes remotes sent to the webhook listener, by remote and outcome (accepted, duplicate or a PUSH_* refusal)',
      labelNames: ['remote', 'outcome'] as const,
      registers,
    });
    this.deliveries = new Counter({
      name: 'a2a_egress_push_deliveries_total',
      help: 'Accepted pushes by what became of them at the local agent (delivered or a PUSH_* reason)',
      labelNames: ['remote', 'outcome'] as const,
      registers,
    });
    this.retries = new Counter({
      name: 'a2a_egress_push_retries_total',
      help: 'Delivery attempts to local agents after the first',
      labelNames: ['remote'] as const,
      registers,
    });
    this.cleaned = new Counter({
      name: 'a2a_egress_push_cleaned_total',
      help: 'Strings changed in accepted pushes: sanitized text, or redacted gateway credentials',
      labelNames: ['remote', 'kind'] as const,
      registers,
    });
    this.queued = new Gauge({
      name: 'a2a_egress_push_queued',
      help: 'Pushes accepted and waiting for (or being retried to) their local agent',
      registers,
      collect() {
        this.set(queued());
      },
    });
  }
}
