/**
 * An upstream whose slow calls end when the test says so, not after a fixed
 * delay: `POST /hold...` is answered only by `release()`, so a test can keep
 * calls in flight for as long as it needs, on a machine of any speed, and
 * then finish them. `POST /ok...` answers at once. Both answer with a valid
 * JSON-RPC result carrying the caller's id. `POST /fail...` answers at once
 * with an HTML 502 page, the classic failing proxy in front of a remote.
 */
import { createServer, type ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback, readBody, recordRequest, trackConnections, type RecordedRequest } from './servers.js';

export interface HeldUpstream {
  /** http://127.0.0.1:PORT (no trailing slash). */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Calls waiting for release(). */
  held(): number;
  /** Resolves once at least `n` calls are held. */
  waitForHeld(n: number, timeoutMs?: number): Promise<void>;
  /** Answers the oldest `n` held calls (all by default). */
  release(n?: number): void;
  close(): Promise<void>;
}

function okText(body: Buffer): string {
  let id: unknown = null;
  try {
    id = (JSON.parse(body.toString('utf8')) as { id?: unknown }).id ?? null;
  } catch {
    // Not JSON: id null.
  }
  return JSON.stringify({ jsonrpc: '2.0', id, result: { message: { messageId: 'held-1', role: 'ROLE_AGENT', parts: [{ text: 'released' }] } } });
}

function answer(res: ServerResponse, text: string): void {
  if (res.destroyed) return;
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

export async function startHeldUpstream(): Promise<HeldUpstream> {
  const requests: RecordedRequest[] = [];
  const waiting: { res: ServerResponse; text: string }[] = [];
  const watchers: (() => void)[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      requests.push(recordRequest(req, body));
      if ((req.url ?? '').startsWith('/fail')) {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
        return;
      }
      const text = okText(body);
      if (!(req.url ?? '').startsWith('/hold')) return answer(res, text);
      const entry = { res, text };
      waiting.push(entry);
      // A caller that gives up must not leave a stale entry that a later release() would count.
      res.once('close', () => {
        const i = waiting.indexOf(entry);
        if (i !== -1) waiting.splice(i, 1);
      });
      for (const w of watchers.splice(0)) w();
    });
  });
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    held: () => waiting.length,
    async waitForHeld(n, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      while (waiting.length < n) {
        if (Date.now() > until) throw new Error(`held upstream: ${waiting.length} calls held, wanted ${n}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 50);
          watchers.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    release(n = waiting.length) {
      for (const { res, text } of waiting.splice(0, n)) answer(res, text);
    },
    close: async () => {
      waiting.splice(0);
      await closeServer(server, tracker);
    },
  };
}
