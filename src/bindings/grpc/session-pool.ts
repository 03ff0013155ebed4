/**
 * HTTP/2 connections to one gRPC remote, opened with node:http2 so that every
 * socket goes through the egress guard (a `lookup` that checks each resolved
 * address before connecting; IP literals are checked up front) while the
 * :authority and the TLS server name stay the configured host. At most
 * `maxSessions` sessions; a call takes the least busy one that is not
 * draining. Keepalive PINGs find dead connections; idle ones are closed.
 *
 * Why not a grpc-js Channel: grpc-js turns every transport and framing
 * failure into a status whose only distinguishing mark is an English message,
 * indistinguishable from a status the remote sent itself. Owning the HTTP/2
 * stream lets the normalizer type each failure (reset, GOAWAY, bad frame,
 * wrong content-type, oversized prefix) and never mistake the gateway's
 * judgement for the remote's.
 */
import http2, { type ClientHttp2Session, type SecureClientSessionOptions } from 'node:http2';
import { isIP } from 'node:net';
import type { ResolvedTls } from '../../config/schema.js';
import type { Reason } from '../../envelope/codes.js';
import { guardedLookup, isNonPublicAddress, type LookupFunction } from '../../upstream/egress.js';
import { classifyTransportError } from '../../upstream/errors.js';
import { formatGrpcTarget, type GrpcTarget } from './target.js';

export interface SessionPoolOptions {
  readonly target: GrpcTarget;
  readonly tls?: ResolvedTls;
  readonly allowPrivateNetwork: boolean;
  /** Injectable resolver (tests play DNS with it); the guard wraps it. */
  readonly resolver?: LookupFunction;
  readonly connectMs: number;
  readonly maxSessions: number;
  /** PING interval while calls are in flight, and how long an answer may take. */
  readonly keepaliveMs: number;
  readonly keepaliveTimeoutMs: number;
  /** Close a connection with no call for this long. */
  readonly idleMs: number;
  /** HTTP/2 header list bound for the remote's headers and trailers. */
  readonly maxHeaderListBytes: number;
}

export interface PooledSession {
  readonly session: ClientHttp2Session;
  active: number;
  /** A GOAWAY arrived: no new calls; calls it cut report UPSTREAM_GOAWAY. */
  goaway: boolean;
  /** Why the connection failed, once it has. */
  failure?: Reason;
}

export class SessionPool {
  private readonly sessions = new Set<PooledSession>();
  private readonly lookup: LookupFunction;
  private closed = false;

  constructor(private readonly opts: SessionPoolOptions) {
    this.lookup = guardedLookup(opts.allowPrivateNetwork, opts.resolver);
  }

  /** A connected session with room, or the reason none can be had. */
  async acquire(signal?: AbortSignal): Promise<PooledSession | Reason> {
    if (this.closed) return 'GATEWAY_SHUTDOWN';
    let best: PooledSession | undefined;
    for (const s of this.sessions) {
      if (s.goaway || s.failure || s.session.destroyed || s.session.closed) continue;
      if (!best || s.active < best.active) best = s;
    }
    if (best && (best.active === 0 || this.sessions.size >= this.opts.maxSessions)) return best;
    if (this.sessions.size >= this.opts.maxSessions) {
      // Every slot holds a draining or failed session that has not closed yet.
      return best ?? 'OVERLOADED';
    }
    return this.connect(signal);
  }

  close(): void {
    this.closed = true;
    for (const s of this.sessions) s.session.close();
  }

  /** Destroys every session at once (shutdown deadline passed). */
  destroy(): void {
    this.closed = true;
    for (const s of this.sessions) s.session.destroy();
  }

  get size(): number {
    return this.sessions.size;
  }

  private connect(signal?: AbortSignal): Promise<PooledSession | Reason> {
    const { target, tls } = this.opts;
    if (!this.opts.allowPrivateNetwork && (isIP(target.host) !== 0 ? isNonPublicAddress(target.host) : /(^|\.)localhost$/i.test(target.host))) {
      return Promise.resolve('EGRESS_DENIED');
    }
    // node:http2 takes :authority from the origin: the configured host and port, never the address dialled.
    const origin = `${target.tls ? 'https' : 'http'}://${formatGrpcTarget(target.host, target.port)}`;
    const options: SecureClientSessionOptions = {
      lookup: this.lookup as SecureClientSessionOptions['lookup'],
      maxHeaderListPairs: 128,
      maxSendHeaderBlockLength: 64 * 1024,
      settings: { enablePush: false, maxHeaderListSize: this.opts.maxHeaderListBytes },
      ...(target.tls
        ? {
            ...(isIP(target.host) === 0 ? { servername: target.host } : {}),
            ...(tls?.ca ? { ca: tls.ca } : {}),
            ...(tls?.cert ? { cert: tls.cert } : {}),
            ...(tls?.key ? { key: tls.key } : {}),
            ...(tls?.minVersion ? { minVersion: tls.minVersion } : {}),
            ALPNProtocols: ['h2'],
          }
        : {}),
    };
    return new Promise((resolve) => {
      let settled = false;
      const session = http2.connect(origin, options);
      const pooled: PooledSession = { session, active: 0, goaway: false };
      this.sessions.add(pooled);
      const done = (result: PooledSession | Reason) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (typeof result === 'string') {
          pooled.failure = result;
          session.destroy();
        }
        resolve(result);
      };
      const onAbort = () => done('CALLER_CLOSED');
      signal?.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(() => done('UPSTREAM_CONNECT_TIMEOUT'), this.opts.connectMs);
      session.once('connect', () => {
        this.watch(pooled);
        done(pooled);
      });
      session.on('error', (err: unknown) => {
        pooled.failure ??= classifySessionError(err);
        done(pooled.failure);
      });
      session.on('goaway', (errorCode: number) => {
        pooled.goaway = true;
        if (errorCode !== 0) pooled.failure ??= 'UPSTREAM_GOAWAY';
      });
      session.once('close', () => {
        this.sessions.delete(pooled);
        done(pooled.failure ?? 'UPSTREAM_RESET');
      });
    });
  }

  /** Keepalive and idle close for a connected session. */
  private watch(pooled: PooledSession): void {
    const { session } = pooled;
    let idleSince = Date.now();
    const tick = setInterval(() => {
      if (session.destroyed || session.closed) return clearInterval(tick);
      if (pooled.active === 0) {
        if (Date.now() - idleSince >= this.opts.idleMs) session.close();
        return;
      }
      idleSince = Date.now();
      const deadline = setTimeout(() => {
        pooled.failure ??= 'UPSTREAM_RESET';
        session.destroy();
      }, this.opts.keepaliveTimeoutMs);
      deadline.unref();
      try {
        session.ping((err) => {
          clearTimeout(deadline);
          if (err && !session.destroyed) {
            pooled.failure ??= 'UPSTREAM_RESET';
            session.destroy();
          }
        });
      } catch {
        clearTimeout(deadline);
      }
    }, Math.min(this.opts.keepaliveMs, this.opts.idleMs));
    tick.unref();
    session.once('close', () => clearInterval(tick));
  }
}

/** node:http2 session errors in the catalogue's words. */
export function classifySessionError(err: unknown): Reason {
  const code = (err as { code?: unknown }).code;
  if (code === 'ERR_HTTP2_ERROR' || code === 'ERR_HTTP2_SESSION_ERROR' || code === 'ERR_HTTP2_INVALID_SETTING_VALUE' || code === 'ERR_HTTP2_STREAM_ERROR') {
    return 'UPSTREAM_PROTOCOL_ERROR';
  }
  if (code === 'ERR_HTTP2_GOAWAY_SESSION') return 'UPSTREAM_GOAWAY';
  if (code === 'ERR_HTTP2_PING_CANCEL') return 'UPSTREAM_RESET';
  return classifyTransportError(err);
}
