/**
 * What the primary and its workers say to each other over the cluster IPC
 * channel (JSON). Every type starts with `a2a-egress:` so that other
 * messages on the channel (Node's own, a library's) are told apart.
 */
import type { MetricObjectWithValues, MetricValue } from 'prom-client';

/** A worker's registry as prom-client's getMetricsAsJSON() gives it (what AggregatorRegistry.aggregate takes). */
export type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/** The listen result of one worker (the same addresses in every worker: they share the sockets). */
export interface ListenResult {
  readonly url: string;
  readonly opsUrl?: string;
  readonly pushUrl?: string;
  readonly remoteUrls: Record<string, string>;
  readonly grpc?: unknown;
}

export type ToWorker =
  /** `start`: the file text the gateway started with (restart keys as started); `current`: the text in force now. */
  | { readonly type: 'a2a-egress:config'; readonly start: string; readonly current: string }
  /** A reload: the primary validated this text. */
  | { readonly type: 'a2a-egress:reload'; readonly text: string }
  /** Finish in-flight calls within drainMs, then exit 0. */
  | { readonly type: 'a2a-egress:drain' }
  /** Send your registry for /metrics. */
  | { readonly type: 'a2a-egress:collect'; readonly id: number }
  /** The aggregated exposition a worker asked for. */
  | { readonly type: 'a2a-egress:exposition'; readonly id: number; readonly text?: string; readonly problem?: string };

export type FromWorker =
  /** The worker's message listener is in place: send it its config. */
  | { readonly type: 'a2a-egress:hello' }
  | { readonly type: 'a2a-egress:listening'; readonly listen: ListenResult }
  | { readonly type: 'a2a-egress:collected'; readonly id: number; readonly metrics: MetricsJson }
  /** A caller asked this worker for /metrics: aggregate every worker's. */
  | { readonly type: 'a2a-egress:exposition?'; readonly id: number };

const isOurs = (message: unknown): message is { type: string } =>
  typeof message === 'object' && message !== null && typeof (message as { type?: unknown }).type === 'string' && (message as { type: string }).type.startsWith('a2a-egress:');

export const isToWorker = (message: unknown): message is ToWorker => isOurs(message);
export const isFromWorker = (message: unknown): message is FromWorker => isOurs(message);

/** The environment the primary gives each worker: its slot (1..N, kept by a replacement) and N. */
export const SLOT_ENV = 'A2A_EGRESS_WORKER_SLOT';
export const WORKERS_ENV = 'A2A_EGRESS_WORKERS';

/** Whether this process was forked by a primary of ours, and which slot it holds. */
export function workerSlot(env: NodeJS.ProcessEnv): { readonly slot: number; readonly workers: number } | undefined {
  const slot = Number(env[SLOT_ENV]);
  const workers = Number(env[WORKERS_ENV]);
  return Number.isInteger(slot) && slot >= 1 && Number.isInteger(workers) && workers >= slot ? { slot, workers } : undefined;
}
