/**
 * The floor of a Node proxy hop, run as its own process: a node:http server
 * in front, undici `Pool.dispatch` with a handler object behind, the caller's
 * body forwarded and the upstream's reply buffered and written back with a
 * prebuilt header list. No framework, no promises, no streams on the call
 * path, nothing checked. It answers "what is the least one Node hop costs on
 * this machine", the yardstick for the gateway's own call path.
 * Usage (by bench/processes.ts): node --import tsx bench/dispatch-hop.ts <upstream origin> <path>
 * Prints `{"port":N}` on its first stdout line.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Pool, type Dispatcher } from 'undici';

const [origin, path] = process.argv.slice(2);
if (!origin || !path) throw new Error('usage: dispatch-hop.ts <upstream origin> <path>');
const pool = new Pool(origin, { connections: 128, keepAliveTimeout: 4_000 });
const UPSTREAM_HEADERS = ['content-type', 'application/json'];
const REPLY_TYPE = 'application/json; charset=utf-8';

/** Collects the upstream reply and writes it to the caller once complete (a normalizing gateway must buffer too). */
function replyHandler(res: ServerResponse): Dispatcher.DispatchHandler {
  const chunks: Buffer[] = [];
  let status = 502;
  return {
    // Its presence tells undici this is a handler of the controller API (undici 7), not the legacy callbacks.
    onRequestStart() {},
    onResponseStart(_controller, statusCode) {
      status = statusCode;
    },
    onResponseData(_controller, chunk) {
      chunks.push(chunk);
    },
    onResponseEnd() {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      res.writeHead(status, ['content-type', REPLY_TYPE, 'content-length', String(body.length)]);
      res.end(body);
    },
    onResponseError() {
      if (!res.headersSent) res.writeHead(502, ['content-length', '0']);
      res.end();
    },
  };
}

function forward(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    pool.dispatch({ path: path!, method: 'POST', headers: UPSTREAM_HEADERS, body }, replyHandler(res));
  });
}

const server = createServer(forward);
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
