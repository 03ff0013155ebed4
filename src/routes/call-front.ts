/**
 * The call front: a node:http request handler in front of Fastify that serves
 * calls without Fastify's per-request objects (routing, request/reply, hooks,
 * content-type parser, reply.send): the call path's own code (handleCall in
 * routes/jsonrpc.ts, handleRestCall in routes/http-json.ts, and what they
 * call) runs on a DirectRequest/DirectReply pair, and the reply is written
 * from a header array in the order Fastify would write it.
 *
 * It takes a request only when it can finish it itself, decided from the head
 * alone, before a byte of the body is read (after that there is no handing
 * over): a POST under the mount (`/remotes/<name>[/...]`, or anything on a
 * remote's own listener) to a configured remote — an HTTP+JSON POST
 * (`…/message:send` and the others routes/http-json.ts owns) whatever the
 * remote speaks, a JSON-RPC call when the remote is reached over JSON-RPC
 * (`binding: jsonrpc` or `auto`) — with a plain JSON content type, from a
 * caller server.auth accepts, while the gateway is neither shedding load nor
 * shutting down. Everything else goes to Fastify unchanged, and Fastify's
 * routes answer it as before (401, GATEWAY_OVERLOADED, GATEWAY_SHUTDOWN with
 * Connection: close, UNKNOWN_REMOTE, the JSON-RPC transcoders, HTTP+JSON GETs
 * and DELETEs, cards, ops). What a caller sees is the same either way, byte
 * for byte (test/integration/call-front.test.ts compares the two).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { DirectReply, DirectRequest } from '../jsonrpc/call-io.js';
import type { CallerCheck } from '../policy/caller-auth.js';
import { requestIdOf } from '../policy/request-id.js';
import type { GatewayContext } from '../proxy/context.js';
import { handleRestCall, isRestPostPath, refuseRest } from './http-json.js';
import { earlyFailure, handleCall, refuseCall, type JsonRpcRouteOptions } from './jsonrpc.js';
import { shedding } from './load-shed.js';
import type { RemoteMount } from './remote-mount.js';
import { readRequestBody } from './request-body.js';

export interface CallFrontOptions {
  /** What the JSON-RPC route of this listener is registered with (the same call path, the same options). */
  readonly route: JsonRpcRouteOptions & { readonly mount: RemoteMount };
  /** `server.auth` in force (a getter: a reload may turn it on or off). */
  readonly callerAuth: () => CallerCheck | undefined;
  /** Fastify's logger (request.log is the same logger: the gateway makes no child per request). */
  readonly logger: FastifyBaseLogger;
  /** The remote a listener of its own serves at its root; undefined on the shared listener (`/remotes/<name>`). */
  readonly listenerRemote?: string | undefined;
}

/** Offers a request to the front: true when the front took it (and will answer it), false to hand it to Fastify. */
export type CallFront = (req: IncomingMessage, res: ServerResponse) => boolean;

// A remote's name as Fastify's router would give it without decoding anything (`%` and the rest go to Fastify).
const PLAIN_NAME = /^[A-Za-z0-9._~-]{1,128}$/;
// application/json, with no parameter but a utf-8 charset: what clients send. Any other form goes to Fastify's parser.
const JSON_TYPE = /^application\/json(?:\s*;\s*charset=(?:utf-8|"utf-8"))?$/i;
const SHARED_PREFIX = '/remotes/';

export function createCallFront(opts: CallFrontOptions): CallFront {
  const { route, callerAuth, logger, listenerRemote } = opts;
  const { ctx, mount } = route;
  return (req, res) => {
    if (req.method !== 'POST') return false;
    const url = req.url ?? '';
    const name = listenerRemote === undefined ? sharedRemoteName(url) : url.startsWith('/') ? listenerRemote : undefined;
    // Percent-encoded or fragment characters: Fastify's router decides what they mean.
    if (name === undefined || url.includes('%') || url.includes('#')) return false;
    const remote = ctx.config().remotes.get(name);
    if (!remote) return false;
    // An HTTP+JSON POST (routes/http-json.ts) is served whatever the remote speaks; a JSON-RPC call only when the
    // remote speaks JSON-RPC too (the transcoders of routes/jsonrpc-transcode.ts stay behind Fastify).
    const restPost = isRestPostPath(url);
    if (!restPost && (remote.binding === 'http+json' || remote.binding === 'grpc')) return false;
    const contentType = req.headers['content-type'];
    if (typeof contentType !== 'string' || !JSON_TYPE.test(contentType)) return false;
    const check = callerAuth();
    if (check && !check(req.headers.authorization)) return false;
    if (ctx.shutdown.aborted || shedding(ctx)) return false;
    const request = new DirectRequest(req, requestIdOf(req.headers['x-request-id']), logger, listenerRemote === undefined ? { name } : undefined);
    (restPost ? serveRest : serve)(ctx, route, req, res, request, remote.limits.maxRequestBytes);
    return true;
  };
}

/** `<name>` of `/remotes/<name>`, `/remotes/<name>/...` or `/remotes/<name>?...`, when it is plain. */
function sharedRemoteName(url: string): string | undefined {
  if (!url.startsWith(SHARED_PREFIX)) return undefined;
  let end = SHARED_PREFIX.length;
  while (end < url.length && url[end] !== '/' && url[end] !== '?') end++;
  const name = url.slice(SHARED_PREFIX.length, end);
  return PLAIN_NAME.test(name) ? name : undefined;
}

function serve(ctx: GatewayContext, route: CallFrontOptions['route'], req: IncomingMessage, res: ServerResponse, request: DirectRequest, limit: number): void {
  const reply = new DirectReply(res, request);
  // What Fastify's error handler does for the JSON-RPC route (routes/jsonrpc.ts): the same reasons, the same envelope.
  // A body that could not be read also closes the connection, as Fastify's content-type parser does (the caller may
  // still be sending).
  readRequestBody(req, limit, (err, body) => {
    if (err) return refuseCall(ctx, route.mount, request, reply, earlyFailure(ctx, err, request), { connection: 'close' });
    request.body = body;
    let running: Promise<void> | void;
    try {
      running = handleCall(request, reply, route.mount, route);
    } catch (thrown) {
      // Refused as a rejection is: should the refusal fail too, that is an unhandled rejection (reported), never an
      // exception out of this callback (which stops the gateway).
      running = Promise.reject(thrown);
    }
    if (running) running.catch((thrown: Error) => refuseCall(ctx, route.mount, request, reply, earlyFailure(ctx, thrown, request)));
  });
}

/** An HTTP+JSON POST: what the JSON-RPC route hands over to routes/http-json.ts, and its error handler's refusals. */
function serveRest(ctx: GatewayContext, route: CallFrontOptions['route'], req: IncomingMessage, res: ServerResponse, request: DirectRequest, limit: number): void {
  const reply = new DirectReply(res, request);
  const { mount } = route;
  readRequestBody(req, limit, (err, body) => {
    if (err) return refuseRest(ctx, mount, request, reply, earlyFailure(ctx, err, request), { connection: 'close' });
    request.body = body;
    handleRestCall(request, reply, { ctx, mount }).catch((thrown: Error) => refuseRest(ctx, mount, request, reply, earlyFailure(ctx, thrown, request)));
  });
}
