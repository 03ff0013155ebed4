/**
 * `a2a-egress check` and `a2a-egress schema` as users run them (the built
 * CLI): the effective config with secrets masked, every problem located,
 * the JSON Schema exactly as shipped.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { spawnGatewayCli, writeTempConfig } from '../support/gateway.js';

const goodConfig = `
server: { host: 127.0.0.1, port: 8080, logLevel: info }
remotes:
  weather:
    url: http://127.0.0.1:9/a2a
    allowPrivateNetwork: true
`;

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
