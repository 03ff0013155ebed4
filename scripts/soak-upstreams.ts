/**
 * The remotes a soak run talks to, all on 127.0.0.1: a well-behaved A2A
 * JSON-RPC agent (unary and streaming), and a server wrapper that can be
 * stopped and started again on the same port, used for the flapping remote
 * and for restarting a healthy remote mid-run. The slow and hostile remotes
 * are test/support/hostile-upstream.ts.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const STREAMING = new Set(['message/stream', 'tasks/resubscribe', 'SendStreamingMessage', 'SubscribeToTask']);

/** A server that can go away and come back on the same port, dropping every open connection as it goes. */
export class RestartableServer {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;
  /** Times the server has been stopped while running (restarts and flaps). */
  stops = 0;

  constructor(private readonly handler: RequestListener) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.server !== undefined;
  }

  async start(): Promise<void> {
    if (this.server) return;
    const server = createServer(this.handler);
    server.keepAliveTimeout = 5_000;
    server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    // The port can be briefly taken by a socket in TIME_WAIT handling or another process: retry a few times.
    for (let attempt = 0; ; attempt++) {
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(this.port, '127.0.0.1', () => {
            server.off('error', reject);
            resolve();
          });
        });
        break;
      } catch (err) {
        if (attempt >= 20 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
        await sleep(100);
      }
    }
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening and destroys open sockets: in-flight calls see a reset, new ones a refused connection. */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.stops++;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}

/**
 * Flaps a server until `signal` aborts: up for upMs, down for downMs, again.
 * Resolves once the loop has ended with the server running.
 */
export async function flap(server: RestartableServer, upMs: number, downMs: number, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    await sleep(upMs, undefined, { signal }).catch(() => {});
    if (signal.aborted) break;
    await server.stop();
    await sleep(downMs);
    await server.start();
  }
  await server.start();
}

function readJson(req: IncomingMessage): Promise<{ id: unknown; method: unknown }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= 1 << 20) chunks.push(c);
    });
    req.once('end', () => {
      try {
        const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown; method?: unknown };
        resolve({ id: parsed.id ?? null, method: parsed.method });
      } catch {
        resolve({ id: null, method: undefined });
      }
    });
    req.once('error', () => resolve({ id: null, method: undefined }));
  });
}

const reply = (id: unknown, result: unknown): string => JSON.stringify({ jsonrpc: '2.0', id, result });

const task = (state: string) => ({ statusUpdate: { taskId: 'soak-task', contextId: 'soak-ctx', status: { state } } });

async function stream(res: ServerResponse, id: unknown, gapMs: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const events = [
    { task: { id: 'soak-task', contextId: 'soak-ctx', status: { state: 'TASK_STATE_SUBMITTED' } } },
    task('TASK_STATE_WORKING'),
    { artifactUpdate: { taskId: 'soak-task', contextId: 'soak-ctx', artifact: { artifactId: 'a1', parts: [{ text: 'soak '.repeat(40) }] } } },
    task('TASK_STATE_COMPLETED'),
  ];
  for (const event of events) {
    if (res.destroyed) return;
    res.write(`data: ${reply(id, event)}\n\n`);
    await sleep(gapMs);
  }
  res.end();
}

/** A well-behaved A2A 1.0 agent: a message for unary calls, a four-event task stream for streaming ones. */
export function wellBehavedAgent(streamGapMs = 20): RequestListener {
  return (req, res) => {
    void readJson(req).then(({ id, method }) => {
      if (typeof method === 'string' && STREAMING.has(method)) return stream(res, id, streamGapMs);
      const body = reply(id, { message: { messageId: 'soak-msg', contextId: 'soak-ctx', role: 'ROLE_AGENT', parts: [{ text: 'fine, thanks' }] } });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return undefined;
    });
    res.on('error', () => {});
  };
}
