/**
 * Properties of the JSON-RPC push hook (src/proxy/push-call.ts) against the
 * push module it fronts: for any send or create-config request, the hook's
 * verdict (forward as is, forward rewritten, refuse) is the module's — its
 * shortcut for sends that name no push config never skips one the module
 * would rewrite or refuse — and a rewritten request keeps the caller's id
 * and method, is valid JSON-RPC, carries the module's params, and holds
 * neither the caller's webhook URL nor its token or credentials.
 */
import t from 'tap';
import fc from 'fast-check';
import { operationForJsonRpcMethod } from '../../src/a2a/operations.js';
import { checkCallerRequest } from '../../src/jsonrpc/caller-request.js';
import { rewritePushCall } from '../../src/proxy/push-call.js';
import { rewritePushRequest } from '../../src/push/outbound.js';
import { callOf, pushSettings } from '../support/push-kit.js';
import { fuzzParams, holdsWith } from '../support/fuzz.js';

const params = fuzzParams(500);

const holds = holdsWith(params);

const LOCAL_URL = 'http://127.0.0.1:3999/hooks/local-agent-webhook';
const TOKEN = 'caller-token-6a1f0e';
const CREDENTIALS = 'caller-credentials-93b2c7';
const settings = pushSettings({ publicBaseUrl: 'https://gw.example.com/push' });

const configArb = fc.oneof(
  fc.constant({ url: LOCAL_URL, token: TOKEN, authentication: { scheme: 'Bearer', credentials: CREDENTIALS } }),
  fc.constant({ url: LOCAL_URL, token: TOKEN, authentication: { schemes: ['Bearer'], credentials: CREDENTIALS } }),
  fc.constant({ url: 'https://elsewhere.example.net/hook', token: TOKEN }),
  fc.constant({ token: TOKEN }),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 2 }),
);
const configurationArb = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 2 }),
  // Push config members (any spelling) hold configs; the other members hold anything but the caller's secrets.
  fc.record(
    {
      taskPushNotificationConfig: configArb,
      task_push_notification_config: configArb,
      pushNotificationConfig: configArb,
      push_notification_config: configArb,
      returnImmediately: fc.jsonValue({ maxDepth: 1 }),
      acceptedOutputModes: fc.jsonValue({ maxDepth: 1 }),
    },
    { requiredKeys: [] },
  ),
);
const methodArb = fc.constantFrom('SendMessage', 'SendStreamingMessage', 'message/send', 'message/stream', 'CreateTaskPushNotificationConfig', 'tasks/pushNotificationConfig/set');

const requestArb = fc.record({ method: methodArb, configuration: configurationArb, config: configArb, id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null)) });

function paramsOf(method: string, configuration: unknown, config: unknown): Record<string, unknown> {
  if (method === 'CreateTaskPushNotificationConfig') return { taskId: 'task-1', ...(config && typeof config === 'object' && !Array.isArray(config) ? config : {}) };
  if (method === 'tasks/pushNotificationConfig/set') return { taskId: 'task-1', pushNotificationConfig: config };
  return { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] }, ...(configuration === undefined ? {} : { configuration }) };
}

const masked = (value: unknown): string => JSON.stringify(value, (key, v: unknown) => (['url', 'token', 'credentials'].includes(key) ? '<minted>' : v));

t.test('the hook’s verdict is the module’s, and a rewritten request is clean JSON-RPC', async (t) => {
  holds(
    t,
    fc.property(requestArb, fc.boolean(), ({ method, configuration, config, id }, enabled) => {
      const known = operationForJsonRpcMethod(method)!;
      const p = paramsOf(method, configuration, config);
      const raw = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, method, params: p }));
      const push = enabled ? settings : undefined;
      const hook = rewritePushCall(push, 'weather', { id, method, raw, params: p }, known.generation, 'r1');
      const module = rewritePushRequest(callOf(known.operation.name, known.generation, p), { push, nowMs: Date.now() });

      if (module.kind === 'refused') return !hook.ok && JSON.parse(hook.normalized.json).error.code === module.error.code;
      if (!hook.ok) return false;
      if (module.kind === 'unchanged') return hook.call.raw === raw;
      const sent = JSON.parse(hook.call.raw.toString('utf8')) as { jsonrpc: string; id: unknown; method: string; params: unknown };
      const text = hook.call.raw.toString('utf8');
      return (
        sent.jsonrpc === '2.0' &&
        sent.method === method &&
        JSON.stringify(sent.id) === JSON.stringify(id) &&
        // Each rewrite seals its own ticket (random IV): the gateway's URL and credential differ, nothing else.
        masked(sent.params) === masked(module.call.params) &&
        JSON.stringify(sent.params).includes(`"url":"${settings.webhookBase}/`) &&
        !text.includes(LOCAL_URL) &&
        !text.includes(TOKEN) &&
        !text.includes(CREDENTIALS)
      );
    }),
  );
});

t.test('a request read in one pass (checkCallerRequest) gets the verdict the parsed one gets', async (t) => {
  let recognized = 0;
  holds(
    t,
    fc.property(requestArb, fc.boolean(), ({ method, configuration, config, id }, enabled) => {
      const known = operationForJsonRpcMethod(method)!;
      const p = paramsOf(method, configuration, config);
      const raw = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, method, params: p }));
      const checked = checkCallerRequest(raw, 1 << 20);
      if (!checked.ok) return true;
      if (checked.request.paramsHold !== undefined) recognized++;
      const push = enabled ? settings : undefined;
      const parsed = rewritePushCall(push, 'weather', { id, method, raw, params: p }, known.generation, 'r1');
      const read = rewritePushCall(push, 'weather', checked.request, known.generation, 'r1');
      if (!parsed.ok || !read.ok) return !parsed.ok && !read.ok && parsed.normalized.json === read.normalized.json;
      if (parsed.call.raw === raw) return read.call === checked.request;
      return masked(JSON.parse(read.call.raw.toString('utf8'))) === masked(JSON.parse(parsed.call.raw.toString('utf8')));
    }),
  );
  t.ok(recognized > 0, `${recognized} requests took the one-pass path`);
});
