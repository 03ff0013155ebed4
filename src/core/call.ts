/**
 * The internal representation of one A2A call, whatever binding the caller
 * spoke. A caller codec (src/bindings/<binding>/) turns a request into an
 * A2ACall; policy, the version bridge and an upstream codec only ever see
 * this, so every rule holds for every caller/remote pair at once.
 */
import type { Operation, ProtocolGeneration } from '../a2a/operations.js';

export type Binding = 'jsonrpc' | 'http+json' | 'grpc';

/** A JSON-RPC id as the caller sent it (echoed on every reply). */
export type JsonRpcId = string | number | null;

/** A2A service parameters (spec §3.2.6) and the caller headers policy lets through, already validated. */
export interface ServiceParams {
  /** The caller's A2A-Version (header, or the `A2A-Version` query parameter, §3.6.1) as a validated Major.Minor. */
  readonly a2aVersion?: string;
  /** A2A-Extensions (or the 0.3 X-A2A-Extensions), a validated, bounded list of URIs. */
  readonly extensions?: string;
  /** Other caller headers policy forwards (trace context, accept-language, the remote's forwardHeaders). */
  readonly forwarded: Readonly<Record<string, string>>;
}

/** Who asked, in which binding: only the caller codec reads this, to answer in the caller's own shape. */
export interface CallerInfo {
  readonly binding: Binding;
  /** JSON-RPC callers only: the id every reply and event carries. */
  readonly jsonRpcId?: JsonRpcId;
  /** The gateway's request id (x-request-id), also sent upstream. */
  readonly requestId: string;
}

export interface A2ACall {
  /** The configured remote's name. */
  readonly remote: string;
  readonly operation: Operation;
  /** The protocol generation `params` are written in (the caller's, until the version bridge translates them). */
  readonly generation: ProtocolGeneration;
  /**
   * The request message as JSON text (1.0: ProtoJSON of `operation.requestType`; 0.3: the 0.3 params object).
   * Where the caller sent it as one JSON value (JSON-RPC params, a REST body) these are the caller's exact bytes,
   * already checked (no duplicate members, bounded depth, valid UTF-8), so what the gateway checked is what the
   * remote receives; codecs that must build it (REST path/query parameters, gRPC messages) serialize `params`.
   */
  readonly paramsJson: string;
  /** `paramsJson` parsed; codecs and policy read fields from it, never from the raw bytes. */
  readonly params: Readonly<Record<string, unknown>>;
  /** `tenant` from a REST path or the params (1.0 §11.3: every route exists under `/{tenant}`). */
  readonly tenant?: string;
  readonly service: ServiceParams;
  readonly caller: CallerInfo;
  /**
   * JSON-RPC callers: the caller's whole request body. A JSON-RPC upstream of the same generation receives these
   * exact bytes (the fast path; nothing re-serialized). Absent for every other binding.
   */
  readonly rawJsonRpcBody?: Buffer;
}
