/**
 * The CLI as users run it: `node dist/cli.js --config FILE` (built by
 * `npm test`'s pretest step). Start-up, overrides, config errors, signals.
 */
import { writeFileSync } from 'node:fs';
import t from 'tap';
import { request } from 'undici';
import { gatewayInfoOf, spawnGatewayCli, writeTempConfig } from '../support/gateway.js';

const goodConfig = `
server: { host: 127.0.0.1, port: 8080, logLevel: info }
remotes:
  weather:
    url: http://127.0.0.1:9/a2a
    allowPrivateNetwork: true
`;

t.test('starts with --config and --port 0, answers a call, exits 0 on SIGTERM', async (t) => {
  const gw = spawnGatewayCli(['--config', writeTempConfig(goodConfig), '--port', '0']);
  t.teardown(() => void gw.child.kill('SIGKILL'));
  const url = await gw.url;
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const res = await request(`${url}/remotes/weather`, {
    method: 'POST',
    body: JSON.stringify({ jsonrpc: '2.0', id: 'cli-1', method: 'GetTask', params: { id: 't' } }),
  });
  const reply = (await res.body.json()) as { id: string; error: { data: { reason: string }[] } };
  t.equal(res.statusCode, 200);
  t.equal(reply.id, 'cli-1');
  // Port 9 (discard) is closed on loopback: a typed transport error, not a crash.
  t.equal(gatewayInfoOf(reply)?.reason, 'UPSTREAM_REFUSED');
  gw.child.kill('SIGTERM');
  t.equal(await gw.exited, 0);
});

t.test('remotes.<name>.listen: the CLI logs the listener\'s address, serves it, warns that a reload cannot move it, exits 0', async (t) => {
  const withListener = `${goodConfig}    listen: { port: 0 }\n`;
  const file = writeTempConfig(withListener);
  const gw = spawnGatewayCli(['--config', file, '--port', '0']);
  t.teardown(() => void gw.child.kill('SIGKILL'));
  await gw.url;
  const started = JSON.parse(gw.stdout().split('\n').find((l) => l.includes('a2a-egress listening'))!) as { remoteAddresses: Record<string, string> };
  const own = started.remoteAddresses.weather!;
  t.match(own, /^http:\/\/127\.0\.0\.1:\d+$/, 'loopback, its own port');
  const call = async () => {
    const res = await request(`${own}/`, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 'own-1', method: 'GetTask', params: { id: 't' } }) });
    return gatewayInfoOf((await res.body.json()) as Record<string, unknown>)?.reason;
  };
  t.equal(await call(), 'UPSTREAM_REFUSED', 'the remote, at the listener\'s root');
  writeFileSync(file, goodConfig);
  const mark = gw.stdout().length;
  gw.child.kill('SIGHUP');
  const until = Date.now() + 15_000;
  while (!gw.stdout().slice(mark).includes('"msg":"config reloaded"') && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
  t.match(gw.stdout().slice(mark), /"restartNeeded":\["remotes.weather.listen"\],"msg":"config reloaded"/, 'the reload says so');
  t.equal(await call(), 'UPSTREAM_REFUSED', 'the listener started with stays');
  gw.child.kill('SIGTERM');
  t.equal(await gw.exited, 0);
});

t.test('reads the config path from A2A_EGRESS_CONFIG', async (t) => {
  const gw = spawnGatewayCli(['--port', '0'], { A2A_EGRESS_CONFIG: writeTempConfig(goodConfig) });
  t.teardown(() => void gw.child.kill('SIGKILL'));
  t.match(await gw.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  gw.child.kill('SIGTERM');
  t.equal(await gw.exited, 0);
});

t.test('a config with an unknown key exits 2 naming the key and the line', async (t) => {
  const file = writeTempConfig(`remotes:\n  weather:\n    url: https://w.example.com/a2a\n    limts: { maxErrorMessageBytes: 120 }\n`);
  const gw = spawnGatewayCli(['--config', file]);
  t.equal(await gw.exited, 2);
  t.match(gw.stderr(), /gateway\.yaml:4: remotes\.weather\.limts: unknown key; did you mean \"limits\"\?/);
});

t.test('a bound just over its maximum exits 2 naming the key', async (t) => {
  const file = writeTempConfig(`remotes:\n  w:\n    url: https://w.example.com/a2a\n    limits: { maxErrorMessageBytes: 65537 }\n`);
  const gw = spawnGatewayCli(['--config', file]);
  t.equal(await gw.exited, 2);
  t.match(gw.stderr(), /remotes\.w\.limits\.maxErrorMessageBytes: must be <= 65536/);
});

t.test('a missing config file exits 2 with a clear message', async (t) => {
  const gw = spawnGatewayCli(['--config', '/nonexistent/gateway.yaml']);
  t.equal(await gw.exited, 2);
  t.match(gw.stderr(), /cannot read config file \/nonexistent\/gateway\.yaml: ENOENT/);
});

t.test('an invalid --port exits 2', async (t) => {
  const gw = spawnGatewayCli(['--config', writeTempConfig(goodConfig), '--port', '70000']);
  t.equal(await gw.exited, 2);
  t.match(gw.stderr(), /--port/);
});

t.test('an unknown flag exits 2', async (t) => {
  const gw = spawnGatewayCli(['--confg', 'x.yaml']);
  t.equal(await gw.exited, 2);
});

t.test('the bundled default config is valid and binds loopback', async (t) => {
  const gw = spawnGatewayCli(['--config', 'config/gateway.yaml', '--port', '0']);
  t.teardown(() => void gw.child.kill('SIGKILL'));
  t.match(await gw.url, /^http:\/\/127\.0\.0\.1:/);
  gw.child.kill('SIGTERM');
  t.equal(await gw.exited, 0);
});

t.test('a credential env var that is not set exits 2 naming the file, line and key', async (t) => {
  const file = writeTempConfig(`remotes:\n  weather:\n    url: https://w.example.com/a2a\n    auth: { type: bearer, tokenEnv: A2A_EGRESS_TEST_UNSET_TOKEN }\n`);
  const gw = spawnGatewayCli(['--config', file]);
  t.equal(await gw.exited, 2);
  t.match(gw.stderr(), /gateway\.yaml:4: remotes\.weather\.auth\.tokenEnv: environment variable A2A_EGRESS_TEST_UNSET_TOKEN is not set/);
});
