/**
 * A real HTTP remote that hands back the credential the gateway sent it, the
 * way careless or hostile agents do: in error messages, error data, result
 * text (raw, JSON-escaped, with invisible characters inside, percent- or
 * base64-encoded), member names, stream events, its cards and a response
 * header. The credential is whatever arrived in `Authorization: Bearer` or
 * `x-api-key`; a remote without either echoes `NO_CREDENTIAL`.
 *
 * The gateway's sub-path picks the case: POST `${url}/<case>`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback, readBody, trackConnections } from './servers.js';

export const NO_CREDENTIAL = 'no-credential-control-value';

export interface EchoUpstream {
  readonly url: string;
  /** The credential of the most recent call, echoed in the public card too. */
  lastCredential(): string;
  close(): Promise<void>;
}

/** The forms a result's text carries the credential in. */
export function echoedForms(credential: string): string[] {
  return [
    `raw ${credential}`,
    `invisible ${[...credential].join('\u200b')}`,
    `ansi ${credential.slice(0, 4)}\u001b[31m${credential.slice(4)}`,
    `newlines ${[...credential].join('\n')}`,
    `percent https://x.example/?t=${encodeURIComponent(credential)}`,
    `base64 ${Buffer.from(`user:${credential}`).toString('base64')}`,
    `base64url ${Buffer.from(credential).toString('base64url')}`,
  ];
}

function card(origin: string, description: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Echo agent',
    description,
    version: '1.0.0',
    supportedInterfaces: [{ url: `${origin}/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'echoes', tags: ['echo'] }],
    ...extra,
  };
}

export async function startEchoUpstream(): Promise<EchoUpstream> {
  let origin = '';
  let last = NO_CREDENTIAL;
  let previous = NO_CREDENTIAL;

  const json = (res: ServerResponse, body: string, headers: Record<string, string> = {}): void => {
    res.writeHead(200, { 'content-type': 'application/json', ...headers });
    res.end(body);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = (await readBody(req)).toString('utf8');
    if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') {
      return json(res, JSON.stringify(card(origin, `Agent reached with ${last} (yes, really)`)));
    }
    if (req.method === 'GET' && req.url === '/key-card.json') {
      return json(res, JSON.stringify(card(origin, 'a card keyed by the credential', { securitySchemes: { [last]: { httpAuthSecurityScheme: { scheme: 'bearer' } } } })));
    }
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const apiKey = req.headers['x-api-key'];
    const credential = bearer ?? (typeof apiKey === 'string' ? apiKey : NO_CREDENTIAL);
    previous = last;
    last = credential;
    const id = (JSON.parse(raw) as { id?: unknown }).id ?? null;
    const reply = (member: 'result' | 'error', value: unknown, headers?: Record<string, string>) =>
      json(res, JSON.stringify({ jsonrpc: '2.0', id, [member]: value }), headers);
    const text = (t: string) => ({ kind: 'message', messageId: 'm-1', role: 'agent', parts: [{ kind: 'text', text: t }] });

    switch ((req.url ?? '/').replace(/^\/+/, '')) {
      case 'message-error':
        return reply('error', { code: -32001, message: `invalid token Bearer ${credential} for this agent` });
      case 'previous-error':
        // A reply that echoes the credential of the call before this one (a cache, a late reply).
        return reply('error', { code: -32001, message: `your old token ${previous} expired` });
      case 'long-message-error':
        // Padded so that a small maxErrorMessageBytes falls in the middle of the credential.
        return reply('error', { code: -32001, message: `${'x'.repeat(40)}${credential} end` });
      case 'data-error':
        return reply('error', {
          code: -32603,
          message: 'upstream auth failed',
          data: [{ '@type': 'type.googleapis.com/google.rpc.DebugInfo', detail: `Authorization: Bearer ${credential}`, stackEntries: [`at check(${credential})`] }],
        });
      case 'result':
        return reply('result', text(echoedForms(credential).join(' | ')));
      case 'v1-result':
        // The A2A 1.0 shape an SDK client expects.
        return reply('result', { message: { messageId: 'm-3', role: 'ROLE_AGENT', parts: [{ text: echoedForms(credential).join(' | ') }] } });
      case 'escaped-result': {
        // The same text, every character of the credential written as a JSON \u escape.
        const escaped = [...credential].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
        return json(res, `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"kind":"message","messageId":"m-2","role":"agent","parts":[{"kind":"text","text":"escaped ${escaped}"}]}}`);
      }
      case 'key-result':
        return reply('result', { ...text('ok'), metadata: { [credential]: true } });
      case 'extended-card':
        return reply('result', card(origin, `Extended card for ${credential}`, { skills: [{ id: 'x', name: `skill ${credential}`, description: 'd', tags: ['t'] }] }));
      case 'header':
        return reply('result', text('fine'), { 'a2a-version': '1.0', 'a2a-extensions': `https://x.example/ext/v1?key=${encodeURIComponent(credential)}` });
      case 'stream': {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'a2a-extensions': `urn:echo:${credential}` });
        const event = (data: unknown, type?: string) => `${type ? `event: ${type}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
        res.write(event({ jsonrpc: '2.0', id, result: { kind: 'status-update', taskId: 't-1', contextId: 'c-1', status: { state: 'working', message: text(`working with ${credential}`) }, final: false } }));
        res.write(event({ jsonrpc: '2.0', id, result: text(echoedForms(credential).join(' | ')) }));
        res.end(event({ code: -32603, message: `stream failed for token ${credential}` }, 'error'));
        return;
      }
      default:
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('no such case');
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  origin = `http://127.0.0.1:${port}`;
  return { url: origin, lastCredential: () => last, close: () => closeServer(server, tracker) };
}
