/**
 * Version bridge on the call runner, the other way: a 0.3 JSON-RPC caller of
 * a remote reached over A2A 1.0 HTTP+JSON (`binding: http+json`, the
 * @a2a-js/sdk 1.3 server's REST routes, which know no 0.3). The call is
 * translated to 1.0 before the JSON-RPC → HTTP+JSON transcoding; results,
 * stream events and errors come back in 0.3 shapes. Before the bridge, such a
 * call was refused with UNSUPPORTED_BINDING_VERSION.
 */
import t from 'tap';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { newKey, pushYaml } from '../support/push-kit.js';
import { startSdkRestUpstream, type SdkRestUpstream } from '../support/sdk-rest-upstream.js';

let up: SdkRestUpstream;
let gw: RunningGateway;

const message03 = (text: string) => ({ message: { kind: 'message', messageId: `u-${Math.random().toString(36).slice(2)}`, role: 'user', parts: [{ kind: 'text', text }] } });
const rpc = async (method: string, params: object) => {
  const res = await fetch(`${gw.url}/remotes/rest10/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 'c1', method, params }) });
  const type = res.headers.get('content-type') ?? '';
  const text = await res.text();
  if (!type.startsWith('text/event-stream')) return [JSON.parse(text)] as Envelope[];
  return text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => JSON.parse(e.slice(6)) as Envelope);
};
interface Envelope {
  id?: unknown;
  result?: Record<string, unknown> & { kind?: string };
  error?: { code: number; data?: { reason?: string; domain?: string }[] };
}

t.before(async () => {
  up = await startSdkRestUpstream();
  gw = await startGateway(`server:\n  logLevel: info\n${await pushYaml()}remotes:\n  rest10:\n    url: ${up.url}\n    binding: http+json\n    versions: ["1.0"]\n    allowPrivateNetwork: true\n`, { env: { PUSH_KEYS: newKey() } });
});
t.teardown(async () => {
  await gw?.close();
  await up?.close();
});

t.test('message/send, tasks/get: 0.3 results from a 1.0 REST remote', async (t) => {
  const [echo] = await rpc('message/send', message03('hello old client'));
  t.equal(echo!.id, 'c1');
  t.equal(echo!.result?.kind, 'message', echo!.error ? JSON.stringify(echo!.error) : '0.3 kind');
  t.equal(echo!.result?.role, 'agent');
  t.match(echo!.result?.parts, [{ kind: 'text', text: /hello old client/ }]);
  const [task] = await rpc('message/send', message03('task quick'));
  t.equal(task!.result?.kind, 'task');
  const [got] = await rpc('tasks/get', { id: task!.result?.id });
  t.equal(got!.result?.kind, 'task');
  t.equal(got!.result?.id, task!.result?.id);
  t.match((got!.result?.status as { state: string }).state, /^[a-z-]+$/, '0.3 task state');
  const line = gw.logs.filter((l) => l.msg === 'call').at(-1)?.call as Record<string, unknown>;
  t.match(line, { method: 'tasks/get', bridge: '0.3>1.0', outcome: 'ok' });
});

t.test('message/stream: 0.3 events', async (t) => {
  const events = await rpc('message/stream', message03('task streamed'));
  t.ok(events.length >= 2);
  t.ok(events.every((e) => e.id === 'c1' && typeof e.result?.kind === 'string'), 'every event a 0.3 object');
  t.equal(events[0]!.result?.kind, 'task');
});

t.test('push configs: set and get in 0.3 shapes', async (t) => {
  const [task] = await rpc('message/send', message03('task for push'));
  const taskId = task!.result?.id as string;
  const [set] = await rpc('tasks/pushNotificationConfig/set', { taskId, pushNotificationConfig: { id: 'cfg-1', url: 'http://127.0.0.1:9/hook' } });
  t.match(set!.result, { taskId, pushNotificationConfig: { id: 'cfg-1', url: 'http://127.0.0.1:9/hook' } });
  const [got] = await rpc('tasks/pushNotificationConfig/get', { id: taskId, pushNotificationConfigId: 'cfg-1' });
  t.match(got!.result, { taskId, pushNotificationConfig: { id: 'cfg-1' } });
});

t.test('errors keep their codes; an A2A-Version neither side serves is -32009', async (t) => {
  const [missing] = await rpc('tasks/get', { id: 'no-such-task' });
  t.equal(missing!.error?.code, -32001);
  const res = await fetch(`${gw.url}/remotes/rest10/`, { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '2.0' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'message/send', params: message03('hi') }) });
  const body = (await res.json()) as Envelope;
  t.equal(body.error?.code, -32009);
});
