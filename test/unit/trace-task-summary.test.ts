/**
 * Task id and state for the spans, from an Outcome's parsed value: every
 * result and event shape of both generations, the operations it applies to,
 * and (property) any value at all gives a bounded id and a known state or
 * nothing, never an exception.
 */
import t from 'tap';
import fc from 'fast-check';
import { TASK_STATES } from '../../src/a2a/bridge/enums.js';
import { carriesTask, stateName, taskSummaryOf } from '../../src/telemetry/task-summary.js';

t.test('1.0 shapes', async (t) => {
  const status = { state: 'TASK_STATE_INPUT_REQUIRED' };
  t.same(taskSummaryOf({ task: { id: 't1', contextId: 'c', status } }), { id: 't1', state: 'TASK_STATE_INPUT_REQUIRED' }, 'SendMessageResponse.task');
  t.same(taskSummaryOf({ id: 't2', contextId: 'c', status: { state: 'TASK_STATE_CANCELED' } }), { id: 't2', state: 'TASK_STATE_CANCELED' }, 'a bare Task (GetTask, CancelTask)');
  t.same(taskSummaryOf({ message: { messageId: 'm', role: 'ROLE_AGENT', parts: [], taskId: 't3' } }), { id: 't3', state: undefined }, 'a message naming its task');
  t.equal(taskSummaryOf({ message: { messageId: 'm', role: 'ROLE_AGENT', parts: [] } }), undefined, 'a message without a task');
  t.same(taskSummaryOf({ statusUpdate: { taskId: 't4', contextId: 'c', status: { state: 2 } } }), { id: 't4', state: 'TASK_STATE_WORKING' }, 'enum by number');
  t.same(taskSummaryOf({ artifactUpdate: { taskId: 't5', artifact: {} } }), { id: 't5', state: undefined });
});

t.test('0.3 shapes, states reported as 1.0 names', async (t) => {
  t.same(taskSummaryOf({ kind: 'task', id: 't1', contextId: 'c', status: { state: 'completed' } }), { id: 't1', state: 'TASK_STATE_COMPLETED' });
  t.same(taskSummaryOf({ kind: 'status-update', taskId: 't2', status: { state: 'input-required' }, final: true }), { id: 't2', state: 'TASK_STATE_INPUT_REQUIRED' });
  t.same(taskSummaryOf({ kind: 'artifact-update', taskId: 't3', artifact: {} }), { id: 't3', state: undefined });
  t.same(taskSummaryOf({ kind: 'message', messageId: 'm', taskId: 't4', parts: [] }), { id: 't4', state: undefined });
  for (const [v03, v10, n] of TASK_STATES) {
    t.equal(stateName(v03), v10);
    t.equal(stateName(v10), v10);
    t.equal(stateName(n), v10);
  }
});

t.test('what is not a task is left alone', async (t) => {
  for (const value of [null, 'x', 3, [], {}, { tasks: [{ id: 't', status: { state: 'completed' } }] }, { id: 't' }, { kind: 'task' }, { task: 'x' }]) {
    t.equal(taskSummaryOf(value), undefined, JSON.stringify(value));
  }
  t.same(taskSummaryOf({ kind: 'task', id: 't', status: { state: 'SHOUTING' } }), { id: 't', state: undefined }, 'an unknown state is dropped');
  t.same(taskSummaryOf({ kind: 'task', id: '', status: { state: 'working' } }), { id: undefined, state: 'TASK_STATE_WORKING' }, 'an empty id is none');
  for (const op of ['SendMessage', 'SendStreamingMessage', 'GetTask', 'CancelTask', 'SubscribeToTask'] as const) t.ok(carriesTask(op), op);
  for (const op of ['ListTasks', 'CreateTaskPushNotificationConfig', 'GetTaskPushNotificationConfig', 'GetExtendedAgentCard', undefined] as const) t.notOk(carriesTask(op), String(op));
});

t.test('ids: remote text cleaned and bounded at 128 bytes', async (t) => {
  t.equal(taskSummaryOf({ kind: 'task', id: 'a'.repeat(128), status: {} })?.id, 'a'.repeat(128), 'just under the bound: kept whole');
  t.equal(taskSummaryOf({ kind: 'task', id: 'a'.repeat(129), status: {} })?.id, 'a'.repeat(128), 'just over: cut');
  t.equal(taskSummaryOf({ kind: 'task', id: 'ab\u001b[31mc\u0000d', status: {} })?.id, 'abcd', 'control sequences removed');
  t.equal(Buffer.byteLength(taskSummaryOf({ kind: 'task', id: 'é'.repeat(100), status: {} })?.id ?? ''), 128, 'multi-byte ids cut on a character');
});

t.test('property: any value gives a bounded id and a known state or nothing, never an exception', async (t) => {
  const states = new Set(TASK_STATES.map(([, v10]) => v10));
  fc.assert(
    fc.property(
      fc.oneof(
        fc.anything(),
        fc.record({ kind: fc.constantFrom('task', 'status-update', 'message'), id: fc.string(), taskId: fc.string({ unit: 'binary', maxLength: 400 }), status: fc.record({ state: fc.oneof(fc.string(), fc.integer()) }) }),
        fc.record({ statusUpdate: fc.record({ taskId: fc.string({ unit: 'binary', maxLength: 400 }), status: fc.record({ state: fc.anything() }) }) }),
      ),
      (value) => {
        const summary = taskSummaryOf(value);
        if (!summary) return true;
        if (summary.id !== undefined && (Buffer.byteLength(summary.id) > 128 || summary.id === '' || /[\p{Cc}]/u.test(summary.id))) return false;
        return summary.state === undefined || states.has(summary.state);
      },
    ),
    { numRuns: 2000 },
  );
  t.pass('2000 values');
});
