/**
 * The HTTP+JSON caller binding (A2A 1.0 §11, routes §5.3) of one remote:
 * GET and DELETE `<prefix>/*` registered here; POSTs share the JSON-RPC
 * route (one POST wildcard per prefix), which hands over the paths only
 * HTTP+JSON has (`isRestPostPath`: `…:send`, `…:stream`, `…:cancel`,
 * `…:subscribe`, `…/pushNotificationConfigs`). Each request: caller codec
 * (parseRestCall) → A2ACall → allowlist and egress checks → the remote's
 * upstream codec through the call runner (src/core/) → caller codec
 * (google.rpc.Status errors, SSE streams) → one log line and the metrics.
 */
import { performance } from 'node:perf_hooks';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DirectReply, type CallReply, type CallRequest } from '../jsonrpc/call-io.js';
import { LimitsSchema } from '../config/schema.js';
import type { Reason } from '../envelope/codes.js';
import { gatewayErrorOutcome } from '../bindings/error-outcome.js';
import { encodeRestError, encodeRestReply, encodeRestStreamItem, type RestReply } from '../bindings/http-json/caller-reply.js';
import { parseRestCall } from '../bindings/http-json/caller-request.js';
import type { A2ACall } from '../core/call.js';
import { runUnary, type RunnerEnv, type RunResult } from '../proxy/call-runner.js';
import type { ErrorOutcome, Outcome } from '../core/outcome.js';
import { runStream } from '../proxy/stream-runner.js';
import { buildUpstreamHeaders } from '../policy/header-policy.js';
import { CallLog, type GatewayContext } from '../proxy/context.js';
import { pushOutcomeRewrite, rewritePushA2ACall } from '../proxy/push-call.js';
import { finishCall } from '../proxy/reply.js';
import { beginCallTrace, callTraceOf, endCallTraceWith, traceCall } from '../telemetry/call-trace.js';
import { reportInternalError } from '../telemetry/internal-error.js';
import { literalHostDenied } from '../upstream/egress.js';
import { requestTimedOut } from './caller-timeout.js';
import type { RemoteMount } from './remote-mount.js';
import { limitFor, readRequestBody } from './request-body.js';
import { extendedCardOutcomeRewrite } from './rest-card-result.js';
import { grpcUpstreamWanted, runGrpcStream, runGrpcUnary } from './grpc-upstream-call.js';
import { bridgedCall } from './bridged-call.js';
import { upstreamTargetFor } from './upstream-binding.js';

const MAX_REQUEST_BYTES_CEILING = LimitsSchema.properties.maxRequestBytes.maximum ?? Number.MAX_SAFE_INTEGER;

// Paths only HTTP+JSON POSTs to (any tenant prefix, 0.3's /v1 forms too); a JSON-RPC caller posts to the base.
const REST_POST_PATH = /(?:\/message:(?:send|stream)|\/tasks\/[^/?]+:(?:cancel|subscribe)|\/tasks\/[^/?]+\/pushNotificationConfigs)\/?(?:\?|$)/;

/** `rawSuffix` is the URL after the remote's base (query included). */
export function isRestPostPath(rawSuffix: string): boolean {
  return rawSuffix.length > 1 && REST_POST_PATH.test(rawSuffix);
}

export interface HttpJsonRouteOptions {
  readonly ctx: GatewayContext;
  readonly mount: RemoteMount;
}

/** GET/DELETE routes; and the handler the JSON-RPC route hands REST POSTs to. */
export async function httpJsonRoutes(app: FastifyInstance, opts: HttpJsonRouteOptions): Promise<void> {
  const { ctx, mount } = opts;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { bodyLimit: MAX_REQUEST_BYTES_CEILING }, (request, payload, done) =>
    readRequestBody(payload, limitFor(ctx.config(), mount.remoteName(request)), done),
  );
  app.setErrorHandler((err: Error & { code?: string; statusCode?: number }, request, reply) => {
    const reason = earlyReason(err, request);
    if (reason === 'GATEWAY_ERROR') reportInternalError(request.log, ctx.metrics.internalErrors, 'call', err, { requestId: request.id });
    refuseRest(ctx, mount, request, reply, reason);
  });
  const handler = (request: FastifyRequest, reply: FastifyReply) => handleRestCall(request, reply, opts);
  app.get(`${mount.prefix}/*`, handler);
  app.delete(`${mount.prefix}/*`, handler);
}

/** Why a request failed before its handler ran (body limits, a caller that stopped sending). */
export function earlyReason(err: Error & { code?: string; statusCode?: number }, request: CallRequest): Reason {
  return err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'REQUEST_TOO_LARGE'
    : err.statusCode === 400 ? 'PARSE_ERROR'
    : requestTimedOut(request.raw.socket) ? 'REQUEST_TIMEOUT'
    : err.code === 'ECONNRESET' || request.raw.destroyed ? 'CALLER_CLOSED'
    : 'GATEWAY_ERROR';
}

/** A refusal before the call is parsed (auth, overload, body too large), as a Status body. */
export function refuseRest(ctx: GatewayContext, mount: RemoteMount, request: CallRequest, reply: CallReply, reason: Reason, headers: Record<string, string> = {}): void {
  const name = mount.remoteName(request);
  const remote = name !== undefined && ctx.config().remotes.has(name) ? name : undefined;
  const log = new CallLog(remote ?? 'unknown', reason, 0);
  const error = gatewayErrorOutcome(reason, { remote, headers });
  const started = performance.now();
  beginCallTrace(ctx.telemetry, request, reply, log.remote, started, 'http+json');
  endCallTraceWith(reply, error);
  send(ctx, reply, encodeRestError(error), log, started, headers);
}

/** One HTTP+JSON call: from Fastify's routes, or (a POST) from the call front (routes/call-front.ts). */
export async function handleRestCall(request: CallRequest, reply: CallReply, opts: HttpJsonRouteOptions): Promise<void> {
  const started = performance.now();
  const { ctx, mount } = opts;
  const name = mount.remoteName(request) ?? '';
  const remote = ctx.config().remotes.get(name);
  const runtime = ctx.runtime(name);
  const body = Buffer.isBuffer(request.body) ? request.body : undefined;
  const log = new CallLog(remote ? name : 'unknown', 'ok', body?.length ?? 0, 'http+json');
  const refuse = (error: ErrorOutcome, generation: '0.3' | '1.0' = '1.0') => {
    log.outcome = error.reason;
    // Idempotent: a refusal before the call was understood gets its span here.
    beginCallTrace(ctx.telemetry, request, reply, log.remote, started, 'http+json');
    endCallTraceWith(reply, error);
    send(ctx, reply, encodeRestError(error, generation), log, started);
  };
  const gatewayError = (reason: Reason, detail?: string) => gatewayErrorOutcome(reason, { remote: remote?.name }, detail);

  if (ctx.shutdown.aborted) return refuse(gatewayError('GATEWAY_SHUTDOWN'));
  if (!remote || !runtime) return refuse(gatewayError('UNKNOWN_REMOTE'));
  const rawSuffix = mount.suffix(request.raw.url ?? '', name);
  if (rawSuffix === undefined) return refuse(gatewayError('INVALID_PATH'));
  const queryAt = rawSuffix.indexOf('?');
  const parsed = parseRestCall(
    {
      method: request.method,
      path: queryAt === -1 ? rawSuffix : rawSuffix.slice(0, queryAt),
      query: queryAt === -1 ? '' : rawSuffix.slice(queryAt + 1),
      headers: request.headers,
      body,
    },
    {
      remote: remote.name,
      requestId: request.id,
      forwarded: buildUpstreamHeaders(request.headers, { forwardHeaders: remote.forwardHeaders }),
      maxRequestBytes: remote.limits.maxRequestBytes,
      maxJsonDepth: remote.limits.maxJsonDepth,
    },
  );
  if (!parsed.ok) {
    // A GET or DELETE that is no A2A operation is nobody's call: the gateway's plain 404 (with its hints).
    // (The call front takes only POSTs, so such a request always came through Fastify.)
    if (parsed.error.reason === 'UNKNOWN_OPERATION' && request.method !== 'POST' && !(reply instanceof DirectReply)) return reply.callNotFound();
    if (parsed.operation) log.method = parsed.operation.name;
    return refuse(parsed.error, parsed.generation);
  }
  const call = parsed.call;
  log.method = call.operation.name;
  beginCallTrace(ctx.telemetry, request, reply, log.remote, started, 'http+json');
  traceCall(reply, call);
  const method = call.operation.jsonrpc[call.generation];
  if (method === undefined || !remote.methods.has(method)) return refuse(gatewayError('METHOD_NOT_ALLOWED', `"${call.operation.name}"`));
  if (literalHostDenied(remote.url, remote.allowPrivateNetwork)) return refuse(gatewayError('EGRESS_DENIED'));

  const streamCaller = { write: encodeRestStreamItem, headers: { 'x-request-id': request.id }, takeOver: () => reply.hijack() };
  const overGrpc = grpcUpstreamWanted(ctx, remote, 'http+json');
  if (overGrpc === true || (overGrpc !== false && (await overGrpc))) {
    // A gRPC remote (routes/grpc-upstream-call.ts); the gRPC handler rewrites an extended card itself.
    if (!call.operation.streaming) return sendResult(ctx, reply, call, await runGrpcUnary(ctx, call, reply.raw, log), log, started);
    const run = await runGrpcStream(ctx, remote, call, reply.raw, log, streamCaller);
    if (run.relayed) return finishCall(ctx, reply, log, started);
    return sendResult(ctx, reply, call, run.result, log, started);
  }
  // A push config leaves naming the gateway's webhook, never the caller's (or the call is refused here); a gRPC
  // remote's call handler (above) does the same at its admission.
  const pushed = rewritePushA2ACall(ctx.push, parsed.call);
  if (!pushed.ok) return refuse(pushed.error, call.generation);
  const chosen = upstreamTargetFor(ctx, remote, 'http+json');
  const upstream = chosen instanceof Promise ? await chosen : chosen;
  if (!upstream.ok) return refuse(upstream.error);
  // Version bridge (issue 17): a 1.0 caller of a remote whose JSON-RPC speaks only 0.3 is translated.
  const bridged = bridgedCall(ctx, request, pushed.call, {
    remote,
    runtime,
    codec: upstream.target.codec,
    base: upstream.target.base,
    rewriteResult: call.operation.returnsCard ? extendedCardOutcomeRewrite(ctx, mount, request, remote) : pushOutcomeRewrite(ctx.push, call),
  }, log);
  if (!bridged.ok) return refuse(bridged.error);
  const target = bridged.target;
  const env: RunnerEnv = {
    ctx,
    requestId: request.id,
    out: reply.raw,
    logger: request.log,
    gatewayError: gatewayErrorOutcome,
    onInternalError: (err) => reportInternalError(request.log, ctx.metrics.internalErrors, call.operation.streaming ? 'stream' : 'call', err, { requestId: request.id, remote: remote.name }),
    trace: callTraceOf(reply),
  };
  if (!call.operation.streaming) return sendResult(ctx, reply, call, await runUnary(env, target, bridged.call, log), log, started);
  const run = await runStream(env, target, bridged.call, log, streamCaller);
  if (run.relayed) return finishCall(ctx, reply, log, started);
  sendResult(ctx, reply, call, run.result, log, started);
}

function sendResult(ctx: GatewayContext, reply: CallReply, call: A2ACall, result: RunResult, log: CallLog, started: number): void {
  log.outcome = outcomeLabel(result.outcome);
  endCallTraceWith(reply, result.outcome);
  send(ctx, reply, encodeRestReply(call.operation, result.outcome, call.generation), log, started, result.headers);
}

function outcomeLabel(outcome: Outcome): string {
  return outcome.kind === 'result' ? 'ok' : outcome.reason;
}

function send(ctx: GatewayContext, reply: CallReply, rest: RestReply, log: CallLog, started: number, extraHeaders: Record<string, string> = {}): void {
  const bytes = rest.wire !== undefined ? rest.wire.length : rest.body === undefined ? 0 : Buffer.byteLength(rest.body);
  log.bytesOut = bytes;
  // The caller's bytes first, the metrics and the log line after: they are no part of the latency a caller waits for.
  write(ctx, reply, rest, bytes, extraHeaders);
  finishCall(ctx, reply, log, started);
}

function write(ctx: GatewayContext, reply: CallReply, rest: RestReply, bytes: number, extraHeaders: Record<string, string>): void {
  if (reply.raw.destroyed) return;
  // Merged with Object.assign: a literal starting with a spread of a non-empty object, members after it, makes a
  // hidden class per call (test/unit/stable-shapes.test.ts).
  const headers: Record<string, string> = Object.assign({}, extraHeaders, rest.headers);
  if (ctx.drainEnd.aborted) headers.connection = 'close';
  headers['cache-control'] = 'no-store';
  headers['x-request-id'] = reply.request.id;
  if (reply instanceof DirectReply) {
    if (reply.raw.headersSent) return;
    if (rest.wire !== undefined) reply.sendAsFastify(rest.status, headers, rest.wire, bytes, 'latin1');
    else reply.sendAsFastify(rest.status, headers, rest.body, bytes);
    return;
  }
  void reply
    .code(rest.status)
    .headers(headers)
    .send(rest.wire !== undefined ? Buffer.from(rest.wire, 'latin1').toString('utf8') : rest.body);
}
