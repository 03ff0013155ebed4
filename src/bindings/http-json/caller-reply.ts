/**
 * An Outcome → what an HTTP+JSON caller receives (spec 1.0.1 §11.4, §11.6,
 * §11.7). Pure: the wiring writes status, headers and body as given, plus
 * the A2A response headers header-policy.ts lets through.
 *
 * - A result: the operation's success status (200; 201 for
 *   CreateTaskPushNotificationConfig; 204 and no body for
 *   DeleteTaskPushNotificationConfig), `application/a2a+json` (§11.1), the
 *   result's JSON as it is (the remote's bytes). The status is the
 *   operation's, not a REST remote's own 2xx: a caller sees the same answer
 *   whichever binding the remote speaks (§5.1), and no client reads meaning
 *   into one 2xx over another.
 * - An error: google.rpc.Status JSON (status-body.ts) as `application/json`
 *   (AIP-193's type, which the TCK checks for error bodies).
 * - A stream: `text/event-stream`, each result `data: <StreamResponse>\n\n`;
 *   the final error `event: error\ndata: {"error":{...Status}}\n\n`, which
 *   the @a2a-js/sdk REST client turns into its typed error (as the SDK
 *   server writes it). An error before the first event is a plain error
 *   reply (encodeRestReply), as the SDK server answers then too; a remote's
 *   single result where a stream was asked is a stream of that one event.
 */
import type { Operation, ProtocolGeneration } from '../../a2a/operations.js';
import type { ErrorOutcome, Outcome, StreamItem } from '../../core/outcome.js';
import { statusBodyOf } from './status-body.js';

export const A2A_JSON = 'application/a2a+json';
export const ERROR_JSON = 'application/json';

export interface RestReply {
  readonly status: number;
  /** Lower-case names; `content-type` whenever there is a body. */
  readonly headers: Readonly<Record<string, string>>;
  /** Undefined for 204, and where `wire` carries the body. */
  readonly body?: string;
  /** The body as bytes, one character per byte (a result's `wire`): written as they are, with the latin1 encoding. */
  readonly wire?: string;
}

export function encodeRestReply(operation: Operation, outcome: Outcome, generation: ProtocolGeneration = '1.0'): RestReply {
  if (outcome.kind === 'error') return encodeRestError(outcome, generation);
  // A streaming call the remote answered with one result instead of a stream: the caller asked for a stream and
  // gets one, of that single event (the JSON-RPC path passes the single result on as its one envelope).
  if (operation.streaming) return { status: 200, headers: { ...SSE_HEADERS }, body: encodeRestStreamItem({ outcome, final: false }) };
  const status = operation.rest.successStatus;
  if (status === 204) return { status, headers: {} };
  // The remote's bytes where the result was kept as bytes: its text is then never decoded.
  return outcome.wire !== undefined ? { status, headers: { 'content-type': A2A_JSON }, wire: outcome.wire } : { status, headers: { 'content-type': A2A_JSON }, body: outcome.json };
}

export function encodeRestError(error: ErrorOutcome, generation: ProtocolGeneration = '1.0'): RestReply {
  const { status, json } = statusBodyOf(error, generation);
  return { status, headers: { ...error.headers, 'content-type': ERROR_JSON }, body: json };
}

/** Headers of a stream reply (status 200), as the @a2a-js/sdk server sends them. */
export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
});

/** One stream item as SSE text. */
export function encodeRestStreamItem(item: StreamItem): string {
  // A `data:` line ends at CR or LF; in valid JSON they only occur as whitespace between tokens.
  if (!item.final) return `data: ${item.outcome.json.replace(/[\r\n]/g, ' ')}\n\n`;
  return `event: error\ndata: ${statusBodyOf(item.outcome).json}\n\n`;
}
