/**
 * Two reference SSE relays for the stream scenario, run as their own process
 * (node:http in front, undici `Pool.dispatch` behind, backpressure honoured):
 *   raw       the upstream's bytes passed through as they come (the floor of any relay)
 *   validate  each event parsed as JSON and the caller's id spliced in (bench/sse-splice.ts):
 *             the least a relay that checks what it forwards must do
 * Usage (by bench/processes.ts): node --import tsx bench/sse-relay-hop.ts <upstream origin> <path> raw|validate
 * Prints `{"port":N}` on its first stdout line.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Pool, type Dispatcher } from 'undici';
import { EventSplicer } from './sse-splice.js';

const [origin, path, mode] = process.argv.slice(2);
if (!origin || !path || (mode !== 'raw' && mode !== 'validate')) throw new Error('usage: sse-relay-hop.ts <upstream origin> <path> raw|validate');
const pool = new Pool(origin, { connections: 128, keepAliveTimeout: 4_000 });
const UPSTREAM_HEADERS = ['content-type', 'application/json', 'accept', 'text/event-stream'];
const SSE_HEADERS = ['content-type', 'text/event-stream', 'cache-control', 'no-store'];
const BAD_EVENT = 'data: {"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"bad event from upstream"}}\n\n';

function callerIdOf(body: Buffer): unknown {
  try {
    return (JSON.parse(body.toString('utf8')) as { id?: unknown }).id ?? null;
  } catch {
    return null;
  }
}

function relay(res: ServerResponse, body: Buffer): void {
  const splicer = mode === 'validate' ? new EventSplicer(callerIdOf(body)) : undefined;
  let controller: Dispatcher.DispatchController | undefined;
  res.on('drain', () => controller?.resume());
  res.on('close', () => {
    if (!res.writableFinished) controller?.abort(new Error('caller left'));
  });
  pool.dispatch(
    { path: path!, method: 'POST', headers: UPSTREAM_HEADERS, body },
    {
      onRequestStart(c) {
        controller = c;
      },
      onResponseStart(_c, statusCode) {
        res.writeHead(statusCode, SSE_HEADERS);
      },
      onResponseData(c, chunk) {
        let more: boolean;
        if (!splicer) more = res.write(chunk);
        else {
          const events = splicer.push(chunk);
          if (splicer.error) {
            res.end(`${events}${BAD_EVENT}`);
            c.abort(splicer.error);
            return;
          }
          more = events === '' || res.write(events);
        }
        if (!more) c.pause();
      },
      onResponseEnd() {
        res.end();
      },
      onResponseError() {
        if (!res.headersSent) res.writeHead(502, ['content-length', '0']);
        res.end();
      },
    },
  );
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => relay(res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
}

const server = createServer(handle);
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
