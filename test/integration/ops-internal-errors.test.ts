/**
 * A failure inside the gateway is visible: one error-level "internal error"
 * line with the error's class, message and stack frames (the gateway's own
 * text, never the remote's), and a2a_egress_internal_errors_total{where}.
 *
 * Faults are injected where the gateway takes code from outside: the
 * resolver hook of the upstream pools (a TypeError thrown inside the
 * connect-time lookup stands for a bug in the egress guard), a relay whose
 * result check throws, and, through the CLI, a module preloaded with
 * `--import` that rejects a promise or throws from a timer on a signal.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import t from 'tap';
import { request } from 'undici';
import { parseConfig } from '../../src/loader/load.js';
import { relayStream } from '../../src/stream/relay.js';
import { isGatewayBug } from '../../src/upstream/errors.js';
import { startHeldUpstream, type HeldUpstream } from '../support/held-upstream.js';
import { reasonOf, rpc, rpcRequest, spawnGatewayCli, startGateway, writeTempConfig } from '../support/gateway.js';
import { closeServer, listenOnLoopback, trackConnections } from '../support/servers.js';
import { tempDir } from '../support/temp-dir.js';

const INJECTED = 'injected fault: lookup callback misused';

let upstream: HeldUpstream;
t.before(async () => {
  upstream = await startHeldUpstream();
});
t.teardown(() => upstream.close());

interface InternalLine {
  level: number;
  msg: string;
  where: string;
  requestId?: string;
  err: { name: string; message: string; stack: string[] };
}

const internalLines = (logs: Record<string, unknown>[]) => logs.filter((l) => l.msg === 'internal error') as unknown as InternalLine[];

t.test('isGatewayBug: plain JS errors without a code are bugs; transport, abort and library errors are not', async (t) => {
  t.ok(isGatewayBug(new TypeError("Cannot read properties of undefined (reading 'x')")));
  t.ok(isGatewayBug(new RangeError('Invalid array length')));
  t.ok(isGatewayBug(new Error('plain')));
  t.ok(isGatewayBug('a string was thrown'));
  t.ok(isGatewayBug(Object.assign(new TypeError('invalid header'), { code: 'UND_ERR_INVALID_ARG' })), 'a library refusing our argument');
  t.notOk(isGatewayBug(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })));
  t.notOk(isGatewayBug(new Error('outer', { cause: Object.assign(new Error('inner'), { code: 'ECONNRESET' }) })), 'a code anywhere in the cause chain');
  t.notOk(isGatewayBug(new DOMException('aborted', 'AbortError')));
  class CustomFailure extends Error {}
  t.notOk(isGatewayBug(new CustomFailure('x')), 'a subclass of Error is somebody’s typed error');
});

t.test('a bug in the unary call path: GATEWAY_ERROR for the caller; message, stack and a counter for the operator', async (t) => {
  const gw = await startGateway(
    `
server: { maxEventLoopDelayMs: 0 }
remotes:
  # One failure would open the breaker: the stream and card calls below show the bug was not held against the remote.
  buggy: { url: 'http://agent.buggy.test:${new URL(upstream.url).port}/', allowPrivateNetwork: true, retries: { attempts: 3 }, circuitBreaker: { failureThreshold: 1 } }
`,
    {
      pool: {
        resolver: () => {
          throw new TypeError(INJECTED);
        },
      },
    },
  );
  t.teardown(() => gw.close());
  const reply = await rpc(`${gw.url}/remotes/buggy/ok`, rpcRequest('GetTask', 'bug-1', { id: 'task-1' }), { 'x-request-id': 'bug-req-1' });
  t.equal(reply.status, 200);
  t.equal(reply.json.id, 'bug-1');
  t.equal(reasonOf(reply), 'GATEWAY_ERROR', 'the caller gets the gateway’s own error');
  t.notMatch(reply.text, /injected|TypeError|lookup/, 'no internal text reaches the caller');

  const lines = internalLines(gw.logs);
  t.equal(lines.length, 1, 'one line (a bug is not retried)');
  const line = lines[0]!;
  t.equal(line.level, 50, 'error level');
  t.equal(line.where, 'call');
  t.equal(line.requestId, 'bug-req-1');
  t.equal(line.err.name, 'TypeError');
  t.equal(line.err.message, INJECTED, 'the message');
  t.ok(line.err.stack.length > 0 && line.err.stack.every((f) => f.startsWith('at ')), 'the stack frames');
  t.ok(line.err.stack.some((f) => f.includes('ops-internal-errors.test.ts')), 'pointing at the faulty code');

  const metrics = await gw.app.inject({ method: 'GET', url: '/metrics' });
  t.match(metrics.body, /a2a_egress_internal_errors_total\{where="call"\} 1/);

  // The same fault on the stream path and the card path.
  const stream = await request(`${gw.url}/remotes/buggy/ok`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rpcRequest('SendStreamingMessage', 'bug-2', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } })),
  });
  const streamText = await stream.body.text();
  t.match(streamText, /"reason":"GATEWAY_ERROR"/, 'the stream ends with GATEWAY_ERROR (not CIRCUIT_OPEN: the remote is not blamed)');
  const card = await request(`${gw.url}/remotes/buggy/.well-known/agent-card.json`);
  t.equal(card.statusCode, 500, 'the card request: 500');
  t.match(await card.body.text(), /"reason":"GATEWAY_ERROR"/);
  t.same(
    internalLines(gw.logs).map((l) => [l.where, l.err.message]),
    [
      ['call', INJECTED],
      ['stream', INJECTED],
      ['card', INJECTED],
    ],
  );
  const after = await gw.app.inject({ method: 'GET', url: '/metrics' });
  t.match(after.body, /a2a_egress_internal_errors_total\{where="stream"\} 1/);
  t.match(after.body, /a2a_egress_internal_errors_total\{where="card"\} 1/);
});

t.test('a bug inside the stream relay is logged, not swallowed; the stream ends with GATEWAY_ERROR', async (t) => {
  const remote = parseConfig('remotes:\n  r: { url: "http://127.0.0.1:1/", allowPrivateNetwork: true }\n').remotes.get('r')!;
  const reported: unknown[] = [];
  const body = new PassThrough();
  let outcome: Promise<{ outcome: string }> | undefined;
  const server = createServer((_req, res) => {
    outcome = relayStream(
      { statusCode: 200, headers: { 'content-type': 'text/event-stream' }, body },
      {
        callerId: 'relay-1',
        remote,
        out: res,
        abortUpstream: () => body.destroy(),
        checkResult: () => {
          throw new RangeError('injected fault in a result check');
        },
        onInternalError: (err) => reported.push(err),
      },
    );
  });
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  t.teardown(() => closeServer(server, tracker));
  const res = await request(`http://127.0.0.1:${port}/`);
  body.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id: 'x', result: { kind: 'task', id: 't' } })}\n\n`);
  const text = await res.body.text();
  t.match(text, /"reason":"GATEWAY_ERROR"/, 'the caller sees a typed end of stream');
  t.equal((await outcome)?.outcome, 'GATEWAY_ERROR');
  t.equal(reported.length, 1, 'the swallowed exception was handed to the caller of the relay');
  t.match(String((reported[0] as Error).message), /injected fault/);
});

function injectModule(): string {
  const dir = tempDir('a2a-egress-inject-');
  const file = join(dir, 'inject.mjs');
  // On SIGUSR2: an unhandled rejection, or (INJECT=throw) an exception thrown from a timer.
  writeFileSync(
    file,
    `process.on('SIGUSR2', () => {
  if (process.env.INJECT === 'throw') setTimeout(() => { throw new TypeError('injected uncaught exception'); }, 0);
  else Promise.reject(new TypeError('injected unhandled rejection'));
});\n`,
  );
  return file;
}

async function waitForLine(out: () => string, pattern: RegExp): Promise<Record<string, unknown>> {
  const until = Date.now() + 15_000;
  for (;;) {
    const line = out().split('\n').find((l) => pattern.test(l));
    if (line) return JSON.parse(line) as Record<string, unknown>;
    if (Date.now() > until) throw new Error(`no ${pattern} in:\n${out()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const cliConfig = () => writeTempConfig(`server: { host: 127.0.0.1, drainMs: 300, maxEventLoopDelayMs: 0 }\nremotes:\n  a: { url: '${upstream.url}/', allowPrivateNetwork: true }\n`);

t.test('CLI: an unhandled rejection is logged with message and stack, counted, and the gateway keeps serving', async (t) => {
  const gw = spawnGatewayCli(['--config', cliConfig(), '--port', '0'], { NODE_OPTIONS: `--import=${injectModule()}`, INJECT: 'reject' });
  t.teardown(() => void gw.child.kill('SIGKILL'));
  const url = await gw.url;
  gw.child.kill('SIGUSR2');
  const line = await waitForLine(gw.stdout, /"msg":"internal error"/);
  t.match(line, { level: 50, where: 'process', event: 'unhandledRejection', err: { name: 'TypeError', message: 'injected unhandled rejection' } });
  t.ok((line.err as { stack: string[] }).stack.some((f) => f.includes('inject.mjs')), 'with its stack');
  t.ok((await rpc(`${url}/remotes/a/ok`, rpcRequest('GetTask', 'after', { id: 't' }))).json.result, 'still serving');
  const metrics = await request(`${url}/metrics`);
  t.match(await metrics.body.text(), /a2a_egress_internal_errors_total\{where="process"\} 1/);
  gw.child.kill('SIGTERM');
  t.equal(await gw.exited, 0);
});

t.test('CLI: an uncaught exception is logged with message and stack, then the gateway drains and exits 1', async (t) => {
  const gw = spawnGatewayCli(['--config', cliConfig(), '--port', '0'], { NODE_OPTIONS: `--import=${injectModule()}`, INJECT: 'throw' });
  t.teardown(() => void gw.child.kill('SIGKILL'));
  await gw.url;
  gw.child.kill('SIGUSR2');
  const line = await waitForLine(gw.stdout, /"msg":"internal error"/);
  t.match(line, { level: 50, where: 'process', event: 'uncaughtException', err: { name: 'TypeError', message: 'injected uncaught exception' } });
  t.ok((line.err as { stack: string[] }).stack.length > 0, 'with its stack');
  await waitForLine(gw.stdout, /"msg":"shutting down"/);
  t.equal(await gw.exited, 1, 'exit 1 after the drain, for the supervisor to restart');
});
