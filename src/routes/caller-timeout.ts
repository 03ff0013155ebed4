/**
 * `server.requestTimeoutMs`: the time a caller may take to send its whole
 * request (headers and body, Content-Length or chunked), counted from its
 * first byte; also a connection that sends nothing at all.
 *
 * Node's HTTP server enforces this itself (`requestTimeout`, and
 * `headersTimeout` for the head), but it looks for expired requests only once
 * per `connectionsCheckingInterval` (30 s by default, fixed when the server
 * starts listening), and `headersTimeout` defaults to 60 s at creation
 * whatever is set later. Set after creation, a 30 s bound held 60–90 s. So
 * all three are given to the server at creation: both timeouts equal to the
 * bound, and a check every tenth of it (at most 1 s, at least 20 ms), which
 * is the margin. A reload changes the bound itself; the check interval stays
 * as started.
 *
 * A caller past the bound gets HTTP 408 with a JSON-RPC envelope, reason
 * REQUEST_TIMEOUT, id null (the request never arrived whole, so there is no
 * id to answer; JSON-RPC 2.0 §5 uses null for that), and `Connection: close`;
 * then the socket is closed. 408 rather than 200 because no JSON-RPC request
 * was received and nothing was processed: HTTP clients and proxies know 408
 * as exactly that, and the body still carries the gateway's typed error.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { failureEnvelope } from '../envelope/normalize.js';

export interface CallerTimeoutOptions {
  readonly requestTimeout: number;
  readonly headersTimeout: number;
  readonly connectionsCheckingInterval: number;
}

/** Options for http.createServer (Fastify's `http` option). 0 turns both bounds off. */
export function callerTimeoutOptions(requestTimeoutMs: number): CallerTimeoutOptions {
  const interval = requestTimeoutMs === 0 ? 1000 : Math.min(1000, Math.max(20, Math.floor(requestTimeoutMs / 10)));
  return { requestTimeout: requestTimeoutMs, headersTimeout: requestTimeoutMs, connectionsCheckingInterval: interval };
}

/** A reload: Node reads both properties on every check, so the new bound applies to requests from now on. */
export function applyCallerTimeout(server: Server, requestTimeoutMs: number): void {
  server.requestTimeout = requestTimeoutMs;
  server.headersTimeout = requestTimeoutMs;
}

const timedOut = new WeakSet<Socket>();

/** True once the caller on `socket` was cut for taking longer than the bound. */
export function requestTimedOut(socket: Socket | null | undefined): boolean {
  return socket !== null && socket !== undefined && timedOut.has(socket);
}

const ENVELOPE = failureEnvelope(null, 'REQUEST_TIMEOUT', {}).json;
const RESPONSE =
  'HTTP/1.1 408 Request Timeout\r\n' +
  'Content-Type: application/json; charset=utf-8\r\n' +
  `Content-Length: ${Buffer.byteLength(ENVELOPE)}\r\n` +
  'Cache-Control: no-store\r\n' +
  'Connection: close\r\n' +
  '\r\n' +
  ENVELOPE;

/** What a timed-out socket was doing: true when a request's head had arrived (the call path then logs it). */
export type OnRequestTimeout = (requestStarted: boolean) => void;

interface HttpSocket extends Socket {
  /** The ServerResponse in progress on this socket (Node's own field; set once a request's head arrived). */
  _httpMessage?: { headersSent?: boolean } | null;
}

/**
 * Answers Node's request timeouts with the envelope above. Installed ahead of
 * Fastify's own clientError handler, which leaves sockets already destroyed
 * alone and keeps answering every other client error as before.
 */
export function answerRequestTimeouts(server: Server, onTimeout: OnRequestTimeout): void {
  server.prependListener('clientError', (err: Error & { code?: string }, raw: Socket) => {
    const socket = raw as HttpSocket;
    if (err.code !== 'ERR_HTTP_REQUEST_TIMEOUT' || socket.destroyed) return;
    timedOut.add(socket);
    const inFlight = socket._httpMessage ?? undefined;
    if (socket.writable && !inFlight?.headersSent) socket.write(RESPONSE);
    socket.destroy();
    onTimeout(inFlight !== undefined);
  });
}
