/**
 * The gRPC client of one remote: an A2ACall in, an Outcome (or a bounded
 * stream of them) out. It encodes the request from the call's ProtoJSON,
 * sends it on a pooled HTTP/2 connection (session-pool.ts: egress guard,
 * keepalive, connection limit) with the remote's credentials as metadata and
 * a deadline from the remote's timeouts, and hands every response event to
 * the pure normalizer (response-reader.ts). Timers live here: the unary
 * deadline, and for streams the idle, no-data and maximum-duration bounds of
 * the SSE path, with the same reasons.
 */
import http2, { type ClientHttp2Stream } from 'node:http2';
import type { JsonValue } from '@bufbuild/protobuf';
import type { Limits, ResolvedTls, Timeouts } from '../../config/schema.js';
import type { A2ACall } from '../../core/call.js';
import type { ErrorOutcome, Outcome } from '../../core/outcome.js';
import type { Reason } from '../../envelope/codes.js';
import type { LookupFunction } from '../../upstream/egress.js';
import type { CallHandler, EventSink, UnaryReply } from './contracts.js';
import { encodeMessage } from './framing.js';
import { upstreamRequestHeaders } from './metadata.js';
import { jsonToBinary, ProtoConversionError, SERVICE_PATH } from './proto-json.js';
import { gatewayFailure, GrpcResponseReader, type StreamClose } from './response-reader.js';
import { classifySessionError, SessionPool, type PooledSession } from './session-pool.js';
import type { GrpcTarget } from './target.js';

export interface GrpcClientOptions {
  readonly remote: string;
  readonly target: GrpcTarget;
  readonly tls?: ResolvedTls;
  readonly allowPrivateNetwork: boolean;
  readonly keepRemoteErrorData: boolean;
  readonly maxSessions: number;
  readonly timeouts: Pick<Timeouts, 'connectMs' | 'headersMs' | 'totalMs' | 'streamIdleMs' | 'streamNoDataMs' | 'maxStreamMs'>;
  readonly limits: Pick<Limits, 'maxResponseBytes' | 'maxEventBytes' | 'maxStreamBytes' | 'maxStreamEvents' | 'maxErrorMessageBytes'>;
  /** The remote's credential headers, fresh per call (CredentialSource.headers). */
  readonly credentials?: () => Record<string, string>;
  readonly keepaliveMs?: number;
  readonly keepaliveTimeoutMs?: number;
  readonly idleMs?: number;
  readonly resolver?: LookupFunction;
}

const NGHTTP2_CANCEL = http2.constants.NGHTTP2_CANCEL;

export class GrpcRemoteClient implements CallHandler {
  private readonly pool: SessionPool;

  constructor(private readonly opts: GrpcClientOptions) {
    this.pool = new SessionPool({
      target: opts.target,
      ...(opts.tls ? { tls: opts.tls } : {}),
      allowPrivateNetwork: opts.allowPrivateNetwork,
      ...(opts.resolver ? { resolver: opts.resolver } : {}),
      connectMs: opts.timeouts.connectMs,
      maxSessions: opts.maxSessions,
      keepaliveMs: opts.keepaliveMs ?? 30_000,
      keepaliveTimeoutMs: opts.keepaliveTimeoutMs ?? 10_000,
      idleMs: opts.idleMs ?? 60_000,
      // Headers and trailers carry the status message and details: bound them like grpc-js does (8 KiB + slack).
      maxHeaderListBytes: 16 * 1024 + opts.limits.maxErrorMessageBytes * 3,
    });
  }

  /** Open connections (for tests and metrics). */
  get connections(): number {
    return this.pool.size;
  }

  close(): void {
    this.pool.close();
  }

  destroy(): void {
    this.pool.destroy();
  }

  async unary(call: A2ACall, signal: AbortSignal): Promise<UnaryReply> {
    const body = this.encodeRequest(call);
    if (!(body instanceof Uint8Array)) return { outcome: body };
    const deadline = this.opts.timeouts.totalMs;
    const reader = this.reader(call);
    const outcome = await new Promise<Outcome>((resolve) => {
      let stream: ClientHttp2Stream | undefined;
      let pooled: PooledSession | undefined;
      let finished = false;
      const finish = (close: StreamClose, forced?: ErrorOutcome) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (pooled) pooled.active--;
        if (stream && !stream.closed) stream.close(NGHTTP2_CANCEL);
        resolve(forced ?? (reader.finish(close) as Outcome));
      };
      const finishWithGatewayError = (reason: Reason) => finish({}, gatewayFailure(reason, this.opts.remote));
      const timer = setTimeout(() => finishWithGatewayError('UPSTREAM_TIMEOUT'), deadline);
      const onAbort = () => finishWithGatewayError('CALLER_CLOSED');
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      void this.pool.acquire(signal).then((got) => {
        if (finished) return;
        if (typeof got === 'string') return finishWithGatewayError(got);
        pooled = got;
        pooled.active++;
        stream = this.open(got, call, body, deadline, (close) => finish(close));
        if (!stream) return finishWithGatewayError('UPSTREAM_RESET');
        stream.on('response', (headers) => {
          const error = reader.onHeaders(headers);
          if (error) finish({}, error);
        });
        stream.on('data', (chunk: Buffer) => {
          const step = reader.onData(chunk);
          if (step.error) finish({}, step.error);
        });
        stream.on('trailers', (trailers) => reader.onTrailers(trailers));
      });
    });
    return { outcome, metadata: reader.metadata };
  }

  async stream(call: A2ACall, sink: EventSink): Promise<void> {
    const body = this.encodeRequest(call);
    if (!(body instanceof Uint8Array)) return sink.end(body);
    const { timeouts } = this.opts;
    const reader = this.reader(call);
    await new Promise<void>((resolve) => {
      let stream: ClientHttp2Stream | undefined;
      let pooled: PooledSession | undefined;
      let finished = false;
      let opened = false;
      let pending = 0; // writes waiting for the sink
      const timers: NodeJS.Timeout[] = [];
      const finish = (close: StreamClose, forced?: ErrorOutcome) => {
        if (finished) return;
        finished = true;
        for (const t of timers) clearTimeout(t);
        clearTimeout(idle);
        clearTimeout(noData);
        sink.signal.removeEventListener('abort', onAbort);
        if (pooled) pooled.active--;
        if (stream && !stream.closed) stream.close(NGHTTP2_CANCEL);
        const error = forced ?? (reader.finish(close) as ErrorOutcome | undefined);
        sink.end(error);
        resolve();
      };
      const finishWithGatewayError = (reason: Reason) => finish({}, gatewayFailure(reason, this.opts.remote));
      let idle: NodeJS.Timeout | undefined;
      let noData: NodeJS.Timeout | undefined;
      const armIdle = () => {
        clearTimeout(idle);
        idle = setTimeout(() => finishWithGatewayError('STREAM_IDLE'), timeouts.streamIdleMs);
      };
      const armNoData = () => {
        clearTimeout(noData);
        noData = setTimeout(() => finishWithGatewayError('STREAM_NO_DATA'), timeouts.streamNoDataMs);
      };
      timers.push(setTimeout(() => finishWithGatewayError(opened ? 'STREAM_TOO_LONG' : 'UPSTREAM_TIMEOUT'), timeouts.maxStreamMs));
      const headersTimer = setTimeout(() => finishWithGatewayError('UPSTREAM_TIMEOUT'), timeouts.headersMs);
      timers.push(headersTimer);
      const onAbort = () => finishWithGatewayError('CALLER_CLOSED');
      if (sink.signal.aborted) return onAbort();
      sink.signal.addEventListener('abort', onAbort, { once: true });
      void this.pool.acquire(sink.signal).then((got) => {
        if (finished) return;
        if (typeof got === 'string') return finishWithGatewayError(got);
        pooled = got;
        pooled.active++;
        let closeAfterWrites: StreamClose | undefined;
        const s = this.open(got, call, body, timeouts.maxStreamMs, (close) => {
          // Events still waiting for the sink go first; the end follows them.
          if (pending === 0) finish(close);
          else closeAfterWrites = close;
        });
        if (!s) return finishWithGatewayError('UPSTREAM_RESET');
        stream = s;
        s.on('response', (headers) => {
          clearTimeout(headersTimer);
          const error = reader.onHeaders(headers);
          if (error) return finish({}, error);
          opened = true;
          sink.open(reader.metadata);
          armIdle();
          armNoData();
        });
        s.on('data', (chunk: Buffer) => {
          armIdle();
          const step = reader.onData(chunk);
          for (const event of step.events) {
            armNoData();
            const accepted = sink.write(event);
            if (accepted === true) continue;
            pending++;
            s.pause();
            clearTimeout(idle);
            clearTimeout(noData);
            void accepted.then((more) => {
              pending--;
              if (finished) return;
              if (!more) return finishWithGatewayError('CALLER_CLOSED');
              if (pending === 0) {
                if (closeAfterWrites) return finish(closeAfterWrites);
                armIdle();
                armNoData();
                s.resume();
              }
            });
          }
          if (step.error) finish({}, step.error);
        });
        s.on('trailers', (trailers) => reader.onTrailers(trailers));
      });
    });
  }

  private reader(call: A2ACall): GrpcResponseReader {
    return new GrpcResponseReader({
      remote: this.opts.remote,
      operation: call.operation,
      limits: this.opts.limits,
      keepRemoteErrorData: this.opts.keepRemoteErrorData,
    });
  }

  /** The request message, or the error that stops the call before anything is sent. */
  private encodeRequest(call: A2ACall): Uint8Array | ErrorOutcome {
    if (call.generation !== '1.0') {
      // 0.3's gRPC service (package a2a.v1) is another proto; the version bridge hands 1.0 calls to this client.
      return gatewayFailure('GATEWAY_ERROR', this.opts.remote, {}, 'gRPC upstream calls must be A2A 1.0');
    }
    try {
      return jsonToBinary(call.operation.requestType, call.params as JsonValue);
    } catch (err) {
      if (err instanceof ProtoConversionError) return gatewayFailure('INVALID_PARAMS', this.opts.remote);
      throw err;
    }
  }

  /** Starts the HTTP/2 request; `onClose` gets how it ended. Undefined when the session refuses new streams. */
  private open(pooled: PooledSession, call: A2ACall, body: Uint8Array, timeoutMs: number, onClose: (close: StreamClose) => void): ClientHttp2Stream | undefined {
    const headers = {
      ':method': 'POST',
      ':path': SERVICE_PATH + call.operation.grpc,
      ...upstreamRequestHeaders(call, this.opts.credentials?.() ?? {}, timeoutMs),
    };
    let stream: ClientHttp2Stream;
    try {
      stream = pooled.session.request(headers, { endStream: false });
    } catch {
      return undefined;
    }
    let transport: Reason | undefined;
    stream.on('error', (err: { code?: unknown }) => {
      // A stream error is the RST_STREAM the close reports (rstCode); anything else is the connection's.
      if (err.code !== 'ERR_HTTP2_STREAM_ERROR') transport ??= classifySessionError(err);
    });
    stream.once('close', () => {
      const rstCode = stream.rstCode;
      // Let the session's own 'error'/'goaway' land first: a dead connection explains the resets it causes.
      setImmediate(() => {
        const session = pooled.failure !== undefined && pooled.failure !== 'UPSTREAM_GOAWAY' ? pooled.failure : undefined;
        if (session) return onClose({ transport: session });
        onClose({
          ...(rstCode !== undefined ? { rstCode } : {}),
          ...(pooled.goaway ? { goaway: true } : {}),
          ...(transport ? { transport } : {}),
        });
      });
    });
    stream.end(encodeMessage(body));
    return stream;
  }
}
