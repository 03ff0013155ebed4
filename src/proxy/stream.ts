/**
 * One streaming call (message/stream, tasks/resubscribe, SendStreamingMessage,
 * SubscribeToTask): admission, the upstream request, then either the SSE
 * relay (the remote started an event stream) or one JSON envelope (it did
 * not: a JSON-RPC error before any event, an HTML page, or the gateway failed
 * before the remote answered). The caller sees what a conformant server
 * sends: a stream only once there is one. The concurrency slot is held for
 * the stream's whole life.
 */
import { performance } from 'node:perf_hooks';
import type { IncomingHttpHeaders } from 'node:http';
import type { CallReply, CallRequest } from '../jsonrpc/call-io.js';
import type { RemoteConfig } from '../config/schema.js';
import { checkResult as checkMethodResult } from '../a2a/result-validate.js';
import type { CallerGeneration } from '../envelope/codes.js';
import type { Normalized } from '../envelope/normalize.js';
import type { Redactor } from '../envelope/redact.js';
import type { CallerRequest } from '../jsonrpc/caller-request.js';
import { callerHeadersOf } from './call-runner.js';
import type { RemoteRuntime } from '../policy/remote-runtime.js';
import { isEventStream, relayStream, type StreamOutcome, type StreamRelayOptions } from '../stream/relay.js';
import { reportInternalError } from '../telemetry/internal-error.js';
import { callTraceOf, traceStreamEnd, traceStreamEvent, traceStreamStart, tracedAttempt } from '../telemetry/call-trace.js';
import { applyVerdict, breakerVerdict, type BreakerVerdict } from '../upstream/breaker-verdict.js';
import { CallAbort } from '../upstream/call-abort.js';
import { classifyTransportError } from '../upstream/errors.js';
import { sendExchange, type StreamSource, type UpstreamResponse } from '../upstream/exchange.js';
import type { CallLog, GatewayContext } from './context.js';
import { finishCall, recordRelayedStream, recordUpstreamDuration, sendEnvelope } from './reply.js';
import { failedCallReply } from './limits.js';
import { normalizeUpstreamReply, readUpstreamBody } from './upstream-reply.js';
import { upstreamHeaders } from './upstream-request.js';
import { bridgeReply, errorAsEventStream, reportDropped, translateResult, withUpstreamVersion, type VersionBridge } from './version-bridge.js';
import { oneLine } from '../stream/event-normalize.js';
import { openEventStream, writeText } from '../stream/sse-writer.js';

export async function streamCall(
  ctx: GatewayContext,
  request: CallRequest,
  reply: CallReply,
  target: { remote: RemoteConfig; runtime: RemoteRuntime; call: CallerRequest; path: string; caller: CallerGeneration; bridge?: VersionBridge | undefined },
  log: CallLog,
  started: number,
): Promise<void> {
  const { remote, runtime, call, path, caller, bridge } = target;
  const onDropped = (direction: 'response' | 'event', labels: readonly string[]) => bridge && reportDropped(ctx.metrics, request.log, request.id, remote.name, bridge, direction, labels);
  // One abort point (upstream/call-abort.ts): the headers and total deadlines (shared timer queues), the caller
  // leaving, the drain's end. The upstream exchange is its target; a signal is made only for a wait in the concurrency queue.
  const abort = new CallAbort();
  // Until the relay takes over (its own timers bound the stream), the wait for response headers is bounded,
  // and so is reading a body that is not a stream (the unary total deadline).
  abort.startTotal(remote.timeouts.totalMs);
  abort.startHeaders(Math.min(remote.timeouts.headersMs, remote.timeouts.totalMs));
  abort.watchCaller(reply.raw);
  // Shutdown's drainMs is up before any stream started: answer GATEWAY_SHUTDOWN rather than have the socket cut.
  abort.watchDrain(ctx.drainEnd);

  let release: (() => void) | undefined;
  const lease = ctx.budget.lease();
  let normalized: Normalized | undefined;
  let answeredUpstream = false;
  let responseHeaders: Record<string, string> = {};
  let verdict: BreakerVerdict = 'none';
  // The relay never throws; what it has to swallow is logged and counted here.
  const onInternalError = (err: unknown) =>
    reportInternalError(request.log, ctx.metrics.internalErrors, 'stream', err, { requestId: request.id, remote: remote.name });
  let upstreamRes: UpstreamResponse | undefined;
  try {
    release = await runtime.admit(() => abort.signal);
    const upstreamStarted = performance.now();
    const upstream = { n: 1, url: () => new URL(path, remote.url), headers: withUpstreamVersion(upstreamHeaders(ctx, request, remote, runtime, true), bridge) };
    const res = (upstreamRes = await tracedAttempt(callTraceOf(reply), upstream, classifyTransportError, (sent) =>
      sendExchange(ctx.pools.get(remote), { path, method: 'POST', headers: sent, body: call.raw }, { limits: { maxBytes: remote.limits.maxResponseBytes, hold: lease }, streamIf: eventStreamHead }, abort),
    ));
    abort.stopHeaders();
    recordUpstreamDuration(ctx, remote.name, log, upstreamStarted);
    log.upstreamStatus = res.statusCode;
    responseHeaders = callerHeadersOf(res, runtime, log);
    const redactor = runtime.redactor();
    const stream = res.stream;
    if (stream === undefined) {
      // No stream started upstream: the caller gets the one envelope, as from a unary call.
      normalized = normalizeUpstreamReply(request, res, await readUpstreamBody(res), { remote, call, caller, redactor, onInternalError });
      answeredUpstream = true;
      if (bridge) normalized = bridgeReply(bridge, normalized, { remote: remote.name, caller, maxBytes: remote.limits.maxResponseBytes, onDropped });
      if (normalized.redactions) log.redactions = (log.redactions ?? 0) + normalized.redactions;
      verdict = breakerVerdict(res.statusCode, normalized.outcome);
    } else {
      abort.stopTotal();
      lease.release();
      // Asked per event: a token file that rotates during a long stream is redacted from the events after it.
      const liveRedactor = runtime.credentials ? () => runtime.redactor() : undefined;
      const translate = bridge && ((result: unknown) => translateResult(bridge, result, { onDropped }, 'event'));
      const ended = await relay(ctx, reply, res, stream, { remote, call, caller, redactor: liveRedactor, onInternalError, translate }, responseHeaders, log);
      verdict = breakerVerdict(res.statusCode, ended);
    }
  } catch (err) {
    const failed = failedCallReply(err, { id: call.id, remote: remote.name, caller, requestId: request.id }, { log: request.log, onInternalError, what: 'upstream stream call failed' });
    normalized = failed.normalized;
    if (failed.headers) responseHeaders = failed.headers;
    if (failed.verdict) verdict = failed.verdict;
  } finally {
    // A stream head the relay never took (something failed in between) must not hold its socket paused.
    upstreamRes?.stream?.destroy();
    abort.finish();
    release?.();
    lease.release();
  }
  applyVerdict(runtime.breaker, verdict);
  if (normalized && errorAsEventStream(bridge, answeredUpstream, normalized)) return sendErrorEvent(ctx, reply, normalized, log, started, responseHeaders);
  if (normalized) return sendEnvelope(ctx, reply, normalized, log, started, responseHeaders);
  finishCall(ctx, reply, log, started);
}

/** The one error envelope as a one-event stream (the version bridge, for 0.3 callers: see errorAsEventStream). */
function sendErrorEvent(ctx: GatewayContext, reply: CallReply, normalized: Normalized, log: CallLog, started: number, headers: Record<string, string>): void {
  reply.hijack();
  const text = `data: ${oneLine(normalized.json)}\n\n`;
  log.outcome = normalized.outcome;
  log.events = 1;
  if (openEventStream(reply.raw, Object.assign({}, headers, { 'x-request-id': reply.request.id }))) {
    log.bytesOut = writeText(reply.raw, text).bytes;
    reply.raw.end();
  }
  finishCall(ctx, reply, log, started);
}

/** The remote started an event stream: the relay owns the caller's socket until it ends. */
async function relay(
  ctx: GatewayContext,
  reply: CallReply,
  res: UpstreamResponse,
  body: StreamSource,
  target: {
    remote: RemoteConfig;
    call: CallerRequest;
    caller: CallerGeneration;
    redactor: (() => Redactor | undefined) | undefined;
    onInternalError: (err: unknown) => void;
    translate?: StreamRelayOptions['translateResult'];
  },
  responseHeaders: Record<string, string>,
  log: CallLog,
): Promise<StreamOutcome['outcome']> {
  const { remote, call, caller, redactor, onInternalError, translate } = target;
  // From here on the relay writes the raw response; Fastify must not answer too.
  reply.hijack();
  const checkResult = remote.limits.validateResults ? (result: unknown) => problemOf(call.method, result) : undefined;
  ctx.metrics.openStreams.inc({ remote: remote.name });
  const trace = traceStreamStart(callTraceOf(reply));
  const outcome = await relayStream(
    { statusCode: res.statusCode, headers: res.headers, body },
    {
      callerId: call.id,
      remote,
      caller,
      out: reply.raw,
      headers: Object.assign({}, responseHeaders, { 'x-request-id': reply.request.id }),
      shutdown: ctx.shutdown,
      checkResult,
      ...(translate ? { translateResult: translate } : {}),
      redactor,
      onInternalError,
      abortUpstream: () => body.destroy(),
      buffer: ctx.budget.lease(),
      ...(trace ? { onEvent: (event) => traceStreamEvent(trace, event) } : {}),
    },
  ).finally(() => ctx.metrics.openStreams.dec({ remote: remote.name }));
  traceStreamEnd(trace, outcome);
  recordRelayedStream(ctx, remote.name, log, outcome);
  return outcome.outcome;
}

function problemOf(method: string, result: unknown): string | undefined {
  const check = checkMethodResult(method, result);
  return check.ok ? undefined : check.problem;
}

/** The head of an event stream: the exchange streams its body to the relay (anything else is read whole). */
const eventStreamHead = (statusCode: number, headers: IncomingHttpHeaders): boolean => isEventStream({ statusCode, headers });
