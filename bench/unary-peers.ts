/**
 * The peers of the unary scenario, all making the same call (message/send,
 * 1 KiB Task result) against the same upstream route:
 *   direct            no hop: the load generator straight to the upstream
 *   dispatch-hop      node:http + undici Pool.dispatch, bytes through (bench/dispatch-hop.ts)
 *   fastify-hop       Fastify + undici.request, bytes through (bench/reference-hop.ts)
 *   http-proxy        @fastify/http-proxy with its defaults (bench/http-proxy-hop.ts)
 *   gateway-jsonrpc   the gateway, JSON-RPC binding (POST /remotes/<name>)
 *   gateway-jsonrpc-v8-default  a second gateway without the young-generation flag every other Node peer runs with
 *   gateway-rest      the same gateway process, HTTP+JSON caller (POST /remotes/<name>/message:send), JSON-RPC remote
 *   gateway-rest-rest the same, to an HTTP+JSON remote (binding: http+json) on the same upstream route
 *   gateway-workers-2 a second gateway with `server.workers: 2`, JSON-RPC
 * plus whatever the optional peer modules bring (gRPC). The last two, and the
 * modules, are skipped with the reason when this build cannot run them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REST_HEADERS, REST_SEND_REQUEST, UNARY_REQUEST } from './bodies.js';
import { directUrl, gatewayUrl, type BenchContext } from './context.js';
import { httpPeer, isSkipped, jsonRpcResult, sendMessageResponse, type PeerStart } from './peers.js';
import { GatewayRefused, PEER_NODE_FLAGS, ROOT, startDispatchHop, startGateway, startHttpProxyHop, startReferenceHop } from './processes.js';

/** The upstream route every unary peer reaches, and the gateway remote that points at it (bench/processes.ts). */
/** The upstream route of the 1 KiB unary call, and the gateway's remote for it (bench/processes.ts gatewayYaml). */
export const ROUTE = '/unary/1024';
export const REMOTE = 'unary1k';
/** The same route as an HTTP+JSON remote (`binding: http+json`; the upstream serves `<route>/message:send`). */
const REST_REMOTE = 'unary1krest';
const JSON_HEADERS = { 'content-type': 'application/json' };

type PeerFactory = (ctx: BenchContext) => Promise<PeerStart>;

const jsonRpcPeer = (id: string, label: string, what: string, port: number, pid: number, stop?: () => Promise<void>) =>
  httpPeer({
    id,
    label,
    what,
    url: `http://127.0.0.1:${port}/remotes/${REMOTE}`,
    body: UNARY_REQUEST,
    headers: JSON_HEADERS,
    good: jsonRpcResult,
    pid,
    ...(stop ? { stop } : {}),
  });

const direct: PeerFactory = async (ctx) =>
  httpPeer({
    id: 'direct',
    label: 'direct (no hop)',
    what: 'the load generator calls the upstream itself',
    url: directUrl(ctx, ROUTE.slice(1)),
    body: UNARY_REQUEST,
    headers: JSON_HEADERS,
    good: jsonRpcResult,
  });

const dispatchHop: PeerFactory = async (ctx) => {
  const hop = await startDispatchHop(ctx.upstream.port, ROUTE);
  const what = 'node:http server + undici Pool.dispatch handler, reply buffered and written with prebuilt headers, nothing checked';
  return jsonRpcPeer('dispatch-hop', 'bare node:http + undici dispatch hop', what, hop.port, hop.pid, () => hop.stop());
};

const fastifyHop: PeerFactory = async (ctx) => {
  const hop = await startReferenceHop(ctx.upstream.port, ROUTE);
  const what = 'one Fastify route awaiting undici Pool.request, body read whole and sent back, nothing checked';
  return jsonRpcPeer('fastify-hop', 'bare Fastify + undici.request hop', what, hop.port, hop.pid, () => hop.stop());
};

const httpProxy: PeerFactory = async (ctx) => {
  const hop = await startHttpProxyHop(ctx.upstream.port, ROUTE, REMOTE);
  const what = 'the package with its defaults (@fastify/reply-from over undici): bytes streamed through, upstream headers copied, nothing normalized';
  return jsonRpcPeer('http-proxy', '@fastify/http-proxy passthrough', what, hop.port, hop.pid, () => hop.stop());
};

const gatewayJsonRpc: PeerFactory = async (ctx) =>
  jsonRpcPeer('gateway-jsonrpc', 'a2a-egress, JSON-RPC', 'the gateway (logLevel warn): POST /remotes/<name> with a JSON-RPC message/send', ctx.gateway.port, ctx.gateway.pid);

/** The same gateway started as a bare `node dist/cli.js` is: V8's default young generation (bench/processes.ts). */
const gatewayV8Default: PeerFactory = async (ctx) => {
  const gw = await startGateway({ upstreamPort: ctx.upstream.port, logLevel: 'warn', youngGeneration: 'v8-default' });
  const what = `a second gateway started without ${PEER_NODE_FLAGS.join(' ')} (V8's default 16 MiB semi-space), JSON-RPC`;
  return jsonRpcPeer('gateway-jsonrpc-v8-default', "a2a-egress, JSON-RPC, V8's default young generation", what, gw.port, gw.pid, () => gw.stop());
};

/** What a reply that is not a success says: its ErrorInfo or problem `reason`, if it has one. */
function reasonIn(text: string): string {
  return /"reason":"([A-Z_]+)"/.exec(text)?.[1] ?? (text.startsWith('{"jsonrpc"') ? 'a JSON-RPC envelope' : `"${text.slice(0, 80)}"`);
}

/** An HTTP+JSON caller of the shared gateway, to `remote` (which the gateway reaches over its own binding). */
const restCaller = (id: string, label: string, what: string, remote: string): PeerFactory => async (ctx) => {
  const url = `${gatewayUrl(ctx.gateway, remote)}/message:send`;
  const res = await fetch(url, { method: 'POST', headers: REST_HEADERS, body: REST_SEND_REQUEST });
  const text = await res.text();
  if (!sendMessageResponse(res.status, text)) {
    return { id, label, skipped: `not served: POST /remotes/${remote}/message:send answered HTTP ${res.status} with ${reasonIn(text)}, not a SendMessageResponse` };
  }
  return httpPeer({ id, label, what, url, body: REST_SEND_REQUEST, headers: REST_HEADERS, good: sendMessageResponse, pid: ctx.gateway.pid });
};

const gatewayRest = restCaller(
  'gateway-rest',
  'a2a-egress, HTTP+JSON → JSON-RPC remote',
  'the same gateway process: POST /remotes/<name>/message:send with an A2A 1.0 SendMessageRequest, transcoded to the JSON-RPC remote of the JSON-RPC row (binding: auto; its card has none)',
  REMOTE,
);

const gatewayRestRest = restCaller(
  'gateway-rest-rest',
  'a2a-egress, HTTP+JSON → HTTP+JSON remote',
  'the same gateway process and call, to a remote with binding: http+json (POST <url>/message:send upstream, same upstream process)',
  REST_REMOTE,
);

const gatewayWorkers: PeerFactory = async (ctx) => {
  const label = 'a2a-egress, JSON-RPC, server.workers: 2';
  try {
    const gw = await startGateway({ upstreamPort: ctx.upstream.port, logLevel: 'warn', server: { workers: 2 } });
    const what = 'a second gateway with server.workers: 2; CPU summed over the primary and its workers';
    return jsonRpcPeer('gateway-workers-2', label, what, gw.port, gw.pid, () => gw.stop());
  } catch (err) {
    if (!(err instanceof GatewayRefused)) return { id: 'gateway-workers-2', label, skipped: `FAILED to start: ${err instanceof Error ? err.message : String(err)}` };
    const said = /[\w.]*workers[^\n]*/.exec(err.stderr)?.[0] ?? err.message;
    return { id: 'gateway-workers-2', label, skipped: `config refused: this gateway does not take server.workers (it said: ${said.trim().slice(0, 160)})` };
  }
};

/**
 * Peer modules that later work adds to bench/. Each exports
 * `unaryPeers(ctx: BenchContext): Promise<PeerStart[]>`: peers that make the
 * same call over another binding, with their own load (UnaryPeer.drive) and
 * their own process ids, so they land in the same table and the same rounds.
 */
// gRPC is not here yet: bench/grpc-forwarding.ts is its own script (run with `npx tsx bench/grpc-forwarding.ts`),
// with its own grpc-js load; it joins this table once it exports unaryPeers.
export const PEER_MODULES: readonly { file: string; id: string; label: string }[] = [];

async function modulePeers(ctx: BenchContext): Promise<PeerStart[]> {
  const out: PeerStart[] = [];
  for (const mod of PEER_MODULES) {
    const path = join(ROOT, mod.file);
    if (!existsSync(path)) {
      out.push({ id: mod.id, label: mod.label, skipped: `${mod.file} does not exist in this checkout` });
      continue;
    }
    try {
      const loaded = (await import(pathToFileURL(path).href)) as { unaryPeers?: (ctx: BenchContext) => Promise<PeerStart[]> };
      if (typeof loaded.unaryPeers !== 'function') throw new Error(`${mod.file} must export unaryPeers(ctx): Promise<PeerStart[]>`);
      out.push(...(await loaded.unaryPeers(ctx)));
    } catch (err) {
      // One broken module costs its own row, not the scenario.
      out.push({ id: mod.id, label: mod.label, skipped: `FAILED: ${err instanceof Error ? err.message : String(err)}` });
    }
  }
  return out;
}

/** Starts every peer, in table order; direct first (the others are compared with it). */
export async function startUnaryPeers(ctx: BenchContext): Promise<PeerStart[]> {
  const factories = [direct, dispatchHop, fastifyHop, httpProxy, gatewayJsonRpc, gatewayV8Default, gatewayRest, gatewayRestRest, gatewayWorkers];
  const started: PeerStart[] = [];
  try {
    for (const factory of factories) started.push(await factory(ctx));
    started.push(...(await modulePeers(ctx)));
  } catch (err) {
    for (const p of started) if (!isSkipped(p)) await p.stop();
    throw err;
  }
  return started;
}
