import t from 'tap';
import { builtinLimits } from '../../src/config/defaults.js';
import { findGatewayErrorInfo } from '../../src/envelope/envelope.js';
import { EventRelayCore, type CoreOptions, type OutputEvent } from '../../src/stream/event-core.js';

const CALLER_ID = 'caller-42';
type CoreLimits = CoreOptions['remote']['limits'];

function options(limits: Partial<CoreLimits> = {}, httpStatus = 200, keepRemoteErrorData = false): CoreOptions {
  return { callerId: CALLER_ID, remote: { name: 'weather', keepRemoteErrorData, limits: { ...builtinLimits, ...limits } }, httpStatus };
}

function run(text: string | Buffer, limits: Partial<CoreLimits> = {}, keep = false): OutputEvent[] {
  const core = new EventRelayCore(options(limits, 200, keep));
  return [...core.push(Buffer.from(text)), ...core.end()];
}

const parsed = (e: OutputEvent | undefined) => JSON.parse(e?.json ?? 'null') as Record<string, any>;
const infoOf = (e: OutputEvent | undefined) => findGatewayErrorInfo(parsed(e).error?.data);
const reasonOf = (e: OutputEvent | undefined): unknown => infoOf(e)?.reason;
const result = (id: unknown, value: unknown) => JSON.stringify({ jsonrpc: '2.0', id, result: value });
const ev = (data: string, type?: string) => `${type ? `event: ${type}\n` : ''}data: ${data}\n\n`;

t.test('good events: the caller id replaces the remote id, results kept byte for byte', async (t) => {
  const out = run(ev(result('remote-1', { n: 1 })) + ev(result(7, { n: 2 })));
  t.equal(out.length, 2);
  t.same(out.map((e) => e.text), [
    `data: {"jsonrpc":"2.0","id":"caller-42","result":{"n":1}}\n\n`,
    `data: {"jsonrpc":"2.0","id":"caller-42","result":{"n":2}}\n\n`,
  ]);
  t.same(out.map((e) => e.final), [false, false]);
});

t.test('multi-line data is joined and the output stays one line', async (t) => {
  const out = run('data: {"jsonrpc":"2.0","id":1,\ndata: "result":{\r\ndata: "a":1}}\n\n');
  t.equal(out.length, 1);
  t.notMatch(out[0]?.json ?? '', /[\r\n]/);
  t.same(parsed(out[0]), { jsonrpc: '2.0', id: CALLER_ID, result: { a: 1 } });
});

t.test('broken data after good events: one final INVALID_EVENT without remote bytes, then nothing', async (t) => {
  const out = run(ev(result(1, 'ok')) + ev('<html>SECRET-MARKER</html>') + ev(result(1, 'never')));
  t.equal(out.length, 2);
  t.equal(out[1]?.final, true);
  t.equal(out[1]?.outcome, 'INVALID_EVENT');
  t.equal(parsed(out[1]).error.code, -32006);
  t.same(infoOf(out[1])?.metadata, { remote: 'weather', httpStatus: '200', cause: 'INVALID_JSON', event: '2' });
  t.notMatch(out[1]?.json ?? '', /SECRET-MARKER/);
});

t.test('data that is JSON but not a JSON-RPC response is INVALID_EVENT', async (t) => {
  for (const data of ['[1,2]', '{"jsonrpc":"2.0","id":1}', '"text"', '{"__proto__":{"x":1},"result":1}', '']) {
    const out = run(ev(data));
    t.equal(reasonOf(out[0]), 'INVALID_EVENT', JSON.stringify(data));
    t.equal(out.length, 1);
  }
});

t.test('invalid UTF-8 in data is INVALID_EVENT', async (t) => {
  const out = run(Buffer.concat([Buffer.from('data: {"jsonrpc":"2.0","id":1,"result":"'), Buffer.from([0xc3]), Buffer.from('"}\n\n')]));
  t.equal(reasonOf(out[0]), 'INVALID_EVENT');
  t.equal(infoOf(out[0])?.metadata.cause, 'INVALID_UTF8');
});

t.test('a JSON-RPC error in a data event is forwarded and ends the stream', async (t) => {
  const err = JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'Task\u202e gone', stack: 'at x' } });
  const out = run(ev(err) + ev(result(1, 'never')));
  t.equal(out.length, 1);
  t.equal(out[0]?.outcome, 'REMOTE_ERROR');
  t.equal(out[0]?.final, true);
  t.same(parsed(out[0]).error.code, -32001);
  t.equal(parsed(out[0]).error.message, 'Task gone');
});

t.test('event: error, each shape in the wild: typed code kept, extra members dropped', async (t) => {
  const cases: Array<[string, number, string]> = [
    [JSON.stringify({ jsonrpc: '2.0', id: 9, error: { code: -32001, message: 'gone', extra: 'x' } }), -32001, 'gone'],
    [JSON.stringify({ code: -32004, message: 'unsupported', extra: { secret: 1 }, data: [{ '@type': 'x/y', a: 1 }] }), -32004, 'unsupported'],
    ['worker exploded\u001b[31m', -32603, 'worker exploded'],
    [JSON.stringify('quoted text'), -32603, 'quoted text'],
  ];
  for (const [data, code, message] of cases) {
    const out = run(ev(result(1, 'first')) + ev(data, 'error') + ev(result(1, 'never')));
    t.equal(out.length, 2, data);
    const e = parsed(out[1]);
    t.equal(out[1]?.outcome, 'REMOTE_ERROR');
    t.same(Object.keys(e.error).sort(), ['code', 'data', 'message']);
    t.equal(e.error.code, code);
    t.equal(e.error.message, message);
    // A2A codes carry A2A's ErrorInfo first (1.0 callers), then the gateway's; nothing of the remote's data.
    t.same(e.error.data.map((d: { domain: string }) => d.domain), code === -32603 ? ['a2a-egress'] : ['a2a-protocol.org', 'a2a-egress'], 'remote data dropped unless keepRemoteErrorData');
    t.equal(e.id, CALLER_ID);
  }
});

t.test('event: error with remote data kept when the remote allows it', async (t) => {
  const data = JSON.stringify({ code: -32004, message: 'm', data: [{ '@type': 'x/y', a: 'b' }, 'junk'] });
  const e = parsed(run(ev(data, 'error'), {}, true)[0]);
  t.match(e.error.data[0], { reason: 'UNSUPPORTED_OPERATION', domain: 'a2a-protocol.org' });
  t.match(e.error.data[1], { reason: 'REMOTE_ERROR', domain: 'a2a-egress' });
  t.same(e.error.data.slice(2), [{ '@type': 'x/y', a: 'b' }]);
});

t.test('event: error that cannot be described is INVALID_EVENT', async (t) => {
  for (const data of ['', '   ', '[1]', '42', '{"foo":1}', '{"jsonrpc":"2.0","id":1,"result":1}', '{"code":1,"__proto__":{}}', '['.repeat(100)]) {
    const out = run(ev(data, 'error'));
    t.equal(reasonOf(out[0]), 'INVALID_EVENT', JSON.stringify(data));
  }
});

t.test('maxStreamEvents: exactly the bound passes, one more ends the stream', async (t) => {
  const three = ev(result(1, 1)).repeat(3);
  t.same(run(three, { maxStreamEvents: 3 }).map((e) => e.outcome), ['ok', 'ok', 'ok']);
  const out = run(three + ev(result(1, 1)), { maxStreamEvents: 3 });
  t.same(out.map((e) => e.outcome), ['ok', 'ok', 'ok', 'STREAM_TOO_MANY_EVENTS']);
  t.equal(parsed(out[3]).error.code, -32006);
});

t.test('maxStreamBytes: a stream of exactly the bound passes, one byte more ends it', async (t) => {
  const text = ev(result(1, 1)).repeat(3) + ': pad\n\n';
  const size = Buffer.byteLength(text);
  t.same(run(text, { maxStreamBytes: size }).map((e) => e.outcome), ['ok', 'ok', 'ok']);
  const over = run(`${text}\n`, { maxStreamBytes: size });
  t.same(over.map((e) => e.outcome), ['ok', 'ok', 'ok', 'STREAM_TOO_LARGE']);
  const core = new EventRelayCore(options({ maxStreamBytes: size }));
  const bytewise = [...Buffer.from(`${text}\n`)].flatMap((b) => core.push(Buffer.from([b])));
  t.same(bytewise.map((e) => e.outcome), ['ok', 'ok', 'ok', 'STREAM_TOO_LARGE'], 'same byte by byte');
});

t.test('maxEventBytes: events before the giant one are delivered, then EVENT_TOO_LARGE', async (t) => {
  const giant = `data: ${'x'.repeat(500)}`;
  const out = run(ev(result(1, 1)) + giant, { maxEventBytes: 256 });
  t.same(out.map((e) => e.outcome), ['ok', 'EVENT_TOO_LARGE']);
  t.match(parsed(out[1]).error.message, /more than 256 bytes/);
});

t.test('endings: clean close is silent, a partial event is STREAM_TRUNCATED, no event at all is EMPTY_RESPONSE', async (t) => {
  t.same(run(ev(result(1, 1))).map((e) => e.outcome), ['ok']);
  t.same(run(`${ev(result(1, 1))}data: {"jsonrpc"`).map((e) => e.outcome), ['ok', 'STREAM_TRUNCATED']);
  t.same(run(`${ev(result(1, 1))}data: whole line but no blank line\n`).map((e) => e.outcome), ['ok', 'STREAM_TRUNCATED']);
  t.same(run(': only comments\n\n').map((e) => e.outcome), ['EMPTY_RESPONSE']);
  const core = new EventRelayCore(options());
  core.push(Buffer.from('data: {'));
  t.same(core.broken().map((e) => e.outcome), ['STREAM_TRUNCATED'], 'reset mid-event');
  const core2 = new EventRelayCore(options());
  core2.push(Buffer.from(ev(result(1, 1))));
  t.same(core2.broken().map((e) => e.outcome), ['UPSTREAM_RESET'], 'reset between events');
});

t.test('stop(): one final event, then the core ignores everything', async (t) => {
  const core = new EventRelayCore(options());
  const first = core.stop('STREAM_IDLE');
  t.equal(first.length, 1);
  t.equal(reasonOf(first[0]), 'STREAM_IDLE');
  t.equal(parsed(first[0]).error.code, -32603);
  t.same(core.stop('STREAM_NO_DATA'), []);
  t.same(core.push(Buffer.from(ev(result(1, 1)))), []);
  t.same(core.end(), []);
  t.equal(core.outcome, 'STREAM_IDLE');
});

t.test('validateResults: an event whose result names a member twice ends the stream (INVALID_RESULT)', async (t) => {
  const core = new EventRelayCore({ ...options(), checkResult: () => undefined });
  const out = [...core.push(Buffer.from(ev(result(1, { a: 1 })) + ev('{"jsonrpc":"2.0","id":1,"result":{"a":1,"a":2}}'))), ...core.end()];
  t.same(out.map((e) => e.outcome), ['ok', 'INVALID_EVENT']);
  t.equal(infoOf(out[1])?.metadata.cause, 'INVALID_RESULT');
  const unchecked = run(ev('{"jsonrpc":"2.0","id":1,"result":{"a":1,"a":2}}'));
  t.equal(unchecked[0]?.outcome, 'ok', 'without validateResults the remote’s bytes pass as they are');
});

t.test('a redactor asked per event: the credential never reaches an event, counted on the event', async (t) => {
  const { Redactor } = await import('../../src/envelope/redact.js');
  let current = new Redactor(['first-token-0001']);
  const core = new EventRelayCore({ ...options(), redactor: () => current });
  const first = core.push(Buffer.from(ev(result(1, { text: 'with first-token-0001' }))));
  current = new Redactor(['second-token-0002', 'first-token-0001']);
  const second = core.push(Buffer.from(ev(result(1, { text: 'with second-token-0002 and first-token-0001' }))));
  t.same(parsed(first[0]).result, { text: 'with [redacted]' });
  t.same(parsed(second[0]).result, { text: 'with [redacted] and [redacted]' }, 'a rotation during the stream applies to the next event');
  t.same([first[0]?.redactions, second[0]?.redactions], [1, 2]);
});
