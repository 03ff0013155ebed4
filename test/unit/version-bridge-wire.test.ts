/**
 * The version bridge on the call path (src/proxy/version-bridge.ts,
 * src/a2a/remote-versions.ts): when it translates, what it refuses, and the
 * property that arbitrary valid (and junk) params, results and events never
 * make it throw and never make it send or answer more than the bounds allow.
 */
import fc from 'fast-check';
import t from 'tap';
import { OUTPUT_GROWTH_CONSTANT, OUTPUT_GROWTH_FACTOR } from '../../src/a2a/bridge/index.js';
import { OPERATION_LIST, type ProtocolGeneration } from '../../src/a2a/operations.js';
import { cardForCaller } from '../../src/a2a/card-for-caller.js';
import { cardGenerations, generationOfVersion, LearnedVersions, remoteGenerations } from '../../src/a2a/remote-versions.js';
import { normalizePolicyOf } from '../../src/envelope/normalize.js';
import { bridgeReply, planVersionBridge, translateResult, withUpstreamVersion, type VersionBridge } from '../../src/proxy/version-bridge.js';
import { normalizeEvent } from '../../src/stream/event-normalize.js';
import { event03, event10, junk, sendParams03, task10, taskPushConfig03, taskPushConfig10 } from '../support/bridge-arbitraries.js';
import { sseEvent } from '../support/sse-events.js';

const callOf = (method: string, params: unknown, id: string | number = 1) => {
  const raw = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }));
  return { id, method, raw, params };
};
const MiB = 1024 * 1024;
const noDrops = () => undefined;

t.test('generations from versions and cards', async (t) => {
  t.equal(generationOfVersion('0.3.0'), '0.3');
  t.equal(generationOfVersion(' 1.0 '), '1.0');
  t.equal(generationOfVersion('1.0.1'), '1.0');
  t.equal(generationOfVersion('1.1'), undefined);
  t.equal(generationOfVersion(3), undefined);
  t.same(cardGenerations({ generation: '0.3', card: { protocolVersion: '0.3.0' } }), ['0.3']);
  t.same(cardGenerations({ generation: '1.0', card: { supportedInterfaces: [{ protocolBinding: 'GRPC', protocolVersion: '0.3' }, { protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] } }), ['1.0'], 'JSON-RPC interfaces count');
  t.same(cardGenerations({ generation: '1.0', card: { supportedInterfaces: [{ protocolBinding: 'JSONRPC', protocolVersion: '1.0' }, { protocolBinding: 'JSONRPC', protocolVersion: '0.3' }] } }), ['0.3', '1.0']);
  t.equal(cardGenerations({ generation: '1.0', card: { supportedInterfaces: [{ protocolBinding: 'JSONRPC', protocolVersion: '2.0' }] } }), undefined, 'nothing the bridge knows: unknown');
  t.same(remoteGenerations(['0.3'], ['1.0']), ['0.3'], 'config wins');
  t.same(remoteGenerations(undefined, ['1.0']), ['1.0']);
  const learned = new LearnedVersions();
  learned.learn('a', { generation: '0.3', card: { protocolVersion: '0.3.0' } });
  t.same(learned.get('a'), ['0.3']);
  learned.forget('a');
  t.equal(learned.get('a'), undefined);
});

t.test('plans: direct for the same generation or an unknown remote; bridge; refusals', async (t) => {
  t.same(planVersionBridge(callOf('message/send', {}), undefined, undefined, MiB), { kind: 'direct' }, 'unknown remote: today’s pass-through');
  t.same(planVersionBridge(callOf('message/send', {}), undefined, ['0.3'], MiB), { kind: 'direct' });
  t.same(planVersionBridge(callOf('SendMessage', {}), '1.0', ['0.3', '1.0'], MiB), { kind: 'direct' });
  const plan = planVersionBridge(callOf('tasks/get', { id: 't1', historyLength: 2 }, 'abc'), undefined, ['1.0'], MiB);
  t.equal(plan.kind, 'bridge');
  const bridge = (plan as { bridge: VersionBridge }).bridge;
  t.same(JSON.parse(bridge.call.raw.toString()), { jsonrpc: '2.0', id: 'abc', method: 'GetTask', params: { id: 't1', historyLength: 2 } });
  t.same(withUpstreamVersion({ 'a2a-version': '0.3', accept: 'x' }, bridge), { 'a2a-version': '1.0', accept: 'x' }, 'A2A-Version upstream is the remote’s');
  t.same(withUpstreamVersion({ accept: 'x' }, undefined), { accept: 'x' });
  t.match(planVersionBridge(callOf('ListTasks', {}), '1.0', ['0.3'], MiB), { kind: 'refuse', reason: 'NO_COUNTERPART' });
  t.match(planVersionBridge(callOf('SendMessage', {}), '2.0', ['1.0'], MiB), { kind: 'refuse', reason: 'VERSION_NOT_SUPPORTED', detail: /2\.0; supported: 0\.3, 1\.0/ });
  t.match(planVersionBridge(callOf('SendMessage', {}), 'latest', ['1.0'], MiB), { kind: 'refuse', reason: 'VERSION_NOT_SUPPORTED' });
  t.match(planVersionBridge(callOf('SendMessage', {}), '1.0', ['1.0'], MiB), { kind: 'direct' }, 'same generation: the header is the remote’s business');
});

t.test('the translated request meets maxRequestBytes: just under passes, just over is REQUEST_TOO_LARGE', async (t) => {
  const call = callOf('tasks/get', { id: 'x'.repeat(100) });
  const sent = planVersionBridge(call, undefined, ['1.0'], MiB);
  const size = (sent as { bridge: VersionBridge }).bridge.call.raw.length;
  t.equal(planVersionBridge(call, undefined, ['1.0'], size).kind, 'bridge');
  t.match(planVersionBridge(call, undefined, ['1.0'], size - 1), { kind: 'refuse', reason: 'REQUEST_TOO_LARGE' });
});

t.test('the translated reply meets maxResponseBytes: just under passes, just over is RESPONSE_TOO_LARGE', async (t) => {
  const plan = planVersionBridge(callOf('tasks/get', { id: 't' }), undefined, ['1.0'], MiB) as { bridge: VersionBridge };
  const result = { id: 't', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } };
  const ok = bridgeReply(plan.bridge, { json: '', outcome: 'ok', result }, { remote: 'r', caller: '0.3', maxBytes: MiB, onDropped: noDrops });
  t.equal(ok.outcome, 'ok');
  t.match(JSON.parse(ok.json), { id: 1, result: { kind: 'task', status: { state: 'completed' } } });
  const exact = Buffer.byteLength(ok.json);
  t.equal(bridgeReply(plan.bridge, { json: '', outcome: 'ok', result }, { remote: 'r', caller: '0.3', maxBytes: exact, onDropped: noDrops }).outcome, 'ok');
  t.equal(bridgeReply(plan.bridge, { json: '', outcome: 'ok', result }, { remote: 'r', caller: '0.3', maxBytes: exact - 1, onDropped: noDrops }).outcome, 'RESPONSE_TOO_LARGE');
  const err = { json: '{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"x"}}', outcome: 'REMOTE_ERROR' as const };
  t.equal(bridgeReply(plan.bridge, err, { remote: 'r', caller: '0.3', maxBytes: MiB, onDropped: noDrops }), err, 'errors are already the caller’s (the normalizer shapes them)');
  const junkResult = bridgeReply(plan.bridge, { json: '', outcome: 'ok', result: 'not a task' }, { remote: 'r', caller: '0.3', maxBytes: MiB, onDropped: noDrops });
  t.equal(junkResult.outcome, 'INVALID_RESULT');
});

const generation = fc.constantFrom<ProtocolGeneration>('0.3', '1.0');
const other = (g: ProtocolGeneration): ProtocolGeneration => (g === '0.3' ? '1.0' : '0.3');
const envelopeSlack = 64; // {"jsonrpc":"2.0","id":...,"method":"...","params":} around the params

t.test('property: arbitrary params never throw, and what is sent stays within the bridge bound and maxRequestBytes', async (t) => {
  const params = fc.oneof(sendParams03, taskPushConfig03, taskPushConfig10, junk, fc.record({ id: fc.string(), historyLength: fc.integer() }), fc.record({ taskId: fc.string(), id: fc.string() }));
  fc.assert(
    fc.property(fc.constantFrom(...OPERATION_LIST), generation, params, fc.integer({ min: 16, max: 4096 }), (operation, from, value, maxBytes) => {
      const method = operation.jsonrpc[from];
      if (method === undefined) return;
      const plan = planVersionBridge(callOf(method, value), undefined, [other(from)], maxBytes);
      if (plan.kind === 'direct') throw new Error('a caller of the other generation must be translated or refused');
      if (plan.kind === 'refuse') return;
      const sent = plan.bridge.call.raw.length;
      if (sent > maxBytes) throw new Error(`sent ${sent} > ${maxBytes}`);
      const inputBytes = Buffer.byteLength(JSON.stringify(value ?? {}));
      if (sent > OUTPUT_GROWTH_FACTOR * inputBytes + OUTPUT_GROWTH_CONSTANT + envelopeSlack) throw new Error(`${inputBytes} → ${sent}`);
    }),
    { numRuns: 2000 },
  );
  t.pass();
});

t.test('property: arbitrary results and events never throw, and what the caller gets stays within the bounds', async (t) => {
  const results = fc.oneof(event03, event10, task10, taskPushConfig03, taskPushConfig10, junk, fc.array(taskPushConfig03, { maxLength: 4 }));
  fc.assert(
    fc.property(fc.constantFrom(...OPERATION_LIST), generation, results, fc.integer({ min: 64, max: 8192 }), (operation, caller, result, maxBytes) => {
      const method = operation.jsonrpc[caller];
      const remote = other(caller);
      if (method === undefined || operation.jsonrpc[remote] === undefined) return;
      const plan = planVersionBridge(callOf(method, {}), undefined, [remote], 1 << 20);
      if (plan.kind !== 'bridge') return;
      let drops = 0;
      const out = bridgeReply(plan.bridge, { json: '', outcome: 'ok', result }, { remote: 'r', caller, maxBytes, onDropped: (_d, labels) => void (drops += labels.length) });
      const body = JSON.parse(out.json) as { id: unknown };
      if (body.id !== 1) throw new Error('the caller’s id');
      if (out.outcome === 'ok' && Buffer.byteLength(out.json) > maxBytes) throw new Error('reply over maxBytes');
      if (drops > 32) throw new Error('drop labels unbounded');
      // Stream events through the event normalizer with the same translation.
      if (!operation.streaming) return;
      const ctx = { callerId: 1, policy: normalizePolicyOf({ name: 'r', keepRemoteErrorData: false, limits: { maxErrorMessageBytes: 256, maxJsonDepth: 64 } }, caller), httpStatus: 200, maxEventBytes: maxBytes, translateResult: (r: unknown) => translateResult(plan.bridge, r, { onDropped: noDrops }, 'event') };
      const event = normalizeEvent(sseEvent(JSON.stringify({ jsonrpc: '2.0', id: 9, result })), ctx, 1);
      const parsed = JSON.parse(event.json) as { id: unknown };
      if (parsed.id !== 1) throw new Error('event id');
      if (event.outcome === 'ok' && Buffer.byteLength(event.json) > maxBytes) throw new Error('event over maxEventBytes');
    }),
    { numRuns: 2000 },
  );
  t.pass();
});

t.test('cardForCaller: the named version wins; no version follows unversionedCard; dual cards stay as they are', async (t) => {
  const card10 = { name: 'a', description: 'd', version: '1', supportedInterfaces: [{ url: 'http://r/', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }], capabilities: {}, defaultInputModes: [], defaultOutputModes: [], skills: [] };
  const card03 = { name: 'a', description: 'd', version: '1', url: 'http://r/', protocolVersion: '0.3.0', capabilities: {}, defaultInputModes: [], defaultOutputModes: [], skills: [] };
  t.match(cardForCaller(card10, '1.0', undefined), { ok: true, generation: '1.0', card: card10 }, 'default: the remote’s own');
  t.match(cardForCaller(card10, '1.0', undefined, '0.3'), { ok: true, generation: '0.3', card: { url: 'http://r/', preferredTransport: 'JSONRPC' } });
  t.match(cardForCaller(card10, '1.0', '0.3', 'remote'), { ok: true, generation: '0.3' }, 'a named version wins');
  t.match(cardForCaller(card03, '0.3', '1.0'), { ok: true, generation: '1.0', card: { supportedInterfaces: [{ url: 'http://r/', protocolBinding: 'JSONRPC' }] } });
  t.match(cardForCaller(card03, '0.3', '1.2'), { ok: true, generation: '1.0' }, 'any 1.x is 1.0');
  const dual = { ...card03, supportedInterfaces: card10.supportedInterfaces };
  t.equal((cardForCaller(dual, '0.3', '1.0') as { card: unknown }).card, dual, 'a card of both generations is served as it is');
});
