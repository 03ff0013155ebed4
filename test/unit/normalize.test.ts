import t from 'tap';
import { A2A_ERROR_DOMAIN, ERROR_DOMAIN, ERROR_INFO_TYPE, a2aErrorReasons, gatewayErrors } from '../../src/envelope/codes.js';
import { findGatewayErrorInfo, type JsonRpcId } from '../../src/envelope/envelope.js';
import { failureEnvelope, normalizeJsonText, normalizeReply, type NormalizePolicy } from '../../src/envelope/normalize.js';
import { assertEnvelope } from '../support/envelope-invariants.js';

const basePolicy: NormalizePolicy = { remote: 'weather', maxErrorMessageBytes: 200, maxJsonDepth: 64, keepRemoteErrorData: false };

interface CallOptions {
  status?: number;
  id?: JsonRpcId;
  policy?: Partial<NormalizePolicy>;
  /** Strings planted in the body that must not reach the caller. */
  forbidden?: string[];
}

/** Normalizes one reply, checks the whole envelope contract, and returns the parsed parts. */
function call(body: string | Buffer, opts: CallOptions = {}) {
  const status = opts.status ?? 200;
  const id = 'id' in opts ? (opts.id as JsonRpcId) : 'call-1';
  const policy = { ...basePolicy, ...opts.policy };
  const out = normalizeReply({ status, body: Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8') }, id, policy);
  assertEnvelope(out, { callerId: id, status, policy, forbidden: opts.forbidden ?? [] });
  const env = JSON.parse(out.json) as { id: JsonRpcId; result?: unknown; error?: { code: number; message: string; data: Array<Record<string, unknown>> } };
  // The gateway's ErrorInfo, found by its domain (A2A's comes first for A2A codes).
  const info = findGatewayErrorInfo(env.error?.data) as { reason: string; metadata: Record<string, string> } | undefined;
  return { out, env, error: env.error, info };
}

const msg = (reason: keyof typeof gatewayErrors, detail?: string): string =>
  detail ? `${gatewayErrors[reason].message}: ${detail}` : gatewayErrors[reason].message;

/** Deterministic pseudo-random bytes, so a failure can be replayed. */
function garbage(length: number, seed: number): Buffer {
  const out = Buffer.alloc(length);
  let x = seed >>> 0;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

const LOGIN_PAGE = `<!DOCTYPE html>
<html><head><title>Sign in to Contoso SSO</title></head>
<body><form action="/login"><input type="hidden" name="csrf" value="csrf_83f1c2d9">
<label>Password</label><input type="password"></form></body></html>`;
const LOGIN_MARKERS = ['Contoso', 'csrf_83f1c2d9', 'Password', '<html', 'DOCTYPE'];

// ------------------------------------------------------------ non-JSON bodies

t.test('non-JSON: 8 KiB of random garbage bytes (200) carries nothing of the body', async (t) => {
  const marker = 'GARBAGE_MARKER_5521';
  const body = Buffer.concat([Buffer.from('<'), garbage(4096, 7), Buffer.from(marker), garbage(4096 - marker.length - 1, 9)]);
  t.equal(body.length, 8192);
  const { out, info, error } = call(body, { forbidden: [marker] });
  // Whether a body is JSON at all is decided on its first byte, before UTF-8 decoding.
  t.equal(out.outcome, 'NON_JSON_RESPONSE');
  t.equal(error?.message, msg('NON_JSON_RESPONSE'));
  t.same(info?.metadata, { remote: 'weather', httpStatus: '200' });
});

t.test('non-JSON: 8 KiB of random garbage bytes (500) gives the HTTP status only', async (t) => {
  const marker = 'GARBAGE_MARKER_9034';
  const body = Buffer.concat([garbage(4000, 3), Buffer.from(marker), garbage(8192 - 4000 - marker.length, 4)]);
  const { out, error, info } = call(body, { status: 500, forbidden: [marker] });
  t.equal(out.outcome, 'UPSTREAM_HTTP_ERROR');
  t.equal(error?.message, msg('UPSTREAM_HTTP_ERROR', 'HTTP 500'));
  t.equal(info?.metadata.httpStatus, '500');
});

t.test('non-JSON: HTML login page with status 200 → NON_JSON_RESPONSE', async (t) => {
  const { out, error, info } = call(LOGIN_PAGE, { forbidden: LOGIN_MARKERS });
  t.equal(out.outcome, 'NON_JSON_RESPONSE');
  t.equal(error?.code, -32006);
  t.equal(error?.message, msg('NON_JSON_RESPONSE'));
  t.equal(info?.metadata.httpStatus, '200');
});

t.test('non-JSON: HTML login page with status 502 → UPSTREAM_HTTP_ERROR', async (t) => {
  const { out, error, info } = call(LOGIN_PAGE, { status: 502, forbidden: LOGIN_MARKERS });
  t.equal(out.outcome, 'UPSTREAM_HTTP_ERROR');
  t.equal(error?.message, msg('UPSTREAM_HTTP_ERROR', 'HTTP 502'));
  t.equal(info?.metadata.httpStatus, '502');
});

t.test('non-JSON: empty body with status 401 → UPSTREAM_HTTP_ERROR', async (t) => {
  const { out, error, info } = call('', { status: 401 });
  t.equal(out.outcome, 'UPSTREAM_HTTP_ERROR');
  t.equal(error?.message, msg('UPSTREAM_HTTP_ERROR', 'HTTP 401'));
  t.equal(info?.metadata.httpStatus, '401');
});

t.test('non-JSON: empty or whitespace-only body with status 200 → EMPTY_RESPONSE', async (t) => {
  t.equal(call('').out.outcome, 'EMPTY_RESPONSE');
  t.equal(call(' \r\n\t ').out.outcome, 'EMPTY_RESPONSE');
  t.equal(call('\ufeff').out.outcome, 'EMPTY_RESPONSE', 'a lone BOM is empty');
});

t.test('non-JSON: plain text with status 500 → UPSTREAM_HTTP_ERROR', async (t) => {
  const text = 'Internal Server Error: db password=hunter2 at 10.0.0.7';
  const { out, error } = call(text, { status: 500, forbidden: ['hunter2', '10.0.0.7', 'Internal Server'] });
  t.equal(out.outcome, 'UPSTREAM_HTTP_ERROR');
  t.equal(error?.message, msg('UPSTREAM_HTTP_ERROR', 'HTTP 500'));
});

t.test('non-JSON: plain text with status 200 → NON_JSON_RESPONSE', async (t) => {
  t.equal(call('OK done SECRET_TXT_1', { forbidden: ['SECRET_TXT_1'] }).out.outcome, 'NON_JSON_RESPONSE');
});

t.test('non-JSON: JSON-looking but invalid text carries nothing of the body', async (t) => {
  const body = '{"jsonrpc":"2.0", oops LEAK_MARK_77 }';
  t.equal(call(body, { forbidden: ['LEAK_MARK_77', 'oops'] }).out.outcome, 'INVALID_JSON');
  t.equal(call(body, { status: 503, forbidden: ['LEAK_MARK_77'] }).out.outcome, 'UPSTREAM_HTTP_ERROR');
  t.equal(call('nope LEAK_MARK_78', { forbidden: ['LEAK_MARK_78'] }).out.outcome, 'INVALID_JSON', 'starts like null');
});

// ------------------------------------------------------------ remote JSON-RPC errors

t.test('remote error: code kept, extra members (reason, stack) absent', async (t) => {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 5,
    error: { code: -32001, message: 'no such task', reason: 'DB_ROW_MISSING_X1', stack: 'at Object.<anonymous> (/srv/app/STACK_FILE.js:1:1)' },
  });
  const { out, error, info } = call(body, { forbidden: ['DB_ROW_MISSING_X1', 'STACK_FILE', '/srv/app', 'stack'] });
  t.equal(out.outcome, 'REMOTE_ERROR');
  t.equal(error?.code, -32001);
  t.equal(error?.message, 'no such task');
  t.equal(info?.reason, 'REMOTE_ERROR');
  t.same(Object.keys(error ?? {}).sort(), ['code', 'data', 'message']);
});

t.test('remote error: without message → the standard name for the code', async (t) => {
  t.equal(call('{"error":{"code":-32001}}').error?.message, 'Task not found');
  t.equal(call('{"error":{"code":-32602,"message":""}}').error?.message, 'Invalid params', 'empty message');
  t.equal(call('{"error":{"code":-32009,"message":"\\u0000\\u202e\\n"}}').error?.message, 'Version not supported', 'message that sanitizes to nothing');
  t.equal(call('{"error":{"code":-32004,"message":42}}').error?.message, 'This operation is not supported', 'non-string message');
});

t.test('remote error: unknown code without message → "Remote error"', async (t) => {
  const { error, out } = call('{"error":{"code":4242}}');
  t.equal(out.outcome, 'REMOTE_ERROR');
  t.equal(error?.code, 4242);
  t.equal(error?.message, 'Remote error');
});

t.test('remote error: code missing → -32603 with metadata remoteCode "missing"', async (t) => {
  const { error, info } = call('{"error":{"message":"it broke"}}');
  t.equal(error?.code, -32603);
  t.equal(error?.message, 'it broke');
  t.equal(info?.metadata.remoteCode, 'missing');
});

t.test('remote error: non-integer code → -32603 with metadata remoteCode "missing"', async (t) => {
  for (const code of ['1.5', '"-32001"', 'null', 'true', '[1]', '1e400', '9007199254740993']) {
    const { error, info } = call(`{"error":{"code":${code}}}`);
    t.equal(error?.code, -32603, code);
    t.equal(error?.message, 'Internal error', `${code}: standard name for -32603`);
    t.equal(info?.metadata.remoteCode, 'missing', code);
  }
  t.equal(call('{"error":{"code":-32001}}').info?.metadata.remoteCode, undefined, 'an integer code has no remoteCode');
});

t.test('remote error: "error": "boom" → sanitized message, code -32603', async (t) => {
  const plain = call('{"jsonrpc":"2.0","id":1,"error":"boom"}');
  t.equal(plain.out.outcome, 'REMOTE_ERROR');
  t.equal(plain.error?.code, -32603);
  t.equal(plain.error?.message, 'boom');
  t.equal(call('{"error":"\\u202eboom\\u0000\\r\\nagain  "}').error?.message, 'boom again');
});

t.test('remote error: error neither object nor string → INVALID_RESPONSE', async (t) => {
  const cases: Array<[string, string]> = [
    ['5', '"error" is the number 5, neither an object nor a string'],
    ['true', '"error" is the boolean true, neither an object nor a string'],
    ['[1,2]', '"error" is an array, neither an object nor a string'],
  ];
  for (const [value, detail] of cases) {
    const { out, error } = call(`{"jsonrpc":"2.0","id":1,"error":${value}}`);
    t.equal(out.outcome, 'INVALID_RESPONSE', value);
    t.equal(error?.message, msg('INVALID_RESPONSE', detail));
  }
});

// ------------------------------------------------------------ shapes that are not responses

t.test('body shape: not an object → INVALID_RESPONSE naming the shape', async (t) => {
  const cases: Array<[string, string]> = [
    ['[{"jsonrpc":"2.0","id":1,"result":1}]', 'body is an array'],
    ['"just a string"', 'body is a string'],
    ['42', 'body is a number'],
    ['null', 'body is null'],
    ['true', 'body is a boolean'],
    ['false', 'body is a boolean'],
  ];
  for (const [body, detail] of cases) {
    const { out, error } = call(body, { forbidden: ['just a string'] });
    t.equal(out.outcome, 'INVALID_RESPONSE', body);
    t.equal(error?.message, msg('INVALID_RESPONSE', detail), body);
  }
});

t.test('body shape: not an object with a non-2xx status → UPSTREAM_HTTP_ERROR', async (t) => {
  t.equal(call('[1]', { status: 404 }).out.outcome, 'UPSTREAM_HTTP_ERROR');
});

t.test('body shape: object with neither result nor error → INVALID_RESPONSE', async (t) => {
  const { out, error } = call('{"jsonrpc":"2.0","id":1}');
  t.equal(out.outcome, 'INVALID_RESPONSE');
  t.equal(error?.message, msg('INVALID_RESPONSE', 'neither "result" nor "error" is present'));
});

t.test('body shape: "error": null and no result → INVALID_RESPONSE', async (t) => {
  t.equal(call('{"jsonrpc":"2.0","id":1,"error":null}').error?.message, msg('INVALID_RESPONSE', '"error" is null and there is no "result"'));
  t.equal(call('{"error":false}').error?.message, msg('INVALID_RESPONSE', '"error" is the boolean false and there is no "result"'));
  t.equal(call('{"error":0}').error?.message, msg('INVALID_RESPONSE', '"error" is the number 0 and there is no "result"'));
  t.equal(call('{"error":""}').error?.message, msg('INVALID_RESPONSE', '"error" is an empty string and there is no "result"'));
});

// ------------------------------------------------------------ success

t.test('success: a falsy error beside a result is a success', async (t) => {
  for (const falsy of ['false', 'null', '0', '""']) {
    const { out, env } = call(`{"jsonrpc":"2.0","id":1,"error":${falsy},"result":{"ok":true}}`);
    t.equal(out.outcome, 'ok', falsy);
    t.same(env.result, { ok: true });
    t.notOk('error' in env, `${falsy}: no error member`);
  }
});

t.test('success: upstream id and jsonrpc are replaced by the caller id', async (t) => {
  const body = '{"jsonrpc":"1.0","id":"upstream-99","result":[1]}';
  t.equal(call(body, { id: 'caller-7' }).out.json, '{"jsonrpc":"2.0","id":"caller-7","result":[1]}');
  t.equal(call(body, { id: 12 }).out.json, '{"jsonrpc":"2.0","id":12,"result":[1]}');
  t.equal(call(body, { id: null }).out.json, '{"jsonrpc":"2.0","id":null,"result":[1]}');
  t.equal(call('{"result":[1]}', { id: 'x' }).out.json, '{"jsonrpc":"2.0","id":"x","result":[1]}', 'no upstream id at all');
  t.equal(call('{"id":"x","result":1}', { id: 'a"b\\c' }).env.id, 'a"b\\c', 'caller id is escaped');
});

t.test('success: caller id is used on errors too', async (t) => {
  t.equal(call('<html>', { id: null }).env.id, null);
  t.equal(call('{"id":3,"error":{"code":1}}', { id: 'mine' }).env.id, 'mine');
});

t.test('success: result bytes are spliced verbatim', async (t) => {
  const digits = '9'.repeat(5000);
  const results = [
    '1e400',
    digits,
    '-0.000000000000000000000000000001',
    '{"b":1,"a":2,"c":{"z":0,"y":1}}',
    '"\\u00e9\\u20ac \u00e9\u20ac\ud83d\ude00 \\ud83d\\ude00"',
    '{ "spaced" : [ 1 ,\n 2 ] }',
    'null',
    '{"constructor":{"name":"fine"}}',
  ];
  for (const raw of results) {
    const { out } = call(`{"jsonrpc":"2.0","result":${raw},"id":"up"}`);
    t.equal(out.json, `{"jsonrpc":"2.0","id":"call-1","result":${raw}}`, raw.slice(0, 40));
  }
});

t.test('success: a BOM-prefixed JSON body is accepted', async (t) => {
  const { out } = call(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"id":1,"result":{"a":1}}')]));
  t.equal(out.outcome, 'ok');
  t.equal(out.json, '{"jsonrpc":"2.0","id":"call-1","result":{"a":1}}');
});

t.test('success: the parsed result is returned for later stages', async (t) => {
  t.same(call('{"result":{"kind":"task","id":"t1"}}').out.result, { kind: 'task', id: 't1' });
});

// ------------------------------------------------------------ depth

const nestedResult = (levels: number): string => `{"jsonrpc":"2.0","id":1,"result":${'['.repeat(levels)}${']'.repeat(levels)}}`;

t.test('depth: result nested to exactly maxJsonDepth passes', async (t) => {
  // The envelope object is level 1, so 9 arrays inside make 10 levels.
  const { out } = call(nestedResult(9), { policy: { maxJsonDepth: 10 } });
  t.equal(out.outcome, 'ok');
});

t.test('depth: one level deeper than maxJsonDepth → JSON_TOO_DEEP', async (t) => {
  const { out, error } = call(nestedResult(10), { policy: { maxJsonDepth: 10 } });
  t.equal(out.outcome, 'JSON_TOO_DEEP');
  t.equal(error?.message, msg('JSON_TOO_DEEP', 'deeper than 10 levels'));
});

t.test('depth: 100,000-deep nesting fails fast', async (t) => {
  const deep = '['.repeat(100_000) + ']'.repeat(100_000);
  for (const body of [`{"result":${deep}}`, `{"id":1,"id":2,"result":${deep}}`, `{"x":"\\ud800","result":${deep}}`]) {
    const start = process.hrtime.bigint();
    const { out } = call(body);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    // The outcome is the real check: any other reason means the body reached JSON.parse first.
    t.equal(out.outcome, 'JSON_TOO_DEEP', body.slice(0, 20));
    t.ok(ms < 250, `${body.slice(0, 20)}: ${ms.toFixed(2)} ms (loose bound: CI machines are noisy)`);
  }
});

// ------------------------------------------------------------ hostile encodings and keys

t.test('invalid UTF-8 with a 2xx status → INVALID_UTF8', async (t) => {
  const cases = [
    Buffer.from([0x7b, 0x22, 0x72, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
    Buffer.from([0x7b, 0x22, 0xc0, 0x80, 0x22, 0x3a, 0x31, 0x7d]), // overlong NUL
    Buffer.from([0x7b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x3a, 0x31, 0x7d]), // encoded surrogate
    Buffer.concat([Buffer.from('{"result":"'), Buffer.from([0xe2, 0x82])]), // cut multibyte
  ];
  for (const body of cases) t.equal(call(body).out.outcome, 'INVALID_UTF8', body.toString('hex'));
  t.equal(call(cases[0] as Buffer, { status: 299 }).out.outcome, 'INVALID_UTF8', 'upper edge of 2xx');
});

t.test('invalid UTF-8 with a non-2xx status → UPSTREAM_HTTP_ERROR', async (t) => {
  const body = Buffer.from([0x7b, 0xff, 0x7d]);
  t.equal(call(body, { status: 500 }).out.outcome, 'UPSTREAM_HTTP_ERROR');
  t.equal(call(body, { status: 300 }).out.outcome, 'UPSTREAM_HTTP_ERROR', 'just past 2xx');
  t.equal(call(body, { status: 199 }).out.outcome, 'UPSTREAM_HTTP_ERROR', 'just before 2xx');
});

t.test('unsafe keys: __proto__ → UNSAFE_JSON', async (t) => {
  const { out, error } = call('{"jsonrpc":"2.0","id":1,"result":{"__proto__":{"isAdmin":true}}}');
  t.equal(out.outcome, 'UNSAFE_JSON');
  t.equal(error?.message, msg('UNSAFE_JSON'));
  t.equal(call('{"__proto__":{"x":1},"result":1}').out.outcome, 'UNSAFE_JSON', 'at top level');
});

t.test('unsafe keys: __proto__ spelled with unicode escapes → UNSAFE_JSON', async (t) => {
  t.equal(call('{"result":{"\\u005f_proto__":{"isAdmin":true}}}').out.outcome, 'UNSAFE_JSON');
  t.equal(call('{"result":{"\\u005F\\u005Fproto\\u005F\\u005F":{}}}').out.outcome, 'UNSAFE_JSON');
});

t.test('unsafe keys: constructor.prototype → UNSAFE_JSON', async (t) => {
  t.equal(call('{"result":{"constructor":{"prototype":{"isAdmin":true}}}}').out.outcome, 'UNSAFE_JSON');
  t.equal(call('{"result":{"constructor":{"name":"x"}}}').out.outcome, 'ok', 'constructor alone is fine');
});

t.test('unsafe keys with a non-2xx status → UPSTREAM_HTTP_ERROR', async (t) => {
  t.equal(call('{"error":{"code":1,"__proto__":{}}}', { status: 500 }).out.outcome, 'UPSTREAM_HTTP_ERROR');
});

t.test('duplicate top-level id/result/error → INVALID_RESPONSE', async (t) => {
  const bodies: Record<string, string> = {
    id: '{"jsonrpc":"2.0","id":1,"result":2,"id":3}',
    result: '{"jsonrpc":"2.0","result":1,"id":3,"result":4}',
    error: '{"jsonrpc":"2.0","error":{"code":1},"id":3,"error":{"code":2}}',
  };
  for (const [member, body] of Object.entries(bodies)) {
    const { out, error } = call(body);
    t.equal(out.outcome, 'INVALID_RESPONSE', member);
    t.equal(error?.message, msg('INVALID_RESPONSE', `duplicate "${member}" member`));
  }
  t.equal(call('{"result":1,"re\\u0073ult":2}').error?.message, msg('INVALID_RESPONSE', 'duplicate "result" member'), 'escaped key');
  t.equal(call('{"result":{"id":1,"id":2}}').out.outcome, 'ok', 'nested duplicates are fine');
});

t.test('lone surrogate escapes → INVALID_JSON; a valid pair passes', async (t) => {
  const { out, error } = call('{"result":{"text":"a\\ud800b"}}');
  t.equal(out.outcome, 'INVALID_JSON');
  t.equal(error?.message, msg('INVALID_JSON', 'string with a lone surrogate escape'));
  t.equal(call('{"result":"\\udc00"}').out.outcome, 'INVALID_JSON', 'lone low surrogate');
  const pair = call('{"result":"\\ud83d\\ude00"}');
  t.equal(pair.out.outcome, 'ok');
  t.equal(pair.env.result, '😀');
});

t.test('upstream id 1e400 or 2^53+1 → INVALID_RESPONSE', async (t) => {
  t.equal(call('{"id":1e400,"result":1}').error?.message, msg('INVALID_RESPONSE', '"id" is a number out of range'));
  t.equal(call('{"id":9007199254740993,"result":1}').error?.message, msg('INVALID_RESPONSE', '"id" is a number that does not survive a round trip'));
  t.equal(call('{"id":9007199254740991,"result":1}').out.outcome, 'ok', '2^53-1 is fine');
  t.equal(call('{"id":true,"result":1}').error?.message, msg('INVALID_RESPONSE', '"id" is the boolean true'));
  t.equal(call('{"id":{"a":1},"result":1}').error?.message, msg('INVALID_RESPONSE', '"id" is an object'));
});

// ------------------------------------------------------------ HTTP status and JSON-RPC together

t.test('non-2xx with a valid JSON-RPC error → REMOTE_ERROR with httpStatus', async (t) => {
  const { out, error, info } = call('{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"gone"}}', { status: 404 });
  t.equal(out.outcome, 'REMOTE_ERROR');
  t.equal(error?.code, -32001);
  t.equal(error?.message, 'gone');
  t.same(info?.metadata, { remote: 'weather', httpStatus: '404' });
});

t.test('non-2xx with a result → UPSTREAM_HTTP_ERROR', async (t) => {
  const { out, error } = call('{"jsonrpc":"2.0","id":1,"result":{"secret":"RESULT_ON_500"}}', { status: 500, forbidden: ['RESULT_ON_500'] });
  t.equal(out.outcome, 'UPSTREAM_HTTP_ERROR');
  t.equal(error?.message, msg('UPSTREAM_HTTP_ERROR', 'HTTP 500'));
});

// ------------------------------------------------------------ remote error data

const typed = (n: number) => ({ '@type': `type.example.com/Detail${n}`, n });

t.test('keepRemoteErrorData false drops data', async (t) => {
  const body = JSON.stringify({ error: { code: 1, message: 'm', data: [typed(1), typed(2)] } });
  const { error } = call(body, { policy: { keepRemoteErrorData: false } });
  t.equal(error?.data.length, 1);
});

t.test('keepRemoteErrorData true keeps only @type objects', async (t) => {
  const data = ['str', 7, null, [typed(9)], { noType: 1 }, { '@type': 5 }, typed(1), true, typed(2)];
  const { error } = call(JSON.stringify({ error: { code: 1, message: 'm', data } }), { policy: { keepRemoteErrorData: true } });
  t.same(error?.data.slice(1), [typed(1), typed(2)]);
});

t.test('keepRemoteErrorData true keeps at most 4 details', async (t) => {
  const data = [1, 2, 3, 4, 5, 6].map(typed);
  const { error } = call(JSON.stringify({ error: { code: 1, message: 'm', data } }), { policy: { keepRemoteErrorData: true } });
  t.same(error?.data.slice(1), data.slice(0, 4));
  const four = call(JSON.stringify({ error: { code: 1, data: data.slice(0, 4) } }), { policy: { keepRemoteErrorData: true } });
  t.equal(four.error?.data.length, 5, 'exactly 4 kept');
});

t.test('keepRemoteErrorData true sanitizes every string in a detail', async (t) => {
  const data = [{ '@type': 't\u202e', reason: 'evil\u0000\u200b', nested: { deep: ['x\u2066y', 'ok\n\nthen'] }, ['k\u0007ey']: 'v' }];
  const { error } = call(JSON.stringify({ error: { code: 1, message: 'm', data } }), { policy: { keepRemoteErrorData: true, maxErrorMessageBytes: 16 } });
  t.same(error?.data[1], { '@type': 't', reason: 'evil', nested: { deep: ['xy', 'ok then'] }, key: 'v' });
  const long = call(JSON.stringify({ error: { code: 1, data: [{ '@type': 't', s: 'a'.repeat(100) }] } }), { policy: { keepRemoteErrorData: true, maxErrorMessageBytes: 16 } });
  t.equal(long.error?.data[1]?.s, 'a'.repeat(16), 'detail strings bounded like the message');
});

t.test('keepRemoteErrorData true drops keys that would sanitize into prototype keys', async (t) => {
  const data = [{ '@type': 't', '__pro\u200bto__': { polluted: 'yes' }, 'construc\u200btor': { 'proto\u200btype': { polluted: 'yes' } }, ok: 1 }];
  const { error } = call(JSON.stringify({ error: { code: 1, data } }), { policy: { keepRemoteErrorData: true } });
  t.same(error?.data[1], { '@type': 't', constructor: {}, ok: 1 });
});

t.test('keepRemoteErrorData true drops non-array data', async (t) => {
  for (const data of [typed(1), 'str', 5, null, true]) {
    const { error } = call(JSON.stringify({ error: { code: 1, message: 'm', data } }), { policy: { keepRemoteErrorData: true } });
    t.equal(error?.data.length, 1, JSON.stringify(data));
  }
});

// ------------------------------------------------------------ message bound

t.test('remote message exactly maxErrorMessageBytes stays whole', async (t) => {
  const text = 'm'.repeat(30) + 'é'; // 32 bytes
  const { error, info } = call(JSON.stringify({ error: { code: 1, message: text } }), { policy: { maxErrorMessageBytes: 32 } });
  t.equal(error?.message, text);
  t.equal(info?.metadata.messageTruncated, undefined);
});

t.test('remote message one byte over maxErrorMessageBytes is truncated and flagged', async (t) => {
  const text = 'm'.repeat(33);
  const { error, info } = call(JSON.stringify({ error: { code: 1, message: text } }), { policy: { maxErrorMessageBytes: 32 } });
  t.equal(error?.message, 'm'.repeat(32));
  t.equal(info?.metadata.messageTruncated, 'true');
  const multi = call(JSON.stringify({ error: { code: 1, message: 'm'.repeat(31) + 'é' } }), { policy: { maxErrorMessageBytes: 32 } });
  t.equal(multi.error?.message, 'm'.repeat(31), 'a straddling é is dropped whole');
  t.equal(multi.info?.metadata.messageTruncated, 'true');
  const str = call(JSON.stringify({ error: 'x'.repeat(17) }), { policy: { maxErrorMessageBytes: 16 } });
  t.equal(str.error?.message, 'x'.repeat(16), 'string errors are bounded too');
  t.equal(str.info?.metadata.messageTruncated, 'true');
});

t.test('remote message truncation keeps remoteCode metadata', async (t) => {
  const { info } = call(JSON.stringify({ error: { message: 'y'.repeat(40) } }), { policy: { maxErrorMessageBytes: 16 } });
  t.same(info?.metadata, { remote: 'weather', httpStatus: '200', remoteCode: 'missing', messageTruncated: 'true' });
});

// ------------------------------------------------------------ the ErrorInfo contract

t.test('error.data: the gateway\'s ErrorInfo (string remote and httpStatus), after A2A\'s for A2A codes', async (t) => {
  const bodies: Array<[string, number]> = [
    ['<html>', 200], ['<html>', 503], ['', 200], ['{"error":{"code":-32001}}', 200], ['{"error":"boom"}', 418],
    ['[1]', 200], ['{"id":1e400,"result":1}', 200], ['{"result":{"__proto__":1}}', 200], ['{"result":1', 200],
  ];
  for (const [body, status] of bodies) {
    for (const caller of ['1.0', '0.3'] as const) {
      const { error, out } = call(body, { status, policy: { caller } });
      const a2aReason = a2aErrorReasons[error?.code ?? 0];
      const first = caller === '1.0' && a2aReason !== undefined;
      if (first) t.same(error?.data[0], { '@type': ERROR_INFO_TYPE, reason: a2aReason, domain: A2A_ERROR_DOMAIN }, `${body} ${caller}: A2A first`);
      const info = error?.data[first ? 1 : 0];
      t.equal(info?.['@type'], ERROR_INFO_TYPE, body);
      t.equal(info?.domain, ERROR_DOMAIN, body);
      t.equal(info?.reason, out.outcome, body);
      t.same(info?.metadata, { remote: 'weather', httpStatus: String(status) }, body);
      t.equal(error?.data.length, first ? 2 : 1, `${body} ${caller}: nothing else`);
    }
  }
});

t.test('A2A codes: A2A\'s ErrorInfo comes first for 1.0 callers, synthesized from the code, never for 0.3 callers', async (t) => {
  for (const [code, reason] of Object.entries(a2aErrorReasons)) {
    const one = call(JSON.stringify({ error: { code: Number(code), message: 'm' } }));
    t.same(one.error?.data.map((d) => [d.domain, d.reason]), [[A2A_ERROR_DOMAIN, reason], [ERROR_DOMAIN, 'REMOTE_ERROR']], reason);
    const legacy = call(JSON.stringify({ error: { code: Number(code), message: 'm' } }), { policy: { caller: '0.3' } });
    t.same(legacy.error?.data.map((d) => d.domain), [ERROR_DOMAIN], `${reason}: 0.3 callers get the gateway's alone`);
  }
  for (const code of [-32700, -32600, -32601, -32602, -32603, -32000, -32010, 1]) {
    const other = call(JSON.stringify({ error: { code, message: 'm' } }));
    t.same(other.error?.data.map((d) => d.domain), [ERROR_DOMAIN], `${code} is not an A2A-specific code`);
  }
  const gateway = failureEnvelope(1, 'INVALID_JSON', { remote: 'weather', httpStatus: 200 });
  t.same(JSON.parse(gateway.json).error.data.map((d: Record<string, string>) => d.reason), ['INVALID_AGENT_RESPONSE', 'INVALID_JSON'], 'the gateway\'s own -32006 too');
  const gateway03 = failureEnvelope(1, 'INVALID_JSON', { remote: 'weather', httpStatus: 200, caller: '0.3' });
  t.same(JSON.parse(gateway03.json).error.data.map((d: Record<string, string>) => d.reason), ['INVALID_JSON']);
});

t.test('the remote\'s A2A ErrorInfo: its metadata carried over, sanitized and bounded, whatever keepRemoteErrorData says', async (t) => {
  const a2aInfo = (metadata: unknown, reason = 'TASK_NOT_FOUND', domain = A2A_ERROR_DOMAIN) => ({ '@type': ERROR_INFO_TYPE, reason, domain, metadata });
  const body = (data: unknown, code = -32001) => JSON.stringify({ error: { code, message: 'gone', data } });
  const { error } = call(body([{ '@type': 'x/y' }, a2aInfo({ taskId: 't-1\u202e\u0000', n: 5, ok: true, obj: { a: 1 }, list: [1], nul: null })]));
  t.same(error?.data[0], { '@type': ERROR_INFO_TYPE, reason: 'TASK_NOT_FOUND', domain: A2A_ERROR_DOMAIN, metadata: { taskId: 't-1', n: '5', ok: 'true' } });
  t.equal(error?.data.length, 2, 'the other details stay dropped (keepRemoteErrorData off)');

  const entries = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
  t.equal(Object.keys(call(body([a2aInfo(entries(8))])).error?.data[0]?.metadata as object).length, 8, '8 entries: all kept');
  t.equal(Object.keys(call(body([a2aInfo(entries(9))])).error?.data[0]?.metadata as object).length, 8, '9 entries: the 9th dropped');
  const key64 = 'k'.repeat(64);
  t.same(call(body([a2aInfo({ [key64]: 'v', ['k'.repeat(65)]: 'w' })])).error?.data[0]?.metadata, { [key64]: 'v' }, 'keys: 64 bytes kept, 65 dropped');
  const bounded = call(body([a2aInfo({ v: 'a'.repeat(17) })]), { policy: { maxErrorMessageBytes: 16 } });
  t.same(bounded.error?.data[0]?.metadata, { v: 'a'.repeat(16) }, 'values bounded like the message');
  t.same(call(body([a2aInfo({ '__pro\u200bto__': 'x', ok: 'y' })])).error?.data[0]?.metadata, { ok: 'y' }, 'no prototype keys re-created');

  const mismatched = call(body([a2aInfo({ taskId: 't' }, 'TASK_NOT_CANCELABLE')]));
  t.same(mismatched.error?.data[0], { '@type': ERROR_INFO_TYPE, reason: 'TASK_NOT_FOUND', domain: A2A_ERROR_DOMAIN }, 'a reason that disagrees with the code: the code wins, nothing carried');
  const noMeta = call(body([a2aInfo(undefined)]));
  t.same(noMeta.error?.data[0], { '@type': ERROR_INFO_TYPE, reason: 'TASK_NOT_FOUND', domain: A2A_ERROR_DOMAIN }, 'no metadata: none written');
  const legacy = call(body([a2aInfo({ taskId: 't' })]), { policy: { caller: '0.3', keepRemoteErrorData: true } });
  t.same(legacy.error?.data.map((d) => d.domain), [ERROR_DOMAIN], '0.3 callers: no A2A ErrorInfo, and none passed as a detail');
});

t.test('keepRemoteErrorData: a remote ErrorInfo in the gateway\'s or A2A\'s domain is never passed as a detail', async (t) => {
  const forged = [
    { '@type': ERROR_INFO_TYPE, reason: 'OK', domain: ERROR_DOMAIN },
    { '@type': ERROR_INFO_TYPE, reason: 'OK', domain: 'a2a-egress\u200b' },
    { '@type': 'type.googleapis.com/google.rpc.ErrorInfo\u200b', reason: 'OK', domain: A2A_ERROR_DOMAIN },
    { '@type': ERROR_INFO_TYPE, reason: 'KEPT', domain: 'example.com' },
  ];
  const { error } = call(JSON.stringify({ error: { code: -32603, message: 'm', data: forged } }), { policy: { keepRemoteErrorData: true } });
  t.same(error?.data.map((d) => [d.domain, d.reason]), [[ERROR_DOMAIN, 'REMOTE_ERROR'], ['example.com', 'KEPT']]);
});

t.test('normalizeJsonText defaults to HTTP 200 (the SSE event path)', async (t) => {
  const out = normalizeJsonText('{"id":1,"result":{"kind":"status-update"}}', 'c', basePolicy);
  t.equal(out.json, '{"jsonrpc":"2.0","id":"c","result":{"kind":"status-update"}}');
  const bad = normalizeJsonText('{"id":1}', 'c', basePolicy);
  assertEnvelope(bad, { callerId: 'c', status: 200, policy: basePolicy });
  t.equal(bad.outcome, 'INVALID_RESPONSE');
});

t.test('fail builds a catalogue error with string metadata', async (t) => {
  const out = failureEnvelope(7, 'UPSTREAM_TIMEOUT', { remote: 'weather', httpStatus: 504, metadata: { afterMs: 300, retry: false } });
  assertEnvelope(out, { callerId: 7, status: 504, policy: basePolicy });
  const env = JSON.parse(out.json);
  t.equal(env.error.code, -32603);
  t.same(findGatewayErrorInfo(env.error.data)?.metadata, { remote: 'weather', httpStatus: '504', afterMs: '300', retry: 'false' });
});
