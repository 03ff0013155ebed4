/**
 * The image's own command, started the way the image starts it, from a clean
 * production-only `npm ci --omit=dev` in a temp dir (no container engine
 * runs here): it listens, passes the image's HEALTHCHECK and exits 0 on
 * SIGTERM. Slow (a real `npm ci`), so it runs in `npm run test:slow`.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { request } from 'undici';
import { finalStage, parseDockerfile, type Stage } from '../support/deploy-dockerfile.js';

// `npm ci` may have to fill the npm cache: give this file more than the default.
t.setTimeout(240_000);

const dockerfileText = readFileSync('Dockerfile', 'utf8');

/** Runs a command to completion with a deadline; never throws. */
function run(cmd: string, args: string[], opts: { cwd: string; timeoutMs: number; env?: NodeJS.ProcessEnv }) {
  return new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

const NO_NETWORK = /E(NOTFOUND|AI_AGAIN|CONNREFUSED|CONNRESET|TIMEDOUT|NETUNREACH|NOTCACHED)|network|offline/i;

t.test("the image's command starts from a clean `npm ci --omit=dev` install", async (t) => {
  if (!existsSync('dist/cli.js')) {
    const build = await run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { cwd: '.', timeoutMs: 120_000 });
    if (build.code !== 0) t.fail(`build failed: ${build.out.slice(-2000)}`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'a2a-egress-image-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const file of ['package.json', 'package-lock.json']) cpSync(file, join(dir, file));
  cpSync('dist', join(dir, 'dist'), { recursive: true });

  // --prefer-offline: the npm cache serves what it has; only what it lacks is fetched.
  const install = await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dir, timeoutMs: 120_000 });
  const offline = install.code !== 0 && NO_NETWORK.test(install.out);
  const skip = offline
    ? `npm ci --omit=dev could not fetch packages missing from the npm cache (${install.out.match(NO_NETWORK)?.[0]}): no network here`
    : false;
  await t.test('from the clean install, the image command listens and passes its HEALTHCHECK', { skip }, async (t) => {
    if (install.code !== 0) return t.fail(`npm ci --omit=dev exited ${install.code}: ${install.out.slice(-2000)}`);
    await startsFromInstall(t, dir);
  });
});

async function startsFromInstall(t: Test, dir: string): Promise<void> {
  t.ok(existsSync(join(dir, 'node_modules', 'fastify')), 'production deps installed');
  t.notOk(existsSync(join(dir, 'node_modules', 'typescript')), 'dev deps left out');
  t.notOk(existsSync(join(dir, 'node_modules', 'tap')), 'dev deps left out');

  // The bundled config goes where the image puts it, under the temp dir.
  const runtime: Stage = finalStage(parseDockerfile(dockerfileText));
  const configPath = join(dir, 'etc', 'a2a-egress', 'gateway.yaml');
  mkdirSync(join(dir, 'etc', 'a2a-egress'), { recursive: true });
  writeFileSync(configPath, readFileSync('config/gateway.yaml'));
  const [cmd, ...args] = runtime.cmd;
  // The image listens on all interfaces of its own namespace; here that would be the host's.
  const localArgs = args.map((a) => (a === '0.0.0.0' ? '127.0.0.1' : a));
  const env = { PATH: process.env.PATH ?? '', ...runtime.env, A2A_EGRESS_CONFIG: configPath, A2A_EGRESS_PORT: '0' };
  const child = spawn(cmd!, localArgs, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => void child.kill('SIGKILL'));
  let out = '';
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening" line in 15 s: ${out}`)), 15_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /"address":"(http:\/\/127\.0\.0\.1:(\d+))".*"msg":"a2a-egress listening"/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited with ${code} before listening: ${out}`)));
  });
  t.match(address, /^http:\/\/127\.0\.0\.1:\d+$/, 'logs that it is listening');

  const health = await request(`${address}/healthz`);
  await health.body.dump();
  t.equal(health.statusCode, 200, '/healthz answers');
  // The image's HEALTHCHECK command, run against this gateway from the clean install.
  const port = new URL(address).port;
  const check = runtime.healthcheck;
  const probe = await run(check[0]!, check.slice(1), { cwd: dir, timeoutMs: 10_000, env: { PATH: env.PATH, A2A_EGRESS_CONFIG: configPath, A2A_EGRESS_PORT: port } });
  t.equal(probe.code, 0, `HEALTHCHECK ${check.join(' ')} exits 0${probe.out ? `: ${probe.out}` : ''}`);

  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'exits 0 on SIGTERM');
}
