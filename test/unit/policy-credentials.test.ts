import fs from 'node:fs';
import path from 'node:path';
import { inspect } from 'node:util';
import t, { type Test } from 'tap';
import { Ajv } from 'ajv';
import { AuthSchema } from '../../src/config/auth.js';
import {
  CredentialError,
  createCredentialSource,
  type CredentialSource,
} from '../../src/policy/credentials.js';

const SECRET = 's3cr3t-token-value';

function assertHidden(t: Test, source: CredentialSource, secret = SECRET) {
  t.notMatch(String(source), secret, 'toString');
  t.notMatch(`${source}`, secret, 'template literal');
  t.notMatch(JSON.stringify(source), secret, 'JSON');
  t.notMatch(JSON.stringify({ nested: { source } }), secret, 'nested JSON');
  t.notMatch(inspect(source), secret, 'inspect');
  t.notMatch(inspect({ source }, { depth: 10, showHidden: true }), secret, 'inspect showHidden');
}

t.test('bearer from env', async (t) => {
  const source = createCredentialSource({ type: 'bearer', tokenEnv: 'API_TOKEN' }, { API_TOKEN: ` ${SECRET}\n` });
  t.same(source.headers(), { authorization: `Bearer ${SECRET}` }, 'trimmed');
  t.equal(source.description, 'bearer from env API_TOKEN');
  t.not(source.headers(), source.headers(), 'a fresh object each call');
  assertHidden(t, source);
});

t.test('header from env', async (t) => {
  const source = createCredentialSource(
    { type: 'header', name: 'X-Api-Key', valueEnv: 'KEY' },
    { KEY: SECRET },
  );
  t.same(source.headers(), { 'x-api-key': SECRET }, 'name lowercased');
  assertHidden(t, source);
});

t.test('missing or empty env var: CredentialError naming the var, never a value', async (t) => {
  for (const env of [{}, { API_TOKEN: '' }, { API_TOKEN: '   ' }]) {
    const err = t.throws(() => createCredentialSource({ type: 'bearer', tokenEnv: 'API_TOKEN' }, env)) as Error;
    t.equal(err.name, 'CredentialError');
    t.type(err, CredentialError);
    t.match(err.message, /API_TOKEN/);
  }
  t.throws(() => createCredentialSource({ type: 'header', name: 'x-k', valueEnv: 'NOPE' }, {}), {
    name: 'CredentialError',
    message: /NOPE/,
  });
});

t.test('env values with CR, LF, NUL or other controls are rejected without echoing them', async (t) => {
  for (const bad of [`${SECRET}\r\nx-evil: 1`, `${SECRET}\nx`, `a${SECRET}\u0000`, `${SECRET}\u0007b`, `${SECRET}é`]) {
    const err = t.throws(() => createCredentialSource({ type: 'bearer', tokenEnv: 'T' }, { T: bad })) as Error;
    t.equal(err.name, 'CredentialError');
    t.notMatch(err.message, SECRET);
  }
});

t.test('default env is process.env', async (t) => {
  const name = 'A2A_EGRESS_TEST_TOKEN_' + process.pid;
  process.env[name] = SECRET;
  t.teardown(() => delete process.env[name]);
  t.same(createCredentialSource({ type: 'bearer', tokenEnv: name }).headers(), { authorization: `Bearer ${SECRET}` });
});

t.test('header names that would break the exchange are refused at creation', async (t) => {
  for (const name of ['Host', 'connection', 'Transfer-Encoding', 'content-length', 'Content-Type', 'te', 'bad name', '']) {
    t.throws(() => createCredentialSource({ type: 'header', name, valueEnv: 'K' }, { K: SECRET }), { name: 'CredentialError' }, name);
  }
  t.doesNotThrow(() => createCredentialSource({ type: 'header', name: 'tea', valueEnv: 'K' }, { K: SECRET }), 'prefix-like names are fine');
});

function tokenFile(t: Test, content: string) {
  const dir = t.testdir({ token: content });
  return path.join(dir, 'token');
}

/** Rewrites the file and moves its mtime so a change is seen however coarse the filesystem clock is. */
function rewrite(file: string, content: string, mtimeSec: number) {
  fs.writeFileSync(file, content);
  fs.utimesSync(file, mtimeSec, mtimeSec);
}

const START_MTIME = 500_000; // whole seconds: survives every filesystem's timestamp precision

function fileSource(t: Test, content: string) {
  const file = tokenFile(t, content);
  fs.utimesSync(file, START_MTIME, START_MTIME);
  let now = 0;
  const errors: CredentialError[] = [];
  const source = createCredentialSource({ type: 'bearer', tokenFile: file }, {}, {
    now: () => now,
    onError: (e) => errors.push(e),
  });
  return { file, source, errors, advance: (ms: number) => void (now += ms) };
}

t.test('tokenFile: read and trimmed at creation', async (t) => {
  const { source } = fileSource(t, `\n  ${SECRET}  \n`);
  t.same(source.headers(), { authorization: `Bearer ${SECRET}` });
  t.match(source.description, /^bearer from file .*token$/);
  assertHidden(t, source);
});

t.test('tokenFile: missing, empty or invalid at creation is a CredentialError', async (t) => {
  const dir = t.testdir({ empty: ' \n', bad: 'a\u0000b' });
  for (const file of [path.join(dir, 'missing'), path.join(dir, 'empty'), path.join(dir, 'bad'), dir]) {
    t.throws(() => createCredentialSource({ type: 'bearer', tokenFile: file }), { name: 'CredentialError' }, file);
  }
  const err = t.throws(() => createCredentialSource({ type: 'bearer', tokenFile: path.join(dir, 'missing') })) as Error;
  t.match(err.message, /ENOENT/, 'only the OS error code');
});

t.test('tokenFile: a change is picked up, but not checked more than once per interval', async (t) => {
  const { file, source, errors, advance } = fileSource(t, 'first-token');
  rewrite(file, 'second-token', 1_000_000);
  advance(999);
  t.same(source.headers(), { authorization: 'Bearer first-token' }, 'just under 1 s: not re-checked');
  advance(1);
  t.same(source.headers(), { authorization: 'Bearer second-token' }, 'at 1 s: re-read');
  t.same(errors, []);
});

t.test('tokenFile: same size but a new mtime is a change', async (t) => {
  const { file, source, advance } = fileSource(t, 'aaaaaaaa');
  rewrite(file, 'bbbbbbbb', 1_000_000);
  advance(1000);
  t.same(source.headers(), { authorization: 'Bearer bbbbbbbb' });
});

t.test('tokenFile: an atomic replace (rename over, as secret mounts do) is a change', async (t) => {
  const { file, source, advance } = fileSource(t, 'aaaaaaaa');
  const next = file + '.new';
  fs.writeFileSync(next, 'cccccccc');
  fs.utimesSync(next, START_MTIME, START_MTIME); // same size, same mtime: only the inode differs
  t.not(fs.statSync(next).ino, fs.statSync(file).ino);
  fs.renameSync(next, file);
  advance(1000);
  t.same(source.headers(), { authorization: 'Bearer cccccccc' });
});

t.test('tokenFile: an unchanged file is not re-read', async (t) => {
  const { file, source, advance } = fileSource(t, 'aaaaaaaa');
  // Same inode, size and mtime, different bytes: a re-read would show 'zzzzzzzz'.
  const fd = fs.openSync(file, 'r+');
  fs.writeSync(fd, 'zzzzzzzz', 0);
  fs.closeSync(fd);
  fs.utimesSync(file, START_MTIME, START_MTIME);
  advance(1000);
  t.same(source.headers(), { authorization: 'Bearer aaaaaaaa' });
});

t.test('tokenFile: file deleted later keeps the last good token and reports once', async (t) => {
  const { file, source, errors, advance } = fileSource(t, SECRET);
  fs.rmSync(file);
  for (let i = 0; i < 3; i++) {
    advance(1000);
    t.same(source.headers(), { authorization: `Bearer ${SECRET}` });
  }
  t.equal(errors.length, 1, 'reported once, not every second');
  t.equal(errors[0]?.name, 'CredentialError');
  t.match(errors[0]?.message, /ENOENT/);
  t.notMatch(errors[0]?.message, SECRET);

  rewrite(file, 'recovered', 1_000_000);
  advance(1000);
  t.same(source.headers(), { authorization: 'Bearer recovered' }, 'recovers when the file is back');
  fs.rmSync(file);
  advance(1000);
  source.headers();
  t.equal(errors.length, 2, 'a new failure after recovery is reported again');
});

t.test('tokenFile: later empty or CR/LF content keeps the last good token', async (t) => {
  const { file, source, errors, advance } = fileSource(t, SECRET);
  rewrite(file, '   ', 1_000_000);
  advance(1000);
  t.same(source.headers(), { authorization: `Bearer ${SECRET}` });
  t.match(errors[0]?.message, /empty/);
  rewrite(file, 'new\r\nx-evil: 1', 1_000_100);
  advance(1000);
  t.same(source.headers(), { authorization: `Bearer ${SECRET}` });
  t.equal(errors.length, 1, 'still the same failure episode');
  rewrite(file, 'good-again', 1_000_200);
  advance(1000);
  t.same(source.headers(), { authorization: 'Bearer good-again' });
});

t.test('tokenFile: onError is optional', async (t) => {
  const file = tokenFile(t, SECRET);
  let now = 0;
  const source = createCredentialSource({ type: 'bearer', tokenFile: file }, {}, { now: () => now, checkIntervalMs: 10 });
  fs.rmSync(file);
  now = 10;
  t.same(source.headers(), { authorization: `Bearer ${SECRET}` });
});

t.test('tokenFile with the default clock', async (t) => {
  const source = createCredentialSource({ type: 'bearer', tokenFile: tokenFile(t, SECRET) });
  t.same(source.headers(), { authorization: `Bearer ${SECRET}` });
});

t.test('values shorter than 8 bytes are refused at creation, naming the remote and key, never the value', async (t) => {
  const cases: [string, Parameters<typeof createCredentialSource>[0], Record<string, string>][] = [
    ['tokenEnv', { type: 'bearer', tokenEnv: 'API_TOKEN' }, { API_TOKEN: 'seven77' }],
    ['valueEnv', { type: 'header', name: 'x-api-key', valueEnv: 'API_KEY' }, { API_KEY: 'seven77' }],
  ];
  for (const [key, auth, env] of cases) {
    const err = t.throws(() => createCredentialSource(auth, env, { remote: 'weather' })) as Error;
    t.equal(err.name, 'CredentialError');
    t.match(err.message, new RegExp(`^remotes\\.weather\\.auth\\.${key}: environment variable API_(TOKEN|KEY) holds 7 bytes; a credential must be at least 8 bytes`));
    t.notMatch(err.message, 'seven77');
    const eight = Object.fromEntries(Object.keys(env).map((k) => [k, 'eight888']));
    t.doesNotThrow(() => createCredentialSource(auth, eight, { remote: 'weather' }), `${key}: 8 bytes, just at the bound`);
  }
  const file = tokenFile(t, 'seven77\n');
  const err = t.throws(() => createCredentialSource({ type: 'bearer', tokenFile: file }, {}, { remote: 'files' })) as Error;
  t.match(err.message, /^remotes\.files\.auth\.tokenFile: token file .* holds 7 bytes/);
  t.notMatch(err.message, 'seven77');
  t.doesNotThrow(() => createCredentialSource({ type: 'bearer', tokenFile: tokenFile(t, 'eight888') }), 'a file of 8 bytes passes');
  const named = t.throws(() => createCredentialSource({ type: 'header', name: 'Host', valueEnv: 'K' }, { K: SECRET }, { remote: 'r' })) as Error;
  t.match(named.message, /^remotes\.r\.auth\.name: /, 'other creation errors name their key too');
});

t.test('tokenFile: a rotation to a value under 8 bytes keeps the last good token', async (t) => {
  const { file, source, errors, advance } = fileSource(t, SECRET);
  rewrite(file, 'short', 1_000_000);
  advance(1000);
  t.same(source.headers(), { authorization: `Bearer ${SECRET}` });
  t.match(errors[0]?.message, /holds 5 bytes/);
  t.same(source.secrets(), [SECRET]);
});

t.test('secrets(): the values to redact, the same array until a rotation, never shown', async (t) => {
  const env = createCredentialSource({ type: 'bearer', tokenEnv: 'T' }, { T: SECRET });
  t.same(env.secrets(), [SECRET]);
  t.equal(env.secrets(), env.secrets(), 'the same array every call');
  t.ok(Object.isFrozen(env.secrets()));
  const header = createCredentialSource({ type: 'header', name: 'x-k', valueEnv: 'K' }, { K: `Basic ${SECRET}` });
  t.same(header.secrets(), [`Basic ${SECRET}`]);

  const { file, source, advance } = fileSource(t, 'first-token');
  const before = source.secrets();
  t.same(before, ['first-token']);
  rewrite(file, 'second-token', 1_000_000);
  advance(1000);
  source.headers();
  t.same(source.secrets(), ['second-token', 'first-token'], 'after a rotation: current and previous');
  t.not(source.secrets(), before, 'a new array, so the redactor is rebuilt');
  rewrite(file, 'third-token', 1_000_100);
  advance(1000);
  source.headers();
  t.same(source.secrets(), ['third-token', 'second-token'], 'only the one before the current stays');
  for (const s of [env, header, source]) assertHidden(t, s, SECRET);
  t.notMatch(JSON.stringify(source), 'third-token');
  t.notMatch(inspect(source, { showHidden: true, depth: 10 }), 'third-token');
});

t.test('AuthSchema validates the three config shapes', async (t) => {
  const validate = new Ajv({ strict: true }).compile(AuthSchema);
  const ok = [
    { type: 'bearer', tokenEnv: 'API_TOKEN' },
    { type: 'bearer', tokenFile: '/run/secrets/token' },
    { type: 'header', name: 'X-Api-Key', valueEnv: 'KEY' },
  ];
  for (const auth of ok) t.ok(validate(auth), JSON.stringify(auth));
  const bad = [
    { type: 'bearer' },
    { type: 'bearer', tokenEnv: 'A', tokenFile: '/f' },
    { type: 'bearer', tokenEnv: '1BAD' },
    { type: 'bearer', tokenEnv: 'A-B' },
    { type: 'bearer', tokenFile: '' },
    { type: 'header', name: 'Host', valueEnv: 'K' },
    { type: 'header', name: 'CONNECTION', valueEnv: 'K' },
    { type: 'header', name: 'Content-Length', valueEnv: 'K' },
    { type: 'header', name: 'proxy-authorization', valueEnv: 'K' },
    { type: 'header', name: 'bad name', valueEnv: 'K' },
    { type: 'header', name: 'x-k' },
    { type: 'basic', tokenEnv: 'A' },
    { type: 'bearer', tokenEnv: 'A', extra: 1 },
  ];
  for (const auth of bad) t.notOk(validate(auth), JSON.stringify(auth));
  t.ok(validate({ type: 'header', name: 'hosts', valueEnv: 'K' }), 'only exact forbidden names');
});
