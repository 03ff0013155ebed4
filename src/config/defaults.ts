/** Built-in defaults: what a remote gets when neither `defaults` nor the remote sets a key. */
import type { CircuitBreakerConfig, Limits, RetryConfig, ServerConfig, Timeouts } from './schema.js';

export const builtinServer: ServerConfig = {
  host: '127.0.0.1',
  port: 8080,
  logLevel: 'info',
  drainMs: 10_000,
  maxConnections: 10_000,
  maxRequestsPerSocket: 0,
  requestTimeoutMs: 30_000,
  // Off by default: on a shared, loaded host a fixed lag threshold refuses healthy traffic.
  maxEventLoopDelayMs: 0,
  maxHeapUsedBytes: 0,
  maxBufferedBytes: 33_554_432,
  trustProxy: false,
  // One process: no cluster code runs at all.
  workers: 1,
};

/** A remote's own listener binds loopback unless told otherwise, like the shared one. */
export const builtinListenHost = '127.0.0.1';

export const builtinTimeouts: Timeouts = {
  connectMs: 5_000,
  headersMs: 30_000,
  totalMs: 60_000,
  streamIdleMs: 60_000,
  streamNoDataMs: 300_000,
  maxStreamMs: 3_600_000,
  keepAliveMs: 15_000,
  cardMs: 10_000,
  queueTimeoutMs: 5_000,
  cardCacheTtlMs: 300_000,
  cardCacheStaleMs: 3_600_000,
};

export const builtinLimits: Limits = {
  maxRequestBytes: 1_048_576,
  maxResponseBytes: 4_194_304,
  maxErrorMessageBytes: 200,
  maxJsonDepth: 64,
  maxEventBytes: 1_048_576,
  maxStreamBytes: 67_108_864,
  maxStreamEvents: 100_000,
  maxCardBytes: 262_144,
  maxConcurrent: 256,
  maxQueued: 256,
  maxCardTextBytes: 2_048,
  // Off: results pass as the remote sent them (extra members kept), as the spec asks receivers to do.
  validateResults: false,
};

export const builtinPolicy = {
  maxUpstreamConnections: 64,
  forwardHeaders: [] as readonly string[],
  allowPrivateNetwork: false,
  keepRemoteErrorData: false,
} as const;

export const builtinCircuitBreaker: CircuitBreakerConfig = {
  failureThreshold: 5,
  windowMs: 30_000,
  cooldownMs: 15_000,
};

/** Retries apply to read-only methods only (see src/a2a/methods.ts); 2 attempts = one retry. */
export const builtinRetries: RetryConfig = {
  attempts: 2,
  baseMs: 100,
  maxMs: 1_000,
};
