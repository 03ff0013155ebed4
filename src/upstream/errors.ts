/**
 * Maps whatever a transport failure throws (undici, node:net, node:tls, zlib,
 * our own guards) to one gateway Reason. The original error goes to the log;
 * the caller only ever sees the Reason's fixed message.
 */
import type { Reason } from '../envelope/codes.js';

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_|HOSTNAME_MISMATCH|ERR_OSSL)/;

/** The gateway's own reasons for aborting a call, carried as the AbortSignal's reason. */
export class CallAborted extends Error {
  override readonly name = 'CallAborted';
  constructor(readonly reason: Reason) {
    super(reason);
  }
}

function codesOf(err: unknown): string[] {
  const codes: string[] = [];
  let cur: unknown = err;
  for (let depth = 0; cur && depth < 5; depth++) {
    const e = cur as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof e.code === 'string') codes.push(e.code);
    if (Array.isArray(e.errors)) for (const inner of e.errors) codes.push(...codesOf(inner));
    cur = e.cause;
  }
  return codes;
}

/**
 * undici's parser errors carry no code (its HPE_ lookup finds none in 7.x) and
 * its "the peer broke HTTP" socket errors share UND_ERR_SOCKET with plain
 * resets, so these two are recognised by class name and fixed message.
 */
function isHttpViolation(err: unknown): boolean {
  let cur: unknown = err;
  for (let depth = 0; cur && depth < 5; depth++) {
    const e = cur as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown };
    if (e.name === 'HTTPParserError') return true;
    // 'bad response': bytes or an unasked-for 100 Continue; 'bad upgrade': an unasked-for 101.
    if (e.code === 'UND_ERR_SOCKET' && (e.message === 'bad response' || e.message === 'bad upgrade')) return true;
    cur = e.cause;
  }
  return false;
}

function findAborted(err: unknown): CallAborted | undefined {
  let cur: unknown = err;
  for (let depth = 0; cur && depth < 5; depth++) {
    if (cur instanceof CallAborted) return cur;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Codes that mean the gateway handed a library something invalid: its own bug, not the network's. */
const MISUSE_CODES: ReadonlySet<string> = new Set(['UND_ERR_INVALID_ARG', 'ERR_INVALID_ARG_TYPE', 'ERR_INVALID_ARG_VALUE', 'ERR_INVALID_CHAR', 'ERR_HTTP_INVALID_HEADER_VALUE']);

/**
 * True when `err` is a failure of the gateway's own code rather than of the
 * network, the remote or a limit: a plain JavaScript error (TypeError,
 * RangeError...) carrying no system or library code anywhere in its cause
 * chain, anything thrown that is not an Error, or a library refusing an
 * argument the gateway built. Everything the transport, undici, zlib, TLS and
 * the gateway's own guards throw carries a code or is a CallAborted.
 */
export function isGatewayBug(err: unknown): boolean {
  if (!(err instanceof Error)) return true;
  if (findAborted(err) || isHttpViolation(err) || err.name === 'AbortError') return false;
  const codes = codesOf(err);
  if (codes.some((c) => MISUSE_CODES.has(c))) return true;
  return codes.length === 0 && (err.constructor === Error || err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError || err instanceof SyntaxError);
}

/** Failures where the request cannot have reached the remote's application (safe to retry). */
export const RETRYABLE: ReadonlySet<Reason> = new Set(['UPSTREAM_REFUSED', 'UPSTREAM_CONNECT_TIMEOUT', 'UPSTREAM_DNS_FAILURE', 'UPSTREAM_UNREACHABLE', 'UPSTREAM_RESET']);
/**
 * Outcomes that count against a remote's circuit breaker (calls, streams and card fetches alike; the rule that
 * uses them is breaker-verdict.ts). A stream cut mid-event is the stream's truncated response.
 */
export const BREAKER_FAILURES: ReadonlySet<string> = new Set([...RETRYABLE, 'UPSTREAM_TIMEOUT', 'UPSTREAM_TLS_ERROR', 'UPSTREAM_PROTOCOL_ERROR', 'TRUNCATED_RESPONSE', 'STREAM_TRUNCATED']);

/**
 * `receivedBody` tells a truncated body (the remote closed after sending part
 * of it) from a connection that failed before any response byte. A bug in the
 * gateway's own code is GATEWAY_ERROR: never retried, never held against the remote.
 */
export function classifyTransportError(err: unknown, receivedBody = false): Reason {
  const aborted = findAborted(err);
  if (aborted) return aborted.reason;
  if (isGatewayBug(err)) return 'GATEWAY_ERROR';
  const codes = codesOf(err);
  const has = (c: string) => codes.includes(c);
  if (has('EGRESS_DENIED')) return 'EGRESS_DENIED';
  if (has('UND_ERR_CONNECT_TIMEOUT') || has('ETIMEDOUT') && !receivedBody) return 'UPSTREAM_CONNECT_TIMEOUT';
  if (has('UND_ERR_HEADERS_TIMEOUT') || has('UND_ERR_BODY_TIMEOUT')) return 'UPSTREAM_TIMEOUT';
  if (has('ECONNREFUSED')) return 'UPSTREAM_REFUSED';
  if (has('ENOTFOUND') || has('EAI_AGAIN') || has('EAI_FAIL') || has('EAI_NONAME')) return 'UPSTREAM_DNS_FAILURE';
  if (has('EHOSTUNREACH') || has('ENETUNREACH') || has('EADDRNOTAVAIL')) return 'UPSTREAM_UNREACHABLE';
  if (codes.some((c) => TLS_CODES.test(c))) return 'UPSTREAM_TLS_ERROR';
  if (has('UND_ERR_HEADERS_OVERFLOW') || codes.some((c) => c.startsWith('HPE_')) || has('UND_ERR_INFO') || isHttpViolation(err)) return 'UPSTREAM_PROTOCOL_ERROR';
  // undici reports any parse error after a Content-Length header (a duplicate one, one beside
  // Transfer-Encoding...) as this mismatch: before the head arrived it is a framing violation.
  if (has('UND_ERR_RES_CONTENT_LENGTH_MISMATCH')) return receivedBody ? 'TRUNCATED_RESPONSE' : 'UPSTREAM_PROTOCOL_ERROR';
  if (has('Z_DATA_ERROR') || has('Z_BUF_ERROR') || has('ERR_BROTLI_DECOMPRESSION_FAILED') || codes.some((c) => c.startsWith('ERR__ERROR_FORMAT') || c.startsWith('Z_'))) return 'INVALID_ENCODING';
  if (has('ECONNRESET') || has('EPIPE') || has('UND_ERR_SOCKET')) return receivedBody ? 'TRUNCATED_RESPONSE' : 'UPSTREAM_RESET';
  if (has('UND_ERR_ABORTED') || has('ABORT_ERR')) return 'UPSTREAM_TIMEOUT';
  return receivedBody ? 'TRUNCATED_RESPONSE' : 'UPSTREAM_UNREACHABLE';
}

/** Log-safe summary of a transport error: codes and class names, never a message with addresses. */
export function describeForLog(err: unknown): { name: string; codes: string[] } {
  return { name: err instanceof Error ? err.name : typeof err, codes: codesOf(err) };
}
