/**
 * Load shedding for every call a caller makes to a remote, whatever its
 * binding (JSON-RPC POSTs, HTTP+JSON POSTs, GETs and DELETEs): while the last
 * sample of @fastify/under-pressure shows the event loop lagging more than
 * `server.maxEventLoopDelayMs`, or the heap over `server.maxHeapUsedBytes`,
 * the request is answered GATEWAY_OVERLOADED (Retry-After: 1) in its
 * binding's own error shape, before its body is read or anything goes
 * upstream. Registered once per mount (routes/remote-routes.ts), above the
 * binding plugins, so no binding can miss it; the gRPC listeners ask
 * `shedding()` for the same verdict (UNAVAILABLE, GATEWAY_OVERLOADED). under-pressure only samples
 * (loop delay, heap; once a second); the thresholds are read from the config
 * in force on each request, so a reload can turn shedding on, off, or move it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import underPressure from '@fastify/under-pressure';
import type { ServerConfig } from '../config/schema.js';
import type { Reason } from '../envelope/codes.js';
import type { GatewayContext } from '../proxy/context.js';

export interface LoadShedOptions {
  /** Requests that are not calls (agent cards: cached, and what a caller needs to find the binding at all). */
  readonly exempt: (request: FastifyRequest) => boolean;
  /** Answers `reason` in the request's binding. */
  readonly refuse: (request: FastifyRequest, reply: FastifyReply, reason: Reason, headers: Record<string, string>) => void;
}

/** The sample of each gateway (any of its mounts: they all sample the one process), for listeners outside Fastify. */
const samples = new WeakMap<GatewayContext, () => PressureSample>();

interface PressureSample {
  readonly eventLoopDelay: number;
  readonly heapUsed: number;
}

export async function registerLoadShedding(app: FastifyInstance, ctx: GatewayContext, opts: LoadShedOptions): Promise<void> {
  await app.register(underPressure, {});
  if (!samples.has(ctx)) samples.set(ctx, () => app.memoryUsage());
  app.addHook('onRequest', async (request, reply) => {
    const server = ctx.config().server;
    // Off by default: then the sample is not even read (it was a new object per request).
    if (!sheddingOn(server) || !pressureExceeded(server, app.memoryUsage()) || opts.exempt(request)) return undefined;
    opts.refuse(request, reply, 'GATEWAY_OVERLOADED', { 'retry-after': '1' });
    return reply;
  });
}

/**
 * Whether a call arriving now is shed, for the gRPC listeners (routes/grpc-listeners.ts): the same thresholds against
 * the same sample as the HTTP routes. False until the HTTP routes are up (nothing sampled yet).
 */
export function shedding(ctx: GatewayContext): boolean {
  const server = ctx.config().server;
  if (!sheddingOn(server)) return false;
  const sample = samples.get(ctx);
  return sample !== undefined && pressureExceeded(server, sample());
}

/** Whether either threshold is set (both 0: shedding is off and no sample is read). */
function sheddingOn(server: Readonly<ServerConfig>): boolean {
  return server.maxEventLoopDelayMs > 0 || server.maxHeapUsedBytes > 0;
}

/** `server.maxEventLoopDelayMs` / `maxHeapUsedBytes` (0 = off) against under-pressure's last sample. */
export function pressureExceeded(server: Readonly<ServerConfig>, usage: { readonly eventLoopDelay: number; readonly heapUsed: number }): boolean {
  return (server.maxEventLoopDelayMs > 0 && usage.eventLoopDelay > server.maxEventLoopDelayMs) || (server.maxHeapUsedBytes > 0 && usage.heapUsed > server.maxHeapUsedBytes);
}
