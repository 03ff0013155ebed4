/**
 * `server.workers: 2` when workers die (node dist/cli.js): a worker that
 * cannot start stops the gateway with its exit code; workers that keep
 * dying are replaced a bounded number of times, then the primary gives up,
 * says why and exits 1 (a crash loop does not spin forever).
 */
import { createServer } from 'node:net';
import t from 'tap';
import { spawnGatewayCli, writeTempConfig, type SpawnedGateway } from '../support/gateway.js';

t.setTimeout(120_000);

const config = (port: number) => `
server: { host: 127.0.0.1, port: ${port}, workers: 2, drainMs: 1000, maxEventLoopDelayMs: 0 }
remotes:
  weather:
    url: http://127.0.0.1:9/a2a
    allowPrivateNetwork: true
`;

const lines = (gw: SpawnedGateway): Record<string, unknown>[] =>
  gw
    .stdout()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function waitFor<T>(what: string, gw: SpawnedGateway, find: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > until) throw new Error(`waited for ${what}\n${gw.stdout().slice(-3000)}\n${gw.stderr().slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

t.test('a worker that cannot start (its port is taken) stops the gateway: exit 1, no replacement', async (t) => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => void taken.close());
  const port = (taken.address() as { port: number }).port;
  const gw = spawnGatewayCli(['--config', writeTempConfig(config(port))]);
  t.teardown(() => void gw.child.kill('SIGKILL'));
  t.equal(await gw.exited, 1);
  t.ok(lines(gw).some((l) => l.msg === 'worker failed to start; stopping'), 'the primary says why');
  t.notOk(lines(gw).some((l) => l.msg === 'worker died; starting a replacement'), 'nothing restarted');
});

t.test('workers that keep dying: 5 replaced within the minute, the 6th death stops the gateway with exit 1', async (t) => {
  const gw = spawnGatewayCli(['--config', writeTempConfig(config(0))]);
  t.teardown(() => void gw.child.kill('SIGKILL'));
  await gw.url;
  const killed = new Set<unknown>();
  for (let death = 1; death <= 6; death++) {
    // The newest worker listening that is still alive: kill it.
    const victim = await waitFor(`a live worker before death ${death}`, gw, () =>
      lines(gw)
        .filter((l) => l.msg === 'worker listening' && !killed.has(l.pid))
        .at(-1),
    );
    killed.add(victim.pid);
    process.kill(victim.pid as number, 'SIGKILL');
    if (death <= 5) await waitFor(`replacement ${death}`, gw, () => (lines(gw).filter((l) => l.msg === 'worker died; starting a replacement').length >= death ? true : undefined));
  }
  t.equal(await gw.exited, 1, 'exit 1 for the supervisor');
  const deaths = lines(gw).filter((l) => l.msg === 'worker died; starting a replacement');
  t.equal(deaths.length, 5, 'five replaced');
  t.same(
    deaths.map((l) => l.restartInMs),
    [100, 200, 400, 800, 1600],
    'each after a longer wait',
  );
  const gaveUp = lines(gw).find((l) => l.msg === 'workers keep dying; giving up and stopping the gateway');
  t.match(gaveUp, { level: 50, why: '6 workers died within 60000 ms (at most 5 are replaced)', signal: 'SIGKILL' });
});
