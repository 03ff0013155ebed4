/**
 * The HTTP+JSON binding as an upstream codec for the call runner
 * (src/core/upstream-codec.ts): the request builder and the normalizers of
 * this folder behind one object. Pure.
 */
import type { UpstreamCodec } from '../../core/upstream-codec.js';
import { buildRestUpstreamRequest } from './upstream-request.js';
import { normalizeRestEvent, normalizeRestStreamBody, streamReplyKind } from './upstream-events.js';
import { normalizeRestReply, type RestNormalizePolicy } from './upstream-reply.js';
import type { CodecPolicy } from '../../core/upstream-codec.js';
import type { A2ACall } from '../../core/call.js';

/** Without a result check (the default) one per codec policy, not one per call; with one, bound to the call. */
const uncheckedPolicies = new WeakMap<CodecPolicy, RestNormalizePolicy>();

function restPolicy(call: A2ACall, policy: CodecPolicy): RestNormalizePolicy {
  let unchecked = uncheckedPolicies.get(policy);
  if (unchecked !== undefined) return unchecked;
  const { checkResult: check, ...rest } = policy;
  if (check !== undefined) return { ...rest, checkResult: (_operation, result) => check(call, result) };
  unchecked = rest;
  uncheckedPolicies.set(policy, unchecked);
  return unchecked;
}

export const httpJsonUpstreamCodec: UpstreamCodec = {
  binding: 'http+json',
  request: (call, base) => buildRestUpstreamRequest(call, base),
  reply: (call, reply, policy) => normalizeRestReply(call.operation, reply, restPolicy(call, policy)),
  isEventStream: (status, contentType) => streamReplyKind(status, contentType) === 'events',
  streamBody: (call, reply, policy) => normalizeRestStreamBody(call.operation, reply, restPolicy(call, policy)),
  event: (call, event, policy, httpStatus, index) => normalizeRestEvent(call.operation, event, { policy: restPolicy(call, policy), httpStatus }, index),
};
