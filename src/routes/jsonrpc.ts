/**
 * POST /remotes/:name[/sub/path] (or POST /[sub/path] on a remote's own
 * listener, see remote-mount.ts) — the A2A JSON-RPC call path. Checks the
 * caller (auth, content type, body, JSON-RPC shape, method allowlist, path),
 * then hands the call to the unary or the streaming proxy.
 */
import { performance } from 'node:perf_hooks';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { methodInfo } from '../a2a/methods.js';
import { LimitsSchema } from '../config/schema.js';
import type { CallerGeneration, Reason } from '../envelope/codes.js';
import type { JsonRpcId } from '../envelope/envelope.js';
import { failureEnvelope } from '../envelope/normalize.js';
import { checkCallerRequest } from '../jsonrpc/caller-request.js';
import { callerGeneration, isJsonContentType } from '../jsonrpc/caller-headers.js';
import type { CallReply, CallRequest } from '../jsonrpc/call-io.js';
import type { CallerCheck } from '../policy/caller-auth.js';
import { CallLog, type GatewayContext } from '../proxy/context.js';
import { pushResultRewrite, rewritePushCall } from '../proxy/push-call.js';
import { sendEnvelope } from '../proxy/reply.js';
import { streamCall } from '../proxy/stream.js';
import { unaryCall, type ResultRewrite } from '../proxy/unary.js';
import { planVersionBridge, reportDropped } from '../proxy/version-bridge.js';
import type { ProtocolGeneration } from '../a2a/operations.js';
import type { RemoteConfig } from '../config/schema.js';
import { reportInternalError } from '../telemetry/internal-error.js';
import { beginCallTrace, traceMethod } from '../telemetry/call-trace.js';
import { literalHostDenied } from '../upstream/egress.js';
import { sharedMount, type RemoteMount } from './remote-mount.js';
import { requestTimedOut } from './caller-timeout.js';
import { transcodedJsonRpcCall } from './jsonrpc-transcode.js';
import { upstreamPath } from './remote-path.js';
import { limitFor, readRequestBody } from './request-body.js';

// The largest maxRequestBytes the schema allows: Fastify's own ceiling, never the bound in force.
const MAX_REQUEST_BYTES_CEILING = LimitsSchema.properties.maxRequestBytes.maximum ?? Number.MAX_SAFE_INTEGER;

export interface JsonRpcRouteOptions {
  readonly ctx: GatewayContext;
  /** Where the routes are mounted (default: /remotes/:name on the shared listener). */
  readonly mount?: RemoteMount;
  /** Applied to results of methods that return an agent card (the extended card). */
  readonly cardResultRewrite?: ResultRewrite;
  /** The HTTP+JSON binding's POSTs share this route's path; requests it owns are handed over (routes/http-json.ts). */
  readonly rest?: RestHandover;
  /** The A2A generations a remote speaks (config, else its card); undefined: unknown, calls are not translated. */
  readonly remoteVersions?: (remote: RemoteConfig) => readonly ProtocolGeneration[] | undefined;
}

export interface RestHandover {
  /** True for a request of the HTTP+JSON binding (a POST to one of its paths). */
  owns(request: FastifyRequest): boolean;
  handle(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** A refusal before the handler ran, in the binding's own shape. */
  refuse(request: FastifyRequest, reply: FastifyReply, reason: Reason, headers?: Record<string, string>): void;
}

export async function jsonRpcRoutes(app: FastifyInstance, opts: JsonRpcRouteOptions): Promise<void> {
  const { ctx } = opts;
  const mount = opts.mount ?? sharedMount;

  // The body stays raw bytes: the gateway validates it itself and forwards it unchanged.
  // The real bound is per remote, read from the config in force for each request.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { bodyLimit: MAX_REQUEST_BYTES_CEILING }, (request, payload, done) =>
    readRequestBody(payload, limitFor(ctx.config(), mount.remoteName(request)), done),
  );

  const refuseEarly = (request: FastifyRequest, reply: FastifyReply, reason: Reason) => {
    if (opts.rest?.owns(request)) return opts.rest.refuse(request, reply, reason, {});
    refuseCall(ctx, mount, request, reply, reason);
  };

  // Load shedding (GATEWAY_OVERLOADED) is registered above this plugin, for every binding (routes/load-shed.ts).

  app.setErrorHandler((err: Error & { code?: string; statusCode?: number }, request, reply) => refuseEarly(request, reply, earlyFailure(ctx, err, request)));

  const rest = opts.rest;
  const handler = rest
    ? (request: FastifyRequest, reply: FastifyReply) => (rest.owns(request) ? rest.handle(request, reply) : handleCall(request, reply, mount, opts))
    : (request: FastifyRequest, reply: FastifyReply) => handleCall(request, reply, mount, opts);
  app.post(mount.prefix === '' ? '/' : mount.prefix, handler);
  app.post(`${mount.prefix}/*`, handler);
}

/**
 * Why a call failed before its handler answered (the body could not be read, or the handler threw): the reason its
 * envelope names. A gateway bug is reported as an internal error here. Fastify's error handler and the call front
 * (routes/call-front.ts) both answer through this.
 */
export function earlyFailure(ctx: GatewayContext, err: Error & { code?: string; statusCode?: number }, request: CallRequest): Reason {
  const reason: Reason =
    err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'REQUEST_TOO_LARGE'
    : err.statusCode === 400 ? 'PARSE_ERROR'
    // The caller stopped sending (or was cut for taking too long): its fault, not a gateway bug. Node destroys a
    // request whose body was read whole right after its 'end' (autoDestroy): only one destroyed before then says so.
    : requestTimedOut(request.raw.socket) ? 'REQUEST_TIMEOUT'
    : err.code === 'ECONNRESET' || (request.raw.destroyed && !request.raw.complete) ? 'CALLER_CLOSED'
    : 'GATEWAY_ERROR';
  if (reason === 'GATEWAY_ERROR') reportInternalError(request.log, ctx.metrics.internalErrors, 'call', err, { requestId: request.id });
  return reason;
}

/**
 * A JSON-RPC call refused before its handler answered (id null): the call's trace, log line and envelope. `headers`:
 * what Fastify's reply already held (`connection: close` once reading the body failed: the caller may still be sending).
 */
export function refuseCall(ctx: GatewayContext, mount: RemoteMount, request: CallRequest, reply: CallReply, reason: Reason, headers: Record<string, string> = {}): void {
  const name = mount.remoteName(request);
  const remote = name !== undefined && ctx.config().remotes.has(name) ? name : undefined;
  const log = new CallLog(remote ?? 'unknown', reason, 0);
  const caller = callerGeneration(undefined, request.headers['a2a-version']);
  const started = performance.now();
  beginCallTrace(ctx.telemetry, request, reply, log.remote, started);
  sendEnvelope(ctx, reply, failureEnvelope(null, reason, { remote, caller }), log, started, headers);
}

/** A refusal before the body is read (so the id is unknown: null), as a JSON-RPC envelope (load shedding). */
export function refuseJsonRpc(ctx: GatewayContext, mount: RemoteMount, request: FastifyRequest, reply: FastifyReply, reason: Reason, headers: Record<string, string> = {}): void {
  const name = mount.remoteName(request);
  const remote = name !== undefined && ctx.config().remotes.has(name) ? name : undefined;
  const log = new CallLog(remote ?? 'unknown', reason, 0);
  const caller = callerGeneration(undefined, request.headers['a2a-version']);
  sendEnvelope(ctx, reply, failureEnvelope(null, reason, { remote, caller }), log, performance.now(), headers);
}

/**
 * An onRequest hook for every /remotes route (calls and cards): a caller
 * without an accepted token gets HTTP 401 and a JSON-RPC UNAUTHENTICATED envelope.
 */
export function callerAuthHook(ctx: GatewayContext, check: CallerCheck) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (check(request.headers.authorization)) return undefined;
    const log = new CallLog('unknown', 'UNAUTHENTICATED', 0);
    const headers = { 'www-authenticate': 'Bearer realm="a2a-egress"' };
    const started = performance.now();
    beginCallTrace(ctx.telemetry, request, reply, log.remote, started);
    sendEnvelope(ctx, reply, failureEnvelope(null, 'UNAUTHENTICATED', {}), log, started, headers, 401);
    return reply;
  };
}

/**
 * One JSON-RPC call whose body was read: from Fastify's route, or from the call front (routes/call-front.ts). Returns
 * the call's promise when it goes on (upstream, or to a transcoder), undefined when it was answered at once. Not an
 * async function: one returning the call's promise makes a second promise resolved through two more microtasks on
 * every call. A throw (a gateway bug) comes synchronously or as the promise's rejection; both callers answer either.
 */
export function handleCall(request: CallRequest, reply: CallReply, mount: RemoteMount, opts: JsonRpcRouteOptions): Promise<void> | void {
  const started = performance.now();
  const { ctx } = opts;
  const name = mount.remoteName(request) ?? '';
  const remote = ctx.config().remotes.get(name);
  const runtime = ctx.runtime(name);
  const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const log = new CallLog(remote ? name : 'unknown', 'ok', raw.length);
  beginCallTrace(ctx.telemetry, request, reply, log.remote, started);

  const checked = checkCallerRequest(raw, remote?.limits.maxRequestBytes ?? raw.length);
  const method = checked.ok ? checked.request.method : undefined;
  const caller: CallerGeneration = callerGeneration(method, request.headers['a2a-version']);
  const refuse = (reason: Reason, id: JsonRpcId, detail?: string) =>
    sendEnvelope(ctx, reply, failureEnvelope(id, reason, { remote: remote?.name, caller }, detail), log, started);

  // Arrived during the shutdown drain (on a kept-alive socket): answered, with Connection: close.
  if (ctx.shutdown.aborted) return refuse('GATEWAY_SHUTDOWN', checked.ok ? checked.request.id : checked.id);
  if (!remote || !runtime) return refuse('UNKNOWN_REMOTE', checked.ok ? checked.request.id : checked.id);
  // As the SDK servers do: a Content-Type other than JSON is refused before the body is read as JSON
  // (a missing one is let through), and the id is not looked for in a body that claims not to be JSON.
  if (!isJsonContentType(request.headers['content-type'])) return refuse('UNSUPPORTED_CONTENT_TYPE', null);
  if (!checked.ok) return refuse(checked.reason, checked.id, checked.detail);
  const call = checked.request;
  log.method = call.method;
  traceMethod(reply, call.method);

  const suffix = mount.suffix(request.raw.url ?? '', name);
  const path = suffix === undefined ? undefined : upstreamPath(remote.url, suffix);
  if (path === undefined) return refuse('INVALID_PATH', call.id);
  const info = methodInfo(call.method);
  if (!info || !remote.methods.has(call.method)) return refuse('METHOD_NOT_ALLOWED', call.id, info ? `"${call.method}"` : 'not an A2A method');
  if (literalHostDenied(remote.url, remote.allowPrivateNetwork)) return refuse('EGRESS_DENIED', call.id);

  // A push config leaves naming the gateway's webhook, never the caller's (or the call is refused here).
  const pushed = rewritePushCall(ctx.push, remote.name, call, caller, request.id);
  if (!pushed.ok) return sendEnvelope(ctx, reply, pushed.normalized, log, started);
  // A remote reached over another binding: the call is transcoded (routes/jsonrpc-transcode.ts).
  // (A gRPC remote's call handler rewrites push configs itself, at its admission: it gets the caller's own.)
  if (remote.binding === 'http+json' || remote.binding === 'grpc') {
    return transcodedJsonRpcCall(opts.ctx, request, reply, mount, { remote, runtime, call: remote.binding === 'grpc' ? call : pushed.call, caller }, log, started);
  }
  // Version bridge (issue 17): a caller of the generation the remote does not speak is translated.
  const a2aVersion = request.headers['a2a-version'] ?? queryVersion(request.raw.url);
  const versions = opts.remoteVersions?.(remote);
  let plan = planVersionBridge(pushed.call, a2aVersion, versions, remote.limits.maxRequestBytes);
  // A push config crossing generations is sealed for the one the remote pushes in (the listener translates back).
  if (plan.kind === 'bridge' && pushed.call !== call) {
    const resealed = rewritePushCall(ctx.push, remote.name, call, caller, request.id, plan.bridge.remote);
    if (!resealed.ok) return sendEnvelope(ctx, reply, resealed.normalized, log, started);
    plan = planVersionBridge(resealed.call, a2aVersion, versions, remote.limits.maxRequestBytes);
  }
  if (plan.kind === 'refuse') return refuse(plan.reason, call.id, plan.detail);
  const bridge = plan.kind === 'bridge' ? plan.bridge : undefined;
  if (bridge) log.bridge = `${bridge.caller}>${bridge.remote}`;
  if (bridge) reportDropped(ctx.metrics, request.log, request.id, remote.name, bridge, 'request', bridge.dropped);

  const target = { remote, runtime, call: bridge?.call ?? pushed.call, info, path, caller, bridge };
  if (info.streaming) return streamCall(ctx, request, reply, target, log, started);
  // Push configs in the result are restored before the bridge translates it back: in the remote's generation.
  return unaryCall(ctx, request, reply, target, log, started, info.returnsCard ? opts.cardResultRewrite : pushResultRewrite(ctx.push, target.call.method));
}

/** A2A 1.0 §3.6.1: the version may come as the `A2A-Version` query parameter when no header carries it. */
function queryVersion(url: string | undefined): string | string[] | undefined {
  const query = url?.indexOf('?') ?? -1;
  if (query === -1) return undefined;
  const values = [...new URLSearchParams(url!.slice(query + 1))].filter(([name]) => name.toLowerCase() === 'a2a-version').map(([, value]) => value);
  return values.length === 0 ? undefined : values.length === 1 ? values[0] : values;
}
