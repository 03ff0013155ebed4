/**
 * Load shedding for every call a caller makes to a remote, whatever its
 * binding (JSON-RPC POSTs, HTTP+JSON POSTs, GETs and DELETEs): while the last
 * sample shows the event loop lagging more than `server.maxEventLoopDelayMs`,
 * or the heap over `server.maxHeapUsedBytes`, the request is answered
 * GATEWAY_OVERLOADED (Retry-After: 1) in its binding's own error shape,
 * before its body is read or anything goes upstream. Registered once per
 * mount (routes/remote-routes.ts), above the binding plugins, so no binding
 * can miss it; the call front and the gRPC listeners ask `shedding()` for the
 * same verdict. One sampler per gateway (policy/pressure-sampler.ts), running
 * only while a threshold is set; the thresholds are read from the config in
 * force on each request, so a reload can turn shedding on, off, or move it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServerConfig } from '../config/schema.js';
import type { Reason } from '../envelope/codes.js';
import { PressureSampler, type PressureSample } from '../policy/pressure-sampler.js';
import type { GatewayContext } from '../proxy/context.js';

export interface LoadShedOptions {
  /** Requests that are not calls (agent cards: cached, and what a caller needs to find the binding at all). */
  readonly exempt: (request: FastifyRequest) => boolean;
  /** Answers `reason` in the request's binding. */
  readonly refuse: (request: FastifyRequest, reply: FastifyReply, reason: Reason, headers: Record<string, string>) => void;
}

/** The sampler of each gateway: every mount and listener of one process judges the one event loop and heap. */
const samplers = new WeakMap<GatewayContext, PressureSampler>();

function samplerOf(ctx: GatewayContext): PressureSampler {
  let sampler = samplers.get(ctx);
  if (sampler === undefined) {
    // Not once the gateway shuts down: a reload or a request during the drain must not start one nobody stops.
    sampler = new PressureSampler(() => !ctx.shutdown.aborted && sheddingOn(ctx.config().server));
    samplers.set(ctx, sampler);
  }
  return sampler;
}

export async function registerLoadShedding(app: FastifyInstance, ctx: GatewayContext, opts: LoadShedOptions): Promise<void> {
  // A gateway started with a threshold samples from the start (its first window ends a second later).
  pressureConfigChanged(ctx);
  // Each mount's close stops the one sampler (idempotent); nothing starts it again once shutdown has begun.
  app.addHook('onClose', async () => samplerOf(ctx).stop());
  app.addHook('onRequest', async (request, reply) => {
    if (!shedding(ctx) || opts.exempt(request)) return undefined;
    opts.refuse(request, reply, 'GATEWAY_OVERLOADED', { 'retry-after': '1' });
    return reply;
  });
}

/**
 * At start and after a reload: a threshold the config sets starts the sampler now (one the config clears stops it at
 * its next tick).
 */
export function pressureConfigChanged(ctx: GatewayContext): void {
  samplerOf(ctx).startIfWanted();
}

/**
 * Whether a call arriving now is shed, for the HTTP routes, the call front and the gRPC listeners: the thresholds in
 * force against the last sample. False while shedding is off (then no sample is read or taken).
 */
export function shedding(ctx: GatewayContext): boolean {
  const server = ctx.config().server;
  return sheddingOn(server) && pressureExceeded(server, samplerOf(ctx).sample());
}

/** Whether either threshold is set (both 0: shedding is off and no sample is read). */
function sheddingOn(server: Readonly<ServerConfig>): boolean {
  return server.maxEventLoopDelayMs > 0 || server.maxHeapUsedBytes > 0;
}

/** `server.maxEventLoopDelayMs` / `maxHeapUsedBytes` (0 = off) against a sample. */
function pressureExceeded(server: Readonly<ServerConfig>, usage: PressureSample): boolean {
  return (server.maxEventLoopDelayMs > 0 && usage.eventLoopDelay > server.maxEventLoopDelayMs) || (server.maxHeapUsedBytes > 0 && usage.heapUsed > server.maxHeapUsedBytes);
}
