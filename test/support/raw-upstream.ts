/**
 * A raw TCP "HTTP server" that writes exact bytes, so the gateway meets what
 * real HTTP libraries never send: bad framing, hostile headers, resets,
 * dribbled bytes, endless 1xx lines. Per accepted connection it reads one
 * request (headers plus Content-Length body), plays the script chosen for
 * that request, then (if the script left the socket open) reads the next
 * request on the same connection. Every connection and request is recorded,
 * so a test can prove a misbehaving connection was never reused.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';

/** One thing the upstream does to the connection, in order. */
export type Step =
  | { readonly write: string | Buffer }
  /** Pause; ends early if the socket closes. */
  | { readonly wait: number }
  /** One byte every `everyMs`, until all are written or the socket closes. */
  | { readonly drip: string | Buffer; readonly everyMs: number }
  /** The same chunk again and again, honouring backpressure, until the socket closes. */
  | { readonly writeForever: string | Buffer }
  /** Copies a (possibly endless) stream, honouring backpressure, until it ends or the socket closes. */
  | { readonly pipe: () => Readable }
  /** FIN after what was written. */
  | 'end'
  /** Close without FIN ceremony (what a crashing process does). */
  | 'destroy'
  /** TCP RST. */
  | 'reset';

export type Script = readonly Step[];

export interface RawRequest {
  /** Which connection it arrived on (1-based, in accept order). */
  readonly connection: number;
  readonly method: string;
  readonly path: string;
  /** The request head as received (request line and headers). */
  readonly head: string;
  readonly body: Buffer;
}

export interface RawConnection {
  readonly id: number;
  /** Requests read on this connection, in order. */
  readonly requests: RawRequest[];
  bytesWritten: number;
  closed: boolean;
}

export interface RawUpstream {
  /** http://127.0.0.1:PORT (no trailing slash). */
  readonly url: string;
  readonly port: number;
  readonly connections: RawConnection[];
  readonly requests: RawRequest[];
  /** Scripts by exact request path; a path with no route takes the next queued script. */
  route(path: string, script: Script | ((req: RawRequest) => Script)): void;
  /** Scripts for requests whose path has no route, first in first out. */
  enqueue(...scripts: Script[]): void;
  openConnections(): number;
  totalConnections(): number;
  /** The connection the last request with this path arrived on. */
  connectionOf(path: string): RawConnection | undefined;
  close(): Promise<void>;
}

/** Bounds what the fake server buffers for a request head: it is a test tool, not a target. */
const MAX_REQUEST_HEAD = 64 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');

/** A complete, well-framed JSON response. */
export function httpResponse(body: string | Buffer, headers: Record<string, string> = {}, status = '200 OK'): Buffer {
  const payload = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const lines = [`HTTP/1.1 ${status}`, 'content-type: application/json', `content-length: ${payload.length}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload]);
}

/** `{"jsonrpc":"2.0","id":1,"result":<resultJson>}` framed as a 200 response. */
export function jsonRpcResult(resultJson: string, headers: Record<string, string> = {}): Buffer {
  return httpResponse(`{"jsonrpc":"2.0","id":1,"result":${resultJson}}`, headers);
}

export async function startRawUpstream(): Promise<RawUpstream> {
  const routes = new Map<string, Script | ((req: RawRequest) => Script)>();
  const queue: Script[] = [];
  const connections: RawConnection[] = [];
  const requests: RawRequest[] = [];
  const sockets = new Set<Socket>();

  const scriptFor = (req: RawRequest): Script => {
    const routed = routes.get(req.path);
    if (routed) return typeof routed === 'function' ? routed(req) : routed;
    return queue.shift() ?? [{ write: httpResponse('no script for this request', {}, '500 Internal Server Error') }, 'destroy'];
  };

  const server: Server = createServer((socket) => {
    const conn: RawConnection = { id: connections.length + 1, requests: [], bytesWritten: 0, closed: false };
    connections.push(conn);
    sockets.add(socket);
    socket.on('error', () => {}); // resets are the point of many cases
    socket.once('close', () => {
      conn.closed = true;
      conn.bytesWritten = socket.bytesWritten;
      sockets.delete(socket);
    });
    void serveConnection(socket, conn, (req) => {
      requests.push(req);
      return scriptFor(req);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    connections,
    requests,
    route: (path, script) => void routes.set(path, script),
    enqueue: (...scripts) => void queue.push(...scripts),
    openConnections: () => sockets.size,
    totalConnections: () => connections.length,
    connectionOf: (path) => {
      const last = requests.filter((r) => r.path === path).at(-1);
      return last && connections[last.connection - 1];
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

/** Reads requests one after another and plays each one's script. */
async function serveConnection(socket: Socket, conn: RawConnection, onRequest: (req: RawRequest) => Script): Promise<void> {
  const reader = new RequestReader(socket, conn.id);
  for (;;) {
    const req = await reader.next();
    if (!req) return;
    conn.requests.push(req);
    await play(socket, onRequest(req));
    conn.bytesWritten = socket.bytesWritten;
    if (socket.destroyed || socket.writableEnded) return;
  }
}

/** Buffers socket bytes and cuts them into requests; bytes that arrive during a script wait for the next read. */
class RequestReader {
  #buffered = Buffer.alloc(0);
  #wake: (() => void) | undefined;
  #closed = false;

  constructor(
    socket: Socket,
    private readonly connection: number,
  ) {
    socket.on('data', (chunk: Buffer) => {
      this.#buffered = Buffer.concat([this.#buffered, chunk]);
      if (this.#buffered.length > MAX_REQUEST_HEAD + 16 * 1024 * 1024) socket.destroy();
      this.#wake?.();
    });
    socket.once('close', () => {
      this.#closed = true;
      this.#wake?.();
    });
  }

  async next(): Promise<RawRequest | undefined> {
    for (;;) {
      const req = this.#take();
      if (req) return req;
      if (this.#closed) return undefined;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }

  #take(): RawRequest | undefined {
    const end = this.#buffered.indexOf(HEAD_END);
    if (end === -1) return undefined;
    const head = this.#buffered.subarray(0, end).toString('latin1');
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
    const bodyStart = end + HEAD_END.length;
    if (this.#buffered.length < bodyStart + length) return undefined;
    const body = Buffer.from(this.#buffered.subarray(bodyStart, bodyStart + length));
    this.#buffered = this.#buffered.subarray(bodyStart + length);
    const [method = '', path = ''] = head.split('\r\n', 1)[0]!.split(' ');
    return { connection: this.connection, method, path, head, body };
  }
}

function closedOrAfter(socket: Socket, ms: number): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve();
    const done = () => {
      clearTimeout(timer);
      socket.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    socket.once('close', done);
  });
}

function drainedOrClosed(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve();
    const done = () => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.once('drain', done);
    socket.once('close', done);
  });
}

const writable = (socket: Socket) => !socket.destroyed && !socket.writableEnded;

async function play(socket: Socket, script: Script): Promise<void> {
  for (const step of script) {
    if (!writable(socket)) return;
    if (step === 'end') socket.end();
    else if (step === 'destroy') socket.destroy();
    else if (step === 'reset') socket.resetAndDestroy();
    else if ('write' in step) socket.write(step.write);
    else if ('wait' in step) await closedOrAfter(socket, step.wait);
    else if ('drip' in step) {
      const bytes = Buffer.isBuffer(step.drip) ? step.drip : Buffer.from(step.drip, 'latin1');
      for (let i = 0; i < bytes.length && writable(socket); i++) {
        socket.write(bytes.subarray(i, i + 1));
        if (i < bytes.length - 1) await closedOrAfter(socket, step.everyMs);
      }
    } else if ('writeForever' in step) {
      while (writable(socket)) if (!socket.write(step.writeForever)) await drainedOrClosed(socket);
    } else {
      const source = step.pipe();
      try {
        for await (const chunk of source as AsyncIterable<Buffer>) {
          if (!writable(socket)) break;
          if (!socket.write(chunk)) await drainedOrClosed(socket);
        }
      } finally {
        source.destroy();
      }
    }
  }
}
