/**
 * `limits.validateResults`' checker: for each validated method, a result
 * just valid (the minimum the schema and the overlay ask for) passes, and the
 * same result with one thing removed or mistyped fails with a path, never a value.
 */
import t from 'tap';
import { boundProblem, checkResult, MAX_PROBLEM_CHARS, validatedMethods } from '../../src/a2a/result-validate.js';

const msg10 = { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'x' }] };
const task10 = { id: 't', status: { state: 'TASK_STATE_COMPLETED' } };
const push10 = { taskId: 't', url: 'http://127.0.0.1:9/hook' };
const msg03 = { kind: 'message', messageId: 'm', role: 'agent', parts: [{ kind: 'text', text: 'x' }] };
const task03 = { kind: 'task', id: 't', contextId: 'c', status: { state: 'completed' } };
const push03 = { taskId: 't', pushNotificationConfig: { url: 'http://127.0.0.1:9/hook' } };

const without = (o: Record<string, unknown>, key: string) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== key));

/** method → [just valid, just invalid, expected problem] */
const CASES: Array<[string, unknown, unknown, RegExp]> = [
  ['SendMessage', { message: msg10 }, { message: without(msg10, 'messageId') }, /^result\.message\.messageId is required$/],
  ['SendMessage', { task: task10 }, { task: task10, message: msg10 }, /exactly one/],
  ['SendMessage', { message: msg10 }, {}, /exactly one/],
  ['SendStreamingMessage', { statusUpdate: { taskId: 't', status: { state: 'TASK_STATE_WORKING' } } }, { statusUpdate: { taskId: 't' } }, /statusUpdate\.status is required/],
  ['SubscribeToTask', { artifact_update: { taskId: 't', artifact: { artifactId: 'a', parts: [] } } }, { artifactUpdate: { artifact: {} } }, /taskId is required/],
  ['GetTask', task10, without(task10, 'status'), /^result\.status is required$/],
  ['GetTask', { ...task10, artifacts: [{ artifactId: 'a', parts: [{ text: 'y' }] }] }, { ...task10, artifacts: [{ artifactId: 'a', parts: [{ text: 1 }] }] }, /^result\.artifacts\[0\]\.parts\[0\]\.text must be string$/],
  ['CancelTask', task10, { ...task10, status: 'done' }, /^result\.status must be object$/],
  ['ListTasks', { tasks: [task10] }, { tasks: [without(task10, 'id')] }, /^result\.tasks\[0\]\.id is required$/],
  ['CreateTaskPushNotificationConfig', push10, { ...push10, url: 7 }, /url must be string/],
  ['GetTaskPushNotificationConfig', push10, 'not an object', /^result must be object$/],
  ['ListTaskPushNotificationConfigs', { configs: [push10] }, { configs: {} }, /configs must be array/],
  ['message/send', msg03, without(msg03, 'kind'), /anyOf/],
  ['message/send', task03, { ...task03, status: { state: 'bogus' } }, /anyOf/],
  ['message/stream', { kind: 'status-update', taskId: 't', contextId: 'c', final: true, status: { state: 'completed' } }, { kind: 'status-update', taskId: 't' }, /anyOf/],
  ['tasks/resubscribe', task03, without(task03, 'id'), /anyOf/],
  ['tasks/get', task03, without(task03, 'contextId'), /^result\.contextId is required$/],
  ['tasks/cancel', task03, { ...task03, kind: 'message' }, /kind/],
  ['tasks/pushNotificationConfig/set', push03, without(push03, 'taskId'), /taskId is required/],
  ['tasks/pushNotificationConfig/get', push03, { ...push03, pushNotificationConfig: {} }, /url is required/],
  ['tasks/pushNotificationConfig/list', [push03], [{ taskId: 't' }], /^result\[0\]\.pushNotificationConfig is required$/],
];

t.test('every validated method: just valid passes, just invalid fails with a path', async (t) => {
  for (const [method, valid, invalid, problem] of CASES) {
    t.same(checkResult(method, valid), { ok: true }, `${method} valid`);
    const r = checkResult(method, invalid);
    t.equal(r.ok, false, `${method} invalid`);
    if (!r.ok) t.match(r.problem, problem, `${method}: ${r.problem}`);
  }
  const covered = new Set(CASES.map(([m]) => m));
  t.same(validatedMethods().filter((m) => !covered.has(m)), [], 'every validated method has a case');
});

t.test('unknown members are allowed (the spec says ignore them)', async (t) => {
  t.same(checkResult('SendMessage', { message: { ...msg10, futureField: { x: 1 } }, extra: true }), { ok: true });
  t.same(checkResult('tasks/get', { ...task03, futureField: 1 }), { ok: true });
});

t.test('methods without a validator always pass', async (t) => {
  for (const m of ['DeleteTaskPushNotificationConfig', 'tasks/pushNotificationConfig/delete', 'GetExtendedAgentCard', 'agent/getAuthenticatedExtendedCard', 'NoSuchMethod']) {
    t.same(checkResult(m, 'anything'), { ok: true }, m);
  }
});

t.test('problems name paths, never remote values', async (t) => {
  const r = checkResult('GetTask', { ...task10, status: { state: 'LEAKED-VALUE' } });
  t.equal(r.ok, false);
  if (!r.ok) t.notMatch(r.problem, /LEAKED/);
});

t.test('problem text bound: just at it kept, one over cut to the bound', async (t) => {
  const at = 'p'.repeat(MAX_PROBLEM_CHARS);
  t.equal(boundProblem(at), at);
  const over = boundProblem(`${at}q`);
  t.equal(over.length, MAX_PROBLEM_CHARS);
  t.ok(over.endsWith('...'));
});
