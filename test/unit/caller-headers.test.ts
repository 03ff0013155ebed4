import fc from 'fast-check';
import t from 'tap';
import { callerGeneration, isJsonContentType } from '../../src/jsonrpc/caller-headers.js';
import { checkCallerRequest } from '../../src/jsonrpc/caller-request.js';

t.test('isJsonContentType: application/json with any parameters, any case; absent is let through; nothing else', async (t) => {
  for (const ok of [undefined, 'application/json', 'APPLICATION/JSON', ' application/json ; charset=utf-8', 'application/json;charset=latin1']) {
    t.equal(isJsonContentType(ok), true, String(ok));
  }
  for (const bad of ['text/plain', 'application/a2a+json', 'application/jsonp', 'application/json-seq', 'json', '', ';application/json', ['text/plain', 'application/json']]) {
    t.equal(isJsonContentType(bad), false, JSON.stringify(bad));
  }
});

t.test('isJsonContentType: only a media type of exactly application/json passes', async () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.constantFrom('application/json', ' Application/JSON\t', 'application/jsonx', 'application/a2a+json', 'text/plain'), fc.string({ maxLength: 40 })).filter((s) => !s.includes(';')),
      fc.string({ maxLength: 20 }),
      (type, params) => {
      const header = params === '' ? type : `${type};${params}`;
      return isJsonContentType(header) === (type.trim().toLowerCase() === 'application/json');
      },
    ),
  );
});

t.test('callerGeneration: the method decides when it is A2A\'s; else A2A-Version, absent meaning 0.3', async (t) => {
  t.equal(callerGeneration('SendMessage', undefined), '1.0');
  t.equal(callerGeneration('message/send', '1.0'), '0.3', 'a 0.3 method is a 0.3 caller, whatever the header says');
  t.equal(callerGeneration(undefined, '1.0'), '1.0');
  t.equal(callerGeneration(undefined, ' 1.2 '), '1.0');
  t.equal(callerGeneration('not/a2a', '2.0'), '1.0');
  t.equal(callerGeneration(undefined, undefined), '0.3', 'no header: 0.3 (A2A 1.0 §3.6.1)');
  t.equal(callerGeneration(undefined, '0.3'), '0.3');
  t.equal(callerGeneration(undefined, '1'), '0.3', 'not Major.Minor');
  t.equal(callerGeneration(undefined, ['1.0', '0.3']), '1.0', 'the first value');
});

t.test('a request without an id is a call answered with id null, forwarded as sent; a present but bad id is still refused', async (t) => {
  const raw = Buffer.from('{"jsonrpc":"2.0","method":"GetTask","params":{"id":"t"}}');
  const checked = checkCallerRequest(raw, 1024);
  t.ok(checked.ok);
  if (checked.ok) {
    t.equal(checked.request.id, null);
    t.equal(checked.request.raw, raw, 'the caller\'s bytes, unchanged');
  }
  t.match(checkCallerRequest(Buffer.from('{"jsonrpc":"2.0","id":{"bad":1},"method":"GetTask"}'), 1024), { ok: false, reason: 'INVALID_REQUEST', id: null });
  t.match(checkCallerRequest(Buffer.from('{"jsonrpc":"2.0","id":1.5,"method":"GetTask"}'), 1024), { ok: false, reason: 'INVALID_REQUEST' });
  t.match(checkCallerRequest(Buffer.from('{"jsonrpc":"2.0","params":{}}'), 1024), { ok: false, reason: 'INVALID_REQUEST', id: null }, 'no method: -32600');
});
