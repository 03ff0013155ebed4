/**
 * Real gRPC peers for the gRPC binding's tests, all on 127.0.0.1:
 * - the @a2a-js/sdk 1.3 gRPC server (grpcService over DefaultRequestHandler
 *   and the test agent) as a well-behaved upstream;
 * - the @a2a-js/sdk gRPC client transport as a caller;
 * - the forwarding harness: the gateway's gRPC listener whose handler is the
 *   gateway's gRPC client of the upstream (caller → listener → A2ACall →
 *   client → upstream → Outcome → listener → caller), no policy in between.
 */
import * as grpc from '@grpc/grpc-js';
import type { AgentCard } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import {
  DefaultExecutionEventBusManager,
  DefaultPushNotificationSender,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
} from '@a2a-js/sdk/server';
import { A2AService, grpcService, UserBuilder } from '@a2a-js/sdk/server/grpc';
import { GrpcRemoteClient, type GrpcClientOptions } from '../../src/bindings/grpc/client.js';
import type { CallHandler } from '../../src/bindings/grpc/contracts.js';
import { startGrpcListener, type GrpcListener, type GrpcListenerOptions } from '../../src/bindings/grpc/server.js';
import { parseGrpcTarget } from '../../src/bindings/grpc/target.js';
import { TestAgentExecutor } from './sdk-agent.js';
import { sdkAgentCard } from './sdk-upstream.js';

export interface SdkGrpcUpstream {
  /** `127.0.0.1:<port>`: a grpc-js target, and the card's GRPC interface url. */
  readonly target: string;
  readonly port: number;
  readonly card: AgentCard;
  /** Metadata of every call received, in order. */
  readonly received: grpc.Metadata[];
  close(): Promise<void>;
}

export async function startSdkGrpcUpstream(opts: { stepDelayMs?: number; extendedCard?: boolean } = {}): Promise<SdkGrpcUpstream> {
  const server = new grpc.Server();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const target = `127.0.0.1:${port}`;
  const card = sdkAgentCard(target, true, true);
  card.supportedInterfaces = [{ url: target, protocolBinding: 'GRPC', tenant: '', protocolVersion: '1.0' }];
  if (opts.extendedCard && card.capabilities) card.capabilities.extendedAgentCard = true;
  const extended = opts.extendedCard ? { ...structuredClone(card), description: 'the extended card' } : undefined;
  const executor = new TestAgentExecutor(opts.stepDelayMs ?? 0);
  const pushStore = new InMemoryPushNotificationStore();
  const handler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    executor,
    new DefaultExecutionEventBusManager(),
    pushStore,
    new DefaultPushNotificationSender(pushStore, { timeout: 1000 }),
    extended ? async () => extended : undefined,
  );
  const received: grpc.Metadata[] = [];
  const service = grpcService({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication });
  // Record each call's metadata before the SDK sees it.
  const recorded: grpc.UntypedServiceImplementation = {};
  for (const [name, impl] of Object.entries(service)) {
    recorded[name] = ((call: { metadata: grpc.Metadata }, ...rest: unknown[]) => {
      received.push(call.metadata.clone());
      return (impl as (...args: unknown[]) => unknown)(call, ...rest);
    }) as grpc.UntypedHandleCall;
  }
  server.addService(A2AService, recorded);
  return {
    target,
    port,
    card,
    received,
    close: async () => {
      executor.releaseAll();
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => server.forceShutdown(), 500);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
    },
  };
}

/** An @a2a-js/sdk client using its gRPC transport against `target` (host:port), as a stock caller would from a card. */
export function sdkGrpcClient(target: string, card?: AgentCard): Promise<Client> {
  const base = card ?? sdkAgentCard(target, true, true);
  const withGrpc: AgentCard = { ...base, supportedInterfaces: [{ url: target, protocolBinding: 'GRPC', tenant: '', protocolVersion: '1.0' }] };
  return new ClientFactory({ transports: [new GrpcTransportFactory()] }).createFromAgentCard(withGrpc);
}

export const TEST_LIMITS: GrpcClientOptions['limits'] = {
  maxResponseBytes: 4 * 1024 * 1024,
  maxEventBytes: 1024 * 1024,
  maxStreamBytes: 16 * 1024 * 1024,
  maxStreamEvents: 1000,
  maxErrorMessageBytes: 512,
};

export const TEST_TIMEOUTS: GrpcClientOptions['timeouts'] = {
  connectMs: 2000,
  headersMs: 5000,
  totalMs: 5000,
  streamIdleMs: 5000,
  streamNoDataMs: 5000,
  maxStreamMs: 10000,
};

export function grpcClientFor(target: string, overrides: Partial<GrpcClientOptions> = {}): GrpcRemoteClient {
  return new GrpcRemoteClient({
    remote: 'upstream',
    target: parseGrpcTarget(target, false),
    allowPrivateNetwork: true,
    keepRemoteErrorData: false,
    maxSessions: 2,
    timeouts: TEST_TIMEOUTS,
    limits: TEST_LIMITS,
    ...overrides,
  });
}

export interface Harness {
  readonly listener: GrpcListener;
  /** `127.0.0.1:<listener port>` */
  readonly target: string;
  close(): Promise<void>;
}

/** The gateway's gRPC listener bound to remote "upstream", forwarding with `handler`. */
export async function startHarness(handler: CallHandler, extra: Partial<GrpcListenerOptions> = {}): Promise<Harness> {
  const listener = await startGrpcListener({
    host: '127.0.0.1',
    port: 0,
    remote: 'upstream',
    handler,
    maxRequestBytes: 1024 * 1024,
    remoteExists: (name) => name === 'upstream',
    forwardHeadersOf: () => [],
    ...extra,
  });
  return { listener, target: `127.0.0.1:${listener.port}`, close: () => listener.close(200) };
}
