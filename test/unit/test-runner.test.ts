/**
 * scripts/test.mjs, the runner behind `npm test`: every way a test file can go
 * wrong is a failure with its reason, counted the way CI counts (tap-summary).
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const runner = fileURLToPath(new URL('../../scripts/test.mjs', import.meta.url));
const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'test-runner-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** A test file that prints the given TAP (no tap import: the temp folder has no node_modules) and exits. */
function file(name: string, source: string): string {
  const path = join(dir, name);
  writeFileSync(path, source);
  return path;
}
const printing = (tap: string, exitCode = 0) => `process.stdout.write(${JSON.stringify(tap)}); process.exitCode = ${exitCode};\n`;

function run(...args: string[]): { status: number | null; out: string; err: string } {
  // A bare environment: no NODE_OPTIONS from whatever runs this test.
  const r = spawnSync(process.execPath, [runner, ...args], { cwd: root, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

const passing = file('pass.test.js', printing('ok 1 - fine\nok 2 - also fine\n1..2\n'));

t.test('passing files: exit 0, each file a point, the counts of their assertions', async (t) => {
  const other = file('pass2.test.js', printing('ok 1 - fine\n1..1\n'));
  const r = run(passing, other);
  t.equal(r.status, 0, r.err);
  t.match(r.out, /^ok 1 - .*pass2?\.test\.js # time=/m);
  t.match(r.out, /^ok 2 - .*pass2?\.test\.js # time=/m);
  t.match(r.out, /^    ok 2 - also fine$/m, "the file's own TAP, indented under it");
  t.match(r.out, /^1\.\.2$/m);
  t.match(r.out, /# 2 files, \d+ at a time: 3 passed, 0 failed/);
});

t.test('a failed assertion, a crash, no tests, a hang: each a failing file with its reason', async (t) => {
  const cases = [
    { name: 'assert.test.js', source: printing('not ok 1 - wrong\n1..1\n', 1), problem: 'exit code 1' },
    { name: 'assert-exit0.test.js', source: printing('ok 1 - fine\nnot ok 2 - wrong\n1..2\n'), problem: 'assertions failed' },
    { name: 'crash.test.js', source: "throw new Error('boom');\n", problem: 'exit code 1' },
    { name: 'empty.test.js', source: printing('1..0 # no tests found\n'), problem: 'no tests found' },
    { name: 'silent.test.js', source: '\n', problem: 'no tests found' },
    { name: 'hang.test.js', source: 'setInterval(() => {}, 1000);\n', problem: 'killed 5 s after its 1 s timeout' },
  ];
  for (const c of cases) {
    const r = run('--timeout=1', passing, file(c.name, c.source));
    t.equal(r.status, 1, `${c.name}: the run fails`);
    t.match(r.out, new RegExp(`^not ok \\d - .*${c.name.replace('.', '\\.')} # time=`, 'm'), `${c.name}: a failing point`);
    t.match(r.out, `problem: ${JSON.stringify(c.problem)}`, `${c.name}: ${c.problem}`);
    t.match(r.out, new RegExp(`^# failed: .*${c.name.replace('.', '\\.')}$`, 'm'), `${c.name}: named at the end`);
    const counted = spawnSync(process.execPath, [join(root, 'scripts/tap-summary.mjs'), '-'], { input: r.out, encoding: 'utf8' });
    t.equal(counted.status, 1, `${c.name}: CI's count fails the run too`);
  }
});

t.test('a TypeScript path is run from build/tests/; one not built is refused by name', async (t) => {
  const r = run('test/unit/no-such-file.test.ts');
  t.equal(r.status, 2);
  t.match(r.err, /not built: build\/tests\/test\/unit\/no-such-file\.test\.js/);
});

t.test('options: unknown ones and bad values are refused', async (t) => {
  t.match(run('--grep=x', passing).err, /unknown option --grep=x/);
  t.equal(run('--jobs=0', passing).status, 2);
  t.equal(run('--timeout=0', passing).status, 2);
  t.equal(run('--reporter=tap', passing).status, 0, "CI's reporter option is accepted: the output is TAP already");
  t.match(run('--jobs=1', passing).out, /1 at a time/);
});
