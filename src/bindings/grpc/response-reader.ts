/**
 * The gRPC normalizer: what a remote's HTTP/2 response did (headers, DATA
 * chunks, trailers, how the stream closed) in, Outcomes out. Pure — no
 * sockets, no clock — so every byte sequence can be fuzzed through it; the
 * client (client.ts) only feeds it events and obeys the answers.
 *
 * Every failure is one ErrorOutcome with a catalogue reason and fixed text:
 * wrong :status or content-type, a bad or compressed frame, an oversized or
 * undecodable message, a status that is missing or not a number, a stream
 * reset or a GOAWAY before the status, a body cut short. A remote's own
 * status keeps its code (remoteStatus.grpc), its message is sanitized and
 * bounded, and its details are reduced to the A2A ErrorInfo.
 */
import type { Operation } from '../../a2a/operations.js';
import type { ErrorOutcome, Outcome, ResultOutcome } from '../../core/outcome.js';
import { gatewayErrors, standardMessages, type Reason } from '../../envelope/codes.js';
import { sanitizeText } from '../../envelope/sanitize.js';
import { GrpcMessageDecoder, PREFIX_BYTES, type FramingProblem } from './framing.js';
import { allowedResponseMetadata, decodeGrpcMessage } from './metadata.js';
import { binaryToJson, DEFAULT_RECURSION_LIMIT, ProtoConversionError } from './proto-json.js';
import { reduceStatusDetails } from './status-details.js';
import { A2A_ERRORS, a2aCodeOfReason, codeOfRemoteGrpcStatus, GrpcCode, type GrpcCode as GrpcCodeT } from './status-codes.js';

export type Headers = Readonly<Record<string, string | string[] | number | undefined>>;

export interface ReaderLimits {
  readonly maxResponseBytes: number;
  readonly maxEventBytes: number;
  readonly maxStreamBytes: number;
  readonly maxStreamEvents: number;
  readonly maxErrorMessageBytes: number;
}

export interface ReaderContext {
  readonly remote: string;
  readonly operation: Operation;
  readonly limits: ReaderLimits;
  readonly keepRemoteErrorData: boolean;
  readonly recursionLimit?: number;
}

/** How the HTTP/2 stream ended, as the client saw it. */
export interface StreamClose {
  /** RST_STREAM error code received (0 = NO_ERROR). */
  readonly rstCode?: number;
  /** The session received a GOAWAY that did not let this stream finish. */
  readonly goaway?: boolean;
  /** A connection-level failure, already classified (refused, TLS, protocol error, ...). */
  readonly transport?: Reason;
}

/** An error the gateway decided on: catalogue code and text, the gateway's metadata, A2A ErrorInfo for A2A codes. */
export function gatewayFailure(reason: Reason, remote: string, metadata: Readonly<Record<string, string>> = {}, detail?: string): ErrorOutcome {
  const spec = gatewayErrors[reason];
  const a2a = A2A_ERRORS[spec.code];
  return {
    kind: 'error',
    code: spec.code,
    message: detail ? `${spec.message}: ${detail}` : spec.message,
    reason,
    metadata: { remote, ...metadata },
    ...(a2a ? { a2a: { reason: a2a.reason, metadata: {} } } : {}),
    details: [],
  };
}

const FRAMING_REASON: Readonly<Record<FramingProblem, 'unary' | 'stream' | Reason>> = {
  'too-large': 'unary',
  compressed: 'UNSUPPORTED_ENCODING',
  'bad-flag': 'UPSTREAM_PROTOCOL_ERROR',
};

interface Status {
  readonly code: GrpcCodeT | 0;
  readonly message: string;
  readonly details?: Buffer;
}

export class GrpcResponseReader {
  /** The remote's response metadata a caller may see (§10.2 keys), once headers arrived. */
  metadata: Readonly<Record<string, string>> = {};
  private readonly decoder: GrpcMessageDecoder;
  private readonly streaming: boolean;
  private headersSeen = false;
  private status: Status | undefined;
  private failure: ErrorOutcome | undefined;
  private unaryMessage: Buffer | undefined;
  private events = 0;
  private streamBytes = 0;

  constructor(private readonly settings: ReaderContext) {
    this.streaming = settings.operation.streaming;
    this.decoder = new GrpcMessageDecoder(this.streaming ? settings.limits.maxEventBytes : settings.limits.maxResponseBytes);
  }

  /** The failure that ended reading, if any; the client stops the call when one appears. */
  get failed(): ErrorOutcome | undefined {
    return this.failure;
  }

  /** Response headers; a trailers-only response carries its status here. */
  onHeaders(headers: Headers): ErrorOutcome | undefined {
    if (this.failure) return this.failure;
    this.headersSeen = true;
    const httpStatus = Number(headers[':status']);
    if (httpStatus !== 200) return this.fail(gatewayFailure('UPSTREAM_HTTP_ERROR', this.settings.remote, { httpStatus: String(httpStatus) }, `HTTP ${httpStatus}`));
    const contentType = single(headers['content-type']);
    if (contentType === undefined || !/^application\/grpc(\+proto)?(;|$)/i.test(contentType.trim())) {
      return this.fail(gatewayFailure('WRONG_CONTENT_TYPE', this.settings.remote));
    }
    this.metadata = allowedResponseMetadata(textHeaders(headers));
    if (headers['grpc-status'] !== undefined) this.onTrailers(headers);
    return this.failure;
  }

  /** DATA: decoded events for a stream (in order); a unary message is held until the status. */
  onData(chunk: Buffer): { readonly events: ResultOutcome[]; readonly error?: ErrorOutcome } {
    if (this.failure) return { events: [], error: this.failure };
    if (!this.headersSeen || this.status) return { events: [], error: this.fail(gatewayFailure('UPSTREAM_PROTOCOL_ERROR', this.settings.remote, {}, 'data outside the response body')) };
    const step = this.decoder.push(chunk);
    const events: ResultOutcome[] = [];
    for (const message of step.messages) {
      const error = this.streaming ? this.acceptEvent(message, events) : this.acceptUnary(message);
      if (error) return { events, error };
    }
    if (step.problem) {
      const mapped = FRAMING_REASON[step.problem];
      const reason: Reason = mapped === 'unary' ? (this.streaming ? 'EVENT_TOO_LARGE' : 'RESPONSE_TOO_LARGE') : (mapped as Reason);
      const extra: Record<string, string> = this.streaming ? { event: String(this.events) } : {};
      return { events, error: this.fail(gatewayFailure(reason, this.settings.remote, extra)) };
    }
    return { events };
  }

  /** Trailers (or the headers of a trailers-only response): the call's status. */
  onTrailers(trailers: Headers): void {
    if (this.failure || this.status) return;
    const raw = single(trailers['grpc-status']);
    const code = raw !== undefined && /^\d{1,3}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
    if (Number.isNaN(code)) {
      this.fail(gatewayFailure('INVALID_STATUS', this.settings.remote));
      return;
    }
    const detailsRaw = single(trailers['grpc-status-details-bin']);
    this.status = {
      // Codes past 16 are not gRPC's: treat as UNKNOWN, as gRPC clients do.
      code: code <= 16 ? (code as GrpcCodeT | 0) : GrpcCode.UNKNOWN,
      message: decodeGrpcMessage(single(trailers['grpc-message']) ?? ''),
      ...(detailsRaw !== undefined ? { details: Buffer.from(detailsRaw, 'base64') } : {}),
    };
  }

  /**
   * The stream closed. Unary: the Outcome. Stream: the final error, or
   * undefined for a clean end (status OK after whole messages).
   */
  finish(close: StreamClose = {}): Outcome | undefined {
    const end = this.end(close);
    if (this.streaming) return end;
    if (end) return end;
    if (this.unaryMessage === undefined) return gatewayFailure('EMPTY_RESPONSE', this.settings.remote);
    return this.decode(this.unaryMessage, false) as Outcome;
  }

  private end(close: StreamClose): ErrorOutcome | undefined {
    if (this.failure) return this.failure;
    const status = this.status;
    if (status && status.code !== 0) return this.remoteError(status);
    const cut = this.streaming ? 'STREAM_TRUNCATED' : 'TRUNCATED_RESPONSE';
    if (status) return this.decoder.buffered > 0 ? this.fail(gatewayFailure(cut, this.settings.remote)) : undefined;
    // No status: why the stream ended decides the reason.
    if (close.goaway) return this.fail(gatewayFailure('UPSTREAM_GOAWAY', this.settings.remote));
    // A failed connection (bad frames, reset socket, TLS) explains the stream resets it causes.
    if (close.transport) return this.fail(gatewayFailure(close.transport, this.settings.remote));
    if (close.rstCode !== undefined && close.rstCode !== 0) {
      return this.fail(gatewayFailure('UPSTREAM_STREAM_RESET', this.settings.remote, { http2Error: String(close.rstCode) }));
    }
    return this.fail(gatewayFailure(this.headersSeen ? cut : 'UPSTREAM_PROTOCOL_ERROR', this.settings.remote));
  }

  private acceptUnary(message: Buffer): ErrorOutcome | undefined {
    if (this.unaryMessage !== undefined) {
      return this.fail(gatewayFailure('INVALID_RESPONSE_MESSAGE', this.settings.remote, {}, 'more than one message in a unary response'));
    }
    this.unaryMessage = message;
    return undefined;
  }

  private acceptEvent(message: Buffer, events: ResultOutcome[]): ErrorOutcome | undefined {
    const index = this.events;
    if (index >= this.settings.limits.maxStreamEvents) {
      return this.fail(gatewayFailure('STREAM_TOO_MANY_EVENTS', this.settings.remote, { event: String(index) }));
    }
    this.streamBytes += PREFIX_BYTES + message.length;
    if (this.streamBytes > this.settings.limits.maxStreamBytes) {
      return this.fail(gatewayFailure('STREAM_TOO_LARGE', this.settings.remote, { event: String(index) }));
    }
    this.events++;
    const outcome = this.decode(message, true);
    if (outcome.kind === 'error') return outcome;
    events.push(outcome);
    return undefined;
  }

  private decode(message: Buffer, asEvent: boolean): ResultOutcome | ErrorOutcome {
    try {
      const { json, value } = binaryToJson(this.settings.operation.responseType, message, this.settings.recursionLimit ?? DEFAULT_RECURSION_LIMIT);
      return { kind: 'result', json, value };
    } catch (err) {
      if (!(err instanceof ProtoConversionError)) throw err;
      const index = String(this.events - 1);
      return this.fail(asEvent ? gatewayFailure('INVALID_EVENT', this.settings.remote, { event: index }) : gatewayFailure('INVALID_RESPONSE_MESSAGE', this.settings.remote));
    }
  }

  private remoteError(status: Status): ErrorOutcome {
    const code = status.code as GrpcCodeT;
    const reduced = reduceStatusDetails(status.details, code, {
      maxTextBytes: this.settings.limits.maxErrorMessageBytes,
      keepRemoteErrorData: this.settings.keepRemoteErrorData,
    });
    const jsonRpcCode = (reduced.a2a && a2aCodeOfReason(reduced.a2a.reason)) ?? codeOfRemoteGrpcStatus(code);
    const text = sanitizeText(status.message, this.settings.limits.maxErrorMessageBytes).text;
    const synthesized = A2A_ERRORS[jsonRpcCode];
    const a2a = reduced.a2a ?? (synthesized ? { reason: synthesized.reason, metadata: {} } : undefined);
    return this.fail({
      kind: 'error',
      code: jsonRpcCode,
      message: text !== '' ? text : (standardMessages[jsonRpcCode] ?? 'Internal error'),
      reason: 'REMOTE_ERROR',
      metadata: { remote: this.settings.remote, grpcStatus: String(code) },
      ...(a2a ? { a2a } : {}),
      details: reduced.kept,
      remoteStatus: { grpc: code },
    });
  }

  private fail(error: ErrorOutcome): ErrorOutcome {
    this.failure ??= error;
    return this.failure;
  }
}

function single(value: string | string[] | number | undefined): string | undefined {
  if (Array.isArray(value)) return value.length === 1 ? value[0] : undefined;
  return value === undefined ? undefined : String(value);
}

function textHeaders(headers: Headers): Record<string, string | string[] | undefined> {
  const out: Record<string, string | string[] | undefined> = {};
  for (const [key, value] of Object.entries(headers)) out[key] = typeof value === 'number' ? String(value) : value;
  return out;
}
