/**
 * The deployment files as an operator would use them. No container engine
 * or cluster runs here, so: every Kubernetes document parses, has the kind
 * it should, and wires up what the gateway needs (its config validates, its
 * secrets exist, its probes hit the ops routes, it runs locked down); the
 * Dockerfile has the stages and steps an image needs; and the image's own
 * command starts from a clean production-only `npm ci` in a temp dir.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { request } from 'undici';
import { parseAllDocuments } from 'yaml';
import { parseConfig } from '../../src/config/load.js';
import type { GatewayConfig } from '../../src/config/schema.js';
import { dockerfileProblems, finalStage, parseDockerfile, type Stage } from '../support/deploy-dockerfile.js';
import { k8sProblems, type K8sObject } from '../support/deploy-k8s.js';

// `npm ci` may have to fill the npm cache: give this file more than the default.
t.setTimeout(240_000);

const K8S_DIR = 'deploy/kubernetes';
const EXPECTED_KINDS: Readonly<Record<string, readonly string[]>> = {
  'sidecar.yaml': ['ConfigMap', 'Secret', 'Deployment', 'NetworkPolicy'],
  'shared-gateway.yaml': ['ConfigMap', 'Secret', 'Deployment', 'Service', 'NetworkPolicy'],
};

function loadK8s(file: string): K8sObject[] {
  const docs = parseAllDocuments(readFileSync(join(K8S_DIR, file), 'utf8'), { uniqueKeys: true });
  if (!Array.isArray(docs)) throw new Error(`${file}: no documents`);
  for (const doc of docs) if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
  return docs.map((doc) => doc.toJS() as K8sObject);
}

const clone = <T>(value: T): T => structuredClone(value);

t.test('every YAML file in deploy/kubernetes is one this test knows', async (t) => {
  const files = readdirSync(K8S_DIR).filter((f) => /\.ya?ml$/.test(f)).sort();
  t.same(files, Object.keys(EXPECTED_KINDS).sort());
});

for (const [file, kinds] of Object.entries(EXPECTED_KINDS)) {
  t.test(`${file}: parses, has the expected kinds, and wires the gateway correctly`, async (t) => {
    const docs = loadK8s(file);
    t.same(
      docs.map((d) => d.kind),
      kinds,
    );
    t.same(k8sProblems(docs, { sidecar: file === 'sidecar.yaml' }), []);
  });
}

t.test('the embedded gateway configs validate with the real config loader', async (t) => {
  for (const file of Object.keys(EXPECTED_KINDS)) {
    const configMap = loadK8s(file).find((d) => d.kind === 'ConfigMap')!;
    const config: GatewayConfig = parseConfig(String(configMap.data?.['gateway.yaml']), `${file}#gateway.yaml`);
    t.ok(config.remotes.size > 0, `${file} configures remotes`);
    t.not(config.server.opsPort, undefined, `${file} moves the ops routes off the caller port`);
    for (const remote of config.remotes.values()) t.match(remote.url.protocol, 'https:', `${file}: ${remote.name} uses TLS`);
  }
});

t.test('the Kubernetes checks catch each kind of mistake', async (t) => {
  const sidecar = loadK8s('sidecar.yaml');
  const shared = loadK8s('shared-gateway.yaml');
  const gatewayOf = (docs: K8sObject[]) =>
    docs.find((d) => d.kind === 'Deployment')!.spec!.template!.spec!.containers!.find((c) => c.name === 'a2a-egress')!;
  const cases: [string, K8sObject[], (docs: K8sObject[]) => void, RegExp, boolean][] = [
    ['readiness on /healthz', sidecar, (d) => (gatewayOf(d).readinessProbe!.httpGet!.path = '/healthz'), /readinessProbe/, true],
    ['liveness on the caller port', shared, (d) => (gatewayOf(d).livenessProbe!.httpGet!.port = 'a2a'), /livenessProbe.*9090/, false],
    ['a token env var not from the Secret', sidecar, (d) => (gatewayOf(d).env = gatewayOf(d).env!.filter((e) => e.name !== 'WEATHER_AGENT_TOKEN')), /WEATHER_AGENT_TOKEN/, true],
    ['a Secret key that does not exist', shared, (d) => delete d.find((x) => x.kind === 'Secret')!.stringData!['caller-tokens'], /caller-tokens/, false],
    ['an unknown config key', sidecar, (d) => (d[0]!.data!['gateway.yaml'] += 'extra: 1\n'), /extra unknown key/, true],
    ['a writable root filesystem', shared, (d) => (gatewayOf(d).securityContext!.readOnlyRootFilesystem = false), /readOnlyRootFilesystem/, false],
    ['no memory limit', sidecar, (d) => delete gatewayOf(d).resources!.limits!.memory, /memory limit/, true],
    ['config mounted elsewhere', shared, (d) => (gatewayOf(d).volumeMounts![0]!.mountPath = '/config'), /\/etc\/a2a-egress/, false],
    ['a Service that selects nothing', shared, (d) => (d.find((x) => x.kind === 'Service')!.spec!.selector = { app: 'nope' }), /Service selector/, false],
    ['an agent URL without the trailing slash', sidecar, (d) => (d[2]!.spec!.template!.spec!.containers![0]!.env![0]!.value = 'http://127.0.0.1:8080/remotes/weather'), /trailing slash/, true],
    ['an agent URL naming no remote', sidecar, (d) => (d[2]!.spec!.template!.spec!.containers![0]!.env![0]!.value = 'http://127.0.0.1:8080/remotes/nope/'), /no remote "nope"/, true],
  ];
  for (const [name, original, mutate, expected, isSidecar] of cases) {
    const docs = clone(original);
    mutate(docs);
    t.match(k8sProblems(docs, { sidecar: isSidecar }).join('\n'), expected, name);
  }
});

const dockerfileText = readFileSync('Dockerfile', 'utf8');

t.test('the Dockerfile builds in one stage and runs production deps only in the final one', async (t) => {
  const stages = parseDockerfile(dockerfileText);
  t.ok(stages.length >= 2, 'multi-stage');
  t.same(dockerfileProblems(stages, readFileSync('.dockerignore', 'utf8')), []);
});

t.test('the Dockerfile checks catch each kind of mistake', async (t) => {
  const ignore = readFileSync('.dockerignore', 'utf8');
  const cases: [string, (text: string) => string, RegExp][] = [
    ['one stage only', (s) => s.slice(s.indexOf('FROM node:20-bookworm-slim AS runtime')), /build stage/],
    ['dev deps in the final stage', (s) => s.replace('npm ci --omit=dev --ignore-scripts', 'npm ci --ignore-scripts'), /npm ci --omit=dev/],
    ['running as root', (s) => s.replace(/^USER .*$/m, 'USER root'), /non-root USER/],
    ['no USER at all', (s) => s.replace(/^USER .*$/m, ''), /non-root USER/],
    ['no HEALTHCHECK', (s) => s.replace(/^HEALTHCHECK[^\n]*\\\n[^\n]*\n/m, ''), /HEALTHCHECK/],
    ['config elsewhere', (s) => s.replaceAll('/etc/a2a-egress/gateway.yaml', '/app/gateway.yaml'), /\/etc\/a2a-egress\/gateway\.yaml/],
    ['another command', (s) => s.replace('node dist/cli.js --config', 'node dist/server.js'), /node dist\/cli\.js --config/],
    ['copying a missing file', (s) => s.replace('COPY src ./src', 'COPY srcs ./src'), /srcs/],
  ];
  for (const [name, mutate, expected] of cases) {
    t.match(dockerfileProblems(parseDockerfile(mutate(dockerfileText)), ignore).join('\n'), expected, name);
  }
  t.match(dockerfileProblems(parseDockerfile(dockerfileText), `${ignore}\nsrc\n`).join('\n'), /src.*\.dockerignore/, 'an ignored source');
});

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
  const localArgs = args.map((a) => a.replace('--host 0.0.0.0', '--host 127.0.0.1'));
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
  const probe = await run(check[0]!, check.slice(1), { cwd: dir, timeoutMs: 10_000, env: { PATH: env.PATH, A2A_EGRESS_PORT: port } });
  t.equal(probe.code, 0, `HEALTHCHECK ${check.join(' ')} exits 0${probe.out ? `: ${probe.out}` : ''}`);

  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'exits 0 on SIGTERM');
}
