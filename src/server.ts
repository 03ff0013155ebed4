/**
 * buildGateway(config) → a ready-to-listen Fastify instance. This file only
 * assembles: each concern lives in its own module under src/.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { GatewayConfig } from './config/schema.js';
import { jsonRpcRoutes } from './routes/jsonrpc.js';
import { createLogger } from './telemetry/logger.js';
import { UpstreamPools, type PoolOptions } from './upstream/pools.js';
import { VERSION } from './version.js';

export interface GatewayOptions {
  readonly logger?: Logger;
  readonly pool?: PoolOptions;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export async function buildGateway(initial: GatewayConfig, options: GatewayOptions = {}): Promise<FastifyInstance> {
  let current = initial;
  const pools = new UpstreamPools(options.pool);
  const logger = options.logger ?? createLogger(initial.server.logLevel);

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // The call path writes its own single line per call (remote, method, outcome, bytes, durations).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    // SSE streams and idle keep-alive sockets must not hold up shutdown.
    forceCloseConnections: true,
    return503OnClosing: true,
    // Accept a caller's x-request-id only if it is short and plain; otherwise make one.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { maxParamLength: 128 },
  });
  app.decorate('gatewayConfig', () => current);
  app.addHook('onClose', async () => pools.close());

  await app.register(jsonRpcRoutes, { config: () => current, pools, userAgent: `a2a-egress/${VERSION}` });
  return app;
}
