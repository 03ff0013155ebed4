/**
 * Results, stream events and errors, both directions, one test per shape:
 * the exact output, the exact drop labels, the output valid for the target.
 */
import t, { type Test } from 'tap';
import { OPERATIONS, type OperationName, type ProtocolGeneration } from '../../src/a2a/operations.js';
import { bridgeError, bridgeEvent, bridgeResult } from '../../src/a2a/bridge/index.js';
import { timestampTo10 } from '../../src/a2a/bridge/task.js';
import { schemaProblem } from '../support/bridge-schemas.js';

const other = (g: ProtocolGeneration): ProtocolGeneration => (g === '0.3' ? '1.0' : '0.3');

function check(t: Test, op: OperationName, from: ProtocolGeneration, input: unknown, expected: unknown, dropped: string[] = []): void {
  const to = other(from);
  const r = bridgeResult(OPERATIONS[op], from, to, input);
  if (!r.ok) return void t.fail(r.problem);
  t.same(r.value, expected, `${op} ${from} → ${to}`);
  t.strictSame([...r.dropped].sort(), [...dropped].sort(), `${op} ${from} → ${to}: dropped`);
  t.equal(schemaProblem(to, 'result', op, r.value), undefined, `${op} ${from} → ${to}: valid`);
}

const status03 = { state: 'input-required', message: { kind: 'message', messageId: 'a1', role: 'agent', parts: [{ kind: 'text', text: 'From where?' }] }, timestamp: '2025-04-02T16:59:35.331Z' };
const status10 = { state: 'TASK_STATE_INPUT_REQUIRED', message: { messageId: 'a1', role: 'ROLE_AGENT', parts: [{ text: 'From where?' }] }, timestamp: '2025-04-02T16:59:35.331Z' };
const artifact03 = { artifactId: 'r1', name: 'report', description: 'd', parts: [{ kind: 'data', data: { rows: 3 } }], metadata: { m: 1 }, extensions: ['https://e.example'] };
const artifact10 = { artifactId: 'r1', name: 'report', description: 'd', parts: [{ data: { rows: 3 } }], metadata: { m: 1 }, extensions: ['https://e.example'] };
const task03 = {
  kind: 'task',
  id: 't1',
  contextId: 'c1',
  status: status03,
  artifacts: [artifact03],
  history: [{ kind: 'message', messageId: 'u1', role: 'user', parts: [{ kind: 'text', text: 'Book a flight' }] }],
  metadata: { x: 'y' },
};
const task10 = {
  id: 't1',
  contextId: 'c1',
  status: status10,
  artifacts: [artifact10],
  history: [{ messageId: 'u1', role: 'ROLE_USER', parts: [{ text: 'Book a flight' }] }],
  metadata: { x: 'y' },
};

t.test('Task (GetTask, CancelTask) and the SendMessage wrapper, both ways', async (t) => {
  for (const op of ['GetTask', 'CancelTask'] as const) {
    check(t, op, '0.3', task03, task10);
    check(t, op, '1.0', task10, task03);
  }
  check(t, 'SendMessage', '0.3', task03, { task: task10 });
  check(t, 'SendMessage', '1.0', { task: task10 }, task03);
  check(t, 'SendMessage', '0.3', status03.message, { message: status10.message });
  check(t, 'SendMessage', '1.0', { message: status10.message }, status03.message);
});

t.test('every task state both ways, numbers too, and unknown/unspecified', async (t) => {
  const states: [string, string, number][] = [
    ['unknown', 'TASK_STATE_UNSPECIFIED', 0], ['submitted', 'TASK_STATE_SUBMITTED', 1], ['working', 'TASK_STATE_WORKING', 2],
    ['completed', 'TASK_STATE_COMPLETED', 3], ['failed', 'TASK_STATE_FAILED', 4], ['canceled', 'TASK_STATE_CANCELED', 5],
    ['input-required', 'TASK_STATE_INPUT_REQUIRED', 6], ['rejected', 'TASK_STATE_REJECTED', 7], ['auth-required', 'TASK_STATE_AUTH_REQUIRED', 8],
  ];
  for (const [s03, s10, n] of states) {
    check(t, 'GetTask', '0.3', { kind: 'task', id: 't', contextId: 'c', status: { state: s03 } }, { id: 't', contextId: 'c', status: { state: s10 } });
    check(t, 'GetTask', '1.0', { id: 't', contextId: 'c', status: { state: s10 } }, { kind: 'task', id: 't', contextId: 'c', status: { state: s03 } });
    check(t, 'GetTask', '1.0', { id: 't', contextId: 'c', status: { state: n } }, { kind: 'task', id: 't', contextId: 'c', status: { state: s03 } });
  }
  check(t, 'GetTask', '0.3', { kind: 'task', id: 't', contextId: 'c', status: { state: 'paused' } }, { id: 't', contextId: 'c', status: { state: 'TASK_STATE_UNSPECIFIED' } }, ['task.status.state']);
  check(t, 'GetTask', '1.0', { id: 't', status: { state: 9 } }, { kind: 'task', id: 't', contextId: '', status: { state: 'unknown' } }, ['task.status.state']);
  check(t, 'GetTask', '1.0', { id: 't', status: {} }, { kind: 'task', id: 't', contextId: '', status: { state: 'unknown' } });
});

t.test('timestamps: 0.3 free text to RFC 3339', async (t) => {
  t.equal(timestampTo10('2025-04-02T16:59:35.331844'), '2025-04-02T16:59:35.331844Z', 'no offset: read as UTC (the 0.3 spec examples)');
  t.equal(timestampTo10('2024-02-29T23:59:59+05:30'), '2024-02-29T23:59:59+05:30');
  t.equal(timestampTo10('0001-01-01T00:00:00Z'), '0001-01-01T00:00:00Z');
  t.equal(timestampTo10('2025-04-02T16:59:35.123456789Z'), '2025-04-02T16:59:35.123456789Z', '9 fraction digits: just under the proto limit');
  t.equal(timestampTo10('2025-04-02T16:59:35.1234567891Z'), undefined, '10 fraction digits: just over');
  for (const bad of ['2023-02-29T00:00:00Z', '2025-13-01T00:00:00Z', '2025-04-02T24:00:00Z', '2025-04-02T16:60:00Z', '2025-04-02T16:59:60Z', '2025-04-02T16:59:59+24:00', '2025-04-02', 'yesterday', 1712073575]) {
    t.equal(timestampTo10(bad), undefined, String(bad));
  }
  check(t, 'GetTask', '0.3', { kind: 'task', id: 't', contextId: 'c', status: { state: 'working', timestamp: 'soon' } }, { id: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } }, ['task.status.timestamp']);
});

t.test('parts: data values that are not objects, compat flag, base64 forms', async (t) => {
  const wrap = (parts: unknown[]) => ({ messageId: 'm', role: 'ROLE_AGENT', parts });
  const wrap03 = (parts: unknown[]) => ({ kind: 'message', messageId: 'm', role: 'agent', parts });
  check(t, 'SendMessage', '1.0', { message: wrap([{ data: [1, 2] }, { data: 'x', metadata: { a: 1 } }, { data: null }]) }, wrap03([
    { kind: 'data', data: { value: [1, 2] }, metadata: { data_part_compat: true } },
    { kind: 'data', data: { value: 'x' }, metadata: { a: 1, data_part_compat: true } },
    { kind: 'data', data: { value: null }, metadata: { data_part_compat: true } },
  ]));
  check(t, 'SendMessage', '0.3', wrap03([
    { kind: 'data', data: { value: [1, 2] }, metadata: { data_part_compat: true } },
    { kind: 'data', data: { value: 'x' }, metadata: { a: 1, data_part_compat: true } },
    { kind: 'data', data: { value: { o: 1 } }, metadata: { data_part_compat: true } },
  ]), { message: wrap([{ data: [1, 2] }, { data: 'x', metadata: { a: 1 } }, { data: { value: { o: 1 } }, metadata: { data_part_compat: true } }]) });
  check(t, 'SendMessage', '1.0', { message: wrap([{ raw: 'a-_b' }, { raw: 'aGk' }]) }, wrap03([{ kind: 'file', file: { bytes: 'a+/b' } }, { kind: 'file', file: { bytes: 'aGk=' } }]));
  check(t, 'SendMessage', '0.3', wrap03([{ kind: 'file', file: { bytes: 'a', uri: 'u' } }, { kind: 'file', file: { bytes: 'aGk=', uri: 'u' } }]), { message: wrap([{ raw: 'aGk=' }]) },
    ['message.parts[].file.bytes', 'message.parts[].file.uri']);
  check(t, 'SendMessage', '1.0', { message: wrap([{ text: 'a', data: {} }, { data: { a: 1 }, mediaType: 'application/json' }, { data: {}, mediaType: 'application/cbor' }]) },
    wrap03([{ kind: 'text', text: 'a' }, { kind: 'data', data: { a: 1 } }, { kind: 'data', data: {} }]), ['message.parts[].data', 'message.parts[].mediaType']);
  check(t, 'SendMessage', '0.3', wrap03([{ text: 'no kind' }, { kind: 'video', text: 'x' }, 'part']), { message: wrap([{ text: 'no kind' }]) }, ['message.parts[].kind', 'message.parts[]']);
});

t.test('push config results: create/get, list, delete', async (t) => {
  const c03 = { taskId: 't1', pushNotificationConfig: { url: 'https://h.example', id: 'p1', token: 'k', authentication: { schemes: ['Bearer'], credentials: 'c' } } };
  const c10 = { id: 'p1', taskId: 't1', url: 'https://h.example', token: 'k', authentication: { scheme: 'Bearer', credentials: 'c' } };
  for (const op of ['CreateTaskPushNotificationConfig', 'GetTaskPushNotificationConfig'] as const) {
    check(t, op, '0.3', c03, c10);
    check(t, op, '1.0', c10, c03);
  }
  check(t, 'ListTaskPushNotificationConfigs', '0.3', [c03, { taskId: 't1' }], { configs: [c10] }, ['configs[]']);
  check(t, 'ListTaskPushNotificationConfigs', '1.0', { configs: [c10], nextPageToken: '' }, [c03]);
  check(t, 'ListTaskPushNotificationConfigs', '1.0', { configs: [c10, { id: 'x' }], nextPageToken: 'p2' }, [c03], ['configs[]', 'nextPageToken']);
  check(t, 'ListTaskPushNotificationConfigs', '1.0', {}, []);
  check(t, 'DeleteTaskPushNotificationConfig', '0.3', null, {});
  check(t, 'DeleteTaskPushNotificationConfig', '1.0', {}, null);
  check(t, 'DeleteTaskPushNotificationConfig', '1.0', null, null);
  t.match(bridgeResult(OPERATIONS.ListTaskPushNotificationConfigs, '0.3', '1.0', { configs: [] }), { ok: false, code: -32006 });
  t.match(bridgeResult(OPERATIONS.GetTask, '1.0', '0.3', 'task'), { ok: false, code: -32006, problem: 'the GetTask result is not an object' });
  t.match(bridgeResult(OPERATIONS.ListTasks, '1.0', '0.3', { tasks: [] }), { ok: false, code: -32004 });
});

t.test('a SendMessage result must be a task or a message', async (t) => {
  t.match(bridgeResult(OPERATIONS.SendMessage, '1.0', '0.3', { statusUpdate: { taskId: 't' } }), { ok: false, code: -32006 });
  t.match(bridgeResult(OPERATIONS.SendMessage, '0.3', '1.0', { kind: 'status-update', taskId: 't', status: {} }), { ok: false, code: -32006 });
  t.match(bridgeResult(OPERATIONS.SendMessage, '1.0', '0.3', {}), { ok: false, code: -32006 });
  check(t, 'SendMessage', '1.0', { task: { id: 't', status: { state: 1 } }, message: { messageId: 'm' } }, { kind: 'task', id: 't', contextId: '', status: { state: 'submitted' } }, ['message']);
});

t.test('stream events both ways; final follows the state', async (t) => {
  const ev = (op: OperationName, from: ProtocolGeneration, input: unknown, expected: unknown, dropped: string[] = []) => {
    const r = bridgeEvent(from, other(from), input);
    if (!r.ok) return void t.fail(r.problem);
    t.same(r.value, expected);
    t.strictSame([...r.dropped].sort(), [...dropped].sort());
    t.equal(schemaProblem(other(from), 'result', op, r.value), undefined);
  };
  const su03 = (state: string, final: boolean) => ({ kind: 'status-update', taskId: 't', contextId: 'c', status: { state }, final, metadata: { a: 1 } });
  const su10 = (state: string) => ({ statusUpdate: { taskId: 't', contextId: 'c', status: { state }, metadata: { a: 1 } } });
  for (const [s03, s10, final] of [['working', 'TASK_STATE_WORKING', false], ['completed', 'TASK_STATE_COMPLETED', true], ['input-required', 'TASK_STATE_INPUT_REQUIRED', true], ['auth-required', 'TASK_STATE_AUTH_REQUIRED', true], ['submitted', 'TASK_STATE_SUBMITTED', false]] as const) {
    ev('SendStreamingMessage', '0.3', su03(s03, final), su10(s10));
    ev('SubscribeToTask', '1.0', su10(s10), su03(s03, final));
  }
  ev('SendStreamingMessage', '0.3', su03('working', true), su10('TASK_STATE_WORKING'), ['statusUpdate.final']);
  // Without its kind, an update is known by its members.
  ev('SendStreamingMessage', '0.3', { taskId: 't', contextId: 'c', status: { state: 'failed' } }, { statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_FAILED' } } });
  const au03 = { kind: 'artifact-update', taskId: 't', contextId: 'c', artifact: artifact03, append: true, lastChunk: false };
  const au10 = { artifactUpdate: { taskId: 't', contextId: 'c', artifact: artifact10, append: true, lastChunk: false } };
  ev('SendStreamingMessage', '0.3', au03, au10);
  ev('SendStreamingMessage', '1.0', au10, au03);
  ev('SendStreamingMessage', '1.0', { artifact_update: au10.artifactUpdate }, au03);
  ev('SendStreamingMessage', '0.3', task03, { task: task10 });
  ev('SendStreamingMessage', '1.0', { task: task10 }, task03);
  ev('SendStreamingMessage', '1.0', { message: status10.message }, status03.message);
  t.match(bridgeEvent('0.3', '1.0', { kind: 'heartbeat' }), { ok: false, code: -32006 });
  t.match(bridgeEvent('0.3', '1.0', [1]), { ok: false, code: -32006 });
  t.match(bridgeEvent('1.0', '0.3', { foo: {} }), { ok: false, code: -32006, dropped: ['*'] });
});

t.test('errors: same codes, data as @type objects on both sides, A2A ErrorInfo toward 1.0', async (t) => {
  const err = (from: ProtocolGeneration, input: unknown, expected: unknown, dropped: string[] = []) => {
    const r = bridgeError(from, other(from), input);
    if (!r.ok) return void t.fail(r.problem);
    t.same(r.value, expected);
    t.strictSame([...r.dropped].sort(), [...dropped].sort());
    t.equal(schemaProblem(other(from), 'error', undefined, r.value), undefined);
  };
  const info = { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org', metadata: { taskId: 't' } };
  const gw = { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'REMOTE_ERROR', domain: 'a2a-egress', metadata: { remote: 'r' } };
  err('1.0', { code: -32001, message: 'Task not found', data: [info, gw] }, { code: -32001, message: 'Task not found', data: [info, gw] });
  err('0.3', { code: -32001, message: 'Task not found', data: 'no such task' }, { code: -32001, message: 'Task not found', data: [{ '@type': info['@type'], reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' }] }, ['error.data']);
  err('0.3', { code: -32001, message: 'Task not found', data: gw }, { code: -32001, message: 'Task not found', data: [gw, { '@type': info['@type'], reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' }] });
  err('0.3', { code: -32001, message: 'Task not found', data: [info, 1, { no: 'type' }] }, { code: -32001, message: 'Task not found', data: [info] }, ['error.data[]']);
  err('0.3', { code: -32602, message: 'Invalid params' }, { code: -32602, message: 'Invalid params' });
  err('1.0', { code: -32009, message: 'Version not supported' }, { code: -32009, message: 'Version not supported' });
  err('1.0', { code: '-32001', message: 7, extra: true }, { code: -32603, message: 'Internal error' }, ['error.code', 'error.message', 'error.*']);
  err('0.3', 'boom', { code: -32603, message: 'Internal error' }, ['error']);
});
