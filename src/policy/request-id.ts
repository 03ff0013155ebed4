/**
 * The gateway's request id for a call: the caller's own `x-request-id` (an
 * HTTP header, or gRPC metadata) when it is short and plain, so one id
 * follows the call through the caller, the gateway's log line and the
 * remote; otherwise a fresh UUID (a long or odd id would reach logs and
 * remotes verbatim).
 */
import { randomUUID } from 'node:crypto';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdOf(given: unknown): string {
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}
