import t from 'tap';
import { OPERATIONS } from '../../src/a2a/operations.js';
import {
  encodeQuery,
  isTimestamp,
  MAX_QUERY_CHARS,
  MAX_QUERY_PARAMS,
  queryVersions,
  readQueryFields,
  splitQuery,
} from '../../src/bindings/http-json/query-params.js';
import { MAX_EXTENSIONS, MAX_EXTENSIONS_CHARS, serviceParamsOf } from '../../src/bindings/http-json/service-params.js';

const LIST = OPERATIONS.ListTasks.rest.query;

function fields(raw: string, kinds = LIST) {
  const split = splitQuery(raw);
  if (!split.ok) return split;
  return readQueryFields(split.pairs, kinds);
}

t.test('§11.5 types: strings, int32, booleans, enums, timestamps', async (t) => {
  t.same(fields('contextId=c%201&status=TASK_STATE_WORKING&pageSize=50&pageToken=a+b&historyLength=0&statusTimestampAfter=2025-11-09T10%3A30%3A00Z&includeArtifacts=true'), {
    ok: true,
    values: { contextId: 'c 1', status: 'TASK_STATE_WORKING', pageSize: 50, pageToken: 'a b', historyLength: 0, statusTimestampAfter: '2025-11-09T10:30:00Z', includeArtifacts: true },
  });
  t.same(fields('status=2'), { ok: true, values: { status: 'TASK_STATE_WORKING' } }, 'an enum number reads as its name');
  t.same(fields('includeArtifacts=false'), { ok: true, values: { includeArtifacts: false } });
  t.same(fields('pageSize=-2147483648'), { ok: true, values: { pageSize: -2147483648 } });
  t.same(fields('pageSize=2147483647'), { ok: true, values: { pageSize: 2147483647 } });
  t.same(fields('statusTimestampAfter=2024-02-29T23:59:59.123456789Z'), { ok: true, values: { statusTimestampAfter: '2024-02-29T23:59:59.123456789Z' } });
});

t.test('wrong values are refused with the field named, never the value', async (t) => {
  for (const raw of [
    'pageSize=2147483648', 'pageSize=-2147483649', 'pageSize=1.5', 'pageSize=01', 'pageSize=1e3', 'pageSize=%201',
    'includeArtifacts=TRUE', 'includeArtifacts=1', 'status=WORKING', 'status=9', 'status=task_state_working',
    'statusTimestampAfter=2025-02-29T00:00:00Z', 'statusTimestampAfter=2025-01-01T00:00:00%2B01:00', 'statusTimestampAfter=2025-01-01',
    'statusTimestampAfter=2025-01-01T24:00:00Z', 'contextId=a%0Ab',
  ]) {
    const r = fields(raw);
    t.equal(r.ok, false, raw);
    if (!r.ok) t.match(r.detail, /^query parameter [A-Za-z]+ /, raw);
  }
});

t.test('unknown parameters are ignored, known ones given twice are refused, empty means absent', async (t) => {
  t.same(fields('foo=1&history_length=3&pageSize=2'), { ok: true, values: { pageSize: 2 } });
  t.same(fields('pageSize=1&pageSize=1'), { ok: false, detail: 'query parameter pageSize given twice' });
  t.same(fields('contextId=&pageSize='), { ok: true, values: {} });
  t.same(fields('tenant=acme'), { ok: true, values: { tenant: 'acme' } }, 'tenant reads as a string field');
  t.same(fields('historyLength=3', OPERATIONS.GetTask.rest.query), { ok: true, values: { historyLength: 3 } });
  t.same(fields('pageSize=3', OPERATIONS.GetTask.rest.query), { ok: true, values: {} }, 'not a field of GetTask');
});

t.test('the query string is bounded (length, count) and must decode', async (t) => {
  const under = `contextId=${'a'.repeat(MAX_QUERY_CHARS - 10)}`;
  t.equal(under.length, MAX_QUERY_CHARS);
  t.equal(splitQuery(under).ok, true);
  t.equal(splitQuery(`${under}a`).ok, false);
  t.equal(splitQuery(Array(MAX_QUERY_PARAMS).fill('a=1').join('&')).ok, true);
  t.equal(splitQuery(Array(MAX_QUERY_PARAMS + 1).fill('a=1').join('&')).ok, false);
  t.equal(splitQuery('a=%E2%82').ok, false, 'invalid UTF-8');
  t.equal(splitQuery('a=%zz').ok, false);
  t.equal(splitQuery('&&a=1&&').ok, true, 'empty pieces are skipped');
});

t.test('A2A-Version travels in the query too (§3.6.1)', async (t) => {
  const split = splitQuery('A2A-Version=1.0&a2a-version=1.0&pageSize=1');
  t.ok(split.ok);
  if (split.ok) t.same(queryVersions(split), ['1.0', '1.0']);
});

t.test('encodeQuery writes the table fields in order, either spelling read, wrong types refused', async (t) => {
  t.same(encodeQuery({ status: 2, page_size: 5, contextId: 'c 1&x', includeArtifacts: false, statusTimestampAfter: '2025-01-01T00:00:00Z', tenant: 'x', other: 1 }, LIST), {
    ok: true,
    query: 'contextId=c%201%26x&status=TASK_STATE_WORKING&pageSize=5&statusTimestampAfter=2025-01-01T00%3A00%3A00Z&includeArtifacts=false',
  });
  t.same(encodeQuery({ historyLength: '7' }, OPERATIONS.GetTask.rest.query), { ok: true, query: 'historyLength=7' }, 'int32 as a ProtoJSON string');
  t.same(encodeQuery({ contextId: '', pageToken: null }, LIST), { ok: true, query: '' }, 'defaults are left out');
  for (const bad of [{ pageSize: 1.5 }, { pageSize: 2 ** 31 }, { pageSize: 'x' }, { includeArtifacts: 'true' }, { status: 'DONE' }, { status: {} }, { contextId: 5 }, { statusTimestampAfter: 'now' }, { contextId: 'a\nb' }, { contextId: 'a\ud800' }]) {
    t.equal(encodeQuery(bad, LIST).ok, false, JSON.stringify(bad));
  }
});

t.test('timestamps: RFC 3339 in UTC and a real instant', async (t) => {
  t.ok(isTimestamp('2000-01-01T00:00:00Z'));
  t.ok(isTimestamp('2000-01-01T00:00:00.1Z'));
  t.notOk(isTimestamp('2000-01-01T00:00:00.1234567890Z'));
  t.notOk(isTimestamp('2000-13-01T00:00:00Z'));
  t.notOk(isTimestamp('2000-01-01t00:00:00z'));
});

t.test('service parameters: A2A-Version from header or query, one Major.Minor; A2A-Extensions a list of URIs', async (t) => {
  const fwd = { traceparent: 'x' };
  t.same(serviceParamsOf({ 'a2a-version': '1.0' }, [], fwd), { ok: true, service: { a2aVersion: '1.0', forwarded: fwd } });
  t.same(serviceParamsOf({}, ['1.0'], fwd), { ok: true, service: { a2aVersion: '1.0', forwarded: fwd } });
  t.same(serviceParamsOf({ 'a2a-version': ' 1.0 ' }, ['1.0'], fwd), { ok: true, service: { a2aVersion: '1.0', forwarded: fwd } }, 'the same in both');
  t.same(serviceParamsOf({}, [], fwd), { ok: true, service: { forwarded: fwd } }, 'none given');
  t.same(serviceParamsOf({ 'a2a-version': '' }, [], fwd), { ok: true, service: { forwarded: fwd } }, 'empty is none (0.3)');
  t.same(serviceParamsOf({ 'a2a-version': '999.999' }, [], fwd).ok, true);
  for (const [header, query] of [['1.0', ['0.3']], [undefined, ['1.0', '0.3']], ['1.0.1', []], ['1', []], ['v1.0', []], ['01.0', []], ['1000.0', []], ['1.0;q=1', []]] as const) {
    const r = serviceParamsOf(header === undefined ? {} : { 'a2a-version': header }, query, fwd);
    t.same(r.ok ? 'ok' : r.reason, 'INVALID_VERSION', `${header} ${query.join()}`);
  }
  t.same(serviceParamsOf({ 'a2a-extensions': 'https://e.example/a, urn:x:y ,' }, [], {}), { ok: true, service: { extensions: 'https://e.example/a, urn:x:y', forwarded: {} } });
  t.same(serviceParamsOf({ 'x-a2a-extensions': 'urn:a' }, [], {}), { ok: true, service: { extensions: 'urn:a', forwarded: {} } }, '0.3 spelling');
  t.same(serviceParamsOf({ 'a2a-extensions': ' , ' }, [], {}), { ok: true, service: { forwarded: {} } }, 'no items: none');
  for (const bad of ['not a uri', 'urn:a b', 'https://x/\u00e9']) {
    const r = serviceParamsOf({ 'a2a-extensions': bad }, [], {});
    t.same(r.ok ? 'ok' : r.reason, 'INVALID_EXTENSIONS', bad);
  }
  const many = Array.from({ length: MAX_EXTENSIONS }, (_, i) => `urn:e:${i}`).join(',');
  t.equal(serviceParamsOf({ 'a2a-extensions': many }, [], {}).ok, true);
  t.equal(serviceParamsOf({ 'a2a-extensions': `${many},urn:one-more` }, [], {}).ok, false);
  const long = `urn:${'a'.repeat(MAX_EXTENSIONS_CHARS - 4)}`;
  t.equal(serviceParamsOf({ 'a2a-extensions': long }, [], {}).ok, true);
  t.equal(serviceParamsOf({ 'a2a-extensions': `${long}a` }, [], {}).ok, false);
});
