/**
 * Writes the one envelope a unary call answers with, and the call's log line
 * and metrics. Every JSON-RPC reply the gateway sends goes through here.
 */
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { Normalized } from '../envelope/normalize.js';
import { DirectReply, putHeader, type CallReply } from '../jsonrpc/call-io.js';
import type { StreamOutcome } from '../stream/relay.js';
import { endCallTrace } from '../telemetry/call-trace.js';
import type { CallLog, GatewayContext } from './context.js';

const JSON_TYPE = 'application/json; charset=utf-8';

export function finishCall(ctx: GatewayContext, reply: CallReply, log: CallLog, started: number): void {
  // A relayed stream's call ends here (its stream telemetry said how); an envelope's already ended in sendEnvelope.
  endCallTrace(reply);
  recordCallLine(ctx, reply.request.log, reply.request.id, log, started);
}

/**
 * The upstream duration, request sent → response head (retries included): its one meaning for every kind of call
 * (upstream/exchange.ts), in the metric and in the call line.
 */
export function recordUpstreamDuration(ctx: GatewayContext, remote: string, log: CallLog, upstreamStarted: number): void {
  const upstreamMs = performance.now() - upstreamStarted;
  ctx.metrics.upstreamLatency.record(upstreamMs / 1000, remote);
  log.upstreamMs = Math.round(upstreamMs * 1000) / 1000;
}

/** What a relayed stream did, into its call line and the events counter (both stream paths). */
export function recordRelayedStream(ctx: GatewayContext, remote: string, log: CallLog, relayed: StreamOutcome): void {
  log.outcome = relayed.callerClosed && relayed.outcome === 'ok' ? 'CALLER_CLOSED' : relayed.outcome;
  log.events = relayed.events;
  log.bytesOut = relayed.bytesOut;
  if (relayed.redactions) log.redactions = (log.redactions ?? 0) + relayed.redactions;
  ctx.metrics.streamEvents.inc({ remote }, relayed.events);
}

/** The call's metrics and its one log line, whatever binding the caller spoke. */
export function recordCallLine(ctx: GatewayContext, logger: Pick<FastifyBaseLogger, 'info' | 'warn'>, requestId: string, log: CallLog, started: number): void {
  const elapsedMs = performance.now() - started;
  log.totalMs = Math.round(elapsedMs * 1000) / 1000;
  ctx.metrics.recordCall(log.remote, log.method, log.outcome, log.bytesIn, log.bytesOut, elapsedMs / 1000);
  if (log.redactions) {
    const path = log.events === undefined ? 'reply' : 'stream';
    ctx.metrics.redactions.inc({ remote: log.remote, path }, log.redactions);
    // The event, never the value.
    logger.warn({ requestId, remote: log.remote, path, redactions: log.redactions }, 'remote sent back a credential of this gateway; removed before the caller saw it');
  }
  logger.info({ requestId, call: log }, 'call');
}

export function sendEnvelope(
  ctx: GatewayContext,
  reply: CallReply,
  normalized: Normalized,
  log: CallLog,
  started: number,
  extraHeaders: Record<string, string> = {},
  status = 200,
): void {
  log.outcome = normalized.outcome;
  const { wire } = normalized;
  log.bytesOut = wire === undefined ? Buffer.byteLength(normalized.json) : wire.length;
  // The caller's bytes first (the write reaches the socket before send returns), the bookkeeping after: the trace's
  // end, the metrics and the log line are no part of the latency a caller waits for.
  writeEnvelope(ctx, reply, normalized, wire, log.bytesOut, extraHeaders, status);
  endCallTrace(reply, normalized);
  finishCall(ctx, reply, log, started);
}

function writeEnvelope(ctx: GatewayContext, reply: CallReply, normalized: Normalized, wire: string | undefined, length: number, extraHeaders: Record<string, string>, status: number): void {
  if (reply.raw.destroyed) return;
  // Once drainMs is up every reply is its socket's last. (Requests that arrive during the drain get
  // Connection: close from Fastify; calls already running keep keep-alive until then, so answers to
  // requests pipelined behind them are not lost when the socket closes.)
  const closing = ctx.drainEnd.aborted;
  if (reply instanceof DirectReply) {
    if (reply.raw.headersSent) return;
    const headers = envelopeHeaders(extraHeaders, closing, reply.request.id, length);
    if (wire === undefined) reply.send(status, headers, normalized.json);
    else reply.send(status, headers, wire, 'latin1');
    return;
  }
  void reply
    .code(status)
    .headers(Object.assign({}, extraHeaders, closing ? { connection: 'close' } : {}, { 'cache-control': 'no-store', 'x-request-id': reply.request.id }))
    .type(JSON_TYPE)
    .send(normalized.json);
}

/**
 * The envelope's headers in the order Fastify writes them for the chain above: no extra headers (the usual case) is
 * one array literal; otherwise the same merge (the object spread, then each name lower-cased in its order, a later
 * value of a name replacing an earlier one in its place), then content-type and content-length.
 */
export function envelopeHeaders(extra: Readonly<Record<string, string>>, closing: boolean, requestId: string, length: number): string[] {
  let any = false;
  for (const _ in extra) {
    any = true;
    break;
  }
  if (!any && !closing) return ['cache-control', 'no-store', 'x-request-id', requestId, 'content-type', JSON_TYPE, 'content-length', String(length)];
  // Merged with Object.assign: a literal starting with a spread of a non-empty object, members after it, makes a
  // hidden class per call (test/unit/stable-shapes.test.ts).
  const merged: Record<string, string> = Object.assign({}, extra);
  if (closing) merged.connection = 'close';
  merged['cache-control'] = 'no-store';
  merged['x-request-id'] = requestId;
  const out: string[] = [];
  for (const name of Object.keys(merged)) putHeader(out, name.toLowerCase(), merged[name]!);
  putHeader(out, 'content-type', JSON_TYPE);
  putHeader(out, 'content-length', String(length));
  return out;
}
