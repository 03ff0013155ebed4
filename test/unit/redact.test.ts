/**
 * The redactor on its own and inside the normalizer: every form a remote
 * could echo a credential in becomes `[redacted]`, a credential where it
 * cannot be replaced is refused, and nothing of it is ever half-shown.
 */
import { inspect } from 'node:util';
import t from 'tap';
import { normalizeJsonText, normalizeReply, type NormalizePolicy } from '../../src/envelope/normalize.js';
import { MIN_SECRET_BYTES, REDACTED, Redactor } from '../../src/envelope/redact.js';
import { formsOf } from '../../src/envelope/secret-forms.js';

const SECRET = 'tok-7f3a9c0d51e2/abc+def=';
const OTHER = 'previous-token-55aa01';
const r = new Redactor([SECRET, OTHER]);
const text = (s: string) => r.text(s);
const ESC = '\u001b';

t.test('the value itself, anywhere in a text', async (t) => {
  t.same(text(`invalid token Bearer ${SECRET}`), { text: `invalid token Bearer ${REDACTED}`, count: 1 });
  t.same(text(SECRET), { text: REDACTED, count: 1 });
  t.same(text(`a${SECRET}b${OTHER}c`), { text: `a${REDACTED}b${REDACTED}c`, count: 2 }, 'both values');
  t.same(text('nothing to see'), { text: 'nothing to see', count: 0 });
  const plain = 'nothing to see';
  t.equal(text(plain).text, plain, 'an untouched text is returned as it is');
});

t.test('characters a reader does not see, placed inside the value', async (t) => {
  const split = (sep: string) => [...SECRET].join(sep);
  for (const [name, sep] of [
    ['zero-width space', '\u200b'],
    ['NUL', '\u0000'],
    ['newline', '\n'],
    ['space', ' '],
    ['soft hyphen (Cf)', '\u00ad'],
    ['BOM', '\ufeff'],
    ['bidi override', '\u202e'],
    ['tag character', '\u{E0041}'],
    ['CSI colour', `${ESC}[31m`],
    ['OSC title', `${ESC}]0;x\u0007`],
    ['8-bit CSI', '\u009b1m'],
  ] as const) {
    t.same(text(`x ${split(sep)} y`), { text: `x ${REDACTED} y`, count: 1 }, name);
  }
  t.same(text(`x t${ESC}[2Jok-7f3a9c0d51e2/abc+def= y`), { text: `x ${REDACTED} y`, count: 1 }, 'one sequence in one place');
  t.same(text(`x tok${ESC}]8;;http://e/${ESC}\\-7f3a9c0d51e2/abc+def= y`), { text: `x ${REDACTED} y`, count: 1 }, 'an OSC ended by ESC \\');
  t.equal(text(`tok-7f3a9c0d51e2/abc+de${ESC}]0;f=`).count, 0, 'an unterminated OSC swallows the rest: what a reader sees is no credential');
});

t.test('percent-encoded forms', async (t) => {
  for (const form of [encodeURIComponent(SECRET), encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()), encodeURI(SECRET)]) {
    t.same(text(`https://x.example/?t=${form}&a=1`), { text: `https://x.example/?t=${REDACTED}&a=1`, count: 1 }, form);
  }
  const strict = [...SECRET].map((c) => (/[A-Za-z0-9_.~-]/.test(c) ? c : `%${c.charCodeAt(0).toString(16).toUpperCase()}`)).join('');
  t.equal(text(strict).text, REDACTED, 'every reserved character encoded');
});

t.test('base64 and base64url, at each alignment inside a longer blob', async (t) => {
  for (const prefix of ['', 'u', 'us', 'user:', 'Bearer ']) {
    const bytes = Buffer.from(`${prefix}${SECRET}`);
    for (const encoding of ['base64', 'base64url'] as const) {
      const blob = bytes.toString(encoding);
      const out = text(`auth=${blob}`);
      t.equal(out.count, 1, `${encoding}, ${prefix.length} bytes before`);
      t.notMatch(Buffer.from(out.text.slice(5).replace(REDACTED, ''), encoding).toString('latin1'), SECRET.slice(2, -2), 'the decoded rest holds no part of it worth reading');
    }
  }
});

t.test('lengths: 8 bytes is the shortest value; a text one character short of the value is left alone', async (t) => {
  t.equal(MIN_SECRET_BYTES, 8);
  t.throws(() => new Redactor(['seven77']), RangeError, '7 bytes: refused');
  t.throws(() => new Redactor([]), RangeError, 'no value at all');
  const eight = new Redactor(['eight888']);
  t.same(eight.text('say eight888 now'), { text: `say ${REDACTED} now`, count: 1 }, '8 bytes: just at the bound');
  t.same(eight.text('say eight88 now'), { text: 'say eight88 now', count: 0 }, 'the first 7 of 8 characters: not the value');
  t.same(eight.text('say ight888 now'), { text: 'say ight888 now', count: 0 }, 'the last 7 of 8 characters: not the value');
  t.equal(formsOf('eight888').every((f) => f.length >= 8), true, 'no form shorter than the bound');
});

t.test('overlapping and touching matches become one marker, nothing left between them', async (t) => {
  const periodic = new Redactor(['abababab']);
  t.same(periodic.text('xabababababx'), { text: `x${REDACTED}x`, count: 1 }, 'overlapping');
  t.same(r.text(`${SECRET}${SECRET}`), { text: REDACTED, count: 1 }, 'touching');
});

t.test('the last word of a scheme-prefixed value is redacted on its own too', async (t) => {
  const header = new Redactor(['Basic dXNlcjpwYXNzd29yZA==']);
  t.same(header.text('got dXNlcjpwYXNzd29yZA== from you'), { text: `got ${REDACTED} from you`, count: 1 });
  t.same(header.text('Basic auth is fine'), { text: 'Basic auth is fine', count: 0 }, 'the scheme word alone is not a value');
});

t.test('value(): strings redacted, member names and numbers refused, the rest untouched', async (t) => {
  const input = { a: [SECRET, 1, true, null], b: { c: `x ${OTHER}` }, d: 'clean' };
  const out = r.value(input);
  t.same(out, { ok: true, value: { a: [REDACTED, 1, true, null], b: { c: `x ${REDACTED}` }, d: 'clean' }, count: 2 });
  t.same(input.a[0], SECRET, 'the input is not modified');
  const clean = { a: ['x', 2] };
  t.equal((r.value(clean) as { value: unknown }).value, clean, 'nothing found: the same object back');
  t.same(r.value({ [`k-${SECRET}`]: 1 }), { ok: false, where: 'member name' });
  const digits = new Redactor(['1234567890123']);
  t.same(digits.value({ n: 991234567890123 }), { ok: false, where: 'number' });
  t.same(digits.value({ n: 123456789012 }), { ok: true, value: { n: 123456789012 }, count: 0 }, 'a number one digit short');
  const proto = r.value(JSON.parse('{"constructor":{"x":"y"},"a":"b"}'));
  t.ok(proto.ok && Object.getPrototypeOf(proto.value) === Object.prototype);
});

t.test('headers(): a header holding a value is dropped whole', async (t) => {
  t.same(r.headers({ 'a2a-version': '1.0', 'a2a-extensions': `https://e.example/ext?k=${encodeURIComponent(SECRET)}` }), {
    headers: { 'a2a-version': '1.0' },
    count: 1,
  });
});

t.test('mayHold(): a cheap probe on raw JSON that never misses', async (t) => {
  t.equal(r.mayHold('{"kind":"task","id":"t-1","history":[]}'), false);
  t.equal(r.mayHold(JSON.stringify({ a: `x${SECRET}` })), true, 'raw (the / escaped or not)');
  t.equal(r.mayHold(JSON.stringify({ a: `x${SECRET}` }).replace('/', '\\/')), true, 'with \\/');
  t.equal(r.mayHold('{"a":"\\u0074ok-7f3a9c0d51e2\\/abc\\u002Bdef\\u003d"}'), true, '\\u escapes, either case');
  t.equal(r.mayHold(JSON.stringify({ a: [...SECRET].join('\n') })), true, 'escaped newlines between the characters');
  t.equal(r.mayHold('{"a":"\\u001b[2J"}'), true, 'an escaped ESC always takes the slow path');
  t.equal(r.mayHold('{"a":"\u009b"}'), true, 'so does a raw C1 control');
  t.equal(r.mayHold(JSON.stringify({ [SECRET]: 1 })), true, 'member names too');
});

t.test('never printed: toString, JSON, inspect', async (t) => {
  for (const shown of [String(r), JSON.stringify({ r }), inspect(r, { showHidden: true, depth: 10 }), inspect({ r }, { depth: 10 })]) {
    t.notMatch(shown, SECRET.slice(0, 8));
    t.notMatch(shown, 'tok-');
  }
});

// ---------------------------------------------------------------- inside the normalizer

const policy: NormalizePolicy = { remote: 'r', maxErrorMessageBytes: 200, maxJsonDepth: 32, keepRemoteErrorData: true, redactor: r };
const reply = (body: unknown, p: NormalizePolicy = policy) =>
  normalizeReply({ status: 200, body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)) }, 1, p);
const parsed = (json: string) => JSON.parse(json) as { result?: unknown; error?: { code: number; message: string; data: Record<string, unknown>[] } };

t.test('normalizer: error.message is sanitized whole, redacted, then cut', async (t) => {
  const out = reply({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: `invalid token Bearer ${SECRET}` } });
  t.equal(parsed(out.json).error?.message, `invalid token Bearer ${REDACTED}`);
  t.equal(out.redactions, 1);
  // The bound falls in the middle of the value: the cut sees the marker, never half the value.
  for (let bound = 16; bound <= 60; bound++) {
    const cut = reply({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: `${'x'.repeat(20)}${SECRET} tail` } }, { ...policy, maxErrorMessageBytes: bound });
    const message = parsed(cut.json).error!.message;
    t.notMatch(message, /tok|-7f3/, `bound ${bound}: ${message}`);
  }
});

t.test('normalizer: kept error.data strings redacted, a member named by the value dropped, a numeric code dropped', async (t) => {
  const out = reply({
    jsonrpc: '2.0',
    id: 1,
    error: { code: -32001, message: 'no', data: [{ '@type': 'x.y/Z', detail: `token=${SECRET}`, [SECRET]: 'v', other: 'kept' }] },
  });
  const data = parsed(out.json).error!.data.find((d) => d['@type'] === 'x.y/Z')!;
  t.same(data, { '@type': 'x.y/Z', detail: `token=${REDACTED}`, other: 'kept' });
  t.equal(out.redactions, 2);
  const digits = new Redactor(['1234567890123']);
  const coded = reply({ jsonrpc: '2.0', id: 1, error: { code: 1234567890123, message: 'm' } }, { ...policy, redactor: digits });
  t.equal(parsed(coded.json).error!.code, -32603, 'a code that is the value is not passed on');
  t.notMatch(coded.json, '1234567890123');
  const described = reply('{"jsonrpc":"2.0","id":1,"error":1234567890123}', { ...policy, redactor: digits });
  t.notMatch(described.json, '1234567890123', 'nor does a gateway message describing the member');
});

t.test('normalizer: a result is redacted inside its decoded strings and re-serialized', async (t) => {
  const escaped = '{"jsonrpc":"2.0","id":"up","result":{"kind":"message","parts":[{"kind":"text","text":"your token is \\u0074ok-7f3a9c0d51e2\\/abc+def\\u003D, ok"}]}}';
  const out = reply(escaped);
  t.equal(out.outcome, 'ok');
  t.same(parsed(out.json).result, { kind: 'message', parts: [{ kind: 'text', text: `your token is ${REDACTED}, ok` }] });
  t.same(out.result, parsed(out.json).result, 'later stages see the redacted result');
  t.equal(out.redactions, 1);
  const clean = '{"jsonrpc":"2.0","id":"up","result":{"big":12345678901234567890,"t":"hi"}}';
  t.equal(reply(clean).json, '{"jsonrpc":"2.0","id":1,"result":{"big":12345678901234567890,"t":"hi"}}', 'a clean result is spliced byte for byte');
});

t.test('normalizer: a duplicate member the parse dropped cannot carry the value past the redactor', async (t) => {
  const out = reply(`{"jsonrpc":"2.0","id":1,"result":{"a":"${SECRET.replace('/', '\\/')}","a":"x"}}`);
  t.equal(out.outcome, 'ok');
  t.equal(out.json, '{"jsonrpc":"2.0","id":1,"result":{"a":"x"}}');
});

t.test('normalizer: the value in a member name or a number of the result is refused with CREDENTIAL_ECHOED', async (t) => {
  const keyed = reply({ jsonrpc: '2.0', id: 1, result: { metadata: { [SECRET]: true } } });
  t.equal(keyed.outcome, 'CREDENTIAL_ECHOED');
  t.equal(parsed(keyed.json).error?.code, -32006);
  t.notMatch(keyed.json, 'tok-');
  t.equal(keyed.redactions, 1);
  const digits = new Redactor(['1234567890123']);
  const numbered = reply('{"jsonrpc":"2.0","id":1,"result":{"n":1234567890123}}', { ...policy, redactor: digits });
  t.equal(numbered.outcome, 'CREDENTIAL_ECHOED');
});

t.test('normalizer: a stream event text goes through the same rules', async (t) => {
  const out = normalizeJsonText(`{"jsonrpc":"2.0","id":1,"result":{"kind":"status-update","note":"${SECRET.replace('/', '\\/')}"}}`, 'c', policy);
  t.equal(out.outcome, 'ok');
  t.notMatch(out.json, 'tok-');
});

t.test('normalizer without a redactor: nothing changes', async (t) => {
  const { redactor: _none, ...plain } = policy;
  const out = reply({ jsonrpc: '2.0', id: 1, result: { t: SECRET } }, plain);
  t.match(out.json, SECRET.replace('/', '/'));
  t.equal(out.redactions, undefined);
});

t.test('normalizer: the metadata carried into A2A’s own ErrorInfo is redacted too (values and names)', async (t) => {
  const out = reply({
    jsonrpc: '2.0',
    id: 1,
    error: {
      code: -32001,
      message: 'Task not found',
      data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', domain: 'a2a-protocol.org', reason: 'TASK_NOT_FOUND', metadata: { taskId: `t-${SECRET}`, [OTHER]: 'x', ok: 'kept' } }],
    },
  });
  t.notMatch(out.json, 'tok-');
  t.notMatch(out.json, 'previous-token');
  const infos = parsed(out.json).error!.data.filter((d) => d.domain === 'a2a-protocol.org');
  t.same(infos.map((d) => d.metadata), [{ taskId: `t-${REDACTED}`, ok: 'kept' }], 'value redacted, a name holding a credential dropped');
  t.equal(out.redactions, 2);
});
