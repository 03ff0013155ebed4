/**
 * Hostile gRPC upstreams written at the HTTP/2 frame level with node:http2
 * (and, below it, raw sockets), for failures no gRPC library commits on its
 * own: wrong content types, oversize length prefixes, compressed messages,
 * trailers-only and malformed statuses, RST_STREAM or GOAWAY mid-call,
 * silence, broken stream messages, bytes that are not HTTP/2 at all.
 * Everything listens on 127.0.0.1:0 and is closed by the test.
 */
import http2, { type Http2Server, type Http2Session, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import net from 'node:net';
import { encodeMessage } from '../../src/bindings/grpc/framing.js';
import { jsonToBinary } from '../../src/bindings/grpc/proto-json.js';

export type H2Handler = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, session: Http2Session) => void;

export interface HostileServer {
  readonly target: string;
  readonly port: number;
  /** Request headers of every stream received. */
  readonly requests: IncomingHttpHeaders[];
  close(): Promise<void>;
}

export async function startH2(handler: H2Handler): Promise<HostileServer> {
  const server: Http2Server = http2.createServer();
  const sessions = new Set<Http2Session>();
  const requests: IncomingHttpHeaders[] = [];
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
    s.on('error', () => {});
  });
  server.on('stream', (stream, headers) => {
    requests.push(headers);
    stream.on('error', () => {});
    handler(stream, headers, stream.session!);
  });
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
  return {
    target: `127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A raw TCP server: `onConnection` gets each socket (after nothing has been read). */
export async function startRaw(onConnection: (socket: net.Socket) => void): Promise<HostileServer> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    onConnection(socket);
  });
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
  return {
    target: `127.0.0.1:${port}`,
    port,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export const GRPC_HEADERS = { ':status': 200, 'content-type': 'application/grpc' } as const;

export const taskMessage = (id = 't1'): Buffer => encodeMessage(jsonToBinary('Task', { id, status: { state: 'TASK_STATE_WORKING' } }));
export const taskEvent = (id = 't1'): Buffer => encodeMessage(jsonToBinary('StreamResponse', { task: { id } }));

/** Answers a unary call properly: headers, one message, trailers. */
export function answer(stream: ServerHttp2Stream, message: Buffer, extraHeaders: Record<string, string> = {}): void {
  stream.respond({ ...GRPC_HEADERS, ...extraHeaders }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(message);
}
