/**
 * What the gateway checks is exactly what the remote receives. A raw remote
 * records the bytes it gets and reads them both ways real parsers do (first
 * member wins, last member wins). The gateway allows only GetTask on this
 * remote; requests that would read as CancelTask to one kind of parser are
 * refused before anything is sent, and every request that does reach the
 * remote reads the same to both kinds and as the gateway read it.
 */
import t from 'tap';
import { isDeepStrictEqual } from 'node:util';
import { reasonOf, rpc, startGateway, type RunningGateway } from '../support/gateway.js';
import { readJson } from '../support/json-readers.js';
import { jsonRpcResult, startRawUpstream, type RawUpstream } from '../support/raw-upstream.js';

let raw: RawUpstream;
let gw: RunningGateway;

t.before(async () => {
  raw = await startRawUpstream();
  raw.route('/narrow', () => [{ write: jsonRpcResult('{"id":"t","status":{"state":"TASK_STATE_WORKING"}}') }]);
  // A result whose state reads WORKING to a last-wins parser and COMPLETED to a first-wins one.
  const twoStates = '{"id":"t","status":{"state":"TASK_STATE_COMPLETED","state":"TASK_STATE_WORKING"}}';
  raw.route('/validated', () => [{ write: jsonRpcResult(twoStates) }]);
  raw.route('/unvalidated', () => [{ write: jsonRpcResult(twoStates) }]);
  gw = await startGateway(`
server: { maxEventLoopDelayMs: 0 }
remotes:
  narrow:
    url: ${raw.url}/narrow
    allowPrivateNetwork: true
    methods: [GetTask]
    retries: { attempts: 1 }
  validated:
    url: ${raw.url}/validated
    allowPrivateNetwork: true
    limits: { validateResults: true }
  unvalidated:
    url: ${raw.url}/unvalidated
    allowPrivateNetwork: true
`);
});
t.teardown(async () => {
  await gw.close();
  await raw.close();
});

const send = (body: string) => rpc(`${gw.url}/remotes/narrow`, body);

const SMUGGLED: [string, string][] = [
  ['method twice, allowed one last', '{"jsonrpc":"2.0","id":1,"method":"CancelTask","method":"GetTask","params":{"id":"t"}}'],
  ['method twice, allowed one first', '{"jsonrpc":"2.0","id":1,"method":"GetTask","method":"CancelTask","params":{"id":"t"}}'],
  ['method spelled with an escape', '{"jsonrpc":"2.0","id":1,"m\\u0065thod":"CancelTask","method":"GetTask","params":{"id":"t"}}'],
  ['method in another case (Go folds it)', '{"jsonrpc":"2.0","id":1,"Method":"CancelTask","method":"GetTask","params":{"id":"t"}}'],
  ['params twice, long-s spelling', '{"jsonrpc":"2.0","id":1,"method":"GetTask","param\u017f":{"id":"other"},"params":{"id":"t"}}'],
  ['a task id twice inside params', '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t","id":"someone-elses-task"}}'],
  ['id twice', '{"jsonrpc":"2.0","id":1,"id":2,"method":"GetTask","params":{"id":"t"}}'],
];

for (const [name, body] of SMUGGLED) {
  t.test(`${name}: -32600 DUPLICATE_MEMBER, nothing sent`, async (t) => {
    const before = raw.requests.length;
    const reply = await send(body);
    t.equal(reply.status, 200);
    t.equal(reply.json.error?.code, -32600);
    t.equal(reasonOf(reply), 'DUPLICATE_MEMBER');
    t.match(reply.json.error?.message, /twice at \$/);
    t.equal(raw.requests.length, before, 'the remote received nothing');
  });
}

t.test('control: the same method alone is refused by the allowlist, GetTask passes', async (t) => {
  t.equal(reasonOf(await send('{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"t"}}')), 'METHOD_NOT_ALLOWED');
  const ok = await send('{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}');
  t.ok(ok.json.result);
});

t.test('every request the remote received reads the same to first-wins and last-wins parsers', async (t) => {
  const passing = [
    '{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"t","historyLength":3}}',
    '{"jsonrpc":"2.0","id":"x","m\\u0065thod":"GetTask","params":{"id":"t\\u0031","metadata":{"Id":"a","id":"b"}}}',
    '{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"t","metadata":{"n":123456789012345678901234567890}}}',
  ];
  for (const body of passing) {
    const reply = await send(body);
    t.ok(reply.json.result, 'answered');
    const received = raw.requests.at(-1)!.body.toString('utf8');
    t.equal(received, body, 'the caller’s exact bytes went upstream');
  }
  t.ok(raw.requests.length >= passing.length);
  for (const request of raw.requests) {
    const text = request.body.toString('utf8');
    const first = readJson(text, 'first');
    const last = readJson(text, 'last');
    t.equal(first.duplicates, 0, 'no member named twice');
    t.ok(isDeepStrictEqual(first.value, last.value), 'both readings agree');
    t.equal((first.value as { method: string }).method, 'GetTask', 'and both run the method the gateway allowed');
  }
});

t.test('validateResults: a result with a member named twice is INVALID_RESULT (what was validated is what is forwarded)', async (t) => {
  const body = '{"jsonrpc":"2.0","id":5,"method":"GetTask","params":{"id":"t"}}';
  const checked = await rpc(`${gw.url}/remotes/validated`, body);
  t.equal(reasonOf(checked), 'INVALID_RESULT');
  t.match(checked.json.error?.message, '"state" twice at $.result.status');
  // Without validateResults the gateway decides nothing about the result's content and passes the remote's bytes.
  const passed = await rpc(`${gw.url}/remotes/unvalidated`, body);
  t.match(passed.text, '"state":"TASK_STATE_COMPLETED","state":"TASK_STATE_WORKING"');
});
