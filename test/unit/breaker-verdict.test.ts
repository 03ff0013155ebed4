/**
 * The one breaker verdict (src/upstream/breaker-verdict.ts): the table every
 * kind of call is judged by — a unary reply, a stream answered with one
 * reply, a relayed stream by how it ended, a failure before any head — and a
 * property over every reason in the catalogue.
 */
import fc from 'fast-check';
import t from 'tap';
import { gatewayErrors, type Reason } from '../../src/envelope/codes.js';
import { breakerVerdict } from '../../src/upstream/breaker-verdict.js';
import { BREAKER_FAILURES } from '../../src/upstream/errors.js';

type Row = readonly [kind: string, status: number | undefined, ended: string, verdict: 'success' | 'failure' | 'none'];

const TABLE: readonly Row[] = [
  // unary replies (and a stream call answered with one JSON reply): the head's status, the normalized outcome
  ['unary: 200 result', 200, 'ok', 'success'],
  ['unary: 200 A2A error', 200, 'REMOTE_ERROR', 'success'],
  ['unary: 404 page', 404, 'UPSTREAM_HTTP_ERROR', 'success'],
  ['unary: 429 from the remote', 429, 'UPSTREAM_HTTP_ERROR', 'success'],
  ['unary: 500', 500, 'UPSTREAM_HTTP_ERROR', 'failure'],
  ['unary: 503 with a valid JSON-RPC error', 503, 'REMOTE_ERROR', 'failure'],
  ['unary: body cut after the head', 200, 'TRUNCATED_RESPONSE', 'failure'],
  ['unary: body over the cap', 200, 'RESPONSE_TOO_LARGE', 'success'],
  ['unary: broken gzip', 200, 'INVALID_ENCODING', 'success'],
  ['unary: body past the total deadline', 200, 'UPSTREAM_TIMEOUT', 'failure'],
  ['unary: caller left while the body was read', 200, 'CALLER_CLOSED', 'success'],
  // relayed streams: the head's status, how the relay ended
  ['stream: ended cleanly', 200, 'ok', 'success'],
  ['stream: A2A error event', 200, 'REMOTE_ERROR', 'success'],
  ['stream: cut between events', 200, 'UPSTREAM_RESET', 'failure'],
  ['stream: cut mid-event', 200, 'STREAM_TRUNCATED', 'failure'],
  ['stream: idle too long', 200, 'STREAM_IDLE', 'success'],
  ['stream: too long', 200, 'STREAM_TOO_LONG', 'success'],
  ['stream: event too large', 200, 'EVENT_TOO_LARGE', 'success'],
  ['stream: caller left', 200, 'CALLER_CLOSED', 'success'],
  ['stream: gateway shutting down', 200, 'GATEWAY_SHUTDOWN', 'success'],
  ['stream: a bug of the gateway mid-stream', 200, 'GATEWAY_ERROR', 'success'],
  // no head: a transport failure of the remote or the way to it, or a reason of the gateway's own
  ['no head: refused', undefined, 'UPSTREAM_REFUSED', 'failure'],
  ['no head: reset', undefined, 'UPSTREAM_RESET', 'failure'],
  ['no head: DNS', undefined, 'UPSTREAM_DNS_FAILURE', 'failure'],
  ['no head: connect timeout', undefined, 'UPSTREAM_CONNECT_TIMEOUT', 'failure'],
  ['no head: headers deadline', undefined, 'UPSTREAM_TIMEOUT', 'failure'],
  ['no head: TLS', undefined, 'UPSTREAM_TLS_ERROR', 'failure'],
  ['no head: bad framing', undefined, 'UPSTREAM_PROTOCOL_ERROR', 'failure'],
  ['no head: caller left', undefined, 'CALLER_CLOSED', 'none'],
  ['no head: shutdown', undefined, 'GATEWAY_SHUTDOWN', 'none'],
  ['no head: egress guard', undefined, 'EGRESS_DENIED', 'none'],
  ['no head: rate limited', undefined, 'RATE_LIMITED', 'none'],
  ['no head: circuit open', undefined, 'CIRCUIT_OPEN', 'none'],
  ['no head: gateway bug', undefined, 'GATEWAY_ERROR', 'none'],
];

t.test('the verdict table: unary calls and streams judged by the one function', async (t) => {
  for (const [kind, status, ended, verdict] of TABLE) {
    // 'ok' and 'REMOTE_ERROR' (the remote's own A2A error) are outcomes; everything else a catalogue reason.
    if (ended !== 'ok' && ended !== 'REMOTE_ERROR') t.ok(ended in gatewayErrors, `${ended} is a catalogue reason`);
    t.equal(breakerVerdict(status, ended), verdict, kind);
  }
});

t.test('property: failure iff the ending is a breaker failure or the head was 5xx; none iff no head and not a failure', async (t) => {
  const reasons = Object.keys(gatewayErrors) as Reason[];
  fc.assert(
    fc.property(fc.option(fc.integer({ min: 200, max: 599 }), { nil: undefined }), fc.constantFrom<string>('ok', 'REMOTE_ERROR', ...reasons), (status, ended) => {
      const verdict = breakerVerdict(status, ended);
      const failure = BREAKER_FAILURES.has(ended) || (status !== undefined && status >= 500);
      if (failure) return verdict === 'failure';
      return verdict === (status === undefined ? 'none' : 'success');
    }),
  );
});

t.test('every breaker failure is a catalogue reason', async (t) => {
  for (const reason of BREAKER_FAILURES) t.ok(reason in gatewayErrors, reason);
});
