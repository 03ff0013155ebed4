/**
 * A JSON-RPC or HTTP+JSON caller's call to a remote the gateway reaches over
 * gRPC: the A2ACall the caller's codec built runs through the gateway's gRPC
 * call handler (proxy/grpc-call.ts: admission, credentials as metadata,
 * deadlines, retries, redaction, validateResults, the breaker; the gRPC
 * client's own stream bounds: idle, no data, duration, event and stream
 * sizes), and its Outcome, or each stream item, is handed back in the
 * runner's shapes (RunResult, StreamRun) so the caller's route encodes it
 * exactly as it encodes a call through the call runner.
 *
 * Which remotes (`remotes.<name>.binding`): `grpc` for every caller; `auto`
 * for HTTP+JSON callers when the first interface of the remote's card the
 * gateway carries is its gRPC one (on the host of `url`); JSON-RPC callers on
 * `auto` keep JSON-RPC at `url` (their fast path reads no card).
 */
import type { ServerResponse } from 'node:http';
import type { EventSink } from '../bindings/grpc/contracts.js';
import { parseGrpcTarget } from '../bindings/grpc/target.js';
import { gatewayErrorOutcome } from '../bindings/error-outcome.js';
import type { RemoteConfig } from '../config/schema.js';
import type { A2ACall, Binding } from '../core/call.js';
import type { RunResult } from '../proxy/call-runner.js';
import type { ErrorOutcome } from '../core/outcome.js';
import type { StreamCaller, StreamRun } from '../proxy/stream-runner.js';
import type { CallLog, CardInterfaces, GatewayContext } from '../proxy/context.js';
import { KEEP_ALIVE_COMMENT, callerGone, openEventStream, writeText } from '../stream/sse-writer.js';
import type { CardInterface } from './remote-card-interfaces.js';

/** Whether `caller`'s call to `remote` goes over gRPC (see the file comment); synchronous unless the card must be asked for. */
export function grpcUpstreamWanted(ctx: GatewayContext, remote: RemoteConfig, caller: Binding): boolean | Promise<boolean> {
  if (remote.binding === 'grpc') return true;
  if (remote.binding !== 'auto' || caller !== 'http+json' || ctx.cardInterfaces === undefined) return false;
  const interfaces = ctx.cardInterfaces(remote);
  if (interfaces instanceof Promise) return interfaces.then((known) => grpcFirstInCard(known, remote), () => false);
  return grpcFirstInCard(interfaces, remote);
}

/** The verdict for the interfaces last read for each remote config (the same array while the cache keeps the card). */
const grpcVerdicts = new WeakMap<RemoteConfig, { readonly interfaces: readonly CardInterface[]; readonly grpc: boolean }>();

function grpcFirstInCard(interfaces: CardInterfaces, remote: RemoteConfig): boolean {
  if (interfaces === undefined) return false;
  const known = grpcVerdicts.get(remote);
  if (known?.interfaces === interfaces) return known.grpc;
  const grpc = grpcFirst(interfaces, remote);
  grpcVerdicts.set(remote, { interfaces, grpc });
  return grpc;
}

function grpcFirst(interfaces: readonly CardInterface[], remote: RemoteConfig): boolean {
  for (const entry of interfaces) {
    try {
      if (entry.binding === 'GRPC') {
        if (parseGrpcTarget(entry.url, remote.url.protocol === 'https:').host.toLowerCase() === remote.url.hostname.toLowerCase()) return true;
      } else if ((entry.binding === 'JSONRPC' || entry.binding === 'HTTP+JSON') && new URL(entry.url).origin === remote.url.origin) {
        return false;
      }
    } catch {
      // An entry that is no URL or target: not one the gateway carries.
    }
  }
  return false;
}

const bytesIn = (call: A2ACall): number => Buffer.byteLength(call.paramsJson);

/** The caller leaving (its response closed before it was written) cancels the gRPC call. */
function callerSignal(out: ServerResponse): { signal: AbortSignal; done(): void } {
  const controller = new AbortController();
  const onClose = () => {
    if (!out.writableFinished) controller.abort();
  };
  out.once('close', onClose);
  return { signal: controller.signal, done: () => out.off('close', onClose) };
}

const noHandler = (call: A2ACall): ErrorOutcome => gatewayErrorOutcome('GATEWAY_ERROR', { remote: call.remote });

/** gRPC is A2A 1.0's binding (lf.a2a.v1): a 0.3 call has no gRPC form (until the version bridge translates it). */
const wrongGeneration = (call: A2ACall): ErrorOutcome | undefined =>
  call.generation === '1.0' ? undefined : gatewayErrorOutcome('UNSUPPORTED_BINDING_VERSION', { remote: call.remote }, `A2A ${call.generation} callers cannot reach a gRPC remote`);

export async function runGrpcUnary(ctx: GatewayContext, call: A2ACall, out: ServerResponse, log: CallLog): Promise<RunResult> {
  const refused = wrongGeneration(call);
  if (refused) return { outcome: refused, headers: {} };
  const handler = ctx.grpcCalls?.();
  if (!handler) return { outcome: noHandler(call), headers: {} };
  const { signal, done } = callerSignal(out);
  try {
    const reply = await handler.unary(call, signal, { requestBytes: bytesIn(call), log });
    return { outcome: reply.outcome, headers: { ...reply.metadata } };
  } finally {
    done();
  }
}

/**
 * A server-streaming call: the caller's event stream opens with the first event (an error before any event is
 * the one reply, `relayed: false`, as a remote's refusal is on the HTTP paths); back-pressure from the caller's
 * socket pauses the gRPC stream; keep-alive comments at the remote's keepAliveMs.
 */
export async function runGrpcStream(ctx: GatewayContext, remote: RemoteConfig, call: A2ACall, out: ServerResponse, log: CallLog, caller: StreamCaller): Promise<StreamRun> {
  const refused = wrongGeneration(call);
  if (refused) return { relayed: false, result: { outcome: refused, headers: {} } };
  const handler = ctx.grpcCalls?.();
  if (!handler) return { relayed: false, result: { outcome: noHandler(call), headers: {} } };
  const { signal, done } = callerSignal(out);
  let metadata: Readonly<Record<string, string>> = {};
  let started = false;
  let refusal: ErrorOutcome | undefined;
  let keepAlive: NodeJS.Timeout | undefined;
  const start = () => {
    if (started) return;
    started = true;
    caller.takeOver();
    openEventStream(out, Object.assign({}, metadata, caller.headers));
    keepAlive = setInterval(() => {
      if (!callerGone(out)) log.bytesOut += writeText(out, KEEP_ALIVE_COMMENT).bytes;
    }, remote.timeouts.keepAliveMs);
  };
  const sink: EventSink = {
    signal,
    open: (m) => {
      metadata = m;
    },
    write: (event) => {
      start();
      const written = writeText(out, caller.write({ outcome: event, final: false }));
      if (callerGone(out)) return Promise.resolve(false);
      if (!written.full) return true;
      return new Promise<boolean>((resolve) => {
        const onDrain = () => {
          signal.removeEventListener('abort', onAbort);
          resolve(true);
        };
        const onAbort = () => {
          out.off('drain', onDrain);
          resolve(false);
        };
        out.once('drain', onDrain);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    },
    end: (error) => {
      if (!started && error) {
        refusal = error;
        return;
      }
      start();
      if (error) writeText(out, caller.write({ outcome: error, final: true }));
      if (!callerGone(out)) out.end();
    },
  };
  try {
    await handler.stream(call, sink, { requestBytes: bytesIn(call), log });
  } finally {
    clearInterval(keepAlive);
    done();
  }
  if (refusal) return { relayed: false, result: { outcome: refusal, headers: { ...metadata } } };
  if (!started) {
    // The handler always ends its sink; a stream that never ended is the gateway's bug, answered as one.
    return { relayed: false, result: { outcome: noHandler(call), headers: {} } };
  }
  if (log.outcome === 'ok' && signal.aborted) log.outcome = 'CALLER_CLOSED';
  return { relayed: true };
}
