/**
 * What the call runner (./run-unary.ts, ./run-stream.ts) needs from the
 * binding a remote speaks: the request for a call, and the normalizer that
 * turns what came back into Outcomes. Each binding implements it once in
 * src/bindings/<binding>/ (pure functions, no sockets); the runner owns the
 * transport, policy and bounds, so every rule holds for every binding.
 * The runner is handed the codec (it never imports src/bindings).
 */
import type { HttpVerb } from '../a2a/operations.js';
import type { NormalizePolicy } from '../envelope/normalize.js';
import type { SseEvent } from '../stream/sse-parser.js';
import type { A2ACall, Binding } from './call.js';
import type { ErrorOutcome, Outcome, StreamItem } from './outcome.js';

export interface UpstreamHttpRequest {
  readonly method: HttpVerb;
  /** Path and query on the remote's origin. */
  readonly path: string;
  /**
   * Lower-case names: what the binding itself needs (content-type, accept, A2A service parameters, forwarded caller
   * headers). Made fresh for each call: the runner completes it in place (credentials, request id, framing).
   */
  readonly headers: Record<string, string>;
  readonly body?: string | Buffer | undefined;
}

export type UpstreamBuild = { readonly ok: true; readonly request: UpstreamHttpRequest } | { readonly ok: false; readonly error: ErrorOutcome };

export interface CodecPolicy extends NormalizePolicy {
  /** `limits.validateResults`: a problem text for a result that does not match the operation's schema. */
  readonly checkResult?: ((call: A2ACall, result: unknown) => string | undefined) | undefined;
}

/** A complete, size-capped, decoded reply. */
export interface CodecReply {
  readonly status: number;
  readonly body: Buffer;
}

export interface UpstreamCodec {
  readonly binding: Binding;
  /** The request for `call` on the remote's interface at `base`; or the error the caller gets instead. */
  request(call: A2ACall, base: URL): UpstreamBuild;
  /** A unary reply → one Outcome. */
  reply(call: A2ACall, reply: CodecReply, policy: CodecPolicy): Outcome;
  /** Did a streaming call get an event stream (else the body is read whole and is one Outcome)? */
  isEventStream(status: number, contentType: string | undefined): boolean;
  /**
   * A streaming call answered with a whole body instead: its one Outcome. Mostly an error (the remote's typed error
   * before any event, an HTML page, ...); a remote's single valid result (one StreamResponse) stays a result, as the
   * JSON-RPC path passes it on (README "HTTP+JSON and transcoding": each caller binding writes it its own way).
   */
  streamBody(call: A2ACall, reply: CodecReply, policy: CodecPolicy): Outcome;
  /** One SSE event → one StreamItem (`index` is 1-based). */
  event(call: A2ACall, event: SseEvent, policy: CodecPolicy, httpStatus: number, index: number): StreamItem;
}
