/**
 * One unary call: admission (breaker, rate, concurrency), the upstream
 * request with a real total deadline, safe retries for read-only methods,
 * a capped read, normalization, and the breaker's verdict.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RemoteConfig } from '../config/schema.js';
import type { MethodInfo } from '../a2a/methods.js';
import { checkResult } from '../a2a/result-validate.js';
import type { Reason } from '../envelope/codes.js';
import { fail, normalizePolicyOf, normalizeReply, type Normalized } from '../envelope/normalize.js';
import type { CallerRequest } from '../jsonrpc/caller-request.js';
import type { JsonRpcId } from '../envelope/envelope.js';
import { filterUpstreamResponseHeaders } from '../policy/header-policy.js';
import { LimitError } from '../policy/limit-error.js';
import type { RemoteRuntime } from '../policy/remote-runtime.js';
import { withRetries } from '../policy/retry.js';
import { CallAborted, classifyTransportError, describeForLog } from '../upstream/errors.js';
import { headerValue, readCappedBody } from '../upstream/read-body.js';
import type { CallLog, GatewayContext } from './context.js';
import { sendEnvelope } from './reply.js';
import { limitReply } from './limits.js';
import { sendUpstream, upstreamHeaders } from './upstream-request.js';

/** Failures where the request cannot have reached the remote's application. */
const RETRYABLE: ReadonlySet<Reason> = new Set(['UPSTREAM_REFUSED', 'UPSTREAM_CONNECT_TIMEOUT', 'UPSTREAM_DNS_FAILURE', 'UPSTREAM_UNREACHABLE', 'UPSTREAM_RESET']);
/** Outcomes that count against the remote's circuit breaker. */
const BREAKER_FAILURES: ReadonlySet<string> = new Set([...RETRYABLE, 'UPSTREAM_TIMEOUT', 'UPSTREAM_TLS_ERROR', 'UPSTREAM_PROTOCOL_ERROR', 'TRUNCATED_RESPONSE']);

/** A second look at a successful result (e.g. rewriting an extended agent card); returns the envelope to send. */
export type ResultRewrite = (result: unknown, call: { request: FastifyRequest; remote: RemoteConfig; callerId: JsonRpcId }) => Normalized;

export async function unaryCall(
  ctx: GatewayContext,
  request: FastifyRequest,
  reply: FastifyReply,
  target: { remote: RemoteConfig; runtime: RemoteRuntime; call: CallerRequest; info: MethodInfo; path: string },
  log: CallLog,
  started: number,
  rewriteResult?: ResultRewrite,
): Promise<void> {
  const { remote, runtime, call, info, path } = target;
  const controller = new AbortController();
  const deadlineAt = Date.now() + remote.timeouts.totalMs;
  const deadline = setTimeout(() => controller.abort(new CallAborted('UPSTREAM_TIMEOUT')), remote.timeouts.totalMs);
  const onCallerClose = () => {
    if (!reply.raw.writableFinished) controller.abort(new CallAborted('CALLER_CLOSED'));
  };
  reply.raw.once('close', onCallerClose);

  let release: (() => void) | undefined;
  let headersDeadline: NodeJS.Timeout | undefined;
  const lease = ctx.budget.lease();
  let normalized: Normalized;
  let responseHeaders: Record<string, string> = {};
  let breakerVerdict: 'success' | 'failure' | 'none' = 'none';
  try {
    release = await runtime.admit(controller.signal);
    const headers = upstreamHeaders(ctx, request, remote, runtime, false);
    const upstreamStarted = performance.now();
    // undici's own headersTimeout ticks coarsely (~500 ms); this one is exact. It stays a backstop in the pool.
    headersDeadline = setTimeout(() => controller.abort(new CallAborted('UPSTREAM_TIMEOUT')), remote.timeouts.headersMs);
    log.attempts = 0;
    const attempt = () => {
      log.attempts = (log.attempts ?? 0) + 1;
      return sendUpstream(ctx, remote, headers, { path, body: call.raw, streaming: false, signal: controller.signal });
    };
    // Only read-only methods are ever retried; the rest take the direct path.
    const res =
      info.readOnly && remote.retries.attempts > 1
        ? await withRetries(attempt, {
            ...remote.retries,
            deadline: deadlineAt,
            signal: controller.signal,
            isRetryable: (err) => RETRYABLE.has(classifyTransportError(err)),
          })
        : await attempt();
    clearTimeout(headersDeadline);
    log.upstreamStatus = res.statusCode;
    responseHeaders = filterUpstreamResponseHeaders(res.headers);
    const read = await readCappedBody(res.body, headerValue(res.headers['content-encoding']), remote.limits.maxResponseBytes, lease);
    ctx.metrics.upstreamLatency.observe({ remote: remote.name }, (performance.now() - upstreamStarted) / 1000);
    log.upstreamMs = Math.round((performance.now() - upstreamStarted) * 1000) / 1000;
    if (read.ok) {
      normalized = normalizeReply({ status: res.statusCode, body: read.body }, call.id, normalizePolicyOf(remote));
      if (normalized.outcome === 'ok' && remote.limits.validateResults) normalized = validatedResult(normalized, call, remote.name);
      if (normalized.outcome === 'ok' && rewriteResult) normalized = rewriteResult(normalized.result, { request, remote, callerId: call.id });
    } else {
      if (read.error !== undefined) request.log.debug({ requestId: request.id, err: describeForLog(read.error) }, 'upstream body failed');
      normalized = fail(call.id, read.reason, { remote: remote.name, httpStatus: res.statusCode });
    }
    breakerVerdict = res.statusCode >= 500 || BREAKER_FAILURES.has(normalized.outcome) ? 'failure' : 'success';
  } catch (err) {
    if (err instanceof LimitError) {
      const limited = limitReply(call.id, remote.name, err);
      normalized = limited.normalized;
      responseHeaders = limited.headers;
    } else {
      const reason = classifyTransportError(err);
      request.log.debug({ requestId: request.id, err: describeForLog(err) }, 'upstream call failed');
      normalized = fail(call.id, reason, { remote: remote.name });
      if (BREAKER_FAILURES.has(reason)) breakerVerdict = 'failure';
    }
  } finally {
    clearTimeout(deadline);
    clearTimeout(headersDeadline);
    reply.raw.off('close', onCallerClose);
    release?.();
    lease.release();
  }
  if (breakerVerdict === 'failure') runtime.breaker.onFailure();
  else if (breakerVerdict === 'success') runtime.breaker.onSuccess();
  sendEnvelope(ctx, reply, normalized, log, started, responseHeaders);
}

/** `limits.validateResults`: a result that does not match the method's A2A schema becomes -32006 INVALID_RESULT. */
function validatedResult(normalized: Normalized, call: CallerRequest, remote: string): Normalized {
  const check = checkResult(call.method, normalized.result);
  return check.ok ? normalized : fail(call.id, 'INVALID_RESULT', { remote, httpStatus: 200 }, check.problem);
}
