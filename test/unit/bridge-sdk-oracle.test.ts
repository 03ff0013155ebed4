/**
 * The @a2a-js/sdk 1.3 ships its own 0.3 ↔ 1.0 converters (its compat/v0_3
 * layer). Where their job is the bridge's, they are an independent oracle:
 * the same arbitrary inputs go through the SDK (its public entry points:
 * the legacy card parser and push-notification translator, the legacy
 * JSON-RPC server handler over a request handler that hands back fixed
 * values, the legacy JSON-RPC client transport over a fetch function that
 * answers in-process) and through the bridge, and the results must agree.
 *
 * Both sides are compared as ProtoJSON after the SDK's own canonical
 * serializer (defaults omitted). Where the bridge decides differently on
 * purpose, the comparison leaves that member out and a separate test pins the
 * difference: an absent 0.3 `blocking` (SDK: non-blocking; bridge: blocking,
 * as 0.3 servers and 1.0 read it), a config without an id (bridge: the task's
 * id), `final` for interrupted states (bridge: true, the 1.0 stream ends
 * there), card interface versions and duplicates.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import t from 'tap';
import { AgentCard, SendMessageRequest, StreamResponse, Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { legacyPushNotificationToV1StreamResponse } from '@a2a-js/sdk/compat/v0_3';
import { LegacyJsonRpcTransport, parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { OPERATIONS } from '../../src/a2a/operations.js';
import { bridgeCard, bridgeEvent, bridgeParams, bridgeResult, type Bridged } from '../../src/a2a/bridge/index.js';
import * as arb from '../support/bridge-arbitraries.js';

type Json = Record<string, unknown>;

/**
 * The SDK's ProtoJSON reader treats `"data": null` as "no data" (a Value holding null is a value), so a
 * data part holding null is not something it can be an oracle for. Nor a member named `__proto__` (which
 * fast-check's dictionaries make now and then): plain JavaScript objects on either side may read it as the
 * prototype, and the gateway refuses such JSON from callers and remotes before the bridge sees it.
 */
const sdkCanRead = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T> => a.filter((v) => !/"(data|value)":null|"__proto__":/.test(JSON.stringify(v)));
const [card03, event03, event10, sendParams03, task03, task10, taskPushConfig10] = [
  sdkCanRead(arb.card03), sdkCanRead(arb.event03), sdkCanRead(arb.event10), sdkCanRead(arb.sendParams03), sdkCanRead(arb.task03), sdkCanRead(arb.task10), sdkCanRead(arb.taskPushConfig10),
] as const;
const RUNS = { numRuns: 100 };
const json = (v: unknown): unknown => JSON.parse(JSON.stringify(v) ?? 'null');
const value = <T>(r: Bridged<T>): T => {
  if (!r.ok) throw new Error(r.problem);
  return r.value;
};
/** Deletes members anywhere in a JSON tree where `drop(key, value, parent)` says so. */
function without(tree: unknown, drop: (key: string, v: unknown, parent: Json) => boolean): unknown {
  if (Array.isArray(tree)) return tree.map((x) => without(x, drop));
  if (tree === null || typeof tree !== 'object') return tree;
  const out: Json = {};
  for (const [k, v] of Object.entries(tree)) if (!drop(k, v, tree as Json)) out[k] = without(v, drop);
  return out;
}

type Handler = ConstructorParameters<typeof LegacyJsonRpcTransportHandler>[0];
/** A request handler that records what it was asked and answers with `answer` (a core object or event list). */
function stubHandler(answer: unknown): { handler: Handler; asked: unknown[] } {
  const asked: unknown[] = [];
  const unary = async (req: unknown) => (asked.push(req), answer);
  const stream = async function* (req: unknown) {
    asked.push(req);
    yield* answer as unknown[];
  };
  const handler = {
    getAgentCard: async () => ({ capabilities: { streaming: true } }),
    sendMessage: unary, getTask: unary, cancelTask: unary, getTaskPushNotificationConfig: unary, createTaskPushNotificationConfig: unary,
    listTaskPushNotificationConfigs: unary, deleteTaskPushNotificationConfig: unary, getAuthenticatedExtendedAgentCard: unary,
    sendMessageStream: stream, resubscribe: stream,
  };
  return { handler: handler as unknown as Handler, asked };
}

async function serve(method: string, params: unknown, answer: unknown): Promise<{ result: unknown; asked: unknown[] }> {
  const { handler, asked } = stubHandler(answer);
  const reply = await new LegacyJsonRpcTransportHandler(handler).handle({ jsonrpc: '2.0', id: 1, method, params: params as Json }, {} as never);
  if (Symbol.asyncIterator in (reply as object)) {
    const results: unknown[] = [];
    for await (const envelope of reply as AsyncGenerator<{ result?: unknown; error?: unknown }>) results.push(envelope.result ?? envelope.error);
    return { result: results, asked };
  }
  const envelope = reply as { result?: unknown; error?: unknown };
  if (envelope.error) throw new Error(`SDK handler: ${JSON.stringify(envelope.error)}`);
  return { result: envelope.result, asked };
}

/** The legacy client transport over an in-process fetch that records the 0.3 request and answers `result`. */
function client(result: unknown): { transport: LegacyJsonRpcTransport; sent: Json[] } {
  const sent: Json[] = [];
  const fetchImpl = async (_url: unknown, init?: RequestInit) => {
    const request = JSON.parse(String(init?.body)) as Json;
    sent.push(request);
    return new Response(JSON.stringify({ jsonrpc: '2.0', id: request.id, result }), { headers: { 'content-type': 'application/json' } });
  };
  return { transport: new LegacyJsonRpcTransport({ endpoint: 'http://127.0.0.1:9/', fetchImpl: fetchImpl as typeof fetch }), sent };
}

t.test('0.3 stream events → 1.0: the SDK\'s legacy translator agrees', async (t) => {
  fc.assert(
    fc.property(event03, (ev) => {
      const sdk = StreamResponse.toJSON(legacyPushNotificationToV1StreamResponse(ev));
      const mine = StreamResponse.toJSON(StreamResponse.fromJSON(value(bridgeEvent('0.3', '1.0', ev))));
      assert.deepStrictEqual(json(mine), json(sdk));
    }),
    RUNS,
  );
  t.pass();
});

t.test('0.3 cards → 1.0: the SDK\'s legacy card parser agrees (interfaces: same set)', async (t) => {
  const interfaces = (card: unknown) =>
    [...new Set(((card as { supportedInterfaces?: { url: string; protocolBinding: string }[] }).supportedInterfaces ?? []).map((i) => `${i.protocolBinding} ${i.url}`))];
  fc.assert(
    fc.property(card03, (card) => {
      const sdk = AgentCard.toJSON(parseLegacyAgentCard(card));
      const mine = AgentCard.toJSON(AgentCard.fromJSON(value(bridgeCard('0.3', '1.0', card))));
      assert.deepStrictEqual(interfaces(mine), interfaces(sdk));
      const rest = (c: unknown) => without(json(c), (k) => k === 'supportedInterfaces');
      assert.deepStrictEqual(rest(mine), rest(sdk));
    }),
    RUNS,
  );
  t.pass();
});

t.test('1.0 results and events → 0.3: the SDK\'s legacy server handler agrees', async (t) => {
  const canonicalTask = task10.map((x) => Task.toJSON(Task.fromJSON(x)));
  await fc.assert(
    fc.asyncProperty(canonicalTask, async (task) => {
      const { result } = await serve('tasks/get', { id: 't' }, Task.fromJSON(task));
      assert.deepStrictEqual(json(value(bridgeResult(OPERATIONS.GetTask, '1.0', '0.3', task))), json(result));
    }),
    RUNS,
  );
  // The SDK writes `append`/`lastChunk: false` where 1.0 left them out, and `final` only for terminal states.
  const INTERRUPTED = new Set(['input-required', 'auth-required']);
  const comparable = (ev: unknown) =>
    without(json(ev), (k, v, parent) => ((k === 'append' || k === 'lastChunk') && v === false) || (k === 'final' && INTERRUPTED.has((parent.status as { state?: string })?.state ?? '')));
  await fc.assert(
    fc.asyncProperty(event10.map((e) => StreamResponse.toJSON(StreamResponse.fromJSON(e))), async (ev) => {
      const { result } = await serve('message/stream', { message: { kind: 'message', messageId: 'm', role: 'user', parts: [] } }, [StreamResponse.fromJSON(ev)]);
      assert.deepStrictEqual(comparable(value(bridgeEvent('1.0', '0.3', ev))), comparable((result as unknown[])[0]));
    }),
    RUNS,
  );
  await fc.assert(
    fc.asyncProperty(taskPushConfig10.map((c) => TaskPushNotificationConfig.toJSON(TaskPushNotificationConfig.fromJSON(c))), async (config) => {
      const { result } = await serve('tasks/pushNotificationConfig/get', { id: 't', pushNotificationConfigId: 'p' }, TaskPushNotificationConfig.fromJSON(config));
      assert.deepStrictEqual(json(value(bridgeResult(OPERATIONS.GetTaskPushNotificationConfig, '1.0', '0.3', config))), json(result));
    }),
    RUNS,
  );
  t.pass();
});

t.test('0.3 params → 1.0: the SDK\'s legacy server handler agrees (where the bridge does not decide otherwise)', async (t) => {
  const explicit = sendParams03.filter((p) => (p as { configuration?: { blocking?: boolean } }).configuration?.blocking !== undefined);
  await fc.assert(
    fc.asyncProperty(explicit, async (params) => {
      const { asked } = await serve('message/send', params, { messageId: 'r', role: 2, parts: [] });
      const mine = SendMessageRequest.toJSON(SendMessageRequest.fromJSON(value(bridgeParams(OPERATIONS.SendMessage, '0.3', '1.0', params))));
      assert.deepStrictEqual(json(mine), json(SendMessageRequest.toJSON(asked[0] as never)));
    }),
    RUNS,
  );
  const task = Task.fromJSON({ id: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } });
  for (const [method, op, params] of [
    ['tasks/get', 'GetTask', { id: 't1', historyLength: 3 }],
    ['tasks/cancel', 'CancelTask', { id: 't1', metadata: { why: 'user' } }],
    ['tasks/pushNotificationConfig/get', 'GetTaskPushNotificationConfig', { id: 't1', pushNotificationConfigId: 'p1' }],
    ['tasks/pushNotificationConfig/delete', 'DeleteTaskPushNotificationConfig', { id: 't1', pushNotificationConfigId: 'p1' }],
    ['tasks/pushNotificationConfig/list', 'ListTaskPushNotificationConfigs', { id: 't1' }],
    ['tasks/pushNotificationConfig/set', 'CreateTaskPushNotificationConfig', { taskId: 't1', pushNotificationConfig: { id: 'p1', url: 'https://h.example', authentication: { schemes: ['Bearer'] } } }],
  ] as const) {
    const answer = op === 'ListTaskPushNotificationConfigs' ? { configs: [] } : op.includes('Push') ? TaskPushNotificationConfig.fromJSON({ taskId: 't1', url: 'u' }) : task;
    const { asked } = await serve(method, params, answer);
    const mine = value(bridgeParams(OPERATIONS[op], '0.3', '1.0', params));
    t.strictSame(json(mine), json(without(asked[0], (k, v) => v === '' || (k === 'pageSize' && v === 0))), method);
  }
});

t.test('1.0 params → 0.3 and 0.3 results → 1.0: the SDK\'s legacy client transport agrees', async (t) => {
  // The SDK always writes `blocking` and `acceptedOutputModes`; `blocking: true` is 0.3's default, `[]` says nothing.
  const comparable = (p: unknown) => without(json(p), (k, v) => (k === 'blocking' && v === true) || (k === 'acceptedOutputModes' && Array.isArray(v) && v.length === 0));
  const request10 = sendParams03.map((p) => SendMessageRequest.toJSON(SendMessageRequest.fromJSON(value(bridgeParams(OPERATIONS.SendMessage, '0.3', '1.0', p)))));
  await fc.assert(
    fc.asyncProperty(request10, task03, async (params, task) => {
      const { transport, sent } = client(task);
      const got = await transport.sendMessage(SendMessageRequest.fromJSON(params));
      assert.deepStrictEqual(comparable(value(bridgeParams(OPERATIONS.SendMessage, '1.0', '0.3', params))), comparable(sent[0]?.params));
      const mine = value(bridgeResult(OPERATIONS.SendMessage, '0.3', '1.0', task)) as { task: unknown };
      assert.deepStrictEqual(json(Task.toJSON(Task.fromJSON(mine.task))), json(Task.toJSON(got as never)));
    }),
    RUNS,
  );
  const { transport, sent } = client({ kind: 'task', id: 't1', contextId: 'c', status: { state: 'completed' } });
  await transport.getTask({ tenant: '', id: 't1', historyLength: 2 });
  t.strictSame(sent[0]?.params, value(bridgeParams(OPERATIONS.GetTask, '1.0', '0.3', { id: 't1', historyLength: 2 })));
  const push = client({ taskId: 't1', pushNotificationConfig: { url: 'u', id: 'p1' } });
  await push.transport.getTaskPushNotificationConfig({ tenant: '', taskId: 't1', id: 'p1' });
  t.strictSame(push.sent[0]?.params, value(bridgeParams(OPERATIONS.GetTaskPushNotificationConfig, '1.0', '0.3', { taskId: 't1', id: 'p1' })));
});

t.test('where the bridge decides otherwise than the SDK, on purpose', async (t) => {
  const message = { kind: 'message', messageId: 'm', role: 'user', parts: [] };
  const { asked } = await serve('message/send', { message, configuration: {} }, { messageId: 'r', role: 2, parts: [] });
  t.equal((asked[0] as { configuration: { returnImmediately: boolean } }).configuration.returnImmediately, true, 'SDK: a 0.3 send without `blocking` does not block');
  const mine = value(bridgeParams(OPERATIONS.SendMessage, '0.3', '1.0', { message, configuration: {} })) as { configuration: Json };
  t.notOk('returnImmediately' in mine.configuration, 'bridge: it blocks, as 0.3 servers did and as 1.0 does by default');

  const set = await serve('tasks/pushNotificationConfig/set', { taskId: 't1', pushNotificationConfig: { url: 'u' } }, TaskPushNotificationConfig.fromJSON({ url: 'u' }));
  t.equal((set.asked[0] as { id: string }).id, '', 'SDK: a config set without an id reaches 1.0 without one');
  t.match(value(bridgeParams(OPERATIONS.CreateTaskPushNotificationConfig, '0.3', '1.0', { taskId: 't1', pushNotificationConfig: { url: 'u' } })), { id: 't1' }, 'bridge: it is given the task id, where 0.3 servers keep it');

  const ended = await serve('message/stream', { message }, [StreamResponse.fromJSON({ statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_INPUT_REQUIRED' } } })]);
  t.equal(((ended.result as Json[])[0] as { final: boolean }).final, false, 'SDK: final only for terminal states');
  t.match(value(bridgeEvent('1.0', '0.3', { statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_INPUT_REQUIRED' } } })), { final: true }, 'bridge: interrupted states end a 1.0 stream too');
});
