/**
 * The gateway's events on node:diagnostics_channel, for code that embeds it
 * (an APM agent, a custom audit log): the same points the trace spans mark,
 * published only while someone subscribes (each publish site checks
 * `hasSubscribers` first, so an unwatched channel costs one property read).
 *
 * Every message of one call carries the same `call` object (its fields are
 * filled in as they become known), so a subscriber can correlate by identity
 * (a WeakMap keyed by `call`). Messages are the gateway's own objects: read
 * them, never change them. Subscribers run synchronously on the call path:
 * a slow one slows every call, and one that throws does not break the call
 * but Node rethrows its error on the next tick, as an uncaught exception
 * (diagnostics_channel's rule): subscribers must catch their own errors.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import type { Binding } from '../core/call.js';
import type { Outcome, ResultOutcome } from '../core/outcome.js';
import type { OperationName, ProtocolGeneration } from '../a2a/operations.js';
import type { Reason } from '../envelope/codes.js';

/** How a call, an upstream attempt, a stream or a card fetch ended: `ok`, `REMOTE_ERROR` or a gateway reason. */
export type Ending = 'ok' | 'REMOTE_ERROR' | Reason;

/** The identity of one call, shared by all its messages. */
export interface CallInfo {
  /** The configured remote's name (`unknown` when the path named none that exists). */
  readonly remote: string;
  /** The caller's binding. */
  readonly binding: Binding;
  /** The gateway's request id (x-request-id). */
  readonly requestId: string;
  /** Set once the caller's request was understood (absent for requests refused before). */
  operation: OperationName | undefined;
  /** The A2A generation the caller speaks, set with `operation`. */
  generation: ProtocolGeneration | undefined;
  /** W3C trace id of the call's span (32 hex digits) while traces are exported; else undefined. */
  traceId: string | undefined;
  /** `performance.now()` when the request arrived. */
  readonly startTime: number;
}

export interface CallStartMessage {
  readonly call: CallInfo;
}

export interface CallEndMessage {
  readonly call: CallInfo;
  readonly ending: Ending;
  /** JSON-RPC-numbered error code of an error outcome. */
  readonly code: number | undefined;
  /** What the caller received (for a stream: its final error, or undefined when it ended normally). */
  readonly outcome: Outcome | undefined;
  /** Task id and state (1.0 enum name, e.g. TASK_STATE_COMPLETED) when the result carried them. */
  readonly taskId: string | undefined;
  readonly taskState: string | undefined;
  readonly durationMs: number;
}

export interface UpstreamStartMessage {
  readonly call: CallInfo;
  /** 1 for the first attempt; retries count on. */
  readonly attempt: number;
  /** The binding the gateway speaks to the remote. */
  readonly binding: Binding;
  /** Origin and path of the request (never its query string). */
  readonly url: string;
}

export interface UpstreamEndMessage {
  readonly call: CallInfo;
  readonly attempt: number;
  /** HTTP status of the response (when its headers arrived). */
  readonly status: number | undefined;
  /** gRPC status code (gRPC remotes). */
  readonly grpcStatus: number | undefined;
  /** Why the attempt failed at the transport level (UPSTREAM_RESET, UPSTREAM_TIMEOUT, ...); undefined if it got an answer. */
  readonly reason: Reason | undefined;
  readonly durationMs: number;
}

export interface StreamStartMessage {
  readonly call: CallInfo;
}

export interface StreamEventMessage {
  readonly call: CallInfo;
  /** 1-based number of this event in the stream. */
  readonly index: number;
  /** The event as relayed (after redaction and checks). */
  readonly outcome: ResultOutcome;
}

export interface StreamEndMessage {
  readonly call: CallInfo;
  readonly ending: Ending;
  readonly events: number;
  /** Bytes written to the caller, when the relay counted them. */
  readonly bytes: number | undefined;
  readonly durationMs: number;
}

export interface CardFetchInfo {
  readonly remote: string;
  /** Origin and path of the card URL (never its query string). */
  readonly url: string;
  /** The call the fetch is part of, if any. */
  readonly call: CallInfo | undefined;
  readonly startTime: number;
}

export interface CardStartMessage {
  readonly fetch: CardFetchInfo;
}

export interface CardEndMessage {
  readonly fetch: CardFetchInfo;
  readonly ending: Ending;
  readonly status: number | undefined;
  readonly durationMs: number;
}

/** The channel names, part of the gateway's public interface. */
export const CHANNEL_NAMES = {
  callStart: 'a2a-egress:call:start',
  callEnd: 'a2a-egress:call:end',
  upstreamStart: 'a2a-egress:upstream:start',
  upstreamEnd: 'a2a-egress:upstream:end',
  streamStart: 'a2a-egress:stream:start',
  streamEvent: 'a2a-egress:stream:event',
  streamEnd: 'a2a-egress:stream:end',
  cardStart: 'a2a-egress:card:start',
  cardEnd: 'a2a-egress:card:end',
} as const;

// diagnostics_channel keeps one channel object per name for the whole process, so these are shared by every
// gateway in it (as undici's are): a subscriber sees all of them, and `call.remote` tells them apart.
export const channels = {
  callStart: diagnosticsChannel.channel(CHANNEL_NAMES.callStart),
  callEnd: diagnosticsChannel.channel(CHANNEL_NAMES.callEnd),
  upstreamStart: diagnosticsChannel.channel(CHANNEL_NAMES.upstreamStart),
  upstreamEnd: diagnosticsChannel.channel(CHANNEL_NAMES.upstreamEnd),
  streamStart: diagnosticsChannel.channel(CHANNEL_NAMES.streamStart),
  streamEvent: diagnosticsChannel.channel(CHANNEL_NAMES.streamEvent),
  streamEnd: diagnosticsChannel.channel(CHANNEL_NAMES.streamEnd),
  cardStart: diagnosticsChannel.channel(CHANNEL_NAMES.cardStart),
  cardEnd: diagnosticsChannel.channel(CHANNEL_NAMES.cardEnd),
} as const;

/** True while anyone subscribes to a channel about calls (a call then needs its telemetry handle). */
export function callChannelsWatched(): boolean {
  return (
    channels.callStart.hasSubscribers ||
    channels.callEnd.hasSubscribers ||
    channels.upstreamStart.hasSubscribers ||
    channels.upstreamEnd.hasSubscribers ||
    channels.streamStart.hasSubscribers ||
    channels.streamEvent.hasSubscribers ||
    channels.streamEnd.hasSubscribers
  );
}

/** True while anyone subscribes to a card channel. */
export function cardChannelsWatched(): boolean {
  return channels.cardStart.hasSubscribers || channels.cardEnd.hasSubscribers;
}
