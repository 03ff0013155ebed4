/**
 * The version bridge's stage on the call runner (src/core/call-bridge.ts):
 * when an A2ACall is translated, what is refused, what the translated call
 * carries, and the result and stream-item stages' bounds (exactly at the
 * bound passes, one byte over it is refused). Plus the property that
 * arbitrary 0.3 results and events never make a stage throw and never give
 * more than the bound.
 */
import fc from 'fast-check';
import t from 'tap';
import { bridgeResult } from '../../src/a2a/bridge/index.js';
import { OPERATIONS, type Operation } from '../../src/a2a/operations.js';
import { gatewayErrorOutcome } from '../../src/bindings/error-outcome.js';
import type { A2ACall } from '../../src/core/call.js';
import { bridgeResultOutcome, bridgeStreamItem, planCallBridge, type CallBridge } from '../../src/core/call-bridge.js';
import type { ResultOutcome } from '../../src/core/outcome.js';
import { event03, junk, message03, task03 } from '../support/bridge-arbitraries.js';

const call10 = (operation: Operation, params: Record<string, unknown>, a2aVersion: string | undefined = '1.0'): A2ACall => ({
  remote: 'r',
  operation,
  generation: '1.0',
  paramsJson: JSON.stringify(params),
  params,
  service: { ...(a2aVersion === undefined ? {} : { a2aVersion }), forwarded: { traceparent: 'x' } },
  caller: { binding: 'http+json', requestId: 'q' },
  rawJsonRpcBody: Buffer.from('{"caller":"bytes"}'),
});
const send10 = { message: { messageId: 'u1', role: 'ROLE_USER', parts: [{ text: 'hi' }] }, tenant: 't1' };
const result = (value: unknown): ResultOutcome => ({ kind: 'result', json: JSON.stringify(value), value });
const drops: string[][] = [];
const ctx = {
  gatewayError: (reason: Parameters<typeof gatewayErrorOutcome>[0], detail?: string) => gatewayErrorOutcome(reason, { remote: 'r' }, detail),
  invalidEvent: (cause: Parameters<typeof gatewayErrorOutcome>[0]) => gatewayErrorOutcome('INVALID_EVENT', { remote: 'r', metadata: { cause } }),
  onDropped: (_direction: string, labels: readonly string[]) => void drops.push([...labels]),
};
const bridge: CallBridge = { operation: OPERATIONS.SendMessage, caller: '1.0', remote: '0.3', dropped: [] };

t.test('plan: unknown or same generation goes as it is', async (t) => {
  t.same(planCallBridge(call10(OPERATIONS.SendMessage, send10), undefined), { kind: 'direct' });
  t.same(planCallBridge(call10(OPERATIONS.SendMessage, send10), []), { kind: 'direct' });
  t.same(planCallBridge(call10(OPERATIONS.SendMessage, send10), ['0.3', '1.0']), { kind: 'direct' });
});

t.test('plan: a 1.0 call to a 0.3 remote becomes a 0.3 call', async (t) => {
  const plan = planCallBridge(call10(OPERATIONS.SendMessage, send10), ['0.3']);
  if (plan.kind !== 'bridge') throw new Error(plan.kind);
  t.equal(plan.call.generation, '0.3');
  t.equal(plan.call.operation, OPERATIONS.SendMessage, 'the operation stays');
  t.equal(plan.call.service.a2aVersion, '0.3', 'A2A-Version upstream is the remote\'s');
  t.same(plan.call.service.forwarded, { traceparent: 'x' }, 'other service parameters kept');
  t.notOk('rawJsonRpcBody' in plan.call, 'the caller\'s bytes are not sent to a remote of another generation');
  t.same(JSON.parse(plan.call.paramsJson), plan.call.params);
  t.match(plan.call.params, { message: { kind: 'message', role: 'user', parts: [{ kind: 'text', text: 'hi' }] } });
  t.same(plan.bridge, { operation: OPERATIONS.SendMessage, caller: '1.0', remote: '0.3', dropped: ['tenant'] });
});

t.test('plan: refusals', async (t) => {
  t.match(planCallBridge(call10(OPERATIONS.ListTasks, {}), ['0.3']), { kind: 'refuse', reason: 'NO_COUNTERPART', detail: /ListTasks does not exist in A2A 0\.3/ });
  for (const version of ['2.0', '1.1', 'latest']) {
    t.match(planCallBridge(call10(OPERATIONS.SendMessage, send10, version), ['0.3']), { kind: 'refuse', reason: 'VERSION_NOT_SUPPORTED', detail: /supported: 0\.3, 1\.0$/ }, version);
  }
  t.equal(planCallBridge(call10(OPERATIONS.SendMessage, send10, undefined), ['0.3']).kind, 'bridge', 'no A2A-Version is 0.3, which the gateway serves');
  // Unknown enum values are not refused by the translator (the caller codec checked the request's schema): dropped, told.
  t.match(planCallBridge(call10(OPERATIONS.SendMessage, { message: { messageId: 'u1', role: 'ROLE_NOBODY', parts: [] } }), ['0.3']), { kind: 'bridge', bridge: { dropped: ['message.role'] } });
});

t.test('result stage: translated, at the bound passes, one byte over is RESPONSE_TOO_LARGE', async (t) => {
  const value = { kind: 'task', id: 't', contextId: 'c', status: { state: 'completed' }, extra: 1 };
  const expected = bridgeResult(OPERATIONS.SendMessage, '0.3', '1.0', value);
  if (!expected.ok) throw new Error(expected.problem);
  const size = Buffer.byteLength(JSON.stringify(expected.value));
  drops.length = 0;
  const ok = bridgeResultOutcome(bridge, result(value), size, ctx);
  t.same(ok, result(expected.value));
  t.same(drops, [['task.*']], 'the drop is told, by member path');
  t.match(bridgeResultOutcome(bridge, result(value), size - 1, ctx), { kind: 'error', reason: 'RESPONSE_TOO_LARGE', message: /once translated to A2A 1\.0/ });
  t.match(bridgeResultOutcome(bridge, result('no result'), 1 << 20, ctx), { kind: 'error', reason: 'INVALID_RESULT' });
});

t.test('item stage: events translated, at the bound passes, over ends the stream; a final error passes as it is', async (t) => {
  const event = { kind: 'status-update', taskId: 't', contextId: 'c', status: { state: 'working' }, final: false };
  const first = bridgeStreamItem(bridge, { outcome: result(event), final: false }, 1 << 20, ctx);
  if (first.final) throw new Error('ended');
  t.same(first.outcome.value, { statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } } });
  const size = Buffer.byteLength(first.outcome.json);
  t.equal(bridgeStreamItem(bridge, { outcome: result(event), final: false }, size, ctx).final, false);
  t.match(bridgeStreamItem(bridge, { outcome: result(event), final: false }, size - 1, ctx), { final: true, outcome: { reason: 'INVALID_EVENT', metadata: { cause: 'EVENT_TOO_LARGE' } } });
  t.match(bridgeStreamItem(bridge, { outcome: result({ somethingElse: 1 }), final: false }, 1 << 20, ctx), { final: true, outcome: { reason: 'INVALID_EVENT' } });
  const error = { outcome: gatewayErrorOutcome('UPSTREAM_TIMEOUT', { remote: 'r' }), final: true } as const;
  t.equal(bridgeStreamItem(bridge, error, 1, ctx), error);
});

t.test('property: arbitrary 0.3 results and events (and junk) never throw and never exceed the bound', async (t) => {
  const bound = fc.integer({ min: 1, max: 4096 });
  fc.assert(
    fc.property(fc.oneof(message03, task03, event03, junk), bound, (value, max) => {
      const unary = bridgeResultOutcome(bridge, result(value), max, ctx);
      if (unary.kind === 'result' && Buffer.byteLength(unary.json) > max) throw new Error('over the bound');
      const item = bridgeStreamItem(bridge, { outcome: result(value), final: false }, max, ctx);
      if (!item.final && Buffer.byteLength(item.outcome.json) > max) throw new Error('event over the bound');
      if (!item.final && Object.hasOwn(item.outcome.value as object, 'kind')) throw new Error('a 0.3 object passed');
    }),
    { numRuns: 300 },
  );
  t.pass();
});
