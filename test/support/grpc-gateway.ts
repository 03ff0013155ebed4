/**
 * The gateway with its gRPC listeners, started as the CLI starts it
 * (createGateway + listen, from YAML through the real config loader), and the
 * pieces a gRPC-only remote needs around it: an HTTP server that serves the
 * remote's agent card (a gRPC server has no well-known URL), and @a2a-js/sdk
 * gRPC clients that start from the card the gateway serves.
 */
import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import type { AgentCard } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, type Client } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { parseConfig } from '../../src/loader/load.js';
import { createGateway, type Gateway } from '../../src/server.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { closeServer, listenOnLoopback, trackConnections } from './servers.js';
import { loopbackOnlyFetch } from './sdk-client.js';
import type { GrpcAddresses } from '../../src/routes/grpc-listeners.js';

export interface GrpcGateway {
  readonly gateway: Gateway;
  /** The HTTP listener (JSON-RPC and cards). */
  readonly url: string;
  readonly grpc: GrpcAddresses;
  readonly logs: Record<string, unknown>[];
  /** The `call` objects of the gateway's per-call log lines, in order. */
  calls(): Record<string, unknown>[];
  metrics(): Promise<string>;
  close(): Promise<void>;
}

export async function startGrpcGateway(yaml: string, env: Record<string, string> = {}): Promise<GrpcGateway> {
  const config = parseConfig(yaml, 'test.yaml');
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const gateway = await createGateway(config, { logger: createLogger('debug', sink), processMetrics: false, env: { ...process.env, ...env } });
  const { url, grpc } = await gateway.listen();
  if (!grpc) throw new Error('the config asks for no gRPC listener');
  let closed: Promise<void> | undefined;
  return {
    gateway,
    url,
    grpc,
    logs,
    calls: () => logs.filter((l) => l.msg === 'call').map((l) => l.call as Record<string, unknown>),
    metrics: () => gateway.metrics.registry.metrics(),
    close: () => (closed ??= gateway.close()),
  };
}

export interface CardHost {
  /** Origin of the card server (the remote's `url` in the gateway's config). */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves `card` at /.well-known/agent-card.json on 127.0.0.1. */
export async function serveCard(card: () => unknown): Promise<CardHost> {
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.startsWith('/.well-known/agent-card.json')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card()));
    } else {
      res.writeHead(404).end();
    }
  });
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  return { url: `http://127.0.0.1:${port}`, close: () => closeServer(server, tracker) };
}

/** The way a stock gRPC caller starts: fetch the card under `baseUrl` from the gateway, use its GRPC interface. */
export function sdkGrpcClientFromBaseUrl(baseUrl: string): Promise<Client> {
  return new ClientFactory({
    transports: [new GrpcTransportFactory()],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: loopbackOnlyFetch }),
  }).createFromUrl(baseUrl);
}

/** A gRPC client of a target by hand (the shared listener: the remote named in metadata per call). */
export function sdkGrpcClientOf(target: string, card: AgentCard): Promise<Client> {
  const withGrpc: AgentCard = { ...card, supportedInterfaces: [{ url: target, protocolBinding: 'GRPC', tenant: '', protocolVersion: '1.0' }] };
  return new ClientFactory({ transports: [new GrpcTransportFactory()] }).createFromAgentCard(withGrpc);
}
