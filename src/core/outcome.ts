/**
 * The internal representation of what a call produced: a result, or an error
 * that is already safe to show (sanitized, bounded, redacted). An upstream
 * codec's normalizer makes Outcomes from whatever a remote sent; a caller
 * codec turns an Outcome into the caller's binding (JSON-RPC envelope,
 * google.rpc.Status body, gRPC status). A stream is a sequence of Outcomes:
 * results, then at most one final error.
 */
import type { Reason } from '../envelope/codes.js';

// One definition of each, in the error catalogue (envelope/codes.ts): A2A's ErrorInfo domain (spec §9.5, §10.6,
// §11.6) and the gateway's own.
export { A2A_ERROR_DOMAIN, ERROR_DOMAIN as GATEWAY_ERROR_DOMAIN, ERROR_INFO_TYPE } from '../envelope/codes.js';

/** A ProtoJSON `Any` detail: an object with a `@type`. */
export type ErrorDetail = { readonly '@type': string } & Readonly<Record<string, unknown>>;

export interface ResultOutcome {
  readonly kind: 'result';
  /**
   * The result (or one stream event's payload) as JSON text in the generation of the call that produced it.
   * For a remote's success these are the remote's bytes, spliced out of its reply, never re-serialized unless a
   * stage had to change them (card rewrite, redaction, version bridge).
   */
  readonly json: string;
  /** `json` parsed, for the stages that look inside (card rewrite, validation, redaction, bridge, traces). */
  readonly value: unknown;
  /**
   * `json` as its UTF-8 bytes, one character per byte (a latin1 string: its length is its byte count), where the
   * result is the remote's bytes passed on unchanged: a caller that writes the text as it is writes these, and the
   * text is never decoded. A stage that changes the result makes a new outcome, without them.
   */
  readonly wire?: string;
}

export interface ErrorOutcome {
  readonly kind: 'error';
  /**
   * The error's identity in JSON-RPC numbering, binding-neutral: A2A's -32001..-32009, or the standard -32700,
   * -32600..-32603. Each caller codec maps it to its own shape (spec §5.4: HTTP status, gRPC status).
   */
  readonly code: number;
  /** Final text: remote text sanitized, redacted and bounded; or the catalogue's fixed sentence (+ gateway detail). */
  readonly message: string;
  /** 'REMOTE_ERROR' when the remote sent a typed error, else the gateway reason from src/envelope/codes.ts. */
  readonly reason: Reason | 'REMOTE_ERROR';
  /** Metadata of the gateway's own ErrorInfo (remote, httpStatus, cause, event, retryAfterMs, ...); values are strings. */
  readonly metadata: Readonly<Record<string, string>>;
  /**
   * The A2A ErrorInfo (domain a2a-protocol.org) for A2A error codes: the remote's (sanitized and bounded) when it
   * sent one, else synthesized from `code` (TASK_NOT_FOUND for -32001, ...).
   */
  readonly a2a?: { readonly reason: string; readonly metadata: Readonly<Record<string, string>> };
  /** Further remote details kept by `keepRemoteErrorData`, sanitized and bounded. */
  readonly details: readonly ErrorDetail[];
  /**
   * What the remote's own binding said, so a caller of the same binding gets the same status where it is a valid
   * one (a REST 404 stays 404, a gRPC NOT_FOUND stays NOT_FOUND); absent for gateway failures.
   */
  readonly remoteStatus?: { readonly http?: number; readonly grpc?: number };
  /** Response headers that belong to this error (e.g. retry-after for a limit). */
  readonly headers?: Readonly<Record<string, string>>;
}

export type Outcome = ResultOutcome | ErrorOutcome;

/** One element of a stream: an event, or the final error that ends it. */
export type StreamItem = { readonly outcome: ResultOutcome; readonly final: false } | { readonly outcome: ErrorOutcome; readonly final: true };

/**
 * A result whose value is parsed from its text only when a stage looks inside (redaction, the version bridge, a gRPC
 * caller's encoder, a result check): a caller written the text as it is never parses it. Only for text a normalizer
 * already read as JSON with no `__proto__` or `constructor` member name, so a plain JSON.parse is safe.
 *
 * A class with the getter on its prototype, not an object literal with a getter: V8 puts a literal's own getter in
 * an AccessorPair allocated in old space, which keeps the text alive until the next full collection (see
 * PlainSuccess in envelope/normalize.ts).
 */
export class ParsedOnRead implements ResultOutcome {
  readonly kind = 'result' as const;
  #parsed = false;
  #value: unknown = undefined;

  constructor(readonly json: string) {}

  get value(): unknown {
    if (!this.#parsed) {
      this.#value = JSON.parse(this.json) as unknown;
      this.#parsed = true;
    }
    return this.#value;
  }
}

/**
 * A remote's result kept as its bytes (`wire`): the text is decoded, and the value parsed, only when a stage asks
 * (see ParsedOnRead for when a plain JSON.parse is safe, and why a class).
 */
export class BytesResult implements ResultOutcome {
  readonly kind = 'result' as const;
  #json: string | undefined = undefined;
  #parsed = false;
  #value: unknown = undefined;

  constructor(readonly wire: string) {}

  get json(): string {
    this.#json ??= Buffer.from(this.wire, 'latin1').toString('utf8');
    return this.#json;
  }

  get value(): unknown {
    if (!this.#parsed) {
      this.#value = JSON.parse(this.json) as unknown;
      this.#parsed = true;
    }
    return this.#value;
  }
}
