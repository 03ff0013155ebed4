/**
 * POST /remotes/:name[/sub/path] — the A2A JSON-RPC call path. Validates the
 * caller's request, forwards it to the remote over that remote's pool, and
 * answers with exactly one normalized envelope (or, for streaming methods,
 * hands the upstream response to the SSE relay).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayConfig, RemoteConfig } from '../config/schema.js';
import { methodInfo, type MethodInfo } from '../a2a/methods.js';
import { fail, normalizeReply, type Normalized } from '../envelope/normalize.js';
import type { JsonRpcId } from '../envelope/envelope.js';
import type { Reason } from '../envelope/codes.js';
import { checkCallerRequest, type CallerRequest } from '../jsonrpc/caller-request.js';
import { buildUpstreamHeaders, filterUpstreamResponseHeaders } from '../policy/header-policy.js';
import { literalHostDenied } from '../upstream/egress.js';
import { CallAborted, classifyTransportError, describeForLog } from '../upstream/errors.js';
import type { UpstreamPools } from '../upstream/pools.js';
import { headerValue, readCappedBody } from '../upstream/read-body.js';
import { upstreamPath } from './remote-path.js';

export interface JsonRpcRouteOptions {
  /** A getter, so a reloaded config applies to the next call without re-registering routes. */
  readonly config: () => GatewayConfig;
  readonly pools: UpstreamPools;
  readonly userAgent: string;
}

interface CallLog {
  remote: string;
  method?: string;
  upstreamStatus?: number;
  outcome: string;
  bytesIn: number;
  bytesOut: number;
  upstreamMs?: number;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export async function jsonRpcRoutes(app: FastifyInstance, opts: JsonRpcRouteOptions): Promise<void> {
  const largestRequestLimit = () => Math.max(...[...opts.config().remotes.values()].map((r) => r.limits.maxRequestBytes));

  // The body stays raw bytes: the gateway validates it itself and forwards it unchanged.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: largestRequestLimit() }, (_req, body, done) => done(null, body));

  app.setErrorHandler((err: Error & { code?: string; statusCode?: number }, request, reply) => {
    const reason: Reason = err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'REQUEST_TOO_LARGE' : err.statusCode === 400 ? 'PARSE_ERROR' : 'GATEWAY_ERROR';
    if (reason === 'GATEWAY_ERROR') request.log.error({ err: describeForLog(err) }, 'unexpected error in the call path');
    const remote = (request.params as { name?: string }).name;
    sendEnvelope(reply, fail(null, reason, { remote: knownRemote(opts.config(), remote) }), { remote: remote ?? '', outcome: reason, bytesIn: 0, bytesOut: 0 });
  });

  const handler = (request: FastifyRequest<{ Params: { name: string } }>, reply: FastifyReply) => handleCall(request, reply, opts);
  app.post('/remotes/:name', handler);
  app.post('/remotes/:name/*', handler);
}

function knownRemote(config: GatewayConfig, name: string | undefined): string | undefined {
  return name !== undefined && config.remotes.has(name) ? name : undefined;
}

async function handleCall(
  request: FastifyRequest<{ Params: { name: string } }>,
  reply: FastifyReply,
  opts: JsonRpcRouteOptions,
): Promise<void> {
  const config = opts.config();
  const name = request.params.name;
  const remote = config.remotes.get(name);
  const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const log: CallLog = { remote: remote ? name : 'unknown', outcome: 'ok', bytesIn: raw.length, bytesOut: 0 };

  const checked = checkCallerRequest(raw, remote?.limits.maxRequestBytes ?? raw.length);
  const refuse = (reason: Reason, id: JsonRpcId, detail?: string) =>
    sendEnvelope(reply, fail(id, reason, { remote: remote?.name }, detail), { ...log, outcome: reason });

  if (!remote) return refuse('UNKNOWN_REMOTE', checked.ok ? checked.request.id : checked.id);
  if (!checked.ok) return refuse(checked.reason, checked.id, checked.detail);
  const call = checked.request;
  log.method = call.method;

  const path = upstreamPath(remote.url, suffixAfterRemote(request.raw.url ?? '', name));
  if (path === undefined) return refuse('INVALID_PATH', call.id);
  const info = methodInfo(call.method);
  if (!info || !remote.methods.has(call.method)) return refuse('METHOD_NOT_ALLOWED', call.id, `"${info ? call.method : 'unknown'}"`);
  if (literalHostDenied(remote.url, remote.allowPrivateNetwork)) return refuse('EGRESS_DENIED', call.id);

  await unaryCall(request, reply, opts, remote, call, info, path, log);
}

function suffixAfterRemote(url: string, name: string): string {
  const prefix = `/remotes/${name}`;
  return url.startsWith(prefix) ? url.slice(prefix.length) : '';
}

async function unaryCall(
  request: FastifyRequest,
  reply: FastifyReply,
  opts: JsonRpcRouteOptions,
  remote: RemoteConfig,
  call: CallerRequest,
  _info: MethodInfo,
  path: string,
  log: CallLog,
): Promise<void> {
  const controller = new AbortController();
  const deadline = setTimeout(() => controller.abort(new CallAborted('UPSTREAM_TIMEOUT')), remote.timeouts.totalMs);
  const onCallerClose = () => {
    if (!reply.raw.writableFinished) controller.abort(new CallAborted('CALLER_CLOSED'));
  };
  reply.raw.once('close', onCallerClose);
  const policy = {
    remote: remote.name,
    maxErrorMessageBytes: remote.limits.maxErrorMessageBytes,
    maxJsonDepth: remote.limits.maxJsonDepth,
    keepRemoteErrorData: remote.keepRemoteErrorData,
  };
  const started = performance.now();
  let normalized: Normalized;
  let responseHeaders: Record<string, string> = {};
  try {
    const headers = {
      ...buildUpstreamHeaders(request.headers, { forwardHeaders: remote.forwardHeaders }),
      'x-request-id': request.id,
      'content-type': 'application/json',
      accept: 'application/json',
      'accept-encoding': 'gzip, deflate, br',
      'user-agent': opts.userAgent,
    };
    const res = await opts.pools.get(remote).request({
      path,
      method: 'POST',
      headers,
      body: call.raw,
      signal: controller.signal,
    });
    log.upstreamStatus = res.statusCode;
    responseHeaders = filterUpstreamResponseHeaders(res.headers);
    const read = await readCappedBody(res.body, headerValue(res.headers['content-encoding']), remote.limits.maxResponseBytes);
    if (read.ok) {
      normalized = normalizeReply({ status: res.statusCode, body: read.body }, call.id, policy);
    } else {
      if (read.error !== undefined) request.log.debug({ err: describeForLog(read.error) }, 'upstream body failed');
      normalized = fail(call.id, read.reason, { remote: remote.name, httpStatus: res.statusCode });
    }
  } catch (err) {
    const reason = classifyTransportError(err);
    request.log.debug({ err: describeForLog(err) }, 'upstream call failed');
    normalized = fail(call.id, reason, { remote: remote.name });
  } finally {
    clearTimeout(deadline);
    reply.raw.off('close', onCallerClose);
  }
  log.upstreamMs = Math.round((performance.now() - started) * 1000) / 1000;
  sendEnvelope(reply, normalized, { ...log, outcome: normalized.outcome }, responseHeaders);
}

function sendEnvelope(reply: FastifyReply, normalized: Normalized, log: CallLog, extraHeaders: Record<string, string> = {}): void {
  log.bytesOut = Buffer.byteLength(normalized.json);
  reply.request.log.info({ call: log }, 'call');
  if (reply.raw.destroyed) return;
  void reply
    .code(200)
    .headers({ ...extraHeaders, 'cache-control': 'no-store', 'x-request-id': reply.request.id })
    .type(JSON_TYPE)
    .send(normalized.json);
}
