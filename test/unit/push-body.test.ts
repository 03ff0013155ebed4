import t from 'tap';
import { Redactor } from '../../src/envelope/redact.js';
import { checkPushBody, type PushBodyPolicy } from '../../src/push/push-body.js';
import { cleanMultilineText } from '../../src/push/push-text.js';

const MINTED = 'uAb9A2F7DADyf1B0er0uXVdNzW85cBRq8rwPmR7I7-s';
const REMOTE_TOKEN = 'remote-bearer-token-0123';
const policy = (over: Partial<PushBodyPolicy> = {}): PushBodyPolicy => ({
  generation: '1.0',
  deliverAs: '1.0',
  maxBytes: 4096,
  maxJsonDepth: 16,
  taskId: 'task-1',
  redactors: [new Redactor([MINTED]), new Redactor([REMOTE_TOKEN])],
  ...over,
});
const status = (text: string, extra: Record<string, unknown> = {}) => ({
  statusUpdate: {
    taskId: 'task-1',
    contextId: 'ctx-1',
    status: { state: 'TASK_STATE_WORKING', message: { messageId: 'm1', role: 'ROLE_AGENT', parts: [{ text }] } },
    ...extra,
  },
});
const body = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
const check = (b: Buffer | string, over: Partial<PushBodyPolicy> = {}) => checkPushBody(Buffer.isBuffer(b) ? b : Buffer.from(b), policy(over));

t.test('a clean 1.0 StreamResponse goes on as the remote sent it, byte for byte', async (t) => {
  for (const value of [
    status('working'),
    { task: { id: 'task-1', contextId: 'c', status: { state: 'TASK_STATE_SUBMITTED' } } },
    { artifactUpdate: { taskId: 'task-1', contextId: 'c', artifact: { artifactId: 'a', parts: [{ text: 'line 1\nline 2\tcol' }] } } },
    { message: { messageId: 'm', role: 'ROLE_AGENT', taskId: 'task-1', parts: [{ text: 'hi' }] } },
  ]) {
    const text = ` ${JSON.stringify(value, null, 1)}\n`;
    t.match(check(text), { ok: true, json: text, taskId: 'task-1', cleaned: 0, redacted: 0, bridged: false });
  }
});

t.test('refusals by reason: HTML, not JSON, bad UTF-8, depth, syntax, __proto__, duplicates, schema', async (t) => {
  const cases: [string, Buffer | string, string][] = [
    ['HTML page', '<html><body>500 Internal Server Error</body></html>', 'PUSH_NOT_JSON'],
    ['empty', '', 'PUSH_NOT_JSON'],
    ['array', '[{"task":{}}]', 'PUSH_NOT_JSON'],
    ['string', '"task"', 'PUSH_NOT_JSON'],
    ['BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body(status('x'))]), 'PUSH_NOT_JSON'],
    ['invalid UTF-8', Buffer.concat([Buffer.from('{"statusUpdate":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]), 'PUSH_INVALID_UTF8'],
    ['truncated JSON', '{"statusUpdate":{"taskId":"task-1"', 'PUSH_INVALID_JSON'],
    ['trailing garbage', `${JSON.stringify(status('x'))} <script>`, 'PUSH_INVALID_JSON'],
    ['lone surrogate', JSON.stringify(status('x')).replace('"x"', '"\\ud800"'), 'PUSH_INVALID_JSON'],
    ['too deep', `{"a":${'['.repeat(20)}${']'.repeat(20)}}`, 'PUSH_JSON_TOO_DEEP'],
    ['__proto__', '{"__proto__":{"polluted":true},"task":{"id":"task-1","status":{"state":"TASK_STATE_WORKING"}}}', 'PUSH_UNSAFE_JSON'],
    ['duplicate member deep', JSON.stringify(status('x')).replace('"contextId":"ctx-1"', '"contextId":"ctx-1","contextId":"ctx-2"'), 'PUSH_DUPLICATE_MEMBER'],
    ['duplicate by escape', '{"task":{"id":"task-1","status":{"state":"TASK_STATE_WORKING"}},"t\\u0061sk":{"id":"task-1"}}', 'PUSH_DUPLICATE_MEMBER'],
    ['two payloads', JSON.stringify({ ...status('x'), task: { id: 'task-1', status: { state: 'TASK_STATE_WORKING' } } }), 'PUSH_INVALID_EVENT'],
    ['no payload', '{"kind":"status-update"}', 'PUSH_INVALID_EVENT'],
    ['update without status', '{"statusUpdate":{"taskId":"task-1"}}', 'PUSH_INVALID_EVENT'],
    ['camel and snake', JSON.stringify({ statusUpdate: { ...status('x').statusUpdate, task_id: 'other' } }), 'PUSH_DUPLICATE_MEMBER'],
  ];
  for (const [name, input, reason] of cases) t.match(check(input), { ok: false, reason }, name);
  t.match(check(body(status('x')), { maxBytes: 10 }), { ok: false, reason: 'PUSH_TOO_LARGE' });
});

t.test('size bound: just under and just over', async (t) => {
  const b = body(status('x'));
  t.equal(check(b, { maxBytes: b.length }).ok, true);
  t.match(check(b, { maxBytes: b.length - 1 }), { ok: false, reason: 'PUSH_TOO_LARGE' });
});

t.test("the config's task: a push about another task is refused; a config for a new task takes any", async (t) => {
  t.match(check(body(status('x')), { taskId: 'task-2' }), { ok: false, reason: 'PUSH_TASK_MISMATCH' });
  t.match(check(body({ message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'no task' }] } })), { ok: false, reason: 'PUSH_TASK_MISMATCH' });
  t.match(check(body(status('x')), { taskId: undefined }), { ok: true, taskId: 'task-1' });
  t.match(check(body({ task: { id: 'task-1', status: { state: 'TASK_STATE_WORKING' } } }), { taskId: 'task-1' }), { ok: true });
});

t.test('CR/LF, bidi, zero-width, escapes: cleaned; ids one line; text keeps its line breaks', async (t) => {
  const dirty = 'ok\r\nInjected: header\u202Egnp.exe\u200b \x1b[2Jclear\u0007 \u{E0041}tag';
  const v = check(body(status(dirty, { metadata: { 'no\u200bte': 'a\r\nb' } })));
  t.ok(v.ok);
  if (!v.ok) return;
  const out = JSON.parse(v.json);
  t.equal(out.statusUpdate.status.message.parts[0].text, 'ok\nInjected: headergnp.exe clear tag');
  t.same(out.statusUpdate.metadata, { note: 'a\nb' }, 'member names cleaned, text in free-form maps keeps LF');
  t.ok(v.cleaned > 0);
  t.notOk(/[\r\u202E\u200b\x1b\x07]/u.test(v.json), 'nothing of it in the bytes sent');
  const ids = check(body({ statusUpdate: { taskId: 'task-1', contextId: 'ctx\r\n1\u202E', status: { state: 'TASK_STATE_WORKING' } } }));
  t.equal(ids.ok && JSON.parse(ids.json).statusUpdate.contextId, 'ctx 1', 'an id is one line');
  t.match(check(body({ statusUpdate: { taskId: 'task-1', contextId: 'c', status: { state: 'TASK_STATE_WORKING' }, metadata: { a: 1, 'a\u200b': 2 } } })), { ok: false, reason: 'PUSH_DUPLICATE_MEMBER' }, 'two names that clean to one');
  t.equal(cleanMultilineText('a\r\nb\rc\u2028d\u0085e\tf\vg'), 'a\nb\nc\nd\ne\tfg');
});

t.test("the gateway's secrets: redacted in text, refused where they cannot be", async (t) => {
  for (const echo of [MINTED, `Bearer ${MINTED}`, encodeURIComponent(MINTED), Buffer.from(`x:${MINTED}`).toString('base64'), `${MINTED.slice(0, 20)}\u200b${MINTED.slice(20)}`, REMOTE_TOKEN]) {
    const v = check(body(status(`your token is ${echo}!`)));
    t.ok(v.ok && v.redacted > 0, JSON.stringify(echo));
    t.notOk(v.ok && (v.json.includes(MINTED) || v.json.includes(REMOTE_TOKEN)));
    t.match(v.ok && JSON.parse(v.json).statusUpdate.status.message.parts[0].text, /\[redacted\]/);
  }
  t.match(check(body(status('x', { metadata: { [MINTED]: 1 } }))), { ok: false, reason: 'PUSH_CREDENTIAL_ECHOED', detail: /member name/ });
  const digits = new Redactor(['1234567890123']);
  t.match(check(body(status('x', { metadata: { n: 1234567890123 } })), { redactors: [digits] }), { ok: false, reason: 'PUSH_CREDENTIAL_ECHOED', detail: /number/ });
});

t.test('a member with an empty name is dropped, and what is sent is the cleaned push (found by the property, seed -1841869262)', async (t) => {
  // Before: dropping the member was not counted as a change, so the input, secret and all, went on unchanged.
  const v = check(body(status('x', { metadata: { '': MINTED, kept: 'k' } })));
  t.match(v, { ok: true, cleaned: 1 });
  t.notOk(v.ok && v.json.includes(MINTED), "the gateway's secret is not sent");
  t.same(v.ok && JSON.parse(v.json).statusUpdate.metadata, { kept: 'k' });
  const plain = check(body(status('x', { metadata: { '': 'plain' } })));
  t.same(plain.ok && JSON.parse(plain.json).statusUpdate.metadata, {}, 'the member is dropped whatever its value');
});

t.test('0.3 pushes: a Task or kind-tagged event; bridged when the local agent speaks the other generation', async (t) => {
  const task03 = { kind: 'task', id: 'task-1', contextId: 'c', status: { state: 'working', message: { kind: 'message', messageId: 'm', role: 'agent', parts: [{ kind: 'text', text: 'hi' }] } } };
  t.match(check(body(task03), { generation: '0.3', deliverAs: '0.3' }), { ok: true, taskId: 'task-1', bridged: false });
  t.match(check(body({ ...task03, kind: undefined }), { generation: '0.3', deliverAs: '0.3' }), { ok: false, reason: 'PUSH_INVALID_EVENT' }, '0.3 needs its kind');
  t.match(check(body(status('x')), { generation: '0.3', deliverAs: '0.3' }), { ok: false, reason: 'PUSH_INVALID_EVENT' }, 'a 1.0 shape for a 0.3 config');
  const up = check(body(task03), { generation: '0.3', deliverAs: '1.0' });
  t.match(up.ok && JSON.parse(up.json), { task: { id: 'task-1', status: { state: 'TASK_STATE_WORKING' } } });
  const down = check(body(status('x')), { generation: '1.0', deliverAs: '0.3' });
  t.match(down.ok && JSON.parse(down.json), { kind: 'status-update', taskId: 'task-1', status: { state: 'working' } });
});
