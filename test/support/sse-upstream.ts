/**
 * A hostile SSE upstream for the stream relay's integration tests: one HTTP
 * server on 127.0.0.1, behaviour chosen by path. Every endless behaviour stops
 * when its connection closes, so the test can also count open connections.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { closeServer, delay, listenOnLoopback, readBody, trackConnections } from './servers.js';

const SSE = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-remote-secret': 'must-not-pass' };
/** The id the upstream puts in its events; the caller must never see it. */
export const REMOTE_ID = 'remote-side-id';

export const goodData = (n: number): string => JSON.stringify({ jsonrpc: '2.0', id: REMOTE_ID, result: { kind: 'status-update', n } });
export const goodEvent = (n: number): string => `data: ${goodData(n)}\n\n`;
/** The exact bytes /events?n=N sends. */
export const eventsBody = (n: number): string => Array.from({ length: n }, (_, i) => goodEvent(i + 1)).join('');

/**
 * One event whose size as the relay counts it ("data: " + JSON + "\n", the
 * closing blank line excluded) is exactly `bytes`.
 */
export function sizedEvent(bytes: number): string {
  const empty = `data: ${JSON.stringify({ jsonrpc: '2.0', id: REMOTE_ID, result: { pad: '' } })}\n`;
  const pad = bytes - Buffer.byteLength(empty);
  if (pad < 0) throw new Error(`sizedEvent: at least ${Buffer.byteLength(empty)} bytes`);
  return `data: ${JSON.stringify({ jsonrpc: '2.0', id: REMOTE_ID, result: { pad: 'x'.repeat(pad) } })}\n\n`;
}

type Handler = (res: ServerResponse, q: URLSearchParams, closed: AbortSignal) => void | Promise<void>;

export interface SseUpstream {
  readonly origin: string;
  /** Sockets open on the upstream right now. */
  openConnections(): number;
  /** Requests whose response has not closed yet. */
  activeRequests(): number;
  /** Bytes the /flood handler has handed to its socket so far. */
  floodBytes(): number;
  /** Lets a /gated stream go on past its first event. */
  release(): void;
  close(): Promise<void>;
}

export async function startSseUpstream(): Promise<SseUpstream> {
  let releaseGate: () => void = () => {};
  let gate = new Promise<void>((r) => (releaseGate = r));
  let active = 0;
  let floodBytes = 0;

  const forever = async (res: ServerResponse, closed: AbortSignal, text: string, ms: number): Promise<void> => {
    while (!closed.aborted) {
      res.write(text);
      await delay(ms, closed);
    }
  };

  const handlers: Record<string, Handler> = {
    '/events': (res, q) => {
      res.writeHead(200, SSE);
      res.end(eventsBody(Number(q.get('n') ?? 3)));
    },
    '/bytewise': async (res, q, closed) => {
      res.writeHead(200, SSE);
      for (const byte of Buffer.from(eventsBody(Number(q.get('n') ?? 2)))) {
        if (closed.aborted) return;
        res.write(Buffer.from([byte]));
        await delay(1, closed);
      }
      res.end();
    },
    '/sized': (res, q) => {
      res.writeHead(200, SSE);
      res.end(goodEvent(1) + sizedEvent(Number(q.get('bytes'))) + goodEvent(3));
    },
    '/endless-line': (res, _q, closed) => {
      res.writeHead(200, SSE);
      res.write('data: ');
      return forever(res, closed, 'x'.repeat(1024), 1);
    },
    '/comments': (res, q, closed) => {
      res.writeHead(200, SSE);
      return forever(res, closed, ': remote-comment-text\n\n', Number(q.get('ms') ?? 20));
    },
    '/silence': (res) => {
      res.writeHead(200, SSE);
      res.flushHeaders();
    },
    '/drip': async (res, q, closed) => {
      res.writeHead(200, SSE);
      for (let n = 1; !closed.aborted; n++) {
        res.write(goodEvent(n));
        await delay(Number(q.get('ms') ?? 30), closed);
      }
    },
    // Writes as fast as the reader drains: shows whether the relay stops reading when its caller stops.
    '/flood': async (res, _q, closed) => {
      res.writeHead(200, SSE);
      const event = Buffer.from(sizedEvent(16 * 1024));
      while (!closed.aborted) {
        floodBytes += event.length;
        if (!res.write(event)) await new Promise<void>((r) => { res.once('drain', r); res.once('close', r); });
      }
    },
    '/json-error': (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: REMOTE_ID, error: { code: -32004, message: 'Streaming is not supported', trace: 'at x' } }));
    },
    '/html-502': (res, q) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end(`<html><body>Bad Gateway HTML-MARKER ${'p'.repeat(Number(q.get('pad') ?? 0))}</body></html>`);
    },
    '/broken-mid': (res) => {
      res.writeHead(200, SSE);
      res.end(`${goodEvent(1)}${goodEvent(2)}data: {"jsonrpc":"2.0", BROKEN-MARKER\n\n${goodEvent(3)}`);
    },
    '/error-event': (res) => {
      res.writeHead(200, SSE);
      const error = { code: -32001, message: 'Task\u001b[2J gone', extra: 'EXTRA-MARKER', data: { secret: 1 } };
      res.end(`${goodEvent(1)}event: error\ndata: ${JSON.stringify(error)}\n\n${goodEvent(2)}`);
    },
    '/mid-event-close': (res) => {
      res.writeHead(200, SSE);
      res.end(`${goodEvent(1)}data: {"jsonrpc":"2.0","id":"x",`);
    },
    // The connection dies (no chunked terminator): between events, or in the middle of one.
    '/reset': async (res, q, closed) => {
      res.writeHead(200, SSE);
      res.write(goodEvent(1) + (q.get('mid') ? 'data: {"jsonrpc":' : ''));
      await delay(20, closed);
      res.socket?.destroy();
    },
    '/gated': async (res) => {
      res.writeHead(200, SSE);
      res.write(goodEvent(1));
      await gate;
      res.end(goodEvent(2));
    },
    '/gzip': (res) => {
      res.writeHead(200, { ...SSE, 'content-encoding': 'gzip' });
      res.end(gzipSync(eventsBody(2)));
    },
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    active++;
    const closed = new AbortController();
    res.once('close', () => {
      active--;
      closed.abort();
    });
    const url = new URL(req.url ?? '/', 'http://upstream');
    const handler = handlers[url.pathname];
    void readBody(req).then(() => {
      if (!handler) {
        res.writeHead(404).end();
        return;
      }
      return handler(res, url.searchParams, closed.signal);
    });
  });
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  return {
    origin: `http://127.0.0.1:${port}`,
    openConnections: () => tracker.open(),
    activeRequests: () => active,
    floodBytes: () => floodBytes,
    release: () => {
      releaseGate();
      gate = new Promise<void>((r) => (releaseGate = r));
    },
    close: () => closeServer(server, tracker),
  };
}
