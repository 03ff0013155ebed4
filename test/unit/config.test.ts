import t, { type Test } from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { A2A_METHODS } from '../../src/a2a/methods.js';
import { builtinLimits, builtinPolicy, builtinServer, builtinTimeouts } from '../../src/config/defaults.js';
import { ConfigError } from '../../src/config/errors.js';
import { loadConfigFile, parseConfig } from '../../src/loader/load.js';
import { CircuitBreakerSchema, LimitsSchema, RateLimitSchema, RetrySchema, ServerSchema, TimeoutsSchema } from '../../src/config/schema.js';

const MINIMAL = 'remotes:\n  weather:\n    url: https://weather.example/a2a\n';

/** The ConfigError parseConfig throws for `text`; fails the test if it does not throw one. */
function problemsOf(t: Test, text: string): string[] {
  try {
    parseConfig(text, 'g.yaml');
  } catch (err) {
    t.type(err, ConfigError);
    t.equal((err as Error).name, 'ConfigError');
    return [...(err as ConfigError).problems];
  }
  t.fail('expected a ConfigError');
  return [];
}

const remoteWith = (lines: string): string => `${MINIMAL}${lines.replace(/^/gm, '    ')}\n`;

t.test('minimal valid config gets every default', async (t) => {
  const config = parseConfig(MINIMAL, 'g.yaml');
  t.same(config.server, builtinServer);
  t.match(config.server, { host: '127.0.0.1', port: 8080, logLevel: 'info' }, 'documented server defaults');
  t.same([...config.remotes.keys()], ['weather']);
  const remote = config.remotes.get('weather');
  t.equal(remote?.name, 'weather');
  t.equal(remote?.url.href, 'https://weather.example/a2a');
  t.same(remote?.limits, builtinLimits);
  t.same(remote?.timeouts, builtinTimeouts);
  t.equal(remote?.limits.maxErrorMessageBytes, 200, 'documented message bound');
  t.equal(remote?.allowPrivateNetwork, builtinPolicy.allowPrivateNetwork);
  t.equal(remote?.allowPrivateNetwork, false, 'private networks are denied by default');
  t.equal(remote?.keepRemoteErrorData, false);
  t.equal(remote?.maxUpstreamConnections, builtinPolicy.maxUpstreamConnections);
  t.same(remote?.forwardHeaders, []);
  t.same([...(remote?.methods ?? [])].sort(), [...A2A_METHODS.keys()].sort(), 'all methods allowed');
  t.same(remote?.tls, {});
});

t.test('defaults merge: defaults.limits, then remote.limits override per key', async (t) => {
  const text = `
defaults:
  keepRemoteErrorData: true
  limits: { maxErrorMessageBytes: 100, maxJsonDepth: 10 }
  timeouts: { totalMs: 5000, connectMs: 700 }
remotes:
  a:
    url: https://a.example/
  b:
    url: https://b.example/
    keepRemoteErrorData: false
    limits: { maxJsonDepth: 20 }
    timeouts: { connectMs: 300 }
`;
  const config = parseConfig(text, 'g.yaml');
  const a = config.remotes.get('a');
  const b = config.remotes.get('b');
  t.same(a?.limits, { ...builtinLimits, maxErrorMessageBytes: 100, maxJsonDepth: 10 });
  t.same(b?.limits, { ...builtinLimits, maxErrorMessageBytes: 100, maxJsonDepth: 20 }, 'remote key wins, others inherited');
  t.same(a?.timeouts, { ...builtinTimeouts, totalMs: 5000, connectMs: 700 });
  t.same(b?.timeouts, { ...builtinTimeouts, totalMs: 5000, connectMs: 300 });
  t.equal(a?.keepRemoteErrorData, true, 'from defaults');
  t.equal(b?.keepRemoteErrorData, false, 'a remote false overrides a defaults true');
  t.not(a?.limits, b?.limits, 'remotes do not share one limits object');
});

t.test('server settings merge over the built-in server', async (t) => {
  const config = parseConfig(`server:\n  port: 0\n${MINIMAL}`, 'g.yaml');
  t.same(config.server, { ...builtinServer, port: 0 });
});

t.test('unknown key at top level names the key and its line', async (t) => {
  t.same(problemsOf(t, `${MINIMAL}bogus: 1\n`), ['g.yaml:4: bogus: unknown key']);
  t.same(problemsOf(t, `bogus:\n  nested: 1\n${MINIMAL}`), ['g.yaml:1: bogus: unknown key'], 'line of the key, not of its block value');
});

t.test('unknown key in server', async (t) => {
  t.same(problemsOf(t, `server:\n  port: 1\n  colour: red\n${MINIMAL}`), ['g.yaml:3: server.colour: unknown key']);
});

t.test('unknown key in a remote', async (t) => {
  t.same(problemsOf(t, remoteWith('urll: https://x.example/')), ['g.yaml:4: remotes.weather.urll: unknown key; did you mean "url"?']);
});

t.test('unknown key in limits (remote and defaults)', async (t) => {
  t.same(problemsOf(t, remoteWith('limits:\n  maxErrorMessageByte: 16')), ['g.yaml:5: remotes.weather.limits.maxErrorMessageByte: unknown key; did you mean "maxErrorMessageBytes"?']);
  t.same(problemsOf(t, `defaults:\n  limits:\n    maxFoo: 1\n${MINIMAL}`), ['g.yaml:3: defaults.limits.maxFoo: unknown key']);
  t.same(problemsOf(t, remoteWith('timeouts:\n  totalSeconds: 1')), ['g.yaml:5: remotes.weather.timeouts.totalSeconds: unknown key']);
});

t.test('several problems are all reported', async (t) => {
  const problems = problemsOf(t, `a: 1\nb: 2\n${MINIMAL}`);
  t.same(problems, ['g.yaml:1: a: unknown key', 'g.yaml:2: b: unknown key']);
});

t.test('bad remote name', async (t) => {
  for (const name of ['"bad name"', '-leading-dash', '"x/y"', 'a'.repeat(64)]) {
    const problems = problemsOf(t, `remotes:\n  ${name}:\n    url: https://x.example/\n`);
    t.equal(problems.length, 1, name);
    t.match(problems[0], /^g\.yaml:2: remotes\..+: not a valid remote name/, name);
  }
  t.ok(parseConfig(`remotes:\n  ${'a'.repeat(63)}:\n    url: https://x.example/\n`).remotes.size === 1, '63 characters is fine');
});

t.test('bad url: ftp:// and not a URL', async (t) => {
  t.same(problemsOf(t, 'remotes:\n  a:\n    url: ftp://x.example/a2a\n'), ['g.yaml:3: remotes.a.url: must match pattern "^https?://"']);
  const notUrl = problemsOf(t, 'remotes:\n  a:\n    url: not a url\n');
  t.ok(notUrl.length > 0 && notUrl.every((p) => p.startsWith('g.yaml:3: remotes.a.url: ')), notUrl.join(' / '));
});

t.test('bad url that the uri format accepts but URL refuses', async (t) => {
  for (const url of ['https://', 'http://:80/', 'http://host:99999/']) {
    t.same(problemsOf(t, `remotes:\n  a:\n    url: "${url}"\n`), ['g.yaml:3: remotes.a.url: not a valid URL'], url);
  }
});

t.test('missing url and empty remotes', async (t) => {
  t.same(problemsOf(t, 'remotes:\n  a: {}\n'), ['g.yaml:2: remotes.a.url: is required']);
  t.same(problemsOf(t, 'remotes: {}\n'), ['g.yaml:1: remotes: must NOT have fewer than 1 properties']);
});

t.test('maxErrorMessageBytes: 16 accepted, 15 refused', async (t) => {
  t.equal(parseConfig(remoteWith('limits:\n  maxErrorMessageBytes: 16')).remotes.get('weather')?.limits.maxErrorMessageBytes, 16);
  t.same(problemsOf(t, remoteWith('limits:\n  maxErrorMessageBytes: 15')), ['g.yaml:5: remotes.weather.limits.maxErrorMessageBytes: must be >= 16']);
  t.same(problemsOf(t, remoteWith('limits:\n  maxErrorMessageBytes: 16.5')), ['g.yaml:5: remotes.weather.limits.maxErrorMessageBytes: must be integer']);
});

t.test('port: 65535 accepted, 65536 refused; 0 accepted, -1 refused', async (t) => {
  t.equal(parseConfig(`server:\n  port: 65535\n${MINIMAL}`).server.port, 65535);
  t.same(problemsOf(t, `server:\n  port: 65536\n${MINIMAL}`), ['g.yaml:2: server.port: must be <= 65535']);
  t.equal(parseConfig(`server:\n  port: 0\n${MINIMAL}`).server.port, 0);
  t.same(problemsOf(t, `server:\n  port: -1\n${MINIMAL}`), ['g.yaml:2: server.port: must be >= 0']);
});

/** Every numeric bound in one schema section: the bound itself passes, one past it fails. */
function checkBounds(t: Test, section: 'limits' | 'timeouts', properties: Record<string, { minimum?: number; maximum?: number }>): void {
  for (const [key, spec] of Object.entries(properties)) {
    for (const [bound, past, op] of [
      [spec.minimum, (spec.minimum ?? 0) - 1, '>='],
      [spec.maximum, (spec.maximum ?? 0) + 1, '<='],
    ] as const) {
      if (bound === undefined) continue;
      // A budget as large as the schema allows, so the largest per-remote limits fit in it.
      const roomy = `\nserver:\n  maxBufferedBytes: ${64 * 1024 ** 3}\n`;
      const at = parseConfig(remoteWith(`${section}:\n  ${key}: ${bound}`) + roomy).remotes.get('weather');
      t.equal((at?.[section] as Record<string, number> | undefined)?.[key], bound, `${section}.${key} = ${bound} accepted`);
      t.same(
        problemsOf(t, remoteWith(`${section}:\n  ${key}: ${past}`)),
        [`g.yaml:5: remotes.weather.${section}.${key}: must be ${op} ${bound}`],
        `${section}.${key} = ${past} refused`,
      );
    }
  }
}

t.test('every limits bound: at the bound accepted, one past refused', async (t) => {
  checkBounds(t, 'limits', LimitsSchema.properties as Record<string, { minimum?: number; maximum?: number }>);
});

t.test('every timeouts bound: at the bound accepted, one past refused', async (t) => {
  checkBounds(t, 'timeouts', TimeoutsSchema.properties as Record<string, { minimum?: number; maximum?: number }>);
});

t.test('logLevel outside the enum', async (t) => {
  t.same(problemsOf(t, `server:\n  logLevel: loud\n${MINIMAL}`), ['g.yaml:2: server.logLevel: must be one of the documented values']);
  t.equal(parseConfig(`server:\n  logLevel: silent\n${MINIMAL}`).server.logLevel, 'silent');
});

t.test('wrong types are reported with the key', async (t) => {
  t.same(problemsOf(t, remoteWith('keepRemoteErrorData: "yes"')), ['g.yaml:4: remotes.weather.keepRemoteErrorData: must be boolean']);
  t.same(problemsOf(t, '- 1\n- 2\n'), ['g.yaml:1: (top level): must be object']);
});

t.test('YAML syntax error carries line and column', async (t) => {
  const problems = problemsOf(t, 'remotes:\n  a:\n    url: [unclosed\n');
  t.equal(problems.length > 0, true);
  t.match(problems[0], /^g\.yaml:\d+:\d+: YAML syntax: /);
  const tab = problemsOf(t, 'remotes:\n  a:\n\turl: https://x.example/\n');
  t.match(tab[0], /^g\.yaml:3:\d+: YAML syntax: /, 'tab indentation on line 3');
});

t.test('duplicate YAML keys are an error with the line of the duplicate', async (t) => {
  const problems = problemsOf(t, 'remotes:\n  a:\n    url: https://x.example/\n  a:\n    url: https://y.example/\n');
  t.same(problems, ['g.yaml:4:3: YAML syntax: Map keys must be unique']);
  t.match(problemsOf(t, 'remotes:\n  a:\n    url: https://x.example/\n    url: https://y.example/\n')[0], /^g\.yaml:4:\d+: YAML syntax: Map keys must be unique/);
});

t.test('empty file is a ConfigError', async (t) => {
  t.same(problemsOf(t, ''), ['g.yaml: remotes: is required']);
  t.same(problemsOf(t, '# only a comment\n\n'), ['g.yaml: remotes: is required']);
});

t.test('loadConfigFile reads a file and names it in errors', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-egress-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const good = join(dir, 'good.yaml');
  writeFileSync(good, MINIMAL);
  t.equal(loadConfigFile(good).remotes.get('weather')?.url.host, 'weather.example');
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, `${MINIMAL}extra: true\n`);
  t.throws(() => loadConfigFile(bad), { name: 'ConfigError', message: `${bad}:4: extra: unknown key` });
});

t.test('loadConfigFile on a missing file is a ConfigError', async (t) => {
  const missing = join(tmpdir(), 'a2a-egress-does-not-exist', 'g.yaml');
  t.throws(() => loadConfigFile(missing), { name: 'ConfigError', message: `cannot read config file ${missing}: ENOENT` });
});

t.test('the shipped config/gateway.yaml loads', async (t) => {
  const config = loadConfigFile(new URL('../../config/gateway.yaml', import.meta.url).pathname);
  t.ok(config.remotes.size >= 1);
});

t.test('a remote URL with credentials in it is refused, pointing at auth', async (t) => {
  t.throws(() => parseConfig('remotes:\n  a:\n    url: https://user:pw@agent.example.com/a2a\n', 'g.yaml'), {
    name: 'ConfigError',
    message: /g\.yaml:3: remotes\.a\.url: must not contain credentials; use remotes\.a\.auth/,
  });
});

type NumericSpec = { minimum?: number; maximum?: number; exclusiveMinimum?: number; type?: string };

/**
 * Every numeric bound outside `limits`/`timeouts`: the value at the bound is
 * accepted and the first value past it is refused, naming the key. `place`
 * renders `key: value` into a whole config, with any sibling a section needs.
 */
function checkSectionBounds(t: Test, prefix: string, properties: Record<string, NumericSpec>, place: (key: string, value: number) => string): void {
  for (const [key, spec] of Object.entries(properties)) {
    if (spec.type !== 'integer' && spec.type !== 'number') continue;
    const step = spec.type === 'integer' ? 1 : 0.001;
    const bounds: [number, number, string][] = [];
    if (spec.minimum !== undefined) bounds.push([spec.minimum, spec.minimum - step, `>= ${spec.minimum}`]);
    if (spec.exclusiveMinimum !== undefined) bounds.push([spec.exclusiveMinimum + step, spec.exclusiveMinimum, `> ${spec.exclusiveMinimum}`]);
    if (spec.maximum !== undefined) bounds.push([spec.maximum, spec.maximum + step, `<= ${spec.maximum}`]);
    for (const [ok, past, rule] of bounds) {
      t.doesNotThrow(() => parseConfig(place(key, ok), 'g.yaml'), `${prefix}${key} = ${ok} accepted`);
      const problems = problemsOf(t, place(key, past));
      t.ok(problems.some((p) => p.includes(`${prefix}${key}: must be ${rule}`)), `${prefix}${key} = ${past} refused (${problems.join('; ')})`);
    }
  }
}

// Small per-remote limits, so the smallest server.maxBufferedBytes still holds one reply and one event.
const SMALL_REMOTE = 'remotes:\n  weather:\n    url: https://weather.example/a2a\n    limits: { maxResponseBytes: 64, maxEventBytes: 64 }\n';

t.test('every server bound: at the bound accepted, one past refused', async (t) => {
  checkSectionBounds(t, 'server.', ServerSchema.properties as Record<string, NumericSpec>, (key, value) => `server:\n  ${key}: ${value}\n${SMALL_REMOTE}`);
});

t.test('every rateLimit, circuitBreaker and retries bound: at the bound accepted, one past refused', async (t) => {
  const under = (section: string, body: string) => `${MINIMAL}    ${section}: { ${body} }\n`;
  checkSectionBounds(t, 'remotes.weather.rateLimit.', RateLimitSchema.properties as Record<string, NumericSpec>, (key, value) =>
    under('rateLimit', key === 'burst' ? `perSecond: 1, burst: ${value}` : `burst: 1, ${key}: ${value}`),
  );
  checkSectionBounds(t, 'remotes.weather.circuitBreaker.', CircuitBreakerSchema.properties as Record<string, NumericSpec>, (key, value) =>
    under('circuitBreaker', `${key}: ${value}`),
  );
  checkSectionBounds(t, 'remotes.weather.retries.', RetrySchema.properties as Record<string, NumericSpec>, (key, value) => under('retries', `${key}: ${value}`));
});

t.test('remotes.<name>.listen: host defaults to loopback; port 0..65535; publicBaseUrl an http(s) URL', async (t) => {
  const config = parseConfig(remoteWith('listen: { port: 9001 }'), 'g.yaml');
  t.same(config.remotes.get('weather')?.listen, { host: '127.0.0.1', port: 9001 });
  t.equal(parseConfig(MINIMAL, 'g.yaml').remotes.get('weather')?.listen, undefined, 'no listener unless asked for');
  const full = parseConfig(remoteWith("listen: { host: '::1', port: 0, publicBaseUrl: 'https://weather.gw.example/' }"), 'g.yaml');
  t.same(full.remotes.get('weather')?.listen, { host: '::1', port: 0, publicBaseUrl: 'https://weather.gw.example/' });
  t.ok(parseConfig(remoteWith('listen: { port: 65535 }'), 'g.yaml'));
  t.match(problemsOf(t, remoteWith('listen: { port: 65536 }')), [/remotes\.weather\.listen\.port: must be <= 65535/]);
  t.match(problemsOf(t, remoteWith('listen: { port: -1 }')), [/remotes\.weather\.listen\.port: must be >= 0/]);
  t.match(problemsOf(t, remoteWith('listen: { host: 127.0.0.1 }')), [/remotes\.weather\.listen\.port: is required/]);
  t.match(problemsOf(t, remoteWith('listen: { port: 1, hots: x }')), [/remotes\.weather\.listen\.hots: unknown key; did you mean \"host\"\?/]);
  t.match(problemsOf(t, remoteWith("listen: { port: 1, publicBaseUrl: 'ftp://x/' }")), [/remotes\.weather\.listen\.publicBaseUrl/]);
});

t.test('remotes.<name>.listen is per remote: not a defaults key; two remotes cannot own one port (0 never clashes)', async (t) => {
  t.match(problemsOf(t, `defaults:\n  listen: { port: 9001 }\n${MINIMAL}`), [/g\.yaml:2: defaults\.listen: unknown key/]);
  const two = (a: string, b: string) => `remotes:\n  a: { url: 'https://a.example/', listen: ${a} }\n  b: { url: 'https://b.example/', listen: ${b} }\n`;
  t.match(problemsOf(t, two('{ port: 9001 }', '{ port: 9001 }')), [/g\.yaml:3: remotes\.b\.listen: 127\.0\.0\.1:9001 is also remotes\.a\.listen/]);
  t.ok(parseConfig(two('{ port: 0 }', '{ port: 0 }'), 'g.yaml'), 'port 0 twice: two free ports');
  t.ok(parseConfig(two('{ port: 9001 }', '{ port: 9001, host: 127.0.0.2 }'), 'g.yaml'), 'the same port on two addresses');
});
