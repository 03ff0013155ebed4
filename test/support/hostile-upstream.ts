/**
 * One real HTTP server that misbehaves on request: the first path segment
 * picks the case (`POST ${url}/<case>`), parameters come from the query or
 * from `k=v` path segments (`${url}/big-body/bytes=5000`), and `wrongId=1`
 * makes every JSON reply carry an id other than the caller's.
 *
 * Each case also has an agent card at `${url}/<case>[/k=v...]/.well-known/agent-card.json`
 * whose only interface is `${url}/<case>[/k=v...]`, so an unmodified A2A
 * client can be pointed at a case by base URL, exactly as at a real remote.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { UNARY_CASES } from './hostile-cases.js';
import { callerId, send, wrongIdFor, type CaseHandler } from './hostile-replies.js';
import { SSE_CASES } from './hostile-sse-cases.js';
import { closeServer, listenOnLoopback, readBody, recordRequest, trackConnections, type RecordedRequest } from './servers.js';

export type { RecordedRequest } from './servers.js';

export const HOSTILE_CASES: Readonly<Record<string, CaseHandler>> = { ...UNARY_CASES, ...SSE_CASES };
export const HOSTILE_CASE_NAMES: readonly string[] = Object.keys(HOSTILE_CASES);

export interface HostileUpstream {
  /** http://127.0.0.1:PORT (no trailing slash). */
  readonly url: string;
  readonly port: number;
  /** Every request received, card fetches included, in arrival order. */
  readonly requests: RecordedRequest[];
  openConnections(): number;
  totalConnections(): number;
  /** `${url}/<case>?k=v`: the JSON-RPC URL of one case. */
  caseUrl(name: string, params?: Record<string, string | number>): string;
  /** `${url}/<case>/k=v/`: the base URL an A2A client resolves the case's card against (trailing slash included). */
  caseBaseUrl(name: string, params?: Record<string, string | number>): string;
  close(): Promise<void>;
}

const CARD_SUFFIX = '/.well-known/agent-card.json';

interface ParsedPath {
  readonly name: string;
  /** The path without the card suffix: what the card advertises as the interface URL. */
  readonly interfacePath: string;
  readonly isCard: boolean;
  readonly params: URLSearchParams;
}

function parsePath(rawUrl: string): ParsedPath {
  const url = new URL(rawUrl, 'http://hostile.invalid');
  const isCard = url.pathname.endsWith(CARD_SUFFIX);
  const interfacePath = isCard ? url.pathname.slice(0, -CARD_SUFFIX.length) : url.pathname.replace(/\/+$/, '');
  const [name = '', ...rest] = interfacePath.split('/').filter((s) => s !== '');
  const params = new URLSearchParams(url.searchParams);
  for (const segment of rest) {
    const eq = segment.indexOf('=');
    if (eq > 0) params.set(decodeURIComponent(segment.slice(0, eq)), decodeURIComponent(segment.slice(eq + 1)));
  }
  return { name, interfacePath, isCard, params };
}

/** A minimal, valid A2A 1.0 card pointing at one case. */
export function hostileCard(interfaceUrl: string, streaming: boolean): object {
  return {
    name: 'Hostile upstream',
    description: 'A test remote that misbehaves on purpose.',
    version: '0.0.1',
    supportedInterfaces: [{ url: interfaceUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming, pushNotifications: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
  };
}

const searchOf = (params?: Record<string, string | number>): string =>
  params === undefined ? '' : `?${new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]))}`;

const segmentsOf = (params?: Record<string, string | number>): string =>
  Object.entries(params ?? {})
    .map(([k, v]) => `/${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('');

export async function startHostileUpstream(): Promise<HostileUpstream> {
  const requests: RecordedRequest[] = [];
  let origin = '';

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    requests.push(recordRequest(req, body));
    const path = parsePath(req.url ?? '/');
    const handler = Object.hasOwn(HOSTILE_CASES, path.name) ? HOSTILE_CASES[path.name] : undefined;
    if (handler === undefined) {
      send(res, 404, `unknown hostile case "${path.name}"; known: ${HOSTILE_CASE_NAMES.join(', ')}`, { 'content-type': 'text/plain' });
      return;
    }
    if (path.isCard) {
      const interfaceUrl = `${origin}${path.interfacePath}${new URL(req.url ?? '/', origin).search}`;
      send(res, 200, JSON.stringify(hostileCard(interfaceUrl, path.name.startsWith('sse-'))));
      return;
    }
    const controller = new AbortController();
    res.once('close', () => controller.abort());
    const id = callerId(body.toString('utf8'));
    await handler({
      req,
      res,
      id: path.params.get('wrongId') === '1' ? wrongIdFor(id) : id,
      params: path.params,
      closed: controller.signal,
      origin,
    });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // A bad case parameter is a test bug: say so plainly rather than hang the caller.
      if (!res.headersSent) send(res, 500, `hostile upstream failed: ${String(err)}`, { 'content-type': 'text/plain' });
      else res.destroy();
    });
  });
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  origin = `http://127.0.0.1:${port}`;

  return {
    url: origin,
    port,
    requests,
    openConnections: tracker.open,
    totalConnections: tracker.total,
    caseUrl: (name, params) => `${origin}/${name}${searchOf(params)}`,
    caseBaseUrl: (name, params) => `${origin}/${name}${segmentsOf(params)}/`,
    close: () => closeServer(server, tracker),
  };
}
