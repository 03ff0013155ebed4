/** What every call path needs from the gateway around it. */
import type { GatewayConfig, RemoteConfig } from '../config/schema.js';
import type { GrpcCallHandler } from './grpc-call.js';
import type { ProtocolGeneration } from '../a2a/operations.js';
import type { RemoteRuntime } from '../policy/remote-runtime.js';
import type { GatewayMetrics } from '../telemetry/metrics.js';
import type { Telemetry } from '../telemetry/tracing.js';
import type { PushSettings } from '../push/config.js';
import type { BufferBudget } from '../upstream/buffer-budget.js';
import type { UpstreamPools } from '../upstream/pools.js';

/** A remote card's interfaces in the card's order (binding, url); undefined when there is no usable card. */
export type CardInterfaces = readonly { readonly binding: string; readonly url: string }[] | undefined;

export interface GatewayContext {
  /** The config in force; a reload swaps what this returns. */
  config(): GatewayConfig;
  runtime(remote: string): RemoteRuntime | undefined;
  readonly pools: UpstreamPools;
  readonly metrics: GatewayMetrics;
  readonly userAgent: string;
  /** Bounds the bytes held for all remotes together (server.maxBufferedBytes). */
  readonly budget: BufferBudget;
  /** Aborted when the gateway starts shutting down: open streams end with GATEWAY_SHUTDOWN. */
  readonly shutdown: AbortSignal;
  /** Aborted when shutdown's drainMs is up: unary calls still running answer GATEWAY_SHUTDOWN. */
  readonly drainEnd: AbortSignal;
  /**
   * The interfaces of a remote's card in its order (binding, url), through the gateway's card cache;
   * undefined when there is no usable card. `remotes.<name>.binding: auto` reads it (routes/upstream-binding.ts).
   * Synchronous while the answer is known (a fresh card, a remembered failure), a promise when the cache is asked.
   */
  readonly cardInterfaces?: (remote: RemoteConfig) => CardInterfaces | Promise<CardInterfaces>;
  /** Calls to remotes over gRPC (proxy/grpc-call.ts) for callers of the HTTP bindings; set once the gRPC side is assembled. */
  readonly grpcCalls?: () => GrpcCallHandler | undefined;
  /** Trace export and diagnostics_channel events (Telemetry.off when neither is wanted). */
  readonly telemetry: Telemetry;
  /** Push notification settings (`server.push`, read at start-up); undefined: push configs are refused. */
  readonly push: PushSettings | undefined;
  /**
   * The generations a remote speaks over JSON-RPC (`versions`, else what its card said; undefined: unknown). The
   * version bridge on the call runner reads it (routes/bridged-call.ts); unset: no bridging there.
   */
  readonly remoteVersions?: (remote: RemoteConfig) => readonly ProtocolGeneration[] | undefined;
}

/**
 * One line per call: what the log and the metrics record.
 *
 * A class whose constructor sets every member, always in the same order: every call's record has the one fixed
 * shape from its first line on, instead of an object literal given members as the call goes (a new hidden class per
 * member added, in an order that depends on the path taken). Measured: with the literal, `node --trace-generalization`
 * showed three field generalizations of the record's map per call (outcome, bytesOut, attempts), none with the class;
 * in an untraced on-CPU profile neither build spent measurable time there, so this is about a stable shape, not a
 * measured speed-up. Members left undefined stay out of the log line (JSON leaves them out).
 */
export class CallLog {
  remote: string;
  /** The caller's binding, when it is not JSON-RPC (whose log lines stay as they were). */
  binding: string | undefined;
  method: string | undefined;
  upstreamStatus: number | undefined = undefined;
  outcome: string;
  bytesIn: number;
  bytesOut = 0;
  attempts: number | undefined = undefined;
  upstreamMs: number | undefined = undefined;
  totalMs: number | undefined = undefined;
  events: number | undefined = undefined;
  /** Credentials of the remote removed from (or refused in) what the caller received. */
  redactions: number | undefined = undefined;
  /** The version bridge translated the call: caller's generation > remote's, e.g. "0.3>1.0". */
  bridge: string | undefined = undefined;

  constructor(remote: string, outcome: string, bytesIn: number, binding?: string, method?: string) {
    this.remote = remote;
    this.binding = binding;
    this.method = method;
    this.outcome = outcome;
    this.bytesIn = bytesIn;
  }
}
