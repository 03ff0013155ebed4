/**
 * The bench's peers are yardsticks for the gateway, so each must really
 * proxy: the hops return the upstream's reply byte for byte, the SSE relays
 * every event, the unary peers all answer (or say why they are skipped), a
 * refused gateway config is reported with the gateway's own words, and a
 * proxy's CPU is read over its child processes too. No timing is asserted
 * here; speed is measured by `npm run bench` only.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { STREAM_REQUEST, UNARY_REQUEST } from '../../bench/bodies.js';
import type { BenchContext } from '../../bench/context.js';
import { isSkipped } from '../../bench/peers.js';
import {
  descendants,
  GatewayRefused,
  startDispatchHop,
  startGateway,
  startHttpProxyHop,
  startReferenceHop,
  startSseRelay,
  startUpstream,
  treeCpuMicros,
  type Child,
} from '../../bench/processes.js';
import { startUnaryPeers } from '../../bench/unary-peers.js';

const JSON_HEADERS = { 'content-type': 'application/json' };
// Up to ten processes are started (each hop under tsx, two gateways): slow on a busy 2-core machine.
t.setTimeout(180_000);

let upstream: Child;
t.before(async () => {
  upstream = await startUpstream();
});
t.teardown(() => upstream.stop());

async function post(url: string, body: Buffer, headers: Record<string, string> = JSON_HEADERS): Promise<{ status: number; type: string; text: string }> {
  const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(20_000) });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

t.test('each unary hop returns the upstream reply byte for byte', async (t) => {
  const direct = await post(`http://127.0.0.1:${upstream.port}/unary/1024`, UNARY_REQUEST);
  t.equal(direct.status, 200);
  const hops = [await startDispatchHop(upstream.port, '/unary/1024'), await startReferenceHop(upstream.port, '/unary/1024'), await startHttpProxyHop(upstream.port, '/unary/1024', 'unary1k')];
  t.teardown(async () => {
    for (const hop of hops) await hop.stop();
  });
  for (const hop of hops) {
    const via = await post(`http://127.0.0.1:${hop.port}/remotes/unary1k`, UNARY_REQUEST);
    t.equal(via.status, 200, hop.name);
    t.match(via.type, /^application\/json/, hop.name);
    t.equal(via.text, direct.text, `${hop.name}: same bytes as direct`);
  }
});

t.test('the hop with a spin (fixed-rate-calibration) answers the same bytes, never sooner than its spin; a bad spin is refused', async (t) => {
  const direct = await post(`http://127.0.0.1:${upstream.port}/unary/1024`, UNARY_REQUEST);
  const spinning = await startReferenceHop(upstream.port, '/unary/1024', 200_000);
  t.teardown(() => spinning.stop());
  // The first call warms the hop (module loading, JIT, the upstream connection), so the timed one owes its wait to the spin.
  await post(`http://127.0.0.1:${spinning.port}/remotes/unary1k`, UNARY_REQUEST);
  const started = performance.now();
  const via = await post(`http://127.0.0.1:${spinning.port}/remotes/unary1k`, UNARY_REQUEST);
  // A lower bound only: the spin is a wall-clock wait, so no machine answers sooner (a busy one answers later).
  t.ok(performance.now() - started >= 200, 'the warm call waited out the 200 ms spin');
  t.equal(via.text, direct.text, 'same bytes as direct');
  await t.rejects(startReferenceHop(upstream.port, '/unary/1024', -1), /exited early/, 'a negative spin: the hop refuses to start');
});

t.test('both SSE relays carry the whole stream; the validating one rewrites each event to the same bytes here', async (t) => {
  const headers = { ...JSON_HEADERS, accept: 'text/event-stream' };
  const direct = await post(`http://127.0.0.1:${upstream.port}/sse/50/256`, STREAM_REQUEST, headers);
  t.equal(direct.text.split('\n\n').length - 1, 50);
  for (const mode of ['raw', 'validate'] as const) {
    const relay = await startSseRelay(upstream.port, '/sse/50/256', mode);
    t.teardown(() => relay.stop());
    const via = await post(`http://127.0.0.1:${relay.port}/remotes/sse`, STREAM_REQUEST, headers);
    t.equal(via.status, 200, mode);
    t.equal(via.type, 'text/event-stream', mode);
    // The caller's id is the upstream's here (the relays forward the caller's body), so the splice changes no byte.
    t.equal(via.text, direct.text, `${mode}: same events as direct`);
  }
});

t.test('the validating relay ends a stream whose event is not JSON with an error event', async (t) => {
  // A tiny upstream of this test's own: one good event, then one that is not JSON, then one that must never be relayed.
  const bad = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end('data: {"jsonrpc":"2.0","id":1,"result":{"n":1}}\n\ndata: {not json}\n\ndata: {"jsonrpc":"2.0","id":1,"result":{"n":3}}\n\n');
  });
  await new Promise<void>((resolve) => bad.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => bad.close(() => resolve())));
  const relay = await startSseRelay((bad.address() as AddressInfo).port, '/', 'validate');
  t.teardown(() => relay.stop());
  const via = await post(`http://127.0.0.1:${relay.port}/remotes/sse`, STREAM_REQUEST, { ...JSON_HEADERS, accept: 'text/event-stream' });
  t.equal(via.status, 200);
  t.equal(
    via.text,
    'data: {"jsonrpc":"2.0","id":1,"result":{"n":1}}\n\ndata: {"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"bad event from upstream"}}\n\n',
  );
});

t.test('a proxy is measured with its children: descendants finds a grandchild', async (t) => {
  const child = spawn(process.execPath, ['-e', "require('node:child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)'], { stdio: 'inherit' }); setTimeout(() => {}, 20000)"], { stdio: 'ignore' });
  t.teardown(() => {
    for (const pid of descendants(child.pid!)) process.kill(pid, 'SIGKILL');
    child.kill('SIGKILL');
  });
  let below: number[] = [];
  for (let i = 0; i < 100 && below.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    below = descendants(child.pid!);
  }
  t.equal(below.length, 1, 'one grandchild');
  t.not(below[0], child.pid);
  t.ok(treeCpuMicros(child.pid!) > 0, 'CPU time read over the tree');
  t.ok(Number.isNaN(treeCpuMicros(2 ** 22 + 7)) === false, 'a gone process counts as no time, not NaN');
});

t.test('a gateway that refuses its config is reported with what it said', async (t) => {
  const err = await startGateway({ upstreamPort: upstream.port, logLevel: 'warn', server: { benchNoSuchKey: 2 } }).then(
    async (gw) => {
      await gw.stop();
      return undefined;
    },
    (e: unknown) => e,
  );
  t.ok(err instanceof GatewayRefused, 'GatewayRefused');
  t.equal((err as GatewayRefused).exitCode, 2);
  t.match((err as GatewayRefused).stderr, /benchNoSuchKey/);
});

t.test('every unary peer either answers the bench call or is skipped with a reason', async (t) => {
  const gateway = await startGateway({ upstreamPort: upstream.port, logLevel: 'warn' });
  t.teardown(() => gateway.stop());
  const ctx: BenchContext = { quick: true, upstream, gateway, log: () => {} };
  const peers = await startUnaryPeers(ctx);
  t.teardown(async () => {
    for (const p of peers) if (!isSkipped(p)) await p.stop();
  });
  const ids = peers.map((p) => p.id);
  t.same(ids.slice(0, 9), ['direct', 'dispatch-hop', 'fastify-hop', 'http-proxy', 'gateway-jsonrpc', 'gateway-jsonrpc-v8-default', 'gateway-rest', 'gateway-rest-rest', 'gateway-workers-2']);
  for (const id of ['direct', 'dispatch-hop', 'fastify-hop', 'http-proxy', 'gateway-jsonrpc', 'gateway-jsonrpc-v8-default']) {
    const p = peers.find((x) => x.id === id)!;
    t.notOk(isSkipped(p), `${id} runs`);
  }
  for (const p of peers) {
    if (isSkipped(p)) {
      t.match(p.skipped, /^(not served: |config refused: |bench\/\S+ does not exist)/, `${p.id}: ${p.skipped}`);
      continue;
    }
    await t.resolves(p.probe(), `${p.id} answers`);
    const round = await p.drive(20, 2);
    t.equal(round.ok, 20, `${p.id}: 20 calls, 20 good replies`);
  }
});
