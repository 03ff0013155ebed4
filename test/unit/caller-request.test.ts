/**
 * What a caller sends is checked as every parser would read it: a member
 * named twice (anywhere, in any spelling a decoder folds together) is
 * -32600 DUPLICATE_MEMBER before anything goes upstream.
 */
import t from 'tap';
import { checkCallerRequest } from '../../src/jsonrpc/caller-request.js';
import { gatewayErrors } from '../../src/envelope/codes.js';

const check = (text: string) => checkCallerRequest(Buffer.from(text), 1 << 20);

t.test('DUPLICATE_MEMBER is a -32600 of its own', async (t) => {
  t.equal(gatewayErrors.DUPLICATE_MEMBER.code, -32600);
});

t.test('method twice, either order, plain or escaped: refused with the caller id', async (t) => {
  for (const body of [
    '{"jsonrpc":"2.0","id":7,"method":"GetTask","method":"CancelTask","params":{}}',
    '{"jsonrpc":"2.0","id":7,"method":"CancelTask","method":"GetTask","params":{}}',
    '{"jsonrpc":"2.0","id":7,"m\\u0065thod":"CancelTask","method":"GetTask","params":{}}',
  ]) {
    t.same(check(body), { ok: false, reason: 'DUPLICATE_MEMBER', id: 7, detail: '"method" twice at $' }, body);
  }
});

t.test('a member twice deep inside params: refused, the path named', async (t) => {
  const body = '{"jsonrpc":"2.0","id":"a","method":"SendMessage","params":{"message":{"messageId":"1","messageId":"2","role":"ROLE_USER","parts":[]}}}';
  t.same(check(body), { ok: false, reason: 'DUPLICATE_MEMBER', id: 'a', detail: '"messageId" twice at $.params.message' });
});

t.test('id twice: refused, and no id echoed (which one would it be?)', async (t) => {
  t.same(check('{"jsonrpc":"2.0","id":1,"id":2,"method":"GetTask"}'), { ok: false, reason: 'DUPLICATE_MEMBER', id: null, detail: '"id" twice at $' });
  t.same(check('{"jsonrpc":"2.0","id":1,"ID":2,"method":"GetTask"}'), {
    ok: false,
    reason: 'DUPLICATE_MEMBER',
    id: null,
    detail: '"id" twice at $ (once in another spelling)',
  });
});

t.test('another spelling of a JSON-RPC member that case-folding decoders read as it: refused', async (t) => {
  const variants: [string, string][] = [
    ['Method', 'method'],
    ['METHOD', 'method'],
    ['Params', 'params'],
    ['param\u017f', 'params'], // LATIN SMALL LETTER LONG S folds to s
    ['JSONRPC', 'jsonrpc'],
  ];
  for (const [variant, member] of variants) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'GetTask', params: {}, [variant]: member === 'params' ? {} : 'CancelTask' });
    t.same(check(body), { ok: false, reason: 'DUPLICATE_MEMBER', id: 3, detail: `"${member}" twice at $ (once in another spelling)` }, variant);
  }
  const alone = check('{"jsonrpc":"2.0","id":3,"Method":"GetTask"}');
  t.same(alone, { ok: false, reason: 'INVALID_REQUEST', id: 3, detail: '"method" must be a non-empty string' }, 'a variant alone is just not "method"');
  t.ok(check('{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"Id":"x","id":"y"}}').ok, 'inside params, case variants are data');
});

t.test('well-formed requests pass and keep their exact bytes', async (t) => {
  const text = '{"jsonrpc":"2.0","id":12345,"method":"GetTask","params":{"id":"t","metadata":{"big":123456789012345678901234567890}}}';
  const out = check(text);
  t.ok(out.ok);
  if (out.ok) t.equal(out.request.raw.toString(), text);
});

t.test('syntax still comes first: a broken body with a member twice is a parse error', async (t) => {
  t.same(check('{"method":1,"method":'), { ok: false, reason: 'PARSE_ERROR', id: null });
});
