/**
 * Operator routes: /healthz (the process is alive), /readyz (config loaded
 * and listening; `?detail=1` adds per-remote state) and /metrics
 * (Prometheus). Served on the caller port unless `server.opsPort` moves them
 * to a port of their own.
 */
import type { FastifyInstance } from 'fastify';
import type { GatewayConfig } from '../config/schema.js';
import type { GatewayMetrics } from '../telemetry/metrics.js';

export interface OpsRouteOptions {
  readonly config: () => GatewayConfig;
  readonly metrics: GatewayMetrics;
  /** False while starting or draining. */
  readonly ready: () => boolean;
  /** Per-remote live state for `/readyz?detail=1` (breaker, in flight...). Never secrets. */
  readonly remoteState: (name: string) => Record<string, unknown>;
  readonly version: string;
  /** The exposition text to serve instead of `metrics.registry`'s (with server.workers > 1: every worker's, aggregated). */
  readonly exposition?: () => Promise<string>;
}

export async function opsRoutes(app: FastifyInstance, opts: OpsRouteOptions): Promise<void> {
  app.get('/healthz', async (_req, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));

  app.get<{ Querystring: { detail?: string } }>('/readyz', async (request, reply) => {
    const ready = opts.ready();
    const config = opts.config();
    const body: Record<string, unknown> = { status: ready ? 'ready' : 'not ready', version: opts.version, remotes: config.remotes.size };
    if (request.query.detail !== undefined && request.query.detail !== '0') {
      body.remotes = [...config.remotes.values()].map((r) => ({ name: r.name, origin: r.url.origin, ...opts.remoteState(r.name) }));
    }
    return reply.code(ready ? 200 : 503).header('cache-control', 'no-store').send(body);
  });

  app.get('/metrics', async (_req, reply) => {
    const text = await (opts.exposition ?? (() => opts.metrics.registry.metrics()))();
    return reply.header('content-type', opts.metrics.registry.contentType).header('cache-control', 'no-store').send(text);
  });
}
