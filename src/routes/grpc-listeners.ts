/**
 * The gateway's gRPC listeners (docs/grpc-binding.md): the shared one
 * (`server.grpc.port`, the remote named by the metadata key
 * a2a-egress-remote) and one per remote with `remotes.<name>.grpc.listen`
 * (the port is the remote: what its rewritten card advertises). All serve
 * A2AService through one CallHandler (proxy/grpc-call.ts), check callers
 * with `server.auth` (the `authorization` metadata), and answer
 * GATEWAY_SHUTDOWN once the gateway drains. Listen addresses are read at
 * start-up only (config/reload.ts RESTART_KEYS).
 */
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { GatewayConfig, GrpcServerConfig } from '../config/schema.js';
import type { CallHandler } from '../bindings/grpc/contracts.js';
import { gatewayFailure } from '../bindings/grpc/response-reader.js';
import { startGrpcListener, type GrpcListener, type GrpcListenerOptions } from '../bindings/grpc/server.js';
import { formatGrpcTarget } from '../bindings/grpc/target.js';
import type { CallerCheck } from '../policy/caller-auth.js';
import { newRequestId } from '../policy/request-id.js';
import { CallLog, type GatewayContext } from '../proxy/context.js';
import { recordCallLine } from '../proxy/reply.js';
import { shedding } from './load-shed.js';

export interface GrpcListenersOptions {
  readonly ctx: GatewayContext;
  readonly logger: Logger;
  readonly handler: CallHandler;
  /** `server.auth` in force (a reload may turn it on, off, or change its tokens). */
  readonly callerAuth: () => CallerCheck | undefined;
}

/** Where a listener is bound: `host:port` as a grpc-js client takes it. */
export interface GrpcAddresses {
  readonly shared?: string;
  readonly remotes: Record<string, string>;
}

const firstString = (values: grpc.MetadataValue[]): string | undefined => (typeof values[0] === 'string' ? values[0] : undefined);

export class GrpcListeners {
  readonly #listeners = new Map<string | null, { listener: GrpcListener; address: string; publicTarget?: string }>();
  #closing: Promise<void> | undefined;

  constructor(private readonly opts: GrpcListenersOptions) {}

  /** True when `config` asks for any gRPC listener. */
  static wanted(config: GatewayConfig): boolean {
    return config.server.grpc?.port !== undefined || [...config.remotes.values()].some((r) => r.grpc?.listen !== undefined);
  }

  /** Binds every gRPC listener `config` asks for (the config the gateway started with). */
  async start(config: GatewayConfig): Promise<GrpcAddresses> {
    const grpcServer = config.server.grpc;
    // grpc-js's own cap is fixed at bind: the largest bound of any remote; each call is checked against its remote's.
    const maxRequestBytes = Math.max(...[...config.remotes.values()].map((r) => r.limits.maxRequestBytes));
    const base = this.listenerOptions(grpcServer, maxRequestBytes);
    const remotes: Record<string, string> = {};
    let shared: string | undefined;
    try {
      if (grpcServer?.port !== undefined) {
        shared = await this.bind(null, { ...base, host: grpcServer.host, port: grpcServer.port });
      }
      for (const remote of config.remotes.values()) {
        const listen = remote.grpc?.listen;
        if (!listen) continue;
        remotes[remote.name] = await this.bind(remote.name, { ...base, host: listen.host, port: listen.port, remote: remote.name }, listen.publicTarget);
      }
    } catch (err) {
      await this.close(0);
      throw err;
    }
    return { ...(shared !== undefined ? { shared } : {}), remotes };
  }

  /** The `host:port` a remote's rewritten card advertises for gRPC: its own listener's, or undefined without one. */
  cardTargetOf(remote: string): string | undefined {
    const entry = this.#listeners.get(remote);
    return entry ? (entry.publicTarget ?? entry.address) : undefined;
  }

  /** Stops accepting (GOAWAY); calls in flight may run `graceMs` more (the handler answers GATEWAY_SHUTDOWN at drainMs), then are cancelled. */
  close(graceMs: number): Promise<void> {
    this.#closing ??= Promise.allSettled([...this.#listeners.values()].map((l) => l.listener.close(graceMs))).then(() => undefined);
    return this.#closing;
  }

  private async bind(remote: string | null, options: GrpcListenerOptions, publicTarget?: string): Promise<string> {
    const listener = await startGrpcListener(options);
    const address = formatGrpcTarget(options.host, listener.port);
    this.#listeners.set(remote, { listener, address, ...(publicTarget !== undefined ? { publicTarget } : {}) });
    this.opts.logger.info({ grpcAddress: address, ...(remote !== null ? { remote } : {}), tls: options.tls !== undefined }, 'gRPC listener bound');
    if (remote !== null && publicTarget === undefined && (options.host === '0.0.0.0' || options.host === '::')) {
      // The card would send callers to an address they cannot dial.
      this.opts.logger.warn({ remote, grpcAddress: address }, 'remote’s gRPC listener binds every address: set remotes.<name>.grpc.listen.publicTarget for its card');
    }
    return address;
  }

  private listenerOptions(grpcServer: GrpcServerConfig | undefined, maxRequestBytes: number): Omit<GrpcListenerOptions, 'host' | 'port'> {
    const { ctx, logger, handler, callerAuth } = this.opts;
    const tls = grpcServer?.tls;
    return {
      handler,
      maxRequestBytes,
      ...(tls ? { tls: { cert: tls.cert, key: tls.key, ...(tls.ca ? { ca: tls.ca } : {}), requireClientCert: tls.requireClientCert } } : {}),
      remoteExists: (name) => ctx.config().remotes.has(name),
      forwardHeadersOf: (name) => ctx.config().remotes.get(name)?.forwardHeaders ?? [],
      requestLimitOf: (name) => ctx.config().remotes.get(name)?.limits.maxRequestBytes ?? maxRequestBytes,
      authenticate: (metadata) => {
        const check = callerAuth();
        return check === undefined || check(firstString(metadata.get('authorization')));
      },
      refuseAll: () => (ctx.shutdown.aborted ? gatewayFailure('GATEWAY_SHUTDOWN', '') : shedding(ctx) ? gatewayFailure('GATEWAY_OVERLOADED', '') : undefined),
      onRefused: ({ remote, operation, outcome, requestBytes }) => {
        const known = remote !== undefined && ctx.config().remotes.has(remote) ? remote : 'unknown';
        const log = new CallLog(known, outcome.reason, requestBytes, 'grpc', operation.name);
        recordCallLine(ctx, logger, newRequestId(), log, performance.now());
      },
    };
  }
}
