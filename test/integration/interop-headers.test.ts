/**
 * Per-remote `methods` allowlists seen by a real SDK client, and the A2A
 * headers crossing the gateway both ways: `A2A-Version`, `A2A-Extensions`,
 * and the 0.3 spelling `X-A2A-Extensions` that the SDK's 0.3 layer uses.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Client } from '@a2a-js/sdk/client';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import t from 'tap';
import { rpc, rpcRequest, reasonOf, startGateway, type RunningGateway } from '../support/gateway.js';
import { cancelTask, clientFromBaseUrl, loopbackOnlyFetch, replyText, sendText, streamText, userMessage } from '../support/sdk-client.js';
import { startSdkUpstream, type SdkUpstream } from '../support/sdk-upstream.js';
import { closeServer, listenOnLoopback, readBody, trackConnections, type RecordedRequest } from '../support/servers.js';

const EXT = 'https://example.com/ext/geo/v1';
const EXT_BACK = 'https://example.com/ext/activated/v1';

/** Answers every call with a valid result (JSON, or one SSE event when asked for a stream) and A2A headers of its own. */
async function startEchoUpstream(): Promise<{ url: string; requests: RecordedRequest[]; close(): Promise<void> }> {
  const requests: RecordedRequest[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = (await readBody(req)).toString('utf8');
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers }, body });
    const id = (JSON.parse(body) as { id: unknown }).id;
    const reply = JSON.stringify({
      jsonrpc: '2.0',
      id,
      result: { message: { messageId: 'm', contextId: 'c', role: 'ROLE_AGENT', parts: [{ text: 'echo' }] } },
    });
    const headers = {
      'a2a-version': '1.0',
      'a2a-extensions': EXT_BACK,
      'x-a2a-extensions': EXT_BACK,
      'set-cookie': 'session=upstream-secret',
      server: 'echo/1',
    };
    if (req.headers.accept === 'text/event-stream') {
      res.writeHead(200, { ...headers, 'content-type': 'text/event-stream' });
      res.end(`data: ${reply}\n\n`);
    } else {
      res.writeHead(200, { ...headers, 'content-type': 'application/json' });
      res.end(reply);
    }
  };
  const server = createServer((req, res) => void handle(req, res));
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  return { url: `http://127.0.0.1:${port}/rpc`, requests, close: () => closeServer(server, tracker) };
}

let sdk: SdkUpstream;
let legacy: SdkUpstream;
let echo: Awaited<ReturnType<typeof startEchoUpstream>>;
let gw: RunningGateway;

t.before(async () => {
  sdk = await startSdkUpstream();
  legacy = await startSdkUpstream({
    legacyCompat: true,
    editCard: (card) => {
      card.supportedInterfaces = card.supportedInterfaces.filter((i) => i.protocolVersion === '0.3');
    },
  });
  echo = await startEchoUpstream();
  const remote = (name: string, url: string, extra = '') => `  ${name}:\n    url: ${url}\n    allowPrivateNetwork: true\n${extra}`;
  gw = await startGateway(
    [
      'server:\n  logLevel: warn',
      'remotes:',
      remote('sdk', sdk.url),
      remote('limited', sdk.url, '    methods: [SendMessage, GetTask]\n'),
      remote('legacy-only', sdk.url, '    methods: [message/send]\n'),
      remote('old', legacy.url),
      remote('echo', echo.url),
    ].join('\n'),
  );
});
t.teardown(async () => {
  await gw?.close();
  await sdk?.close();
  await legacy?.close();
  await echo?.close();
});

const methodsSeen = (requests: readonly RecordedRequest[]) =>
  requests.filter((r) => r.method === 'POST').map((r) => (JSON.parse(r.body) as { method: string }).method);

t.test('methods allowlist through the SDK: allowed calls work, others are typed -32601 and never forwarded', async (t) => {
  const client = await clientFromBaseUrl(`${gw.url}/remotes/limited/`);
  const before = sdk.requests.length;
  t.equal(replyText(await sendText(client, 'allowed')), 'echo: allowed');
  // A refused stream is answered as plain JSON before any event, so the SDK throws the typed error itself.
  await t.rejects(streamText(client, 'task not allowed'), { name: 'RequestMalformedError', message: /not allowed/ });
  await t.rejects(cancelTask(client, 'any'), { name: 'RequestMalformedError', message: /not allowed/ });
  t.same(methodsSeen(sdk.requests.slice(before)), ['SendMessage'], 'only the allowed call reached the remote');
});

t.test('methods allowlist over plain HTTP: per generation, and unknown methods everywhere', async (t) => {
  const before = sdk.requests.length;
  const cases: Array<[string, string, string]> = [
    ['limited', 'message/send', 'METHOD_NOT_ALLOWED'],
    ['legacy-only', 'SendMessage', 'METHOD_NOT_ALLOWED'],
    ['sdk', 'tasks/explode', 'METHOD_NOT_ALLOWED'],
    ['sdk', 'sendmessage', 'METHOD_NOT_ALLOWED'],
  ];
  for (const [remote, method, reason] of cases) {
    const r = await rpc(`${gw.url}/remotes/${remote}/`, rpcRequest(method, 'm1'), { 'a2a-version': '1.0' });
    t.equal(r.json.error?.code, -32601, `${remote} ${method}`);
    t.equal(reasonOf(r), reason);
    t.equal(r.json.id, 'm1');
  }
  t.equal(sdk.requests.length, before, 'none of them was forwarded');
  // The 0.3 name is allowed where listed: it reaches the remote (which, speaking 1.0 only, refuses the version).
  const allowed = await rpc(`${gw.url}/remotes/legacy-only/`, rpcRequest('message/send', 'm2', { message: {} }));
  t.equal(allowed.json.error?.code, -32009);
  t.equal(sdk.requests.length, before + 1);
});

t.test('A2A-Version and A2A-Extensions from a 1.0 SDK client reach the remote', async (t) => {
  const client = await clientFromBaseUrl(`${gw.url}/remotes/sdk/`);
  await client.sendMessage(userMessage('with extensions'), { serviceParameters: { 'A2A-Extensions': EXT } });
  const seen = sdk.requests.at(-1);
  t.equal(seen?.headers['a2a-version'], '1.0');
  t.equal(seen?.headers['a2a-extensions'], EXT);
});

t.test('a 0.3 SDK client’s X-A2A-Extensions reaches the remote', async (t) => {
  const legacyCompat = { enabled: true };
  const client: Client = await new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: loopbackOnlyFetch, legacyCompat })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: loopbackOnlyFetch, legacyCompat }),
  }).createFromUrl(`${gw.url}/remotes/old/`);
  t.equal(client.protocolVersion, '0.3');
  await client.sendMessage(userMessage('old extensions'), { serviceParameters: { 'A2A-Extensions': EXT } });
  const seen = legacy.requests.at(-1);
  t.equal(seen?.headers['a2a-version'], '0.3');
  t.equal(seen?.headers['x-a2a-extensions'], EXT, 'the SDK spells it X-A2A-Extensions for 0.3');
});

t.test('the remote’s A2A headers come back to the caller, unary and streaming; nothing else does', async (t) => {
  for (const [method, accept] of [
    ['SendMessage', 'application/json'],
    ['SendStreamingMessage', 'text/event-stream'],
  ] as const) {
    const res = await fetch(`${gw.url}/remotes/echo/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept, 'a2a-version': '1.0', 'a2a-extensions': EXT },
      body: JSON.stringify(rpcRequest(method, 'h1', { message: {} })),
    });
    const text = await res.text();
    t.match(text, /"id":"h1"/, method);
    t.equal(res.headers.get('a2a-version'), '1.0', `${method}: A2A-Version back`);
    t.equal(res.headers.get('a2a-extensions'), EXT_BACK, `${method}: A2A-Extensions back`);
    t.equal(res.headers.get('x-a2a-extensions'), EXT_BACK, `${method}: the 0.3 spelling back`);
    t.equal(res.headers.get('set-cookie'), null);
    t.equal(res.headers.get('server'), null);
    const sent = echo.requests.at(-1);
    t.equal(sent?.headers['a2a-extensions'], EXT, `${method}: A2A-Extensions forwarded`);
    t.equal(sent?.headers['a2a-version'], '1.0');
  }
});
