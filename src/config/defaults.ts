/** Built-in defaults: what a remote gets when neither `defaults` nor the remote sets a key. */
import type { Limits, ServerConfig, Timeouts } from './schema.js';

export const builtinServer: ServerConfig = {
  host: '127.0.0.1',
  port: 8080,
  logLevel: 'info',
};

export const builtinTimeouts: Timeouts = {
  connectMs: 5_000,
  headersMs: 30_000,
  totalMs: 60_000,
  streamIdleMs: 60_000,
  streamNoDataMs: 300_000,
  maxStreamMs: 3_600_000,
  keepAliveMs: 15_000,
};

export const builtinLimits: Limits = {
  maxRequestBytes: 1_048_576,
  maxResponseBytes: 4_194_304,
  maxErrorMessageBytes: 200,
  maxJsonDepth: 64,
  maxEventBytes: 1_048_576,
  maxStreamBytes: 67_108_864,
  maxStreamEvents: 100_000,
};

export const builtinPolicy = {
  maxConnections: 64,
  forwardHeaders: [] as readonly string[],
  allowPrivateNetwork: false,
  keepRemoteErrorData: false,
} as const;
