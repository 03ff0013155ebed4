/**
 * Config reload end to end. In process: `gateway.reload(parseConfig(...))`
 * adds a remote and changes a limit for the next call, while a call started
 * before the reload finishes on the config it started with (even when its
 * connection pool is retired). Through the CLI: SIGHUP with a broken file
 * keeps the old config and logs why; SIGHUP with a good file swaps it.
 */
import { writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import t from 'tap';
import { parseConfig } from '../../src/loader/load.js';
import { createGateway, type Gateway } from '../../src/server.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { startHeldUpstream, type HeldUpstream } from '../support/held-upstream.js';
import { reasonOf, rpc, rpcRequest, spawnGatewayCli, writeTempConfig, type SpawnedGateway } from '../support/gateway.js';

let upstream: HeldUpstream;
t.before(async () => {
  upstream = await startHeldUpstream();
});
t.teardown(() => upstream.close());

const getTask = (base: string, path: string, id: string) => rpc(`${base}/remotes/${path}`, rpcRequest('GetTask', id, { id: 'task-1' }));

function configYaml(opts: { maxResponseBytes: number; maxConnections: number; withB: boolean; extra?: string; maxRequestBytes?: number }): string {
  return `
server: { host: 127.0.0.1, port: 0, maxEventLoopDelayMs: 0, logLevel: info }
defaults:
  allowPrivateNetwork: true
  retries: { attempts: 1 }
remotes:
  a:
    url: ${upstream.url}/
    maxUpstreamConnections: ${opts.maxConnections}
    limits: { maxResponseBytes: ${opts.maxResponseBytes}, maxRequestBytes: ${opts.maxRequestBytes ?? 4096} }
${opts.withB ? `  b:\n    url: ${upstream.url}/\n` : ''}${opts.extra ?? ''}`;
}

t.test('in process: reload adds a remote and changes a limit; an in-flight call completes', async (t) => {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const gateway: Gateway = await createGateway(parseConfig(configYaml({ maxResponseBytes: 64, maxConnections: 4, withB: false })), {
    logger: createLogger('info', sink),
    processMetrics: false,
  });
  t.teardown(() => gateway.close());
  const { url } = await gateway.listen();

  t.equal(reasonOf(await getTask(url, 'a/ok', 'r1')), 'RESPONSE_TOO_LARGE', 'before: a 64-byte response cap');
  t.equal(reasonOf(await getTask(url, 'b/ok', 'r2')), 'UNKNOWN_REMOTE', 'before: no remote b');

  // Started before the reload, answered after it; the reload also retires its pool (maxUpstreamConnections changed).
  const inFlight = getTask(url, 'a/hold', 'slow');
  await upstream.waitForHeld(1);
  gateway.reload(parseConfig(configYaml({ maxResponseBytes: 4096, maxConnections: 8, withB: true, maxRequestBytes: 8192 })));

  t.ok((await getTask(url, 'a/ok', 'r3')).json.result, 'after: the raised cap applies to the next call');
  t.ok((await getTask(url, 'b/ok', 'r4')).json.result, 'after: the new remote answers');
  const big = rpcRequest('GetTask', 'big', { id: 'task-1', pad: 'x'.repeat(6000) });
  // The request body bound is read from the config in force for each request, so a reload can raise it.
  const bigReply = await rpc(`${url}/remotes/a/ok`, big);
  t.ok(bigReply.json.result, `after: a body over the old maxRequestBytes (4096) but under the new one (8192) passes (got ${reasonOf(bigReply) ?? 'a result'})`);
  t.equal(upstream.held(), 1, 'the slow call is still in flight');
  upstream.release();
  const slow = await inFlight;
  // It started under the 64-byte cap, so it finishes under it: the config a call starts with is the one it ends with.
  t.equal(reasonOf(slow), 'RESPONSE_TOO_LARGE', 'the in-flight call completed on its own config');
  t.equal(slow.json.id, 'slow');

  t.throws(
    () => gateway.reload(parseConfig(configYaml({ maxResponseBytes: 4096, maxConnections: 8, withB: true, extra: `  c:\n    url: ${upstream.url}/\n    auth: { type: bearer, tokenEnv: A2A_EGRESS_TEST_UNSET_VAR }\n` }))),
    { name: 'CredentialError' },
    'a reload whose credential is missing is refused',
  );
  t.ok((await getTask(url, 'b/ok', 'r5')).json.result, 'the previous config stays in force');
  t.equal(reasonOf(await getTask(url, 'c/ok', 'r6')), 'UNKNOWN_REMOTE');
});

async function waitForOutput(gw: SpawnedGateway, pattern: RegExp, after: number): Promise<void> {
  const until = Date.now() + 15_000;
  while (!pattern.test(gw.stdout().slice(after))) {
    if (Date.now() > until) throw new Error(`no ${pattern} in the gateway output:\n${gw.stdout().slice(after)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

t.test('CLI: SIGHUP with a broken file keeps the old config; with a good one swaps it', async (t) => {
  const file = writeTempConfig(configYaml({ maxResponseBytes: 4096, maxConnections: 4, withB: false }));
  const gw = spawnGatewayCli(['--config', file, '--port', '0']);
  t.teardown(() => void gw.child.kill('SIGKILL'));
  const url = await gw.url;
  t.ok((await getTask(url, 'a/ok', 'c1')).json.result, 'serving the first config');

  writeFileSync(file, 'remotes:\n  a: { url: [unclosed\n');
  let mark = gw.stdout().length;
  gw.child.kill('SIGHUP');
  await waitForOutput(gw, /config reload failed; keeping the previous config/, mark);
  const failure = gw.stdout().slice(mark).split('\n').find((l) => l.includes('config reload failed'))!;
  t.match(JSON.parse(failure), { level: 50, why: 'SIGHUP', problem: /YAML syntax/ }, 'the log says why');
  t.ok((await getTask(url, 'a/ok', 'c2')).json.result, 'still serving the old config');
  t.equal(reasonOf(await getTask(url, 'b/ok', 'c3')), 'UNKNOWN_REMOTE');

  writeFileSync(file, configYaml({ maxResponseBytes: 4096, maxConnections: 4, withB: true }));
  mark = gw.stdout().length;
  gw.child.kill('SIGHUP');
  await waitForOutput(gw, /"msg":"config reloaded"/, mark);
  t.ok((await getTask(url, 'b/ok', 'c4')).json.result, 'the new remote works');
  t.ok((await getTask(url, 'a/ok', 'c5')).json.result, 'the old one too');

  gw.child.kill('SIGTERM');
  t.equal(await gw.exited, 0);
});
