/**
 * Config errors a user can act on: a missing secret names the file, line
 * and key that asks for it; an unknown key names the nearest known one.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ConfigError } from '../../src/config/errors.js';
import { parseConfig, type ParseOptions } from '../../src/loader/load.js';
import { editDistance, nearestKey } from '../../src/config/suggest.js';

function problemsOf(t: Test, text: string, options: ParseOptions = {}): string[] {
  try {
    parseConfig(text, 'config.yaml', options);
  } catch (err) {
    t.type(err, ConfigError);
    return [...(err as ConfigError).problems];
  }
  t.fail('expected a ConfigError');
  return [];
}

const withAuth = (auth: string, server = '') => `${server}remotes:
  weather:
    url: https://weather.example/a2a
    timeouts: { totalMs: 1000 }
    # the credential:
    auth: ${auth}
`;

t.test('a missing credential env var names the file, line and key', async (t) => {
  const text = withAuth('{ type: bearer, tokenEnv: API_TOKEN }');
  t.same(problemsOf(t, text, { env: {} }), ['config.yaml:6: remotes.weather.auth.tokenEnv: environment variable API_TOKEN is not set']);
  t.same(problemsOf(t, text, { env: { API_TOKEN: '  ' } }), ['config.yaml:6: remotes.weather.auth.tokenEnv: environment variable API_TOKEN is empty']);
  t.same(problemsOf(t, text, { env: { API_TOKEN: 'a\nb' } }), [
    'config.yaml:6: remotes.weather.auth.tokenEnv: environment variable API_TOKEN contains characters not allowed in a header value',
  ]);
  t.ok(parseConfig(text, 'config.yaml', { env: { API_TOKEN: 'tok' } }), 'set: accepted');
  t.ok(parseConfig(text, 'config.yaml'), 'no env given: not checked at parse time');
});

t.test('the key is found in block style too, and the line is the key’s own', async (t) => {
  const text = `remotes:
  weather:
    url: https://weather.example/a2a
    auth:
      type: header
      name: x-api-key

      valueEnv: WEATHER_KEY
`;
  t.same(problemsOf(t, text, { env: {} }), ['config.yaml:8: remotes.weather.auth.valueEnv: environment variable WEATHER_KEY is not set']);
});

t.test('every missing secret is reported, caller tokens included', async (t) => {
  const text = `server:
  auth: { type: bearer, tokensEnv: CALLER_TOKENS }
remotes:
  a:
    url: https://a.example/
    auth: { type: bearer, tokenEnv: A_TOKEN }
  b:
    url: https://b.example/
    auth: { type: bearer, tokenEnv: B_TOKEN }
`;
  t.same(problemsOf(t, text, { env: { B_TOKEN: 'ok' } }), [
    'config.yaml:2: server.auth.tokensEnv: environment variable CALLER_TOKENS is not set',
    'config.yaml:6: remotes.a.auth.tokenEnv: environment variable A_TOKEN is not set',
  ]);
  t.same(problemsOf(t, text, { env: { CALLER_TOKENS: ' , ', A_TOKEN: 'x', B_TOKEN: 'y' } }), [
    'config.yaml:2: server.auth.tokensEnv: environment variable CALLER_TOKENS holds no token',
  ]);
});

t.test('a token file that is missing or empty names the key', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-egress-secrets-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const missing = join(dir, 'absent');
  t.same(problemsOf(t, withAuth(`{ type: bearer, tokenFile: ${missing} }`), { env: {} }), [
    `config.yaml:6: remotes.weather.auth.tokenFile: cannot read token file ${missing}: ENOENT`,
  ]);
  const empty = join(dir, 'empty');
  writeFileSync(empty, '\n');
  t.same(problemsOf(t, withAuth(`{ type: bearer, tokenFile: ${empty} }`), { env: {} }), [`config.yaml:6: remotes.weather.auth.tokenFile: token file ${empty} is empty`]);
  const good = join(dir, 'good');
  writeFileSync(good, 'token\n');
  t.ok(parseConfig(withAuth(`{ type: bearer, tokenFile: ${good} }`), 'config.yaml', { env: {} }));
});

t.test('an unknown key suggests the nearest known key at its level', async (t) => {
  const remote = (line: string) => `remotes:\n  x:\n    url: https://x.example/\n    ${line}\n`;
  t.same(problemsOf(t, remote('timeout: { totalMs: 5 }')), ['config.yaml:4: remotes.x.timeout: unknown key; did you mean "timeouts"?']);
  t.same(problemsOf(t, remote('limts: {}')), ['config.yaml:4: remotes.x.limts: unknown key; did you mean "limits"?']);
  t.same(problemsOf(t, remote('Methods: [GetTask]')), ['config.yaml:4: remotes.x.Methods: unknown key; did you mean "methods"?'], 'case');
  t.same(problemsOf(t, remote('retires: {}')), ['config.yaml:4: remotes.x.retires: unknown key; did you mean "retries"?'], 'transposition');
  t.same(problemsOf(t, remote('timeouts: { totlMs: 5 }')), ['config.yaml:4: remotes.x.timeouts.totlMs: unknown key; did you mean "totalMs"?'], 'nested');
  t.same(problemsOf(t, `server:\n  prot: 1\nremotes:\n  x:\n    url: https://x.example/\n`), ['config.yaml:2: server.prot: unknown key; did you mean "port"?']);
  t.same(problemsOf(t, `remote:\n  x:\n    url: https://x.example/\nremotes:\n  x:\n    url: https://x.example/\n`), [
    'config.yaml:1: remote: unknown key; did you mean "remotes"?',
  ]);
  t.same(problemsOf(t, remote('colour: red')), ['config.yaml:4: remotes.x.colour: unknown key'], 'nothing near: no guess');
  t.same(problemsOf(t, `remotes:\n  "a b":\n    url: https://x.example/\n`).map((p) => p.includes('did you mean')), [false], 'remote names are not keys to correct');
});

t.test('nearestKey: one edit for short keys, a third of the length for long ones', async (t) => {
  t.equal(editDistance('limts', 'limits'), 1);
  t.equal(editDistance('retires', 'retries'), 1, 'a transposition is one edit');
  t.equal(editDistance('', 'abc'), 3);
  t.equal(nearestKey('url', ['urls', 'uri']), 'urls', 'the first of equally near keys');
  t.equal(nearestKey('ab', ['abcd']), undefined, '2 edits on a 2-letter key is too far');
  t.equal(nearestKey('maxConcurent', ['maxConcurrent', 'maxQueued']), 'maxConcurrent');
  t.equal(nearestKey('maxQueuedCalls', ['maxQueued']), undefined, '5 edits on 14 letters is too far');
  t.equal(nearestKey('maxQueuedCall', ['maxQueued']), 'maxQueued', '4 edits on 13 letters is near enough');
});

t.test('trace exporter headers and push keys read at start-up are checked with the other secrets, each with its line', async (t) => {
  const text = `server:
  push:
    port: 0
    publicBaseUrl: http://127.0.0.1:1/push
    keys: { env: PUSH_KEYS }
    allowedTargets: [loopback]
telemetry:
  traces:
    endpoint: http://127.0.0.1:4318
    headers:
      x-api-key: { valueEnv: OTLP_KEY }
remotes:
  weather: { url: 'https://weather.example/a2a' }
`;
  t.same(problemsOf(t, text, { env: {} }), [
    'config.yaml:11: telemetry.traces.headers.x-api-key.valueEnv: environment variable OTLP_KEY is not set',
    'config.yaml:5: server.push.keys: environment variable PUSH_KEYS is not set',
  ]);
  t.same(problemsOf(t, text, { env: { OTLP_KEY: 'k', PUSH_KEYS: 'not-a-key' } }), ['config.yaml:5: server.push.keys: key 1 is not base64 of exactly 32 bytes']);
  const badTarget = text.replace('[loopback]', '["ftp://x"]');
  const [problem] = problemsOf(t, badTarget, { env: { OTLP_KEY: 'k', PUSH_KEYS: Buffer.alloc(32, 7).toString('base64') } });
  t.match(problem, /^config\.yaml:6: server\.push\.allowedTargets: /, 'an allowlist problem points at allowedTargets');
  t.ok(parseConfig(text, 'config.yaml', { env: { OTLP_KEY: 'k', PUSH_KEYS: Buffer.alloc(32, 7).toString('base64') } }), 'all set: accepted');
});
