/**
 * The bundled sample remote A2A agent: plain node:http on loopback.
 *
 *   GET  /.well-known/agent-card.json   an A2A 1.0 card whose JSON-RPC interface is <origin>/a2a
 *   POST /a2a                           well-behaved: SendMessage → Message, GetTask → Task
 *                                       (0.3 names too); a message whose text is a case name runs that case
 *   POST /a2a/<case>                    the case named in ./cases.ts, whatever the method
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { DEMO_CASE_NAMES } from './cases.js';
import { errorText, prepareGzipBomb, REPLIES, send, type RpcId } from './sample-replies.js';

export interface SampleAgent {
  readonly origin: string;
  /** The JSON-RPC URL the card advertises. */
  readonly rpcUrl: string;
  readonly port: number;
  close(): Promise<void>;
}

export interface SampleAgentOptions {
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port?: number;
}

const MAX_REQUEST_BYTES = 1024 * 1024;
const SEND = new Set(['SendMessage', 'message/send']);
const GET_TASK = new Set(['GetTask', 'tasks/get']);

export async function startSampleAgent(options: SampleAgentOptions = {}): Promise<SampleAgent> {
  const host = options.host ?? '127.0.0.1';
  void prepareGzipBomb();
  const sockets = new Set<Socket>();
  let origin = '';
  const server: Server = createServer((req, res) => {
    handle(req, res, origin).catch(() => {
      if (!res.headersSent) send(res, 500, 'sample agent failed\n', { 'content-type': 'text/plain' });
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 9999, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    origin,
    rpcUrl: `${origin}/a2a`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        // Endless replies keep their sockets busy: end them rather than wait.
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, origin: string): Promise<void> {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  if (req.method === 'GET' && path === '/.well-known/agent-card.json') {
    send(res, 200, JSON.stringify(agentCard(origin), null, 2));
    return;
  }
  const match = /^\/a2a(?:\/([A-Za-z0-9-]+))?\/?$/.exec(path);
  if (req.method !== 'POST' || !match) {
    send(res, 404, 'not found: POST /a2a or /a2a/<case>, GET /.well-known/agent-card.json\n', { 'content-type': 'text/plain' });
    return;
  }
  const body = await readBody(req);
  const call = parseCall(body);
  const subCase = match[1];
  if (subCase !== undefined && !DEMO_CASE_NAMES.has(subCase)) {
    send(res, 404, errorText(call.id, JSON.stringify({ code: -32601, message: `no sample case named ${subCase}` })));
    return;
  }
  const ctx = { res, id: call.id, text: call.text, generation: call.generation };
  if (subCase !== undefined) return REPLIES[subCase]!(ctx);
  if (SEND.has(call.method)) return (DEMO_CASE_NAMES.has(call.text) ? REPLIES[call.text]! : REPLIES.ok!)(ctx);
  if (GET_TASK.has(call.method)) return REPLIES['get-task']!(ctx);
  send(res, 200, errorText(call.id, JSON.stringify({ code: -32601, message: 'Method not found' })));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) {
        req.destroy();
        reject(new Error('request too large'));
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

interface Call {
  readonly id: RpcId;
  readonly method: string;
  readonly text: string;
  readonly generation: '0.3' | '1.0';
}

/** Best effort: the sample agent answers anything, it only needs the id, method and text. */
function parseCall(body: string): Call {
  let parsed: Record<string, unknown> = {};
  try {
    const value: unknown = JSON.parse(body);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) parsed = value as Record<string, unknown>;
  } catch {
    // Not JSON: answer with id null, as JSON-RPC does for unreadable requests.
  }
  const rawId = parsed.id;
  const id: RpcId = typeof rawId === 'string' || typeof rawId === 'number' ? rawId : null;
  const method = typeof parsed.method === 'string' ? parsed.method : '';
  const params = (parsed.params ?? {}) as { message?: { parts?: { text?: unknown }[] }; id?: unknown };
  const text = GET_TASK.has(method)
    ? String(params.id ?? '')
    : (params.message?.parts ?? []).map((p) => (typeof p?.text === 'string' ? p.text : '')).join('');
  return { id, method, text: text.trim(), generation: method.includes('/') ? '0.3' : '1.0' };
}

function agentCard(origin: string): Record<string, unknown> {
  return {
    name: 'a2a-egress sample agent',
    description: 'Echoes your text, or misbehaves on request: send a case name (html-502, gzip-bomb, ...) as the text.',
    version: '1.0.0',
    supportedInterfaces: [{ url: `${origin}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: false, pushNotifications: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'echo',
        name: 'Echo',
        description: 'Replies with "echo: <your text>"',
        tags: ['demo'],
        examples: ['hello', 'html-502'],
      },
    ],
  };
}
