/**
 * Small helpers shared by the test upstreams: listen on loopback port 0,
 * count connections, record what the upstream saw, close without hanging on
 * idle keep-alive sockets.
 */
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What an upstream received: enough for tests to assert what the gateway forwarded. */
export interface RecordedRequest {
  readonly method: string;
  /** Path and query, as sent on the request line. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The body decoded as UTF-8 ('' when there was none). */
  readonly body: string;
}

export interface ConnectionTracker {
  /** Sockets currently open. */
  open(): number;
  /** Sockets ever accepted. */
  total(): number;
  /** Destroys every open socket; resolves once each has emitted 'close' (so open() is then 0). */
  destroyAll(): Promise<void>;
}

export function trackConnections(server: Server): ConnectionTracker {
  const sockets = new Map<Socket, Promise<void>>();
  let total = 0;
  server.on('connection', (socket: Socket) => {
    total++;
    sockets.set(socket, new Promise((resolve) => socket.once('close', () => {
      sockets.delete(socket);
      resolve();
    })));
  });
  return {
    open: () => sockets.size,
    total: () => total,
    destroyAll: async () => {
      const closing = [...sockets.values()];
      for (const s of sockets.keys()) s.destroy();
      await Promise.all(closing);
    },
  };
}

/** Listens on 127.0.0.1 with an OS-chosen port; resolves to that port. */
export function listenOnLoopback(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Closes the server, destroying open sockets first so keep-alive and endless replies cannot stall teardown. */
export async function closeServer(server: Server, tracker: ConnectionTracker): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
  await tracker.destroyAll();
  await closed;
}

/**
 * Reads a request body up to `limit` bytes; the rest is drained and dropped
 * (a test upstream must not be made to buffer without bound either).
 */
export function readBody(req: IncomingMessage, limit = 16 * 1024 * 1024): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      if (size + chunk.length <= limit) chunks.push(chunk);
      size += chunk.length;
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

export function recordRequest(req: IncomingMessage, body: Buffer): RecordedRequest {
  return { method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers }, body: body.toString('utf8') };
}

/** Resolves after `ms`, or at once when `signal` aborts (a slow reply must stop when its caller leaves). */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

export interface RawReply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The bytes as they came off the wire: never decompressed, never decoded. */
  readonly body: Buffer;
  /** False when the body ended early: reset, truncated, or cut at `maxBytes`. */
  readonly complete: boolean;
  /** Why it ended early, when it did ('maxBytes' when we stopped reading). */
  readonly endedBy?: string;
  /** Milliseconds from sending the request to the response headers. */
  readonly headersAfterMs: number;
}

export interface RawRequestOptions {
  method?: string;
  body?: string | Buffer;
  headers?: OutgoingHttpHeaders;
  /** Stop reading (and close the connection) once this many body bytes arrived. */
  maxBytes?: number;
  /** Give up after this long: rejects if no head arrived, else ends the body early. Default 5000. */
  timeoutMs?: number;
}

/**
 * One HTTP request on a fresh connection, returning the raw reply: for tests
 * that must see exact status, headers and wire bytes (fetch would decompress
 * and follow redirects). Rejects only when no response head arrived at all.
 */
export function rawRequest(url: string, opts: RawRequestOptions = {}): Promise<RawReply> {
  const started = performance.now();
  const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      method: opts.method ?? (body === undefined ? 'GET' : 'POST'),
      agent: false,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(body.length) }),
        ...opts.headers,
      },
      signal: AbortSignal.timeout(opts.timeoutMs ?? 5000),
    });
    req.once('error', reject);
    req.once('response', (res) => {
      // From here on a socket error ends the body; it must not turn a received reply into a rejection.
      req.off('error', reject);
      req.on('error', (err: NodeJS.ErrnoException) => finish(false, err.code ?? err.message));
      const headersAfterMs = performance.now() - started;
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const finish = (complete: boolean, endedBy?: string): void => {
        if (settled) return;
        settled = true;
        const reply = { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete, headersAfterMs };
        resolve(endedBy === undefined ? reply : { ...reply, endedBy });
      };
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (opts.maxBytes !== undefined && size >= opts.maxBytes) {
          finish(false, 'maxBytes');
          req.destroy();
        }
      });
      res.once('end', () => finish(res.complete));
      res.once('error', (err: NodeJS.ErrnoException) => finish(false, err.code ?? err.message));
      res.once('close', () => finish(res.complete, res.complete ? undefined : 'close'));
    });
    req.end(body);
  });
}
