/**
 * Objects the call path builds for every call keep one hidden class (V8 map) from call to call.
 *
 * Why: in the V8 of Node 20 an object literal that starts with a spread of a non-empty object and has any member after
 * it (`{ ...a, b: 1 }`, `{ ...a, ...b }`) gets a new map for every object it makes (`{ b: 1, ...a }` does not). Maps live in old space, so each
 * call paid for creating one (about 1 µs of an HTTP+JSON call went to it in serviceParamsOf) and kept the call's
 * objects from being collected young. The builders below assemble such objects member by member or with
 * Object.assign instead; this test sees the maps themselves (V8's %HaveSameMap), so it fails if a spread comes back.
 */
import v8 from 'node:v8';
import t from 'tap';
import { OPERATIONS } from '../../src/a2a/operations.js';
import { parseRestCall } from '../../src/bindings/http-json/caller-request.js';
import { serviceParamsOf } from '../../src/bindings/http-json/service-params.js';

v8.setFlagsFromString('--allow-natives-syntax');
// Parsed after the flag is set, so the natives syntax is allowed in it (and only in it).
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: unknown, b: unknown) => boolean;

/** How many of `n` consecutive results got a map other than the one before. */
function mapChanges(n: number, make: (i: number) => object): number {
  let changes = 0;
  let previous = make(0);
  for (let i = 1; i < n; i++) {
    const next = make(i);
    if (!haveSameMap(previous, next)) changes++;
    previous = next;
  }
  return changes;
}

t.test('the probe sees what it is for: a leading spread with a member after it makes a map per object', async (t) => {
  const source = () => ({ a: 1, b: 2 });
  t.ok(mapChanges(200, () => ({ ...source(), c: 3 })) > 100, 'a spread then a member: new maps');
  t.ok(mapChanges(200, () => ({ ...source(), ...{ c: 3 } })) > 100, 'a spread then a spread: new maps');
  t.equal(mapChanges(200, () => ({ c: 3, ...source() })), 0, 'a member first: one map');
  t.equal(mapChanges(200, () => Object.assign({}, source(), { c: 3 })), 0, 'Object.assign: one map');
});

t.test('service parameters: one map per kind of request', async (t) => {
  const forwarded = () => ({});
  const service = (headers: Record<string, string>) => {
    const read = serviceParamsOf(headers, [], forwarded());
    if (!read.ok) throw new Error(read.detail);
    return read.service;
  };
  t.equal(mapChanges(200, () => service({ 'a2a-version': '1.0' })), 0, 'with a version');
  t.equal(mapChanges(200, () => service({ 'a2a-version': '1.0', 'a2a-extensions': 'https://e.example/x' })), 0, 'with a version and extensions');
  t.equal(mapChanges(200, () => service({})), 0, 'with neither');
});

t.test('an HTTP+JSON call: one map', async (t) => {
  const body = Buffer.from(JSON.stringify({ message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } }));
  const call = (path: string) => {
    const parsed = parseRestCall(
      { method: 'POST', path, query: '', headers: { 'a2a-version': '1.0', 'content-type': 'application/json' }, body },
      { remote: 'r', requestId: 'id', forwarded: {}, maxRequestBytes: 1 << 20, maxJsonDepth: 32 },
    );
    if (!parsed.ok || parsed.call.operation !== OPERATIONS.SendMessage) throw new Error(`not a SendMessage call: ${path}`);
    return parsed.call;
  };
  t.equal(mapChanges(50, () => call('/message:send')), 0, 'without a tenant');
  t.equal(mapChanges(50, () => call('/acme/message:send')), 0, 'with a tenant');
});
