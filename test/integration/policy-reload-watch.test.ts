/**
 * The CLI side of reload: `--watch-config` survives the ways config files are
 * really replaced (an editor's or tool's atomic rename, again and again; the
 * Kubernetes ConfigMap `..data` symlink swap) and reloads only when the
 * content changed; and the "config reloaded" line names the keys that need
 * a restart.
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startHeldUpstream, type HeldUpstream } from '../support/held-upstream.js';
import { reasonOf, rpc, rpcRequest, spawnGatewayCli, writeTempConfig, type SpawnedGateway } from '../support/gateway.js';
import { tempDir } from '../support/temp-dir.js';

let upstream: HeldUpstream;
t.before(async () => {
  upstream = await startHeldUpstream();
});
t.teardown(() => upstream.close());

const yaml = (remotes: readonly string[], server = '') => `
server: { maxEventLoopDelayMs: 0${server || ', host: 127.0.0.1, drainMs: 300'} }
defaults: { allowPrivateNetwork: true, retries: { attempts: 1 } }
remotes:
${remotes.map((name) => `  ${name}: { url: '${upstream.url}/' }`).join('\n')}
`;

const reloads = (gw: SpawnedGateway) => gw.stdout().split('\n').filter((l) => l.includes('"msg":"config reloaded"'));

async function waitForReloads(gw: SpawnedGateway, n: number): Promise<void> {
  const until = Date.now() + 10_000;
  while (reloads(gw).length < n) {
    if (Date.now() > until) throw new Error(`${reloads(gw).length} reloads, wanted ${n}:\n${gw.stdout()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const answers = async (url: string, remote: string) => {
  const reply = await rpc(`${url}/remotes/${remote}/ok`, rpcRequest('GetTask', `${remote}-call`, { id: 't' }));
  return reply.json.result ? 'ok' : reasonOf(reply);
};

t.test('--watch-config: atomic renames, one after another, each reload; the same content does not', async (t) => {
  const dir = tempDir('a2a-egress-watch-');
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, yaml(['a']));
  const gw = spawnGatewayCli(['--config', file, '--port', '0', '--watch-config']);
  t.teardown(() => void gw.child.kill('SIGKILL'));
  const url = await gw.url;
  const replace = (text: string) => {
    const temp = join(dir, `.gateway.yaml.${Math.random().toString(36).slice(2)}`);
    writeFileSync(temp, text);
    renameSync(temp, file);
  };

  replace(yaml(['a', 'b']));
  await waitForReloads(gw, 1);
  t.equal(await answers(url, 'b'), 'ok', 'first rename: remote b added');
  replace(yaml(['a', 'b', 'c']));
  await waitForReloads(gw, 2);
  t.equal(await answers(url, 'c'), 'ok', 'second rename: still watched, remote c added');
  replace(yaml(['a', 'c']));
  await waitForReloads(gw, 3);
  t.equal(await answers(url, 'b'), 'UNKNOWN_REMOTE', 'third rename: remote b removed');

  replace(yaml(['a', 'c']));
  await new Promise((r) => setTimeout(r, 800));
  t.equal(reloads(gw).length, 3, 'the same content again: no reload');
  t.match(JSON.parse(reloads(gw)[0]!), { why: 'file changed', restartNeeded: [] });
  gw.child.kill('SIGTERM');
  t.equal(await gw.exited, 0);
});

t.test('--watch-config: a Kubernetes ConfigMap update (the ..data symlink swap) reloads, twice', async (t) => {
  // The layout kubelet writes: <mount>/gateway.yaml -> ..data/gateway.yaml, ..data -> ..<timestamp>/
  const mount = tempDir('a2a-egress-configmap-');
  let version = 0;
  const publish = (text: string) => {
    const next = `..2026_12_03_00_00_0${++version}`;
    mkdirSync(join(mount, next));
    writeFileSync(join(mount, next, 'gateway.yaml'), text);
    symlinkSync(next, join(mount, '..data_tmp'));
    renameSync(join(mount, '..data_tmp'), join(mount, '..data'));
    if (version > 1) rmSync(join(mount, `..2026_12_03_00_00_0${version - 1}`), { recursive: true });
  };
  publish(yaml(['a']));
  symlinkSync('..data/gateway.yaml', join(mount, 'gateway.yaml'));
  const gw = spawnGatewayCli(['--config', join(mount, 'gateway.yaml'), '--port', '0', '--watch-config']);
  t.teardown(() => void gw.child.kill('SIGKILL'));
  const url = await gw.url;

  publish(yaml(['a', 'k1']));
  await waitForReloads(gw, 1);
  t.equal(await answers(url, 'k1'), 'ok', 'first ConfigMap update applied');
  publish(yaml(['a', 'k1', 'k2']));
  await waitForReloads(gw, 2);
  t.equal(await answers(url, 'k2'), 'ok', 'second ConfigMap update applied');
  gw.child.kill('SIGTERM');
  t.equal(await gw.exited, 0);
});

t.test('SIGHUP: a changed listen address is named in the "config reloaded" line; everything else applies', async (t) => {
  const file = writeTempConfig(yaml(['a']));
  const gw = spawnGatewayCli(['--config', file, '--port', '0']);
  t.teardown(() => void gw.child.kill('SIGKILL'));
  const url = await gw.url;
  writeFileSync(file, yaml(['a', 'b'], ', host: 127.0.0.2, opsPort: 9090, drainMs: 200'));
  gw.child.kill('SIGHUP');
  await waitForReloads(gw, 1);
  const line = JSON.parse(reloads(gw)[0]!) as Record<string, unknown>;
  t.match(line, { level: 40, why: 'SIGHUP', restartNeeded: ['server.host', 'server.opsPort'] }, 'warn level, naming the keys');
  t.equal(await answers(url, 'b'), 'ok', 'the rest of the file applied, on the old port');
  gw.child.kill('SIGTERM');
  t.equal(await gw.exited, 0);
});
