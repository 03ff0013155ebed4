/**
 * `server.workers: 2` as users run it (node dist/cli.js): one primary, two
 * workers sharing the caller port. Calls are spread over both workers (the
 * `worker` field of each call line); a remote's maxConcurrent holds across
 * them (the held upstream counts what is in flight at it); an in-process
 * rate bucket holds across them; /metrics is every worker's, summed; a
 * reload is checked and logged once by the primary, which names
 * server.workers as needing a restart, and every worker applies it; a
 * worker killed with SIGKILL is replaced by one on the config in force; the
 * remote's own gRPC listener is shared too; SIGTERM drains the workers'
 * in-flight calls and exits 0.
 * One gateway for the whole file (three processes cost real CPU on a shared
 * machine); the subtests run in order and the last one stops it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import { request } from 'undici';
import { startHeldUpstream, type HeldUpstream } from '../support/held-upstream.js';
import { reasonOf, rpc, rpcRequest, spawnGatewayCli, writeTempConfig, type SpawnedGateway } from '../support/gateway.js';
import { YOUNG_GENERATION_FLAG } from '../../src/cluster/young-generation.js';
import { sdkGrpcClientFromBaseUrl } from '../support/grpc-gateway.js';
import { sampleValue } from '../support/ops-gateway.js';
import { replyText, sendText } from '../support/sdk-client.js';
import { startSdkUpstream, type SdkUpstream } from '../support/sdk-upstream.js';

t.setTimeout(120_000);

let upstream: HeldUpstream;
let agent: SdkUpstream;
let gw: SpawnedGateway;
let url: string;
let file: string;

const config = (server = 'workers: 2', more = '') => `
server: { host: 127.0.0.1, port: 0, ${server}, drainMs: 20000, maxEventLoopDelayMs: 0 }
defaults:
  allowPrivateNetwork: true
  retries: { attempts: 1 }
  circuitBreaker: { failureThreshold: 10000 }
remotes:
  held:
    url: ${upstream.url}/hold
    limits: { maxConcurrent: 4, maxQueued: 100 }
    timeouts: { queueTimeoutMs: 60000, totalMs: 60000, headersMs: 60000 }
  quick:
    url: ${upstream.url}/ok
  # Four tokens for the whole gateway, refilled far slower than the test runs.
  rated:
    url: ${upstream.url}/ok
    rateLimit: { perSecond: 0.001, burst: 4 }
  # A remote with a gRPC listener of its own, shared by the workers like the HTTP one.
  agent:
    url: ${agent.url}
    grpc: { listen: { port: 0 } }
${more}`;

const lines = (): Record<string, unknown>[] =>
  gw
    .stdout()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function waitForLine(what: string, match: (line: Record<string, unknown>) => boolean, timeoutMs = 30_000): Promise<Record<string, unknown>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const found = lines().find(match);
    if (found) return found;
    if (Date.now() > until) throw new Error(`no log line: ${what}\n${gw.stdout().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The worker (1 or 2) that logged the call with this request id. */
const workerOf = async (requestId: string) => (await waitForLine(`call ${requestId}`, (l) => l.requestId === requestId && l.msg === 'call')).worker;

/** A call on a connection of its own: node:cluster hands each new connection to the next worker. */
const freshCall = (remote: string, id: string) => rpc(`${url}/remotes/${remote}`, rpcRequest('GetTask', id, { id: 'task-1' }), { connection: 'close', 'x-request-id': id });

t.before(async () => {
  [upstream, agent] = await Promise.all([startHeldUpstream(), startSdkUpstream()]);
  file = writeTempConfig(config());
  gw = spawnGatewayCli(['--config', file]);
  url = await gw.url;
});
t.teardown(async () => {
  gw.child.kill('SIGKILL');
  await Promise.all([upstream.close(), agent.close()]);
});

t.test('the primary logs one listening line naming the workers; each worker says it listens', async (t) => {
  const listening = lines().filter((l) => l.msg === 'a2a-egress listening');
  t.equal(listening.length, 1, 'one listening line, from the primary');
  t.match(listening[0], { address: url, workers: 2, remotes: ['held', 'quick', 'rated', 'agent'] });
  const workers = lines().filter((l) => l.msg === 'worker listening');
  t.same(workers.map((l) => l.worker).sort(), [1, 2]);
  t.not(workers[0]!.pid, workers[1]!.pid, 'two processes');
  // The primary was started without it: each worker still runs with the gateway's young generation.
  for (const w of workers) t.ok(readFileSync(`/proc/${w.pid}/cmdline`, 'utf8').split('\0').includes(YOUNG_GENERATION_FLAG), `worker ${w.worker} has ${YOUNG_GENERATION_FLAG}`);
});

t.test('calls succeed and are spread over both workers', async (t) => {
  const served = new Set<unknown>();
  for (let i = 0; i < 6; i++) {
    const reply = await freshCall('quick', `spread-${i}`);
    t.equal(reply.status, 200);
    t.equal(reasonOf(reply), undefined, `call ${i} ok`);
    served.add(await workerOf(`spread-${i}`));
  }
  t.same([...served].sort(), [1, 2], 'both workers served calls');
});

t.test('maxConcurrent 4 behind 2 workers: the upstream never sees more than 4 in flight, and does see 4', async (t) => {
  let most = 0;
  const sampler = setInterval(() => (most = Math.max(most, upstream.held())), 2);
  t.teardown(() => clearInterval(sampler));
  // 12 calls at once on 12 connections: 6 per worker, each worker holding 2 slots and queueing the rest.
  const calls = Array.from({ length: 12 }, (_, i) => freshCall('held', `limit-${i}`));
  await upstream.waitForHeld(4);
  // Give any call that could wrongly start the time to reach the upstream.
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.equal(upstream.held(), 4, 'four held: two slots in each worker');
  // Answer whatever is held until every call is done; the sampler watches what is in flight meanwhile.
  let done = false;
  const all = Promise.all(calls).finally(() => (done = true));
  while (!done) {
    upstream.release();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await all;
  const replies = await Promise.all(calls);
  clearInterval(sampler);
  t.same(replies.map((r) => reasonOf(r) ?? 'ok'), Array(12).fill('ok'), 'every call answered, none refused');
  t.equal(most, 4, 'never more than maxConcurrent at the upstream');
  const workers = new Set(await Promise.all(replies.map((_, i) => workerOf(`limit-${i}`))));
  t.same([...workers].sort(), [1, 2], 'both workers took part');
});

t.test('an in-process rate bucket of 4 behind 2 workers lets 4 calls through, not 8', async (t) => {
  const outcomes: string[] = [];
  for (let i = 0; i < 10; i++) outcomes.push(reasonOf(await freshCall('rated', `rate-${i}`)) ?? 'ok');
  t.equal(outcomes.filter((o) => o === 'ok').length, 4, outcomes.join(' '));
  t.equal(outcomes.filter((o) => o === 'RATE_LIMITED').length, 6);
});

t.test('/metrics on the caller port is every worker\'s, aggregated, whichever worker answers', async (t) => {
  for (let i = 0; i < 3; i++) {
    const res = await request(`${url}/metrics`, { headers: { connection: 'close' } });
    t.equal(res.statusCode, 200);
    const text = await res.body.text();
    // 6 (spread) calls to `quick`, 12 to `held`, 4 + 6 to `rated`, each worker counting its own.
    t.equal(sampleValue(text, 'a2a_egress_calls_total', { remote: 'quick', method: 'GetTask', outcome: 'ok' }), 6, 'quick: summed');
    t.equal(sampleValue(text, 'a2a_egress_calls_total', { remote: 'held', method: 'GetTask', outcome: 'ok' }), 12, 'held: summed');
    t.equal(sampleValue(text, 'a2a_egress_calls_total', { remote: 'rated', method: 'GetTask', outcome: 'RATE_LIMITED' }), 6);
    t.equal(sampleValue(text, 'a2a_egress_circuit_state', { remote: 'held' }), 0, 'circuit state: the worst worker\'s, not a sum');
    t.equal(sampleValue(text, 'a2a_egress_workers', {}), 2);
    t.match(text, /# TYPE a2a_egress_call_duration_seconds histogram/);
  }
});

/** A remote a reload adds (every worker must serve it, a replacement forked later too). */
const late = () => `  late:\n    url: ${upstream.url}/ok\n`;

/** Calls `remote` on fresh connections until both workers have answered; every call must succeed. */
async function bothWorkersServe(t: Test, remote: string, tag: string): Promise<void> {
  const served = new Set<unknown>();
  for (let i = 0; i < 6; i++) {
    t.equal(reasonOf(await freshCall(remote, `${tag}-${i}`)), undefined, `${remote} call ${i}`);
    served.add(await workerOf(`${tag}-${i}`));
  }
  t.same([...served].sort(), [1, 2], `both workers serve ${remote}`);
}

t.test('a reload is checked and logged by the primary, applied by every worker; changing server.workers needs a restart', async (t) => {
  writeFileSync(file, config('workers: 3', late()));
  gw.child.kill('SIGHUP');
  const line = await waitForLine('config reloaded', (l) => l.msg === 'config reloaded');
  t.match(line, { level: 40, why: 'SIGHUP', restartNeeded: ['server.workers'] }, 'warns, naming the key');
  t.notOk('worker' in line, 'logged once, by the primary');
  writeFileSync(file, config('workers: 2, maxConnections: 1'));
  gw.child.kill('SIGHUP');
  const refused = await waitForLine('reload refused', (l) => l.msg === 'config reload failed; keeping the previous config');
  t.match(refused.problem, /server\.maxConnections: 1 cannot be divided among server\.workers \(2\)/);
  writeFileSync(file, config());
  await bothWorkersServe(t, 'late', 'late');
});

t.test('a worker killed with SIGKILL is replaced; the replacement serves, on the config in force (the remote a reload added)', async (t) => {
  const victim = lines().find((l) => l.msg === 'worker listening' && l.worker === 2)!;
  process.kill(victim.pid as number, 'SIGKILL');
  const died = await waitForLine('worker died', (l) => l.msg === 'worker died; starting a replacement');
  t.match(died, { worker: 2, pid: victim.pid, signal: 'SIGKILL' });
  const replaced = await waitForLine('replacement', (l) => l.msg === 'worker listening' && l.worker === 2 && l.pid !== victim.pid);
  t.ok(replaced.pid, 'a new process holds slot 2');
  // The remote the reload added: the replacement runs the config in force, not the one the gateway started with.
  await bothWorkersServe(t, 'late', 'replaced');
  const metrics = await (await request(`${url}/metrics`, { headers: { connection: 'close' } })).body.text();
  t.equal(sampleValue(metrics, 'a2a_egress_worker_restarts_total', {}), 1);
});

t.test('gRPC: every worker binds the remote’s own gRPC listener on one shared port, which serves gRPC callers', async (t) => {
  const listening = lines().find((l) => l.msg === 'a2a-egress listening') as { grpcAddresses: { remotes: Record<string, string> } };
  const target = listening.grpcAddresses.remotes.agent!;
  t.match(target, /^127\.0\.0\.1:\d+$/);
  const bound = lines().filter((l) => l.msg === 'gRPC listener bound' && l.grpcAddress === target);
  t.same([...new Set(bound.map((l) => l.worker))].sort(), [1, 2], 'both workers (and the replacement) bound it');
  const client = await sdkGrpcClientFromBaseUrl(`${url}/remotes/agent/`);
  t.equal(replyText(await sendText(client, 'over grpc')), 'echo: over grpc');
  const line = await waitForLine('gRPC call', (l) => (l.call as { binding?: string } | undefined)?.binding === 'grpc');
  t.match(line, { call: { remote: 'agent', method: 'SendMessage', outcome: 'ok' } });
});

t.test('SIGTERM: both workers finish their in-flight calls, then the gateway exits 0', async (t) => {
  const calls = [freshCall('held', 'drain-1'), freshCall('held', 'drain-2')];
  await upstream.waitForHeld(2);
  gw.child.kill('SIGTERM');
  await waitForLine('primary shutting down', (l) => l.msg === 'shutting down' && !('worker' in l));
  const draining = () => lines().filter((l) => l.msg === 'shutting down' && 'worker' in l).length;
  while (draining() < 2) await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(gw.child.exitCode, null, 'still running while calls are in flight');
  upstream.release();
  const replies = await Promise.all(calls);
  t.same(replies.map((r) => reasonOf(r) ?? 'ok'), ['ok', 'ok'], 'the in-flight calls were answered');
  t.same([await workerOf('drain-1'), await workerOf('drain-2')].sort(), [1, 2], 'one call in each worker');
  t.equal(await gw.exited, 0);
});
