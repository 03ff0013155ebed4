/**
 * One streaming call (message/stream, tasks/resubscribe, SendStreamingMessage,
 * SubscribeToTask): admission, the upstream request, then the SSE relay owns
 * the caller's socket until the stream ends. The concurrency slot is held for
 * the stream's whole life.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RemoteConfig } from '../config/schema.js';
import { checkResult as checkMethodResult } from '../a2a/result-validate.js';
import type { CallerRequest } from '../jsonrpc/caller-request.js';
import { filterUpstreamResponseHeaders } from '../policy/header-policy.js';
import { LimitError } from '../policy/limit-error.js';
import type { RemoteRuntime } from '../policy/remote-runtime.js';
import { relayStream, sendStreamFailure, type StreamOutcome } from '../stream/relay.js';
import { CallAborted, classifyTransportError, describeForLog } from '../upstream/errors.js';
import type { CallLog, GatewayContext } from './context.js';
import { finishCall } from './reply.js';
import { limitReply } from './limits.js';
import { sendUpstream, upstreamHeaders } from './upstream-request.js';

export async function streamCall(
  ctx: GatewayContext,
  request: FastifyRequest,
  reply: FastifyReply,
  target: { remote: RemoteConfig; runtime: RemoteRuntime; call: CallerRequest; path: string },
  log: CallLog,
  started: number,
): Promise<void> {
  const { remote, runtime, call, path } = target;
  // From here on the relay writes the raw response; Fastify must not answer too.
  reply.hijack();
  const out = reply.raw;
  const baseHeaders = { 'x-request-id': request.id };
  const controller = new AbortController();
  const abortUpstream = () => controller.abort(new CallAborted('CALLER_CLOSED'));
  const onCallerClose = () => {
    if (!out.writableFinished) abortUpstream();
  };
  out.once('close', onCallerClose);
  // Until the relay takes over (its own timers bound the stream), the wait for response headers is bounded.
  const headersWait = Math.min(remote.timeouts.headersMs, remote.timeouts.totalMs);
  const headersDeadline = setTimeout(() => controller.abort(new CallAborted('UPSTREAM_TIMEOUT')), headersWait);

  let release: (() => void) | undefined;
  let outcome: StreamOutcome;
  const checkResult = remote.limits.validateResults ? (result: unknown) => problemOf(call.method, result) : undefined;
  const relayOpts = { callerId: call.id, remote, out, headers: baseHeaders, shutdown: ctx.shutdown, checkResult };
  ctx.metrics.openStreams.inc({ remote: remote.name });
  try {
    release = await runtime.admit(controller.signal);
    const upstreamStarted = performance.now();
    const res = await sendUpstream(ctx, remote, upstreamHeaders(ctx, request, remote, runtime, true), {
      path,
      body: call.raw,
      streaming: true,
      signal: controller.signal,
    });
    clearTimeout(headersDeadline);
    ctx.metrics.upstreamLatency.observe({ remote: remote.name }, (performance.now() - upstreamStarted) / 1000);
    log.upstreamStatus = res.statusCode;
    const body = res.body;
    outcome = await relayStream(
      { statusCode: res.statusCode, headers: res.headers, body },
      {
        ...relayOpts,
        headers: { ...filterUpstreamResponseHeaders(res.headers), ...baseHeaders },
        abortUpstream: () => body.destroy(),
        buffer: ctx.budget.lease(),
      },
    );
    if (res.statusCode >= 500) runtime.breaker.onFailure();
    else runtime.breaker.onSuccess();
  } catch (err) {
    clearTimeout(headersDeadline);
    if (err instanceof LimitError) {
      const limited = limitReply(call.id, remote.name, err);
      outcome = sendStreamFailure(err.reason, { ...relayOpts, headers: { ...limited.headers, ...baseHeaders } }, undefined, limited.metadata);
    } else {
      const reason = classifyTransportError(err);
      request.log.debug({ requestId: request.id, err: describeForLog(err) }, 'upstream stream call failed');
      if (reason !== 'CALLER_CLOSED') runtime.breaker.onFailure();
      outcome = sendStreamFailure(reason, relayOpts);
    }
  } finally {
    out.off('close', onCallerClose);
    release?.();
    ctx.metrics.openStreams.dec({ remote: remote.name });
  }
  log.outcome = outcome.callerClosed && outcome.outcome === 'ok' ? 'CALLER_CLOSED' : outcome.outcome;
  log.events = outcome.events;
  log.bytesOut = outcome.bytesOut;
  ctx.metrics.streamEvents.inc({ remote: remote.name }, outcome.events);
  finishCall(ctx, reply, log, started);
}

function problemOf(method: string, result: unknown): string | undefined {
  const check = checkMethodResult(method, result);
  return check.ok ? undefined : check.problem;
}
