/**
 * The gRPC listener callers use: an A2AService server (grpc-js, HTTP/2,
 * cleartext on loopback by default, TLS or mTLS when given certificates).
 *
 * How a call names its remote: a listener is either bound to one remote
 * (`remote` set: the port IS the remote, which is what a rewritten agent card
 * can tell a stock client, since a card entry is only a target `host:port`),
 * or shared (`remote` unset: the caller names the remote in the metadata key
 * `a2a-egress-remote`, for clients configured by hand). One grpc-js Server
 * per listener, because grpc-js does not tell a handler which port a call
 * arrived on.
 *
 * Messages cross grpc-js as raw bytes (identity serializers) so that decoding
 * is the gateway's: a request that does not decode becomes the catalogue's
 * INVALID_PARAMS, not grpc-js's generic INTERNAL.
 */
import type * as grpc from '@grpc/grpc-js';
import { grpcJs } from './grpc-js.js';
import { OPERATION_LIST, type Operation } from '../../a2a/operations.js';
import type { A2ACall } from '../../core/call.js';
import type { ErrorOutcome } from '../../core/outcome.js';
import type { CallHandler, EventSink } from './contracts.js';
import { buildCall, encodeError, encodeResult, type CallerCodecOptions } from './caller-codec.js';
import { gatewayFailure } from './response-reader.js';
import { SERVICE_PATH } from './proto-json.js';

export const REMOTE_METADATA_KEY = 'a2a-egress-remote';

export interface GrpcListenerTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** CA bundle for client certificates; with `requireClientCert` this is mTLS. */
  readonly ca?: Buffer;
  readonly requireClientCert?: boolean;
}

export interface GrpcListenerOptions extends CallerCodecOptions {
  readonly host: string;
  readonly port: number;
  /** The remote this listener serves; unset = shared listener, remote from metadata. */
  readonly remote?: string;
  readonly tls?: GrpcListenerTls;
  readonly handler: CallHandler;
  /** Largest request message accepted (limits.maxRequestBytes); grpc-js refuses larger ones with RESOURCE_EXHAUSTED. */
  readonly maxRequestBytes: number;
  /** Caller authentication on metadata (server.auth); false → UNAUTHENTICATED. */
  readonly authenticate?: (metadata: grpc.Metadata) => boolean;
  /**
   * The remote's request bound in force (it may change on reload, `maxRequestBytes` may not): a larger request
   * is answered REQUEST_TOO_LARGE with the gateway's ErrorInfo.
   */
  readonly requestLimitOf?: (remote: string) => number;
  /**
   * A call answered by the listener itself, before the handler saw it (unauthenticated, unknown remote, request
   * too large or undecodable, refused while closing): for the gateway's log line and metrics.
   */
  readonly onRefused?: (refusal: { readonly remote: string | undefined; readonly operation: Operation; readonly outcome: ErrorOutcome; readonly requestBytes: number }) => void;
  /** Answered instead of any call once set (the gateway drains): GATEWAY_SHUTDOWN. */
  readonly refuseAll?: () => ErrorOutcome | undefined;
  /**
   * Further grpc-js server options (keepalive, `grpc.max_concurrent_streams`,
   * `grpc.max_connection_age_ms`, ...). grpc-js has no cap on connections;
   * the per-stream cap and connection age are its levers.
   */
  readonly serverOptions?: grpc.ServerOptions;
}

export interface GrpcListener {
  readonly port: number;
  /** Stops accepting; in-flight calls may finish until `graceMs`, then are cancelled. */
  close(graceMs?: number): Promise<void>;
}

const identity = (b: Buffer): Buffer => b;

/** A2AService with raw-bytes (de)serializers. */
function serviceDefinition(): grpc.ServiceDefinition {
  const definition: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
  for (const op of OPERATION_LIST) {
    definition[op.grpc] = {
      path: SERVICE_PATH + op.grpc,
      requestStream: false,
      responseStream: op.streaming,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    };
  }
  return definition;
}

export async function startGrpcListener(opts: GrpcListenerOptions): Promise<GrpcListener> {
  const server = new (grpcJs().Server)({
    // The gateway pings idle callers every minute and drops a connection that does not answer in 20 s.
    'grpc.keepalive_time_ms': 60_000,
    'grpc.keepalive_timeout_ms': 20_000,
    'grpc.max_concurrent_streams': 1000,
    ...opts.serverOptions,
    'grpc.max_receive_message_length': opts.maxRequestBytes,
    'grpc.max_send_message_length': -1,
  });
  const implementation: grpc.UntypedServiceImplementation = {};
  for (const op of OPERATION_LIST) {
    implementation[op.grpc] = op.streaming ? streamHandler(op, opts) : unaryHandler(op, opts);
  }
  server.addService(serviceDefinition(), implementation);
  const credentials = opts.tls
    ? grpcJs().ServerCredentials.createSsl(opts.tls.ca ?? null, [{ private_key: opts.tls.key, cert_chain: opts.tls.cert }], opts.tls.requireClientCert ?? false)
    : grpcJs().ServerCredentials.createInsecure();
  const address = opts.host.includes(':') ? `[${opts.host}]:${opts.port}` : `${opts.host}:${opts.port}`;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, credentials, (err, bound) => (err ? reject(err) : resolve(bound)));
  });
  return {
    port,
    close: (graceMs = 0) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.forceShutdown(), graceMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}

/** The remote a call is for, or the error that answers it. */
function remoteOf(metadata: grpc.Metadata, opts: GrpcListenerOptions): string | ErrorOutcome {
  if (opts.authenticate && !opts.authenticate(metadata)) return gatewayFailure('UNAUTHENTICATED', opts.remote ?? '');
  if (opts.remote !== undefined) return opts.remote;
  const named = metadata.get(REMOTE_METADATA_KEY);
  const remote = named.length === 1 && typeof named[0] === 'string' ? named[0] : undefined;
  if (remote === undefined || !opts.remoteExists(remote)) return gatewayFailure('UNKNOWN_REMOTE', '');
  return remote;
}

/** The internal call for a request, or the error the listener answers it with itself (reported to `onRefused`). */
function admitCall(op: Operation, request: Buffer, metadata: grpc.Metadata, opts: GrpcListenerOptions): A2ACall | ErrorOutcome {
  const refuse = (outcome: ErrorOutcome, remote?: string): ErrorOutcome => {
    opts.onRefused?.({ remote, operation: op, outcome, requestBytes: request.length });
    return outcome;
  };
  const closing = opts.refuseAll?.();
  if (closing) return refuse(closing, opts.remote);
  const remote = remoteOf(metadata, opts);
  if (typeof remote !== 'string') return refuse(remote, remote.reason === 'UNAUTHENTICATED' ? opts.remote : undefined);
  const limit = opts.requestLimitOf?.(remote);
  if (limit !== undefined && request.length > limit) return refuse(gatewayFailure('REQUEST_TOO_LARGE', remote), remote);
  const built = buildCall(op, remote, request, metadata, opts);
  return 'kind' in built ? refuse(built, remote) : built;
}

function unaryHandler(op: Operation, opts: GrpcListenerOptions): grpc.handleUnaryCall<Buffer, Buffer> {
  return (call, callback) => {
    const built = admitCall(op, call.request, call.metadata, opts);
    if ('kind' in built) return callback(encodeError(built));
    const remote = built.remote;
    const controller = new AbortController();
    call.once('cancelled', () => controller.abort());
    const requestId = built.caller.requestId;
    opts.handler.unary(built, controller.signal, { requestBytes: call.request.length }).then(
      (reply) => {
        if (controller.signal.aborted) return;
        // The call's request id goes back as response metadata, like the HTTP paths' x-request-id header.
        call.sendMetadata(toMetadata({ ...reply.metadata, 'x-request-id': requestId }));
        if (reply.outcome.kind === 'error') return callback(encodeError(reply.outcome));
        const encoded = encodeResult(op, reply.outcome, remote);
        if ('kind' in encoded) callback(encodeError(encoded));
        else callback(null, encoded);
      },
      () => callback(encodeError(gatewayFailure('GATEWAY_ERROR', remote))),
    );
  };
}

function streamHandler(op: Operation, opts: GrpcListenerOptions): grpc.handleServerStreamingCall<Buffer, Buffer> {
  return (call) => {
    const built = admitCall(op, call.request, call.metadata, opts);
    if ('kind' in built) return void call.emit('error', encodeError(built));
    const remote = built.remote;
    const controller = new AbortController();
    let ended = false;
    let metadataSent = false;
    const endWith = (error?: ErrorOutcome) => {
      if (ended) return;
      ended = true;
      if (controller.signal.aborted) return;
      if (error) call.emit('error', encodeError(error));
      else call.end();
    };
    call.once('cancelled', () => controller.abort());
    const sink: EventSink = {
      signal: controller.signal,
      open(metadata) {
        if (metadataSent || controller.signal.aborted) return;
        metadataSent = true;
        call.sendMetadata(toMetadata({ ...metadata, 'x-request-id': built.caller.requestId }));
      },
      write(event) {
        if (ended || controller.signal.aborted) return Promise.resolve(false);
        const encoded = encodeResult(op, event, remote);
        if ('kind' in encoded) {
          endWith(encoded);
          return Promise.resolve(false);
        }
        if (call.write(encoded)) return true;
        return new Promise<boolean>((resolve) => {
          const onDrain = () => {
            controller.signal.removeEventListener('abort', onAbort);
            resolve(true);
          };
          const onAbort = () => {
            call.off('drain', onDrain);
            resolve(false);
          };
          call.once('drain', onDrain);
          controller.signal.addEventListener('abort', onAbort, { once: true });
        });
      },
      end: endWith,
    };
    opts.handler.stream(built, sink, { requestBytes: call.request.length }).catch(() => endWith(gatewayFailure('GATEWAY_ERROR', remote)));
  };
}

function toMetadata(values: Readonly<Record<string, string>>): grpc.Metadata {
  const metadata = new (grpcJs().Metadata)();
  for (const [key, value] of Object.entries(values)) metadata.set(key, value);
  return metadata;
}
