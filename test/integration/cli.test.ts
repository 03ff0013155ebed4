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

const secretConfig = `server: { auth: { type: bearer, tokensEnv: CHECK_CALLER_TOKENS } }
remotes:
  weather:
    url: https://w.example.com/a2a
    auth: { type: bearer, tokenEnv: CHECK_WEATHER_TOKEN }
    rateLimit: { perSecond: 5, burst: 10, store: { type: redis, url: 'redis://app:redis-password-123@redis.internal:6379/0' } }
`;
const secretEnv = { CHECK_CALLER_TOKENS: 'caller-secret-456', CHECK_WEATHER_TOKEN: 'weather-secret-789' };

t.test('check: a valid config exits 0 and prints the effective config, secrets masked', async (t) => {
  const gw = spawnGatewayCli(['check', '--config', writeTempConfig(secretConfig)], secretEnv);
  t.equal(await gw.exited, 0, gw.stderr());
  const out = gw.stdout();
  t.match(out, /^# .*gateway\.yaml: valid/);
  const { parse } = await import('yaml');
  const shown = parse(out) as { server: Record<string, unknown>; remotes: Record<string, Record<string, unknown>> };
  t.equal(shown.server.drainMs, 10_000, 'built-in defaults merged in');
  t.equal((shown.remotes.weather!.timeouts as Record<string, number>).totalMs, 60_000);
  t.same(shown.remotes.weather!.auth, { type: 'bearer', tokenEnv: 'CHECK_WEATHER_TOKEN' }, 'the credential by where it comes from');
  t.match(out, 'redis://app:****@redis.internal:6379/0', 'the store password masked');
  for (const secret of [...Object.values(secretEnv), 'redis-password-123']) t.notOk(out.includes(secret), `${secret} not printed`);
});

t.test('check: a bad config or a missing secret exits 2 with every problem located', async (t) => {
  const typo = spawnGatewayCli(['check', '--config', writeTempConfig(`remotes:\n  x:\n    url: https://x.example/\n    timeout: { totalMs: 5 }\n`)]);
  t.equal(await typo.exited, 2);
  t.match(typo.stderr(), /gateway\.yaml:4: remotes\.x\.timeout: unknown key; did you mean "timeouts"\?/);
  t.equal(typo.stdout(), '', 'nothing on stdout');
  const unset = spawnGatewayCli(['check', '--config', writeTempConfig(secretConfig)], { CHECK_CALLER_TOKENS: 'x' });
  t.equal(await unset.exited, 2);
  t.match(unset.stderr(), /gateway\.yaml:5: remotes\.weather\.auth\.tokenEnv: environment variable CHECK_WEATHER_TOKEN is not set/);
  const missing = spawnGatewayCli(['check', '--config', '/nonexistent/gateway.yaml']);
  t.equal(await missing.exited, 2);
  t.match(missing.stderr(), /cannot read config file/);
  const badFlag = spawnGatewayCli(['check', '--port', '1']);
  t.equal(await badFlag.exited, 2, 'check takes --config only');
});

t.test('schema: prints the JSON Schema shipped as config/gateway.schema.json', async (t) => {
  const gw = spawnGatewayCli(['schema']);
  t.equal(await gw.exited, 0);
  const { readFileSync } = await import('node:fs');
  t.equal(gw.stdout(), readFileSync('config/gateway.schema.json', 'utf8'));
});

t.test('check shows the port the gateway would listen on: $A2A_EGRESS_PORT over server.port; a bad one exits 2', async (t) => {
  const file = writeTempConfig(goodConfig);
  const moved = spawnGatewayCli(['check', '--config', file], { A2A_EGRESS_PORT: '9123' });
  t.equal(await moved.exited, 0);
  t.match(moved.stdout(), /^ {2}port: 9123$/m);
  const bad = spawnGatewayCli(['check', '--config', file], { A2A_EGRESS_PORT: '70000' });
  t.equal(await bad.exited, 2);
  t.match(bad.stderr(), /A2A_EGRESS_PORT: must be an integer 0\.\.65535/);
  const serve = spawnGatewayCli(['--config', file], { A2A_EGRESS_PORT: 'http' });
  t.equal(await serve.exited, 2, 'the gateway refuses to start on it too');
});
