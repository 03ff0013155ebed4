/**
 * The call paths' side of telemetry: each point a path already knows
 * (request in, call understood, attempt sent and answered, stream events,
 * reply out) is one call here, which turns the path's own values (the
 * Fastify reply, a CallerRequest's method, a Normalized envelope or an
 * Outcome, the relay's OutputEvent) into what CallTelemetry takes. Used by
 * the JSON-RPC path (routes/jsonrpc.ts, proxy/) and the binding-neutral call
 * runner's callers (routes/http-json.ts, routes/jsonrpc-transcode.ts, core/).
 *
 * The handle of a call is kept beside its reply (a WeakMap), so the exits
 * every call already goes through (sendEnvelope, finishCall) end it without
 * new parameters. With traces off and nobody subscribed to a channel the
 * whole cost is `telemetry.active` read once per call and one counter
 * compared to zero at each later point.
 */
import type { CallReply, CallRequest } from '../jsonrpc/call-io.js';
import { operationForJsonRpcMethod } from '../a2a/operations.js';
import type { A2ACall, Binding } from '../core/call.js';
import type { ErrorOutcome, Outcome, ResultOutcome } from '../core/outcome.js';
import { gatewayErrors, type Reason } from '../envelope/codes.js';
import type { Normalized } from '../envelope/normalize.js';
import type { OutputEvent } from '../stream/event-core.js';
import type { CallTelemetry, StreamTelemetry, Telemetry, UpstreamTelemetry } from './tracing.js';

const handles = new WeakMap<CallReply, CallTelemetry>();
/** Calls with a handle right now: zero means every later point returns at once. */
let open = 0;

/** A request for a call arrived (`started`: its performance.now()). No handle unless telemetry is active. */
export function beginCallTrace(telemetry: Telemetry, request: CallRequest, reply: CallReply, remote: string, started: number, binding: Binding = 'jsonrpc'): void {
  // Already begun: a call whose handler failed is answered by the route's error handler, which begins one too.
  if (!telemetry.active || handles.has(reply)) return;
  const handle = telemetry.startCall({
    remote,
    binding,
    requestId: request.id,
    traceparent: request.headers.traceparent,
    tracestate: request.headers.tracestate,
    startTime: started,
  });
  handles.set(reply, handle);
  open++;
}

/**
 * A gRPC call (no Fastify reply: the handler keeps the handle itself). Its trace context is the caller's metadata
 * forwarded with the call. Undefined unless telemetry is active.
 */
export function beginA2ACallTrace(telemetry: Telemetry, call: A2ACall, started: number): CallTelemetry | undefined {
  if (!telemetry.active) return undefined;
  const handle = telemetry.startCall({
    remote: call.remote,
    binding: call.caller.binding,
    requestId: call.caller.requestId,
    traceparent: call.service.forwarded.traceparent,
    tracestate: call.service.forwarded.tracestate,
    startTime: started,
  });
  handle.setCall(call);
  return handle;
}

/** The call's handle, for the points inside the proxy (undefined while telemetry is off). */
export function callTraceOf(reply: CallReply): CallTelemetry | undefined {
  return open === 0 ? undefined : handles.get(reply);
}

/** The caller's JSON-RPC method was read and is an A2A method. */
export function traceMethod(reply: CallReply, method: string): void {
  const handle = callTraceOf(reply);
  if (!handle) return;
  const known = operationForJsonRpcMethod(method);
  if (known) handle.setCall(known);
}

/** The caller's request was understood (a codec made the A2ACall). */
export function traceCall(reply: CallReply, call: Pick<A2ACall, 'operation' | 'generation'>): void {
  callTraceOf(reply)?.setCall(call);
}

/**
 * One attempt to reach the remote: `send` gets the headers to use (the attempt's own traceparent/tracestate in place
 * of the caller's while traces are exported), and the attempt's span ends when the answer's headers arrive or it fails.
 */
export function tracedAttempt<T extends { readonly statusCode: number }>(
  trace: CallTelemetry | undefined,
  attempt: { readonly n: number; readonly url: () => URL; readonly headers: Readonly<Record<string, string>>; readonly binding?: Binding; readonly method?: string },
  classify: (err: unknown) => Reason,
  send: (headers: Record<string, string>) => Promise<T>,
): Promise<T> {
  if (!trace) return send(attempt.headers as Record<string, string>);
  const upstream: UpstreamTelemetry = trace.upstreamStart({ attempt: attempt.n, binding: attempt.binding ?? 'jsonrpc', url: attempt.url(), method: attempt.method ?? 'POST' });
  const headers = withTraceHeaders(attempt.headers, upstream.traceparent, upstream.tracestate);
  return send(headers).then(
    (res) => {
      upstream.end({ status: res.statusCode });
      return res;
    },
    (err: unknown) => {
      upstream.end({ reason: classify(err) });
      throw err;
    },
  );
}

/** The remote answered with an event stream: the relay's per-event hook, or undefined (nothing to call per event). */
export function traceStreamStart(trace: CallTelemetry | undefined): StreamTelemetry | undefined {
  return trace?.streamStart();
}

/**
 * For the relay's `onEvent`: a result event relayed to the caller, parsed only if someone reads it. `json`: the
 * event's one-line JSON-RPC envelope (the JSON-RPC relay), or the result itself (the call runner's item relay).
 */
export function traceStreamEvent(stream: StreamTelemetry, event: OutputEvent, json: 'envelope' | 'result' = 'envelope'): void {
  if (event.outcome !== 'ok') return;
  stream.event(lazyResult(event.json, json === 'envelope'));
}

/** The relay ended: how, and what it wrote. */
export function traceStreamEnd(stream: StreamTelemetry | undefined, end: { readonly outcome: Normalized['outcome']; readonly callerClosed: boolean; readonly events: number; readonly bytesOut: number }): void {
  stream?.end({ ending: end.callerClosed && end.outcome === 'ok' ? 'CALLER_CLOSED' : end.outcome, events: end.events, bytes: end.bytesOut });
}

/** The call is over: `normalized` is the one envelope the caller got; undefined for a relayed stream (its end said how). */
export function endCallTrace(reply: CallReply, normalized?: Normalized): void {
  const handle = takeHandle(reply);
  handle?.end(normalized ? outcomeOf(normalized) : undefined);
}

/** The same for a path that answers with an Outcome (the call runner's callers). */
export function endCallTraceWith(reply: CallReply, outcome: Outcome): void {
  takeHandle(reply)?.end(outcome);
}

function takeHandle(reply: CallReply): CallTelemetry | undefined {
  if (open === 0) return undefined;
  const handle = handles.get(reply);
  if (!handle) return undefined;
  handles.delete(reply);
  open--;
  return handle;
}

/** An envelope as an Outcome: the error's code and (already sanitized, bounded) message read back from its JSON. */
function outcomeOf(normalized: Normalized): Outcome {
  if (normalized.outcome === 'ok') {
    return new SerializedOnRead(normalized.result);
  }
  const reason = normalized.outcome;
  let code: number | undefined;
  let message: string | undefined;
  try {
    const error = (JSON.parse(normalized.json) as { error?: { code?: unknown; message?: unknown } }).error;
    if (typeof error?.code === 'number') code = error.code;
    if (typeof error?.message === 'string') message = error.message;
  } catch {
    // The gateway wrote this envelope itself; the catalogue below still names the failure.
  }
  const spec = reason === 'REMOTE_ERROR' ? undefined : gatewayErrors[reason];
  const outcome: ErrorOutcome = {
    kind: 'error',
    code: code ?? spec?.code ?? -32603,
    message: message ?? spec?.message ?? '',
    reason,
    metadata: {},
    details: [],
  };
  return outcome;
}

/** A call's result for its span: serialized only if the span reads `json` (prototype getter: see TracedEventResult). */
class SerializedOnRead implements ResultOutcome {
  readonly kind = 'result' as const;

  constructor(readonly value: unknown) {}

  get json(): string {
    return JSON.stringify(this.value) ?? 'null';
  }
}

/** One relayed event's result, parsed (from its envelope, or as the result itself) only when read. */
function lazyResult(json: string, envelope: boolean): ResultOutcome {
  return new TracedEventResult(json, envelope);
}

/**
 * Getters on the prototype, not on an object literal per event: V8 puts a literal's own getters in AccessorPairs
 * allocated in old space, which keep the event's text alive until the next full collection (see PlainSuccess in
 * envelope/normalize.ts).
 */
class TracedEventResult implements ResultOutcome {
  readonly kind = 'result' as const;
  readonly #text: string;
  readonly #envelope: boolean;
  #parsed: { value: unknown } | undefined;

  constructor(text: string, envelope: boolean) {
    this.#text = text;
    this.#envelope = envelope;
  }

  get json(): string {
    return JSON.stringify(this.value) ?? 'null';
  }

  get value(): unknown {
    if (!this.#parsed) {
      try {
        const value: unknown = JSON.parse(this.#text);
        this.#parsed = { value: this.#envelope ? (value as { result?: unknown }).result : value };
      } catch {
        this.#parsed = { value: undefined };
      }
    }
    return this.#parsed.value;
  }
}

function withTraceHeaders(headers: Record<string, string>, traceparent: string | undefined, tracestate: string | undefined): Record<string, string> {
  // Traces off (channels only): the caller's headers go on as they came.
  if (traceparent === undefined) return headers;
  // The caller's headers but its tracestate, then the attempt's: copied name by name, not spread with members after
  // (a hidden class per call in V8; test/unit/stable-shapes.test.ts). A traceparent keeps its place.
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers)) if (name !== 'tracestate') out[name] = headers[name]!;
  out.traceparent = traceparent;
  if (tracestate) out.tracestate = tracestate;
  return out;
}
