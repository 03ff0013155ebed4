/**
 * A call's outcome folded into a few classes, for labels that must stay
 * small (the call duration histogram has one series per bucket per label
 * set). The exact reason stays in a2a_egress_calls_total and the log line.
 */
import { Code, gatewayErrors, REMOTE_ERROR_REASON } from '../envelope/codes.js';

export const OUTCOME_CLASSES = [
  'ok',
  'remote_error',
  'caller_error',
  'limited',
  'invalid_response',
  'upstream_failure',
  'gateway_error',
  'caller_closed',
  'other',
] as const;

export type OutcomeClass = (typeof OUTCOME_CLASSES)[number];

const BY_REASON: Readonly<Record<string, OutcomeClass>> = {
  ok: 'ok',
  [REMOTE_ERROR_REASON]: 'remote_error',
  // The gateway's own limits refused the call before it reached the remote.
  OVERLOADED: 'limited',
  GATEWAY_OVERLOADED: 'limited',
  RATE_LIMITED: 'limited',
  CIRCUIT_OPEN: 'limited',
  GATEWAY_ERROR: 'gateway_error',
  GATEWAY_SHUTDOWN: 'gateway_error',
  CALLER_CLOSED: 'caller_closed',
  // A2A's PushNotificationNotSupported (-32003), answered by the gateway itself: the caller asked for what it does not carry.
  PUSH_NOT_ENABLED: 'caller_error',
};

const CALLER_CODES: ReadonlySet<number> = new Set([Code.ParseError, Code.InvalidRequest, Code.MethodNotFound, Code.InvalidParams]);

/** The class of an outcome (ok, REMOTE_ERROR or a catalogue reason); "other" for anything unknown. */
export function outcomeClass(outcome: string): OutcomeClass {
  // Own keys only: an outcome named like an Object.prototype member is just unknown.
  if (Object.hasOwn(BY_REASON, outcome)) return BY_REASON[outcome]!;
  if (!Object.hasOwn(gatewayErrors, outcome)) return 'other';
  const spec = (gatewayErrors as Readonly<Record<string, { code: number }>>)[outcome]!;
  if (CALLER_CODES.has(spec.code)) return 'caller_error';
  if (spec.code === Code.InvalidAgentResponse) return 'invalid_response';
  // The rest of the catalogue is -32603: transport failures and streams the clock ended.
  return 'upstream_failure';
}
