import t from 'tap';
import { OPERATIONS, type OperationName } from '../../src/a2a/operations.js';
import { buildRestUpstreamRequest, type RestUpstreamBuild } from '../../src/bindings/http-json/upstream-request.js';
import type { A2ACall } from '../../src/core/call.js';

const BASE = new URL('http://remote.example/a2a/rest/');

function call(name: OperationName, params: Record<string, unknown>, extra: Partial<A2ACall> = {}): A2ACall {
  return {
    remote: 'weather',
    operation: OPERATIONS[name],
    generation: '1.0',
    paramsJson: JSON.stringify(params),
    params,
    service: { a2aVersion: '1.0', forwarded: { traceparent: 'tp' } },
    caller: { binding: 'jsonrpc', jsonRpcId: 1, requestId: 'r1' },
    ...extra,
  };
}

function built(b: RestUpstreamBuild) {
  if (!b.ok) throw new Error(`refused: ${b.error.reason} ${b.error.message}`);
  return b.request;
}

t.test('each operation: verb, path under the base, query, headers, body', async (t) => {
  const cases: [OperationName, Record<string, unknown>, string, string, boolean][] = [
    ['SendMessage', { message: { messageId: 'm' } }, 'POST', '/a2a/rest/message:send', true],
    ['SendStreamingMessage', { message: { messageId: 'm' } }, 'POST', '/a2a/rest/message:stream', true],
    ['GetTask', { id: 't 1', historyLength: 3 }, 'GET', '/a2a/rest/tasks/t%201?historyLength=3', false],
    ['ListTasks', { status: 'TASK_STATE_WORKING', pageSize: 2, pageToken: 'p/q' }, 'GET', '/a2a/rest/tasks?status=TASK_STATE_WORKING&pageSize=2&pageToken=p%2Fq', false],
    ['CancelTask', { id: 't:1', metadata: {} }, 'POST', '/a2a/rest/tasks/t%3A1:cancel', true],
    ['SubscribeToTask', { id: 't1' }, 'POST', '/a2a/rest/tasks/t1:subscribe', false],
    ['CreateTaskPushNotificationConfig', { taskId: 't1', url: 'https://h' }, 'POST', '/a2a/rest/tasks/t1/pushNotificationConfigs', true],
    ['GetTaskPushNotificationConfig', { taskId: 't1', id: 'c1' }, 'GET', '/a2a/rest/tasks/t1/pushNotificationConfigs/c1', false],
    ['ListTaskPushNotificationConfigs', { task_id: 't1', pageSize: 5 }, 'GET', '/a2a/rest/tasks/t1/pushNotificationConfigs?pageSize=5', false],
    ['DeleteTaskPushNotificationConfig', { taskId: 't1', id: 'c1' }, 'DELETE', '/a2a/rest/tasks/t1/pushNotificationConfigs/c1', false],
    ['GetExtendedAgentCard', {}, 'GET', '/a2a/rest/extendedAgentCard', false],
  ];
  for (const [name, params, verb, path, hasBody] of cases) {
    const c = call(name, params);
    const r = built(buildRestUpstreamRequest(c, BASE));
    t.equal(r.method, verb, name);
    t.equal(r.path, path, name);
    t.equal(r.body, hasBody ? c.paramsJson : undefined, `${name} body`);
    t.equal(r.headers['content-type'], hasBody ? 'application/json' : undefined, `${name} content-type`);
    t.equal(r.headers.accept, OPERATIONS[name].streaming ? 'text/event-stream' : 'application/a2a+json, application/json');
    t.equal(r.headers['a2a-version'], '1.0');
    t.equal(r.headers.traceparent, 'tp', 'forwarded headers kept');
  }
});

t.test('the body is the call paramsJson, byte for byte', async (t) => {
  const paramsJson = '{ "message": {"messageId":"m","parts":[{"text":"\\u00e9"}]}, "x": 1.50 }';
  const c = { ...call('SendMessage', JSON.parse(paramsJson)), paramsJson };
  t.equal(built(buildRestUpstreamRequest(c, BASE)).body, paramsJson);
});

t.test('tenant: from the call, else from params; the base path and query are kept', async (t) => {
  t.equal(built(buildRestUpstreamRequest(call('GetTask', { id: 't1' }, { tenant: 'acme co' }), BASE)).path, '/a2a/rest/acme%20co/tasks/t1');
  t.equal(built(buildRestUpstreamRequest(call('SendMessage', { tenant: 'x', message: {} }), BASE)).path, '/a2a/rest/x/message:send');
  t.equal(built(buildRestUpstreamRequest(call('GetTask', { id: 't1', historyLength: 1 }), new URL('http://r/api?key=1'))).path, '/api/tasks/t1?key=1&historyLength=1');
  t.equal(built(buildRestUpstreamRequest(call('ListTasks', {}), new URL('http://r'))).path, '/tasks');
});

t.test('service parameters become headers (§11.2); none given, none sent', async (t) => {
  const c = call('GetTask', { id: 't' }, { service: { extensions: 'urn:a, urn:b', forwarded: {} } });
  const r = built(buildRestUpstreamRequest(c, BASE));
  t.equal(r.headers['a2a-version'], undefined);
  t.equal(r.headers['a2a-extensions'], 'urn:a, urn:b');
});

t.test('calls with no faithful HTTP+JSON form are refused, not sent', async (t) => {
  const refused = (c: A2ACall, pattern: RegExp) => {
    const b = buildRestUpstreamRequest(c, BASE);
    t.equal(b.ok, false, pattern.source);
    if (!b.ok) {
      t.equal(b.error.reason, 'INVALID_PARAMS');
      t.match(b.error.message, pattern);
      t.equal(b.error.metadata.remote, 'weather');
    }
  };
  refused(call('GetTask', {}), /id is required/);
  refused(call('GetTask', { id: '' }), /id is required/);
  refused(call('GetTask', { id: 5 }), /id is required/);
  refused(call('GetTask', { id: 'a/b' }), /id cannot travel/);
  refused(call('GetTask', { id: '..' }), /id cannot travel/);
  refused(call('GetTask', { id: '50%' }), /id cannot travel/);
  refused(call('GetTaskPushNotificationConfig', { taskId: 't' }), /id is required/);
  refused(call('GetTask', { id: 't' }, { tenant: 'a/b' }), /tenant cannot travel/);
  refused(call('ListTasks', {}, { tenant: 'tasks' }), /reads as another call/);
  refused(call('GetExtendedAgentCard', {}, { tenant: 'tasks' }), /reads as another call/);
  refused(call('GetTask', { id: 't' }, { tenant: 'v1', service: { forwarded: {} } }), /reads as another call/);
  refused(call('ListTasks', { pageSize: 'ten' }), /pageSize is not a 32-bit integer/);
  t.equal(buildRestUpstreamRequest(call('GetTask', { id: 'tasks' }, { tenant: 'tasks' }), BASE).ok, true, '/tasks/tasks/tasks is unambiguous');
  t.equal(buildRestUpstreamRequest(call('GetTask', { id: 't' }, { tenant: 'v1' }), BASE).ok, true, 'v1 with A2A-Version 1.0 is a tenant');
  const old = buildRestUpstreamRequest({ ...call('GetTask', { id: 't' }), generation: '0.3' }, BASE);
  t.equal(old.ok ? 'ok' : old.error.reason, 'UNSUPPORTED_BINDING_VERSION');
});
