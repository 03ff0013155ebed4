/**
 * Building blocks for the hostile upstream's replies: the context each case
 * gets, JSON-RPC texts built by hand (so a case can send exactly the bytes it
 * means, duplicate keys and `__proto__` included), and parameter parsing.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

export type JsonRpcId = string | number | null;

export interface CaseContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The id to reply with: the caller's, or a different one when `wrongId=1`. */
  readonly id: JsonRpcId;
  /** Query parameters merged with `k=v` path segments (path segments win). */
  readonly params: URLSearchParams;
  /** Aborts when the reply is finished or the caller's connection closes. */
  readonly closed: AbortSignal;
  /** The upstream's own origin, e.g. http://127.0.0.1:PORT (for loopback redirects). */
  readonly origin: string;
}

export type CaseHandler = (ctx: CaseContext) => void | Promise<void>;

/** The caller's id when the body is a JSON-RPC request object with a usable id, else null. */
export function callerId(body: string): JsonRpcId {
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && 'id' in parsed) {
      const id = (parsed as { id: unknown }).id;
      if (typeof id === 'string' || typeof id === 'number' || id === null) return id;
    }
  } catch {
    // Not JSON: the reply carries id null, as JSON-RPC says for unreadable requests.
  }
  return null;
}

/** An id that differs from `id` but has the same JSON type where possible. */
export function wrongIdFor(id: JsonRpcId): JsonRpcId {
  if (typeof id === 'number') return id + 1000;
  if (typeof id === 'string') return `${id}-wrong`;
  return 'wrong-id';
}

const idJson = (id: JsonRpcId): string => JSON.stringify(id);

export const resultText = (id: JsonRpcId, resultJson: string): string =>
  `{"jsonrpc":"2.0","id":${idJson(id)},"result":${resultJson}}`;

export const errorText = (id: JsonRpcId, errorJson: string): string =>
  `{"jsonrpc":"2.0","id":${idJson(id)},"error":${errorJson}}`;

/** A 1.0 SendMessage result carrying one agent message with one text part. */
export function agentMessageJson(text: string, messageId = 'hostile-msg-1'): string {
  return JSON.stringify({
    message: { messageId, contextId: 'hostile-ctx-1', role: 'ROLE_AGENT', parts: [{ text }] },
  });
}

/** The text of the `ok` case: exactly 1024 ASCII characters. */
export const OK_TEXT = 'hostile upstream says ok. '.repeat(40).slice(0, 1024);

export function okReplyText(id: JsonRpcId): string {
  return resultText(id, agentMessageJson(OK_TEXT));
}

export function send(
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  headers: OutgoingHttpHeaders = { 'content-type': 'application/json' },
): void {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.writeHead(status, { ...headers, 'content-length': String(bytes.length) });
  res.end(bytes);
}

export const sendJson = (res: ServerResponse, text: string, status = 200): void => send(res, status, text);

/** An integer parameter in [min, max]; a bad value is the test author's bug, so it throws loudly. */
export function intParam(params: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const raw = params.get(name);
  if (raw === null) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new RangeError(`hostile upstream: ${name}=${raw} is not an integer in [${min}, ${max}]`);
  }
  return n;
}

/** Writes `chunk` until `ctx.closed` aborts, waiting for 'drain' whenever the socket pushes back. */
export function writeForever(ctx: CaseContext, chunk: Buffer | (() => Buffer)): void {
  const next = typeof chunk === 'function' ? chunk : () => chunk;
  const pump = (): void => {
    while (!ctx.closed.aborted) {
      if (!ctx.res.write(next())) {
        ctx.res.once('drain', pump);
        return;
      }
    }
  };
  pump();
}

/** Deterministic bytes (xorshift32) so every run of the findings script sees the same garbage. */
export function pseudoRandomBytes(length: number, seed = 0x2545f491): Buffer {
  const out = Buffer.alloc(length);
  let x = seed >>> 0;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}
