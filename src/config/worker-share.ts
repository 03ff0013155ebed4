/**
 * `server.workers: N`: each worker process enforces its share of the
 * per-process limits, so that the N workers together keep the limit the
 * config states (a remote with maxConcurrent K never sees more than K calls
 * in flight from the gateway, whatever the number of workers).
 *
 * Divided (worker `slot` of N gets floor(total / N), the first total % N
 * slots one more, so the shares add up to the total exactly):
 * - remotes.<name>.limits.maxConcurrent and maxQueued;
 * - remotes.<name>.rateLimit without a store: burst divided, perSecond / N
 *   (a bucket in Redis is one bucket for every worker already, left as is);
 * - server.maxBufferedBytes and server.maxConnections (caller sockets);
 * - remotes.<name>.maxUpstreamConnections (sockets to the remote), at least one per worker;
 * - remotes.<name>.circuitBreaker.failureThreshold: each worker keeps its own
 *   breaker (a shared one would put a store round trip on every call), and
 *   opens after ceil(threshold / N) failures it saw itself; callers are
 *   spread evenly, so the remote sees about `threshold` failures before
 *   every circuit is open, and one probe per worker per cooldown.
 * Not divided: what is per process by nature (maxEventLoopDelayMs,
 * maxHeapUsedBytes), per-call bounds, and the push listener, which only
 * worker 1 runs.
 * Shares that would be zero are refused at load (workerShareProblems).
 */
import type { GatewayConfig, RemoteConfig } from './schema.js';

/** Worker `slot`'s (1-based) part of `total` split over `workers`; the parts sum to `total`. */
export function shareOf(total: number, workers: number, slot: number): number {
  return Math.floor(total / workers) + (slot - 1 < total % workers ? 1 : 0);
}

/** Limits that cannot be divided among `config.server.workers` (a worker would get none); [] when they can. */
export function workerShareProblems(config: GatewayConfig): string[] {
  const workers = config.server.workers;
  if (workers <= 1) return [];
  const problems: string[] = [];
  const tooSmall = (key: string, value: number, hint = '') => {
    if (value < workers) problems.push(`${key}: ${value} cannot be divided among server.workers (${workers}): each worker needs at least 1${hint}`);
  };
  tooSmall('server.maxConnections', config.server.maxConnections);
  const budget = Math.floor(config.server.maxBufferedBytes / workers);
  for (const remote of config.remotes.values()) {
    tooSmall(`remotes.${remote.name}.limits.maxConcurrent`, remote.limits.maxConcurrent);
    if (remote.rateLimit && remote.rateLimit.store === undefined) {
      tooSmall(`remotes.${remote.name}.rateLimit.burst`, remote.rateLimit.burst, ' (or set rateLimit.store to share one bucket)');
    }
    for (const key of ['maxResponseBytes', 'maxEventBytes'] as const) {
      if (remote.limits[key] > budget) {
        problems.push(`remotes.${remote.name}.limits.${key}: ${remote.limits[key]} is larger than one worker's share of server.maxBufferedBytes (${budget} of ${config.server.maxBufferedBytes} over ${workers} workers)`);
      }
    }
  }
  return problems;
}

/** The config worker `slot` (1-based) of `workers` enforces; `config` itself when there is one worker. */
export function workerShare(config: GatewayConfig, workers: number, slot: number): GatewayConfig {
  if (workers <= 1) return config;
  const share = (total: number) => shareOf(total, workers, slot);
  const remotes = new Map<string, RemoteConfig>();
  for (const [name, remote] of config.remotes) {
    const rate = remote.rateLimit;
    remotes.set(name, {
      ...remote,
      maxUpstreamConnections: Math.max(1, share(remote.maxUpstreamConnections)),
      limits: { ...remote.limits, maxConcurrent: share(remote.limits.maxConcurrent), maxQueued: share(remote.limits.maxQueued) },
      ...(rate && rate.store === undefined ? { rateLimit: { ...rate, perSecond: rate.perSecond / workers, burst: share(rate.burst) } } : {}),
      circuitBreaker: { ...remote.circuitBreaker, failureThreshold: Math.ceil(remote.circuitBreaker.failureThreshold / workers) },
    });
  }
  const server = { ...config.server, maxBufferedBytes: share(config.server.maxBufferedBytes), maxConnections: share(config.server.maxConnections) };
  return { ...config, server, remotes };
}
