/**
 * One upstream answer read whole and normalized into the one envelope a
 * caller gets: a unary call's reply, or the body a remote sent instead of an
 * event stream (a JSON-RPC error to a streaming call, an HTML page...).
 */
import type { CallRequest } from '../jsonrpc/call-io.js';
import type { RemoteConfig } from '../config/schema.js';
import { checkResult } from '../a2a/result-validate.js';
import type { CallerGeneration } from '../envelope/codes.js';
import type { JsonRpcId } from '../envelope/envelope.js';
import { failureEnvelope, normalizePolicyOf, normalizeReply, withRedactionCount, type Normalized } from '../envelope/normalize.js';
import type { Redactor } from '../envelope/redact.js';
import { describeDuplicate, findDuplicateMember } from '../envelope/strict-json.js';
import type { CallerRequest } from '../jsonrpc/caller-request.js';
import { describeForLog } from '../upstream/errors.js';
import type { BodyRead, UpstreamAnswer } from '../upstream/read-body.js';

// Defined beside the error classifier: card fetches (src/a2a) use the same breaker rule.
export { RETRYABLE } from '../upstream/errors.js';

/** A second look at a successful result (e.g. rewriting an extended agent card); returns the envelope to send. */
export type ResultRewrite = (result: unknown, call: { request: CallRequest; remote: RemoteConfig; callerId: JsonRpcId; caller: CallerGeneration }) => Normalized;

export interface ReplyTarget {
  readonly remote: RemoteConfig;
  readonly call: CallerRequest;
  readonly caller: CallerGeneration;
  /** The remote's credentials to keep from the caller (remotes with `auth`). */
  readonly redactor?: Redactor | undefined;
  /** A bug of the gateway's own while reading (GATEWAY_ERROR): logged with its stack and counted by the caller. */
  readonly onInternalError?: ((err: unknown) => void) | undefined;
  /** The envelope goes to the caller as it is (no bridge, rewrite or result check after): see NormalizePolicy. */
  readonly keepBytes?: boolean | undefined;
}

/**
 * The answer's body (read with the unary cap, decoded: `readUpstreamBody`), normalized, validated (validateResults)
 * and rewritten.
 */
export function normalizeUpstreamReply(
  request: CallRequest,
  res: UpstreamAnswer,
  read: BodyRead,
  target: ReplyTarget,
  rewriteResult?: ResultRewrite,
): Normalized {
  const { remote, call, caller, redactor } = target;
  if (!read.ok) {
    if (read.reason === 'GATEWAY_ERROR') target.onInternalError?.(read.error);
    else if (read.error !== undefined) request.log.debug({ requestId: request.id, err: describeForLog(read.error) }, 'upstream body failed');
    return failureEnvelope(call.id, read.reason, { remote: remote.name, httpStatus: res.statusCode, caller });
  }
  const keepBytes = target.keepBytes === true && !remote.limits.validateResults && rewriteResult === undefined;
  let normalized = normalizeReply({ status: res.statusCode, body: read.body }, call.id, normalizePolicyOf(remote, caller, redactor, keepBytes));
  // Counted here: the checks and rewrites below make new envelopes.
  const redactions = normalized.redactions;
  if (normalized.outcome === 'ok' && remote.limits.validateResults) normalized = validatedResult(normalized, target);
  if (normalized.outcome === 'ok' && rewriteResult) normalized = rewriteResult(normalized.result, { request, remote, callerId: call.id, caller });
  return redactions ? withRedactionCount(normalized, redactions) : normalized;
}

/** The answer's body once read whole: at once when it is already there (the usual small reply), else when it is. */
export function readUpstreamBody(res: UpstreamAnswer): BodyRead | Promise<BodyRead> {
  return res.readBodyNow() ?? res.readBody();
}

/** `limits.validateResults`: a result that does not match the method's A2A schema becomes -32006 INVALID_RESULT. */
function validatedResult(normalized: Normalized, { remote, call, caller }: ReplyTarget): Normalized {
  const errorFacts = { remote: remote.name, httpStatus: 200, caller };
  // The result goes on as the remote's bytes: a member named twice would let the caller read what was not validated.
  const duplicate = findDuplicateMember(normalized.json);
  if (duplicate) return failureEnvelope(call.id, 'INVALID_RESULT', errorFacts, `member ${describeDuplicate(duplicate)}`);
  const check = checkResult(call.method, normalized.result);
  return check.ok ? normalized : failureEnvelope(call.id, 'INVALID_RESULT', errorFacts, check.problem);
}

