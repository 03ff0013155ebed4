/**
 * The small interfaces between the gRPC binding and the rest of the gateway.
 * The caller side (server.ts) calls a `CallHandler` the pipeline implements;
 * the remote side (client.ts) implements the same shape, so a test (or a
 * gRPC→gRPC route without policy) can plug one into the other.
 */
import type { A2ACall } from '../../core/call.js';
import type { ErrorOutcome, Outcome, ResultOutcome } from '../../core/outcome.js';

/** A unary call's answer, with the response metadata a caller may see (already allowlisted). */
export interface UnaryReply {
  readonly outcome: Outcome;
  readonly metadata?: Readonly<Record<string, string>>;
}

/**
 * Where a stream's events go. `write` returns whether the sink can take more
 * right now: `true`, or a promise that settles when it can (back-pressure:
 * the producer stops reading until then); resolving `false` means the
 * consumer is gone and the producer should stop. `end` is called exactly
 * once: without an argument for a clean end, or with the one final error.
 */
export interface EventSink {
  /** Response metadata (allowlisted), before the first event; at most once. */
  open(metadata: Readonly<Record<string, string>>): void;
  write(event: ResultOutcome): true | Promise<boolean>;
  end(error?: ErrorOutcome): void;
  /** Aborted when the consumer goes away (a gRPC caller cancelled): producers stop and call `end()`. */
  readonly signal: AbortSignal;
}

/** What the listener knows of a request besides the call itself (for the call's log line and metrics). */
export interface RequestInfo {
  /** Size of the caller's request message. */
  readonly requestBytes: number;
}

export interface CallHandler {
  unary(call: A2ACall, signal: AbortSignal, info?: RequestInfo): Promise<UnaryReply>;
  /** Resolves after `sink.end` has been called. */
  stream(call: A2ACall, sink: EventSink, info?: RequestInfo): Promise<void>;
}
