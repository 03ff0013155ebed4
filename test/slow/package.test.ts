/**
 * The package as npm users get it. From a copy of the sources without dist/
 * (a fresh clone), `npm pack` builds (prepack) and packs; the tarball goes
 * into an empty directory with `npm install` (from the npm cache where it
 * can); then the bin runs (--version, check, schema), the public API starts
 * a gateway, and a TypeScript consumer type-checks against the shipped
 * declarations. Slow (a build and an install), so it runs in test:slow.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import t from 'tap';

t.setTimeout(300_000);

const REPO = resolve('.');
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { name: string; version: string; dependencies: Record<string, string> };

function run(cmd: string, args: string[], opts: { cwd: string; timeoutMs: number; env?: NodeJS.ProcessEnv }) {
  return new Promise<{ code: number | null; out: string; stdout: string }>((done) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      stdout += c.toString('utf8');
    });
    child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      done({ code, out, stdout });
    });
  });
}

const NO_NETWORK = /E(NOTFOUND|AI_AGAIN|CONNREFUSED|CONNRESET|TIMEDOUT|NETUNREACH|NOTCACHED)|network|offline/i;
// A bare environment for the installed package: nothing from tap's loaders or this repo.
const cleanEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir() };

const work = mkdtempSync(join(tmpdir(), 'a2a-egress-pack-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));

// What a fresh clone has: sources, no dist/. node_modules is the repo's (the build needs typescript).
const clone = join(work, 'clone');
mkdirSync(clone);
for (const entry of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'config', 'README.md', 'LICENSE', 'CHANGELOG.md']) {
  cpSync(entry, join(clone, entry), { recursive: true });
}
symlinkSync(join(REPO, 'node_modules'), join(clone, 'node_modules'), 'dir');

let tarball = '';

t.test('npm pack on a fresh clone builds dist (prepack) and packs the package', async (t) => {
  t.notOk(existsSync(join(clone, 'dist')), 'no dist/ before packing');
  // --ignore-scripts=false: prepack must run even when the caller's npm settings say otherwise.
  const packed = await run('npm', ['pack', '--json', '--ignore-scripts=false', '--pack-destination', work], { cwd: clone, timeoutMs: 180_000 });
  t.equal(packed.code, 0, 'npm pack exits 0', { output: packed.out.slice(-2000) });
  const info = (JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[])[0]!;
  tarball = join(work, info.filename);
  const files = new Set(info.files.map((f) => f.path));
  for (const needed of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'dist/cli.js', 'dist/index.js', 'dist/index.d.ts', 'dist/server.d.ts', 'dist/healthcheck.js', 'config/gateway.yaml', 'config/gateway.schema.json', 'dist/a2a/schemas/schema-v1.0.json']) {
    t.ok(files.has(needed), `packs ${needed}`);
  }
  t.notOk([...files].some((f) => f.startsWith('src/') || f.startsWith('test/') || f.endsWith('.map')), 'no sources, tests or source maps');
  t.match(readFileSync(join(clone, 'LICENSE'), 'utf8'), /Apache License\s+Version 2\.0, January 2004[\s\S]*END OF TERMS AND CONDITIONS/, 'the full Apache-2.0 text');
});

t.test('installed from the tarball into an empty directory', async (t) => {
  if (!tarball) return t.fail('no tarball (the pack test failed)');
  const app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
  const install = await run('npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund'], { cwd: app, timeoutMs: 180_000 });
  const skip = install.code !== 0 && NO_NETWORK.test(install.out) ? `npm install could not fetch what the npm cache lacks (${install.out.match(NO_NETWORK)?.[0]}): no network here` : false;
  await t.test('the bin, the API and the type declarations work', { skip }, async (t) => {
    if (install.code !== 0) return t.fail(`npm install exited ${install.code}: ${install.out.slice(-2000)}`);
    const installed = join(app, 'node_modules', pkg.name);
    t.notOk(existsSync(join(installed, 'node_modules', 'typescript')) || existsSync(join(app, 'node_modules', 'tap')), 'no dev dependencies');
    const bin = join(app, 'node_modules', '.bin', 'a2a-egress');

    const version = await run(bin, ['--version'], { cwd: app, timeoutMs: 30_000, env: cleanEnv });
    t.equal(version.stdout.trim(), pkg.version, '--version');

    const config = join(installed, 'config', 'gateway.yaml');
    const check = await run(bin, ['check', '--config', config], { cwd: app, timeoutMs: 30_000, env: cleanEnv });
    t.equal(check.code, 0, 'check exits 0', { output: check.out.slice(-2000) });
    t.match(check.stdout, /valid\. The effective configuration/);
    const bad = join(app, 'bad.yaml');
    writeFileSync(bad, 'remotes:\n  x:\n    url: https://x.example/\n    limts: {}\n');
    const checkBad = await run(bin, ['check', '--config', bad], { cwd: app, timeoutMs: 30_000, env: cleanEnv });
    t.equal(checkBad.code, 2, 'check exits 2 on a bad config');
    t.match(checkBad.out, /bad\.yaml:4: remotes\.x\.limts: unknown key; did you mean "limits"\?/);

    const schema = await run(bin, ['schema'], { cwd: app, timeoutMs: 30_000, env: cleanEnv });
    t.equal(schema.stdout, readFileSync(join(installed, 'config', 'gateway.schema.json'), 'utf8'), 'schema prints the shipped file');

    // The public API, as an embedding program uses it.
    const embed = join(app, 'embed.mjs');
    writeFileSync(
      embed,
      `import { createGateway, loadConfig, VERSION } from '${pkg.name}';
const config = loadConfig(${JSON.stringify(config)});
const gateway = await createGateway({ ...config, server: { ...config.server, port: 0, logLevel: 'silent' } });
const { url } = await gateway.listen();
const res = await fetch(url + '/healthz');
console.log(JSON.stringify({ status: res.status, version: VERSION, remotes: [...config.remotes.keys()] }));
await gateway.close();
`,
    );
    const embedded = await run(process.execPath, [embed], { cwd: app, timeoutMs: 30_000, env: cleanEnv });
    t.same(JSON.parse(embedded.stdout.trim() || '{}'), { status: 200, version: pkg.version, remotes: ['sample'] }, 'the API starts a gateway', { output: embedded.out });

    // A strict TypeScript consumer against the shipped declarations (the repo's compiler and @types/node).
    writeFileSync(
      join(app, 'consumer.ts'),
      `import { createGateway, loadConfig, parseConfig, ConfigError, type Gateway, type GatewayConfig, type RemoteConfig } from '${pkg.name}';
const config: GatewayConfig = loadConfig('gateway.yaml');
const remote: RemoteConfig | undefined = config.remotes.get('sample');
const port: number = config.server.port;
// @ts-expect-error the types are real, not any: a port is not a string
const wrong: string = config.server.port;
export async function start(): Promise<Gateway> {
  try { parseConfig('remotes: {}', 'inline.yaml'); } catch (err) { if (err instanceof ConfigError) console.log(err.problems.length); }
  return createGateway(config);
}
export { remote, port, wrong };
`,
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', types: ['node'], typeRoots: [join(REPO, 'node_modules', '@types')] },
        files: ['consumer.ts'],
      }),
    );
    const tsc = await run(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: app, timeoutMs: 120_000 });
    t.equal(tsc.code, 0, 'the consumer type-checks', { output: tsc.out });
  });
});
