/**
 * Every outcome of a push a remote sends to the webhook listener, and of its
 * delivery to the local agent: the label in metrics and logs, and for a
 * refusal the HTTP status and fixed sentence the remote gets (never remote
 * bytes). These face remotes, not callers, so they are a catalogue of their
 * own beside src/envelope/codes.ts; the error body has the same shape as
 * the HTTP+JSON binding's (google.rpc.Status with the gateway's ErrorInfo).
 */
import { ERROR_DOMAIN, ERROR_INFO_TYPE } from '../envelope/codes.js';

interface Refusal {
  readonly status: number;
  /** google.rpc.Code name of the status, as §11.6 Status bodies carry it. */
  readonly grpc: string;
  readonly message: string;
}

export const pushRefusals = {
  PUSH_NOT_FOUND: { status: 404, grpc: 'NOT_FOUND', message: 'no push notification config has this URL' },
  PUSH_KEY_UNKNOWN: { status: 404, grpc: 'NOT_FOUND', message: 'no push notification config has this URL' },
  PUSH_CONFIG_EXPIRED: { status: 410, grpc: 'NOT_FOUND', message: 'this push notification config has expired; the client must register it again' },
  PUSH_REMOTE_UNKNOWN: { status: 410, grpc: 'NOT_FOUND', message: 'this push notification config belongs to a remote the gateway no longer serves' },
  PUSH_METHOD_NOT_ALLOWED: { status: 405, grpc: 'UNIMPLEMENTED', message: 'push notifications are delivered with POST' },
  PUSH_CREDENTIAL_MISSING: { status: 401, grpc: 'UNAUTHENTICATED', message: 'push notification has no credential (Authorization: Bearer or X-A2A-Notification-Token)' },
  PUSH_CREDENTIAL_INVALID: { status: 401, grpc: 'UNAUTHENTICATED', message: 'push notification credential is not the one given for this config' },
  PUSH_RATE_LIMITED: { status: 429, grpc: 'RESOURCE_EXHAUSTED', message: 'too many push notifications for this config; try again later' },
  PUSH_BUSY: { status: 503, grpc: 'UNAVAILABLE', message: 'gateway is receiving too many push notifications; try again later' },
  PUSH_UNSUPPORTED_MEDIA_TYPE: { status: 415, grpc: 'INVALID_ARGUMENT', message: 'push notification must be application/a2a+json or application/json, not compressed' },
  PUSH_TOO_LARGE: { status: 413, grpc: 'RESOURCE_EXHAUSTED', message: 'push notification body is larger than this gateway accepts' },
  PUSH_TIMEOUT: { status: 408, grpc: 'DEADLINE_EXCEEDED', message: 'push notification body was not received in time' },
  PUSH_INVALID_UTF8: { status: 400, grpc: 'INVALID_ARGUMENT', message: 'push notification body is not valid UTF-8' },
  PUSH_NOT_JSON: { status: 400, grpc: 'INVALID_ARGUMENT', message: 'push notification body is not a JSON object' },
  PUSH_INVALID_JSON: { status: 400, grpc: 'INVALID_ARGUMENT', message: 'push notification body is not valid JSON' },
  PUSH_JSON_TOO_DEEP: { status: 400, grpc: 'INVALID_ARGUMENT', message: 'push notification body is nested too deeply' },
  PUSH_UNSAFE_JSON: { status: 400, grpc: 'INVALID_ARGUMENT', message: 'push notification body has forbidden keys (__proto__ or constructor.prototype)' },
  PUSH_DUPLICATE_MEMBER: { status: 400, grpc: 'INVALID_ARGUMENT', message: 'push notification body has an object with the same member twice' },
  PUSH_INVALID_EVENT: { status: 400, grpc: 'INVALID_ARGUMENT', message: 'push notification body is not a valid A2A task update of this config’s protocol version' },
  PUSH_TASK_MISMATCH: { status: 403, grpc: 'PERMISSION_DENIED', message: 'push notification is about another task than its config' },
  PUSH_CREDENTIAL_ECHOED: { status: 400, grpc: 'INVALID_ARGUMENT', message: 'push notification holds a credential of this gateway where it cannot be removed' },
  PUSH_TARGET_NOT_ALLOWED: { status: 403, grpc: 'PERMISSION_DENIED', message: 'the local target of this config is no longer allowed' },
  PUSH_QUEUE_FULL: { status: 503, grpc: 'UNAVAILABLE', message: 'too many push notifications are waiting for this local agent; try again later' },
  PUSH_SHUTTING_DOWN: { status: 503, grpc: 'UNAVAILABLE', message: 'gateway is shutting down; try again later' },
  PUSH_INTERNAL_ERROR: { status: 500, grpc: 'INTERNAL', message: 'gateway internal error' },
  // Never sent (the remote is gone); exists so logs and metrics can name the outcome.
  PUSH_ABORTED: { status: 499, grpc: 'CANCELLED', message: 'remote closed the connection before the push was complete' },
} as const satisfies Record<string, Refusal>;

export type PushRefusal = keyof typeof pushRefusals;

/** A push the listener took: queued for delivery, or a redelivery it acknowledged and dropped. */
export type PushAccepted = 'accepted' | 'duplicate';

/** What became of a queued push. */
export const deliveryOutcomes = {
  delivered: 'the local agent answered 2xx',
  PUSH_TARGET_REJECTED: 'the local agent answered 4xx (other than 408/429): not retried',
  PUSH_DELIVERY_FAILED: 'every attempt failed (connection, timeout, 408, 429, 5xx)',
  PUSH_DELIVERY_DENIED: 'the local target resolved to an address its allowlist entry does not allow',
  PUSH_DROPPED_SHUTDOWN: 'the gateway shut down before delivery',
} as const;

export type DeliveryOutcome = keyof typeof deliveryOutcomes;

/** The refusal as a google.rpc.Status JSON body with the gateway's ErrorInfo (`metadata` values are gateway-written). */
export function refusalBody(reason: PushRefusal, metadata: Readonly<Record<string, string>> = {}): string {
  const r = pushRefusals[reason];
  return JSON.stringify({
    error: {
      code: r.status,
      status: r.grpc,
      message: r.message,
      details: [{ '@type': ERROR_INFO_TYPE, reason, domain: ERROR_DOMAIN, metadata }],
    },
  });
}
