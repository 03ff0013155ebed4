import t from 'tap';
import fc from 'fast-check';
import { OPERATION_LIST, OPERATIONS, type OperationName } from '../../src/a2a/operations.js';
import { decodeSegment, encodeSegment, isSegmentValue, MAX_PATH_CHARS, MAX_SEGMENT_BYTES, MAX_SEGMENTS, splitRawPath } from '../../src/bindings/http-json/path-segments.js';
import { buildRoutePath, LITERAL_ROUTE_PATHS, matchRoute, matchRouteInFull, pathParamNames } from '../../src/bindings/http-json/routes.js';

function matched(verb: string, path: string, version = '1.0') {
  const r = matchRoute(verb, path, version);
  if (!r.ok) throw new Error(`${verb} ${path}: ${r.reason}`);
  return r.match;
}

const SPEC_ROUTES: [string, string, OperationName, Record<string, string>][] = [
  ['POST', '/message:send', 'SendMessage', {}],
  ['POST', '/message:stream', 'SendStreamingMessage', {}],
  ['GET', '/tasks/t-1', 'GetTask', { id: 't-1' }],
  ['GET', '/tasks', 'ListTasks', {}],
  ['POST', '/tasks/t-1:cancel', 'CancelTask', { id: 't-1' }],
  ['POST', '/tasks/t-1:subscribe', 'SubscribeToTask', { id: 't-1' }],
  ['GET', '/tasks/t-1:subscribe', 'SubscribeToTask', { id: 't-1' }],
  ['POST', '/tasks/t-1/pushNotificationConfigs', 'CreateTaskPushNotificationConfig', { taskId: 't-1' }],
  ['GET', '/tasks/t-1/pushNotificationConfigs/c-1', 'GetTaskPushNotificationConfig', { taskId: 't-1', id: 'c-1' }],
  ['GET', '/tasks/t-1/pushNotificationConfigs', 'ListTaskPushNotificationConfigs', { taskId: 't-1' }],
  ['DELETE', '/tasks/t-1/pushNotificationConfigs/c-1', 'DeleteTaskPushNotificationConfig', { taskId: 't-1', id: 'c-1' }],
  ['GET', '/extendedAgentCard', 'GetExtendedAgentCard', {}],
];

t.test('the paths answered by lookup get what the full matcher answers, for any verb and version', async (t) => {
  // The fixed-segment 1.0 paths: SendMessage, SendStreamingMessage, ListTasks, GetExtendedAgentCard.
  t.same([...LITERAL_ROUTE_PATHS].sort(), ['/extendedAgentCard', '/message:send', '/message:stream', '/tasks']);
  for (const path of LITERAL_ROUTE_PATHS) {
    for (const verb of ['GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'post']) {
      for (const version of [undefined, '0.3', '1.0', '1.1']) {
        const kept = matchRoute(verb, path, version);
        t.same(kept, matchRouteInFull(verb, path, version), `${verb} ${path} (${version})`);
        if (['GET', 'POST', 'DELETE'].includes(verb)) t.ok(Object.isFrozen(kept) && (!kept.ok || Object.isFrozen(kept.match.pathParams)), 'a shared answer is frozen');
      }
    }
    // Anything around the path is the full matcher's to read.
    for (const other of [`${path}/`, `/v1${path}`, `/acme${path}`, path.toUpperCase()]) t.same(matchRoute('POST', other, '1.0'), matchRouteInFull('POST', other, '1.0'), other);
  }
  t.equal(matchRoute('POST', '/message:send').ok, true);
  t.equal(matchRoute('GET', '/message:send').ok, false);
});

t.test('every operation of spec §5.3 / §11.3 is matched, with and without a tenant', async (t) => {
  const seen = new Set<string>();
  for (const [verb, path, name, params] of SPEC_ROUTES) {
    const m = matched(verb, path);
    t.equal(m.operation.name, name, `${verb} ${path}`);
    t.equal(m.generation, '1.0');
    t.same(m.pathParams, params);
    t.equal(m.tenant, undefined);
    const tm = matched(verb, `/acme${path}`);
    t.equal(tm.operation.name, name, `${verb} /acme${path}`);
    t.equal(tm.tenant, 'acme');
    t.same(tm.pathParams, params);
    seen.add(name);
  }
  t.equal(seen.size, OPERATION_LIST.length, 'all eleven operations');
});

t.test('a trailing slash is tolerated, empty and dot segments are not', async (t) => {
  t.equal(matched('GET', '/tasks/').operation.name, 'ListTasks');
  for (const path of ['/tasks//x', '//tasks', '/tasks/./x', '/tasks/..', '/./tasks']) {
    const r = matchRoute('GET', path, '1.0');
    t.equal(r.ok ? 'ok' : r.reason, 'INVALID_PATH', path);
  }
});

t.test('the root and unknown paths are UNKNOWN_OPERATION; a path with the wrong verb is 405 with its verbs', async (t) => {
  for (const path of ['/', '', '/nope', '/message:sendx', '/tasks/a/b/c/d/e', '/Message:send']) {
    const r = matchRoute('POST', path, '1.0');
    t.equal(r.ok ? 'ok' : r.reason, 'UNKNOWN_OPERATION', path);
  }
  const r = matchRoute('DELETE', '/tasks/t1', '1.0');
  t.equal(r.ok ? 'ok' : r.reason, 'HTTP_METHOD_NOT_ALLOWED');
  if (!r.ok && r.reason === 'HTTP_METHOD_NOT_ALLOWED') {
    t.same(r.allow, ['GET']);
    t.equal(r.operation.name, 'GetTask');
  }
  const s = matchRoute('PUT', '/tasks/t1:subscribe', '1.0');
  t.same(!s.ok && s.reason === 'HTTP_METHOD_NOT_ALLOWED' ? [...s.allow].sort() : [], ['GET', 'POST']);
  const send = matchRoute('GET', '/message:send', '1.0');
  t.same(!send.ok && send.reason === 'HTTP_METHOD_NOT_ALLOWED' ? send.allow : [], ['POST']);
});

t.test('an action suffix wins for its verb; a bare id keeps a literal colon (as the SDK server reads it)', async (t) => {
  t.equal(matched('POST', '/tasks/a:cancel').operation.name, 'CancelTask');
  t.same(matched('GET', '/tasks/a:cancel').pathParams, { id: 'a:cancel' }, 'GET reads it as GetTask');
  t.same(matched('POST', '/tasks/urn:x:y:cancel').pathParams, { id: 'urn:x:y' });
  t.same(matched('GET', '/tasks/urn:x').pathParams, { id: 'urn:x' });
  t.same(matched('GET', '/tasks/a%3Acancel').pathParams, { id: 'a:cancel' }, 'an encoded colon is part of the id');
  const bare = matchRoute('POST', '/tasks/:cancel', '1.0');
  t.notOk(bare.ok, 'an empty id is no id');
});

t.test('path segments are percent-decoded with the safety rules', async (t) => {
  t.same(matched('GET', '/tasks/a%20b%C3%A9').pathParams, { id: 'a bé' });
  t.same(matched('GET', '/tasks/%E2%82%AC%F0%9F%98%80').pathParams, { id: '€😀' });
  t.equal(matched('GET', "/tasks/a!$&'()*+,;=@~._-").pathParams.id, "a!$&'()*+,;=@~._-");
  for (const bad of ['%2F', '%2f', '%5C', '%25', '%00', '%0A', '%7F', '%2E', '%2E%2E', '%C3', '%FF', '%ED%A0%80', 'a%2', 'é', 'a b', 'a"b', 'a<b', 'a%']) {
    const r = matchRoute('GET', `/tasks/${bad}`, '1.0');
    t.equal(r.ok ? 'ok' : r.reason, 'INVALID_PATH', bad);
  }
  const tenant = matchRoute('GET', '/a%2Fb/tasks', '1.0');
  t.equal(tenant.ok ? 'ok' : tenant.reason, 'INVALID_PATH', 'an unsafe tenant');
});

t.test('lengths are bounded: just under each bound passes, just over is refused', async (t) => {
  const under = 'a'.repeat(MAX_SEGMENT_BYTES);
  t.equal(matched('GET', `/tasks/${under}`).pathParams.id, under);
  t.notOk(matchRoute('GET', `/tasks/${under}a`, '1.0').ok);
  const euro = '%E2%82%AC'.repeat(Math.floor(MAX_SEGMENT_BYTES / 3));
  t.ok(matchRoute('GET', `/tasks/${euro}`, '1.0').ok, 'multi-byte: 1023 bytes');
  t.notOk(matchRoute('GET', `/tasks/${euro}%E2%82%AC`, '1.0').ok, 'multi-byte: 1026 bytes');
  const long = `/tasks/${'a'.repeat(MAX_PATH_CHARS - 7)}`;
  t.equal(long.length, MAX_PATH_CHARS);
  t.equal(splitRawPath(long).ok, true);
  t.equal(splitRawPath(`${long}a`).ok, false);
  t.equal(splitRawPath(`/${Array(MAX_SEGMENTS).fill('a').join('/')}`).ok, true);
  t.equal(splitRawPath(`/${Array(MAX_SEGMENTS + 1).fill('a').join('/')}`).ok, false);
});

t.test('a path without tenant is tried first; a tenant that reads as a route is that route', async (t) => {
  t.same(matched('GET', '/tasks/tasks').pathParams, { id: 'tasks' });
  t.equal(matched('GET', '/tasks/tasks').operation.name, 'GetTask');
  const m = matched('GET', '/tasks/tasks/x');
  t.equal(m.operation.name, 'GetTask');
  t.equal(m.tenant, 'tasks');
  t.equal(matched('GET', '/t%20one/tasks').tenant, 't one');
});

t.test('A2A 0.3 /v1 forms: with no version or 0.x they are 0.3; with 1.x "v1" is a tenant', async (t) => {
  const cases: [string, string, OperationName][] = [
    ['POST', '/v1/message:send', 'SendMessage'],
    ['POST', '/v1/message:stream', 'SendStreamingMessage'],
    ['GET', '/v1/tasks/t', 'GetTask'],
    ['POST', '/v1/tasks/t:cancel', 'CancelTask'],
    ['POST', '/v1/tasks/t:subscribe', 'SubscribeToTask'],
    ['GET', '/v1/tasks/t:subscribe', 'SubscribeToTask'],
    ['POST', '/v1/tasks/t/pushNotificationConfigs', 'CreateTaskPushNotificationConfig'],
    ['GET', '/v1/tasks/t/pushNotificationConfigs/c', 'GetTaskPushNotificationConfig'],
    ['GET', '/v1/tasks/t/pushNotificationConfigs', 'ListTaskPushNotificationConfigs'],
    ['DELETE', '/v1/tasks/t/pushNotificationConfigs/c', 'DeleteTaskPushNotificationConfig'],
    ['GET', '/v1/card', 'GetExtendedAgentCard'],
  ];
  for (const [verb, path, name] of cases) {
    for (const version of [undefined, '0.3']) {
      const r = matchRoute(verb, path, version);
      t.ok(r.ok && r.match.operation.name === name && r.match.generation === '0.3', `${verb} ${path} (${version ?? 'no version'})`);
    }
  }
  const v1 = matched('GET', '/v1/tasks/t', '1.0');
  t.equal(v1.generation, '1.0');
  t.equal(v1.tenant, 'v1');
  t.equal(matchRoute('GET', '/v1/card', '1.0').ok, false, '/v1/card is no 1.0 route');
  t.equal(matched('GET', '/v1/extendedAgentCard', undefined).tenant, 'v1', 'no 0.3 route: the 1.0 tenant form');
});

t.test('buildRoutePath encodes values and matches back to the same route', async (t) => {
  for (const op of OPERATION_LIST) {
    const params = Object.fromEntries(pathParamNames(op, '1.0').map((n) => [n, `${n}:é ?#`]));
    for (const tenant of [undefined, 'acme co']) {
      const path = buildRoutePath(op, '1.0', params, tenant);
      const m = matched(op.rest.verb, path);
      t.equal(m.operation, op, path);
      t.same(m.pathParams, params);
      t.equal(m.tenant, tenant);
    }
  }
  t.equal(buildRoutePath(OPERATIONS.CancelTask, '1.0', { id: 'a:b' }), '/tasks/a%3Ab:cancel');
  t.equal(buildRoutePath(OPERATIONS.GetExtendedAgentCard, '0.3', {}), '/v1/card');
});

t.test('segment helpers agree with each other', async (t) => {
  for (const v of ['a', 'a b', "!'()*", '€', 'x:y', '@']) {
    t.ok(isSegmentValue(v), v);
    t.equal(decodeSegment(encodeSegment(v)), v, v);
  }
  for (const v of ['', '.', '..', 'a/b', 'a\\b', '50%', 'a\u0000', '\ud800', 'x'.repeat(MAX_SEGMENT_BYTES + 1)]) t.notOk(isSegmentValue(v), JSON.stringify(v.slice(0, 8)));
});

/** splitRawPath's segments as String#split cut them before it cut by hand (its other checks are the same). */
function segmentsBySplit(rawPath: string): readonly string[] | 'too many' {
  const body = rawPath.endsWith('/') ? rawPath.slice(1, -1) : rawPath.slice(1);
  const segments = body.split('/');
  return segments.length > MAX_SEGMENTS ? 'too many' : segments;
}

t.test('property: a raw path is cut into the segments String#split gives', async (t) => {
  const piece = fc.constantFrom('/', '/', 'a', 'tasks', '%2F', '.', '..', ':send', '', '/a/a/a/a');
  // Short paths, and long ones around the segment bound (16).
  const raw = fc
    .oneof(fc.array(piece, { maxLength: 12 }), fc.array(piece, { minLength: 12, maxLength: 40 }))
    .map((pieces) => `/${pieces.join('')}`);
  let cut = 0;
  let tooMany = 0;
  fc.assert(
    fc.property(raw, (rawPath) => {
      if (rawPath === '/') return true;
      const expected = segmentsBySplit(rawPath);
      const split = splitRawPath(rawPath);
      if (expected === 'too many') {
        tooMany++;
        return !split.ok && split.problem.startsWith('more than');
      }
      if (!split.ok) return split.problem !== `more than ${MAX_SEGMENTS} path segments`;
      cut++;
      return split.segments.length === expected.length && split.segments.every((segment, i) => segment === expected[i]);
    }),
    { numRuns: 3000 },
  );
  t.ok(cut > 300, `${cut} of 3,000 paths were valid and compared segment by segment`);
  t.ok(tooMany > 30, `${tooMany} of 3,000 paths had more than ${MAX_SEGMENTS} segments`);
});
