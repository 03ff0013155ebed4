/**
 * An A2A remote for card tests: GET serves a valid 1.0 agent card (and
 * records which A2A-Version each request carried); `/card-500...` answers
 * 500; `/big-card?bytes=N` serves a valid card of about N bytes. POST is a
 * JSON-RPC endpoint: `.../fail` answers an HTML 502, `.../hold` waits for
 * release(), anything else answers a completed task.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback, readBody, trackConnections, type ConnectionTracker } from './servers.js';

export interface CardServer {
  readonly url: string;
  readonly tracker: ConnectionTracker;
  /** Card GETs received, with the A2A-Version header each carried. */
  readonly cardHits: { path: string; version: string | undefined }[];
  /** Answers held POST /hold calls. */
  release(): void;
  held(): number;
  close(): Promise<void>;
}

export const card = (origin: string, name = 'agent') =>
  JSON.stringify({ name, description: 'd', version: '1', supportedInterfaces: [{ url: `${origin}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }], capabilities: {}, defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills: [] });

/** `interfaceOrigin`: where the served card's interface points (the remote's origin, for a card hosted elsewhere). */
export async function startCardServer(interfaceOrigin?: () => string): Promise<CardServer> {
  const cardHits: CardServer['cardHits'] = [];
  const waiting: ServerResponse[] = [];
  let origin = '';
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void readBody(req).then((body) => {
      const path = req.url ?? '/';
      if (req.method === 'GET') {
        cardHits.push({ path, version: req.headers['a2a-version'] as string | undefined });
        if (path.startsWith('/card-500')) return void res.writeHead(500, { 'content-type': 'application/json' }).end('{}');
        if (path.startsWith('/big-card')) {
          const size = Number(new URL(path, 'http://x').searchParams.get('bytes'));
          const base = JSON.parse(card(origin)) as Record<string, unknown>;
          const text = JSON.stringify({ ...base, description: 'x'.repeat(size - card(origin).length + 1) });
          return void res.writeHead(200, { 'content-type': 'application/json' }).end(text);
        }
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(card(interfaceOrigin?.() ?? origin));
      }
      const id = (JSON.parse(body.toString('utf8') || '{}') as { id?: unknown }).id ?? null;
      const ok = JSON.stringify({ jsonrpc: '2.0', id, result: { kind: 'task', id: 't', contextId: 'c', status: { state: 'completed' } } });
      if (path.endsWith('/fail')) return void res.writeHead(502, { 'content-type': 'text/html' }).end('<html>bad gateway</html>');
      if (path.endsWith('/hold')) return void waiting.push(res.once('close', () => waiting.splice(waiting.indexOf(res), 1)));
      res.writeHead(200, { 'content-type': 'application/json' }).end(ok);
    });
  });
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  origin = `http://127.0.0.1:${port}`;
  const answer = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: 'h', result: { kind: 'task', id: 't', contextId: 'c', status: { state: 'completed' } } }));
  return {
    url: origin,
    tracker,
    cardHits,
    release: () => waiting.splice(0).forEach(answer),
    held: () => waiting.length,
    close: () => closeServer(server, tracker),
  };
}

