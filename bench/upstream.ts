/**
 * The bench's upstream A2A agent, run as its own process so it never shares an
 * event loop with the gateway or the load generator. Prints `{"port":N}` on
 * its first stdout line. Routes (all POST except /stats):
 *   /unary/<bytes>            one JSON-RPC reply, the caller's id, a Task result of that size (0.3 shape;
 *                             a SendMessageResponse in 1.0 ProtoJSON when the method is 1.0's `SendMessage`)
 *   /unary/<bytes>/message:send  the HTTP+JSON binding: a SendMessageResponse body of that size
 *   /endless                  Content-Length 1 GiB, bytes forever (until the reader hangs up)
 *   /sse/<events>/<bytes>[/<batch>]  that many status-update events as fast as the socket takes
 *                             them, one socket write per event (or per <batch> events)
 *   /sse-paced/<events>/<ms>  one event every <ms>, each stamped with process.hrtime (CLOCK_MONOTONIC)
 *   /sse-endless              one SSE event whose data line never ends
 *   /sse-idle                 SSE headers, then silence until the caller leaves
 *   GET /stats                {"served": calls answered so far, "open": open sockets}
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { replyBody, sendMessageResponseJson, taskResultJson } from './bodies.js';

const GiB = 1024 ** 3;
const FILLER = Buffer.alloc(64 * 1024, 'a');
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-store' };

let served = 0;
let open = 0;
const resultCache = new Map<string, string>();

/** Built once per shape and size: the upstream should cost the same for every peer, and little. */
function cached(kind: 'v03' | 'v1', bytes: number): string {
  const key = `${kind}:${bytes}`;
  let json = resultCache.get(key);
  if (json === undefined) {
    json = kind === 'v03' ? taskResultJson(bytes) : sendMessageResponseJson(bytes);
    resultCache.set(key, json);
  }
  return json;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function callerRequest(body: Buffer): { id: unknown; method: unknown } {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { id?: unknown; method?: unknown };
    return { id: parsed.id ?? null, method: parsed.method };
  } catch {
    return { id: null, method: undefined };
  }
}

function statusEvent(id: unknown, seq: number, final: boolean, extra = '', pad = 0): string {
  const result = `{"kind":"status-update","taskId":"task-1","contextId":"ctx-1","final":${final},"status":{"state":"working","message":{"kind":"message","role":"agent","messageId":"m-${seq}","parts":[{"kind":"text","text":"step ${seq}${'.'.repeat(pad)}"}]}}${extra}}`;
  return `data: ${replyBody(id, result)}\n\n`;
}

/** Writes `produce()` chunks until it returns undefined or the caller leaves, honouring backpressure. */
function pump(res: ServerResponse, produce: () => string | Buffer | undefined, onDone: () => void): void {
  let gone = false;
  res.on('close', () => (gone = true));
  const step = (): void => {
    while (!gone) {
      const chunk = produce();
      if (chunk === undefined) return onDone();
      if (!res.write(chunk)) {
        res.once('drain', step);
        return;
      }
    }
  };
  step();
}

function unary(res: ServerResponse, id: unknown, method: unknown, bytes: number): void {
  const body = replyBody(id, cached(method === 'SendMessage' ? 'v1' : 'v03', bytes));
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** HTTP+JSON `POST .../message:send`: the SendMessageResponse is the whole body. */
function restSend(res: ServerResponse, bytes: number): void {
  const body = cached('v1', bytes);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function endless(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': GiB });
  let sent = 0;
  const head = Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"text":"');
  pump(
    res,
    () => {
      const chunk = sent === 0 ? head : FILLER;
      if (sent + chunk.length > GiB) return undefined;
      sent += chunk.length;
      return chunk;
    },
    () => res.destroy(),
  );
}

function sseBurst(res: ServerResponse, id: unknown, events: number, bytes: number, batch: number): void {
  res.writeHead(200, SSE_HEADERS);
  const one = statusEvent(id, 0, false);
  const pad = Math.max(0, bytes - Buffer.byteLength(one));
  let seq = 0;
  pump(
    res,
    () => {
      if (seq >= events) return undefined;
      let chunk = '';
      for (let i = 0; i < batch && seq < events; i++, seq++) chunk += statusEvent(id, seq, seq === events - 1, '', pad);
      return chunk;
    },
    () => res.end(),
  );
}

function ssePaced(res: ServerResponse, id: unknown, events: number, intervalMs: number): void {
  res.writeHead(200, SSE_HEADERS);
  let seq = 0;
  const timer = setInterval(() => {
    const stamp = `,"metadata":{"t":"${process.hrtime.bigint()}"}`;
    res.write(statusEvent(id, seq, seq === events - 1, stamp));
    if (++seq >= events) {
      clearInterval(timer);
      res.end();
    }
  }, intervalMs);
  res.on('close', () => clearInterval(timer));
}

function sseEndless(res: ServerResponse): void {
  res.writeHead(200, SSE_HEADERS);
  let first = true;
  pump(
    res,
    () => {
      if (!first) return FILLER;
      first = false;
      return 'data: {"jsonrpc":"2.0","id":1,"result":{"text":"';
    },
    () => undefined,
  );
}

function sseIdle(res: ServerResponse): void {
  res.writeHead(200, SSE_HEADERS);
  res.flushHeaders();
}

async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const parts = (req.url ?? '/').split('?')[0]!.split('/').filter(Boolean);
  if (req.method === 'GET' && parts[0] === 'stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ served, open }));
    return;
  }
  const { id, method } = callerRequest(await readBody(req));
  served++;
  const n = (i: number) => Number(parts[i] ?? 0);
  switch (parts[0]) {
    case 'unary':
      if (parts[parts.length - 1] === 'message:send') return restSend(res, n(1) || 1024);
      return unary(res, id, method, n(1) || 1024);
    case 'endless':
      return endless(res);
    case 'sse':
      return sseBurst(res, id, n(1) || 1000, n(2) || 256, n(3) || 1);
    case 'sse-paced':
      return ssePaced(res, id, n(1) || 100, n(2) || 10);
    case 'sse-endless':
      return sseEndless(res);
    case 'sse-idle':
      return sseIdle(res);
    default:
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('no such bench route');
  }
}

const server = createServer((req, res) => {
  route(req, res).catch(() => res.destroy());
});
// Longer than the gateway pool's 4 s keep-alive, so the pool always closes first (no reset races).
server.keepAliveTimeout = 30_000;
server.headersTimeout = 60_000;
server.requestTimeout = 0;
server.maxConnections = 20_000;
server.on('connection', (socket) => {
  open++;
  socket.on('close', () => open--);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
