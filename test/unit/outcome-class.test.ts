import t from 'tap';
import { gatewayErrors, REMOTE_ERROR_REASON } from '../../src/envelope/codes.js';
import { OUTCOME_CLASSES, outcomeClass } from '../../src/telemetry/outcome-class.js';

t.test('every outcome the gateway can record has a class, from a small fixed set', async (t) => {
  for (const reason of [...Object.keys(gatewayErrors), REMOTE_ERROR_REASON, 'ok']) {
    const cls = outcomeClass(reason);
    t.not(cls, 'other', reason);
    t.ok((OUTCOME_CLASSES as readonly string[]).includes(cls), `${reason} → ${cls}`);
  }
  t.ok(OUTCOME_CLASSES.length <= 10, 'few enough to keep the histogram small');
});

t.test('the classes an operator branches on', async (t) => {
  const cases: [string, string][] = [
    ['ok', 'ok'],
    [REMOTE_ERROR_REASON, 'remote_error'],
    ['PARSE_ERROR', 'caller_error'],
    ['METHOD_NOT_ALLOWED', 'caller_error'],
    ['UNAUTHENTICATED', 'caller_error'],
    ['RATE_LIMITED', 'limited'],
    ['CIRCUIT_OPEN', 'limited'],
    ['GATEWAY_OVERLOADED', 'limited'],
    ['UPSTREAM_HTTP_ERROR', 'invalid_response'],
    ['STREAM_TRUNCATED', 'invalid_response'],
    ['UPSTREAM_TIMEOUT', 'upstream_failure'],
    ['STREAM_IDLE', 'upstream_failure'],
    ['EGRESS_DENIED', 'upstream_failure'],
    ['GATEWAY_ERROR', 'gateway_error'],
    ['GATEWAY_SHUTDOWN', 'gateway_error'],
    ['CALLER_CLOSED', 'caller_closed'],
    ['PUSH_NOT_ENABLED', 'caller_error'],
    ['PUSH_TARGET_NOT_ALLOWED', 'caller_error'],
    ['PUSH_CONFIG_TOO_LARGE', 'caller_error'],
    ['PUSH_CONFIG_UNREADABLE', 'invalid_response'],
  ];
  for (const [reason, cls] of cases) t.equal(outcomeClass(reason), cls, reason);
  t.equal(outcomeClass('SOMETHING_NEW'), 'other', 'an unknown outcome stays bounded');
  t.equal(outcomeClass('__proto__'), 'other', 'no prototype lookups');
});
