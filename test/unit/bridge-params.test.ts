/**
 * Request params of every operation, both directions, one test per shape:
 * the exact output, the exact drop labels, and the output valid for the
 * target generation's schema.
 */
import t, { type Test } from 'tap';
import { OPERATIONS, type OperationName, type ProtocolGeneration } from '../../src/a2a/operations.js';
import { bridgeParams } from '../../src/a2a/bridge/index.js';
import { schemaProblem } from '../support/bridge-schemas.js';

function check(t: Test, op: OperationName, from: ProtocolGeneration, input: unknown, expected: unknown, dropped: string[] = []): void {
  const to: ProtocolGeneration = from === '0.3' ? '1.0' : '0.3';
  const r = bridgeParams(OPERATIONS[op], from, to, input);
  if (!r.ok) return void t.fail(r.problem);
  t.same(r.value, expected, `${op} ${from} → ${to}`);
  t.strictSame([...r.dropped].sort(), [...dropped].sort(), `${op} ${from} → ${to}: dropped`);
  t.equal(schemaProblem(to, 'params', op, r.value), undefined, `${op} ${from} → ${to}: valid`);
}

const msg03 = {
  kind: 'message',
  messageId: 'm1',
  contextId: 'c1',
  taskId: 't1',
  role: 'user',
  parts: [
    { kind: 'text', text: 'hello', metadata: { k: 1 } },
    { kind: 'file', file: { bytes: 'aGk=', name: 'a.txt', mimeType: 'text/plain' } },
    { kind: 'file', file: { uri: 'https://files.example/x.png', mimeType: 'image/png' } },
    { kind: 'data', data: { a: [1, 2] } },
  ],
  metadata: { trace: 'x' },
  extensions: ['https://ext.example/v1'],
  referenceTaskIds: ['t0'],
};
const msg10 = {
  messageId: 'm1',
  contextId: 'c1',
  taskId: 't1',
  role: 'ROLE_USER',
  parts: [
    { text: 'hello', metadata: { k: 1 } },
    { raw: 'aGk=', filename: 'a.txt', mediaType: 'text/plain' },
    { url: 'https://files.example/x.png', mediaType: 'image/png' },
    { data: { a: [1, 2] } },
  ],
  metadata: { trace: 'x' },
  extensions: ['https://ext.example/v1'],
  referenceTaskIds: ['t0'],
};

t.test('SendMessage: message, parts, configuration and metadata, both ways', async (t) => {
  const config03 = {
    acceptedOutputModes: ['text/plain'],
    blocking: false,
    historyLength: 5,
    pushNotificationConfig: { url: 'https://hook.example/a2a', id: 'p1', token: 'tok', authentication: { schemes: ['Bearer'], credentials: 'cred' } },
  };
  const config10 = {
    acceptedOutputModes: ['text/plain'],
    returnImmediately: true,
    historyLength: 5,
    taskPushNotificationConfig: { id: 'p1', url: 'https://hook.example/a2a', token: 'tok', authentication: { scheme: 'Bearer', credentials: 'cred' } },
  };
  check(t, 'SendMessage', '0.3', { message: msg03, configuration: config03, metadata: { m: true } }, { message: msg10, configuration: config10, metadata: { m: true } });
  check(t, 'SendStreamingMessage', '1.0', { tenant: '', message: msg10, configuration: config10, metadata: { m: true } }, { message: msg03, configuration: config03, metadata: { m: true } });
});

t.test('blocking and returnImmediately: opposites with the same default (absent stays absent)', async (t) => {
  const m03 = { kind: 'message', messageId: 'm', role: 'user', parts: [] };
  const m10 = { messageId: 'm', role: 'ROLE_USER', parts: [] };
  check(t, 'SendMessage', '0.3', { message: m03, configuration: {} }, { message: m10, configuration: {} });
  check(t, 'SendMessage', '0.3', { message: m03, configuration: { blocking: true } }, { message: m10, configuration: { returnImmediately: false } });
  check(t, 'SendMessage', '1.0', { message: m10, configuration: { returnImmediately: false } }, { message: m03, configuration: { blocking: true } });
  check(t, 'SendMessage', '1.0', { message: m10, configuration: {} }, { message: m03, configuration: {} });
  check(t, 'SendMessage', '0.3', { message: m03, configuration: { blocking: 'yes' } }, { message: m10, configuration: {} }, ['configuration.blocking']);
});

t.test('what 0.3 cannot carry from a 1.0 SendMessage is dropped and named', async (t) => {
  const input = {
    tenant: 'acme',
    message: { messageId: 'm', role: 'ROLE_UNSPECIFIED', parts: [{ text: 'x', mediaType: 'text/markdown', filename: 'a.md' }, { raw: '!!' }, {}] },
    configuration: { taskPushNotificationConfig: { tenant: 'acme', taskId: 't9', url: 'https://h.example' }, historyLength: '4' },
  };
  const expected = {
    message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'x' }] },
    configuration: { historyLength: 4, pushNotificationConfig: { url: 'https://h.example' } },
  };
  check(t, 'SendMessage', '1.0', input, expected, [
    'tenant',
    'message.role',
    'message.parts[].mediaType',
    'message.parts[].filename',
    'message.parts[].raw',
    'message.parts[]',
    'configuration.taskPushNotificationConfig.tenant',
    'configuration.taskPushNotificationConfig.taskId',
  ]);
});

t.test('1.0 input may use proto field names and enum numbers (ProtoJSON parsers accept both)', async (t) => {
  const input = { message: { message_id: 'm', context_id: 'c', role: 2, parts: [{ text: 'x', media_type: 'text/plain' }] }, configuration: { return_immediately: true, history_length: 3 } };
  check(t, 'SendMessage', '1.0', input, {
    message: { kind: 'message', messageId: 'm', contextId: 'c', role: 'agent', parts: [{ kind: 'text', text: 'x' }] },
    configuration: { blocking: false, historyLength: 3 },
  });
});

t.test('GetTask, CancelTask, SubscribeToTask', async (t) => {
  check(t, 'GetTask', '0.3', { id: 't1', historyLength: 10, metadata: { a: 1 } }, { id: 't1', historyLength: 10 }, ['metadata']);
  check(t, 'GetTask', '1.0', { tenant: 'x', id: 't1', historyLength: '10' }, { id: 't1', historyLength: 10 }, ['tenant']);
  check(t, 'GetTask', '0.3', { id: 't1', historyLength: 2 ** 31 }, { id: 't1' }, ['historyLength']);
  check(t, 'CancelTask', '0.3', { id: 't1', metadata: { reason: 'user' } }, { id: 't1', metadata: { reason: 'user' } });
  check(t, 'CancelTask', '1.0', { id: 't1', metadata: { reason: 'user' } }, { id: 't1', metadata: { reason: 'user' } });
  check(t, 'SubscribeToTask', '0.3', { id: 't1', metadata: {} }, { id: 't1' }, ['metadata']);
  check(t, 'SubscribeToTask', '1.0', { id: 't1' }, { id: 't1' });
  check(t, 'CancelTask', '0.3', { id: 't1', historyLength: 3 }, { id: 't1' }, ['*']);
});

t.test('push configs: set (create), get, list, delete', async (t) => {
  const auth03 = { schemes: ['Bearer', 'Basic'], credentials: 'c' };
  check(t, 'CreateTaskPushNotificationConfig', '0.3', { taskId: 't1', pushNotificationConfig: { url: 'https://h.example', token: 'k', authentication: auth03 } },
    { id: 't1', taskId: 't1', url: 'https://h.example', token: 'k', authentication: { scheme: 'Bearer', credentials: 'c' } },
    ['pushNotificationConfig.authentication.schemes[]']);
  check(t, 'CreateTaskPushNotificationConfig', '0.3', { taskId: 't1', pushNotificationConfig: { id: 'p1', url: 'https://h.example' } }, { id: 'p1', taskId: 't1', url: 'https://h.example' });
  check(t, 'CreateTaskPushNotificationConfig', '1.0', { tenant: '', taskId: 't1', id: 'p1', url: 'https://h.example', authentication: { scheme: 'Bearer' } },
    { taskId: 't1', pushNotificationConfig: { url: 'https://h.example', id: 'p1', authentication: { schemes: ['Bearer'] } } });

  check(t, 'GetTaskPushNotificationConfig', '0.3', { id: 't1' }, { taskId: 't1', id: 't1' });
  check(t, 'GetTaskPushNotificationConfig', '0.3', { id: 't1', pushNotificationConfigId: 'p1', metadata: {} }, { taskId: 't1', id: 'p1' }, ['metadata']);
  check(t, 'GetTaskPushNotificationConfig', '1.0', { taskId: 't1', id: 'p1' }, { id: 't1', pushNotificationConfigId: 'p1' });
  check(t, 'GetTaskPushNotificationConfig', '1.0', { taskId: 't1', id: '' }, { id: 't1' });

  check(t, 'ListTaskPushNotificationConfigs', '0.3', { id: 't1' }, { taskId: 't1' });
  check(t, 'ListTaskPushNotificationConfigs', '1.0', { taskId: 't1', pageSize: 10, pageToken: 'next' }, { id: 't1' }, ['pageSize', 'pageToken']);
  check(t, 'ListTaskPushNotificationConfigs', '1.0', { taskId: 't1', pageSize: 0, pageToken: '' }, { id: 't1' });

  check(t, 'DeleteTaskPushNotificationConfig', '0.3', { id: 't1', pushNotificationConfigId: 'p1' }, { taskId: 't1', id: 'p1' });
  check(t, 'DeleteTaskPushNotificationConfig', '1.0', { taskId: 't1', id: 'p1' }, { id: 't1', pushNotificationConfigId: 'p1' });
});

t.test('GetExtendedAgentCard: 0.3 takes no params, 1.0 a tenant', async (t) => {
  check(t, 'GetExtendedAgentCard', '1.0', { tenant: 'acme' }, {}, ['tenant']);
  check(t, 'GetExtendedAgentCard', '1.0', {}, {});
  check(t, 'GetExtendedAgentCard', '0.3', {}, {});
});

t.test('ListTasks has no 0.3 counterpart: -32004 either way', async (t) => {
  for (const [from, to] of [['1.0', '0.3'], ['0.3', '1.0']] as const) {
    t.match(bridgeParams(OPERATIONS.ListTasks, from, to, { pageSize: 5 }), { ok: false, code: -32004, problem: 'ListTasks does not exist in A2A 0.3', dropped: [] });
  }
});

t.test('the same generation passes through untouched', async (t) => {
  const params = { message: msg10, anything: 1 };
  const r = bridgeParams(OPERATIONS.SendMessage, '1.0', '1.0', params);
  t.ok(r.ok && r.value === params);
  t.same(r.dropped, []);
});
