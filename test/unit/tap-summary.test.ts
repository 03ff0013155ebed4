import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../scripts/tap-summary.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tap-summary-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

// A bare environment: tap's NODE_OPTIONS loaders would make each spawn take most of a second.
const env = { PATH: process.env.PATH ?? '' };
let n = 0;
/** Runs the CLI on `tap` text; returns its last line and exit status. */
function summary(tap: string, ...args: string[]): { line: string; status: number | null; out: string } {
  const file = join(dir, `run-${n++}.tap`);
  writeFileSync(file, tap);
  const r = spawnSync(process.execPath, [script, file, ...args], { encoding: 'utf8', env });
  const lines = r.stdout.trimEnd().split('\n');
  return { line: lines[lines.length - 1] ?? '', status: r.status, out: r.stdout };
}

const ind = (text: string, by: number): string => text.replace(/^(?=.)/gm, ' '.repeat(by));
const file = (name: string, body: string, ok = true): string =>
  `# Subtest: ${name}\n${ind(body, 4)}${ok ? 'ok' : 'not ok'} 1 - ${name} # time=1ms\n`;

const PASSING = file('test/unit/a.test.ts', [
  '# Subtest: first',
  '    ok 1 - should be equal',
  '    ok 2 - should be equal',
  '    1..2',
  'ok 1 - first # time=1ms',
  '',
  '# Subtest: second',
  '    ok 1 - fine',
  '    1..1',
  'ok 2 - second # time=1ms',
  '',
  '1..2',
  '',
].join('\n')) + '\n1..1\n# { total: 3, pass: 3 }\n';

t.test('a passing run: assertions counted, subtest closers not', async (t) => {
  const r = summary(PASSING);
  t.equal(r.line, '3 passed, 0 failed');
  t.equal(r.status, 0);
  t.match(r.out, /1 test files, 2 subtests/);
});

t.test('failures inside YAML diagnostics are not miscounted', async (t) => {
  const body = [
    '# Subtest: breaks',
    '    ok 1 - fine',
    '    not ok 2 - should be equal',
    '      ---',
    '      source: |',
    '        ok 99 - this quoted line is not a test point',
    '        not ok 100 - nor this',
    '      ...',
    '    ',
    '    1..2',
    'not ok 1 - breaks # time=1ms',
    '  ---',
    '  at: here',
    '  ...',
    '',
    '1..1',
    '',
  ].join('\n');
  const r = summary(`${file('test/unit/b.test.ts', body, false)}\n1..1\n`);
  t.equal(r.line, '1 passed, 1 failed');
  t.equal(r.status, 1);
});

t.test('nested subtests, skip, todo and an empty subtest', async (t) => {
  const body = [
    '# Subtest: outer',
    '    # Subtest: inner',
    '        ok 1 - deep pass',
    '        not ok 2 - deep fail',
    '        1..2',
    '    not ok 1 - inner # time=1ms',
    '    1..1',
    'not ok 1 - outer # time=1ms',
    'ok 2 - skipped test # SKIP not today',
    'ok 3 - todo test # TODO later',
    'ok 4 - escaped \\# SKIP is not a directive',
    '# Subtest: empty',
    '    1..0',
    'ok 5 - empty # time=0.5ms',
    '1..5',
    '',
  ].join('\n');
  const r = summary(`${file('test/unit/c.test.ts', body, false)}1..1\n`);
  t.equal(r.line, '3 passed, 1 failed, 2 skipped');
  t.equal(r.status, 1);
});

t.test('a file that fails with every assertion passing (non-zero exit) counts one failure', async (t) => {
  const r = summary(`${file('test/unit/exit.test.ts', 'ok 1 - top-level assertion\n1..1\n', false)}1..1\n`);
  t.equal(r.line, '1 passed, 1 failed');
  t.equal(r.status, 1);
});

t.test('a file with no tests that failed to load counts one failure', async (t) => {
  const r = summary(`${file('test/unit/syntax.test.ts', '1..0 # no tests found\n', false)}1..1\n`);
  t.equal(r.line, '0 passed, 1 failed');
  t.equal(r.status, 1);
});

t.test('output cut off inside a subtest counts a failure', async (t) => {
  const r = summary('# Subtest: test/unit/cut.test.ts\n    # Subtest: started\n        ok 1 - one\n');
  t.equal(r.line, '1 passed, 2 failed');
  t.equal(r.status, 1);
});

t.test('Bail out! counts a failure', async (t) => {
  const r = summary('ok 1 - fine\nBail out! database down\n');
  t.equal(r.line, '1 passed, 1 failed');
  t.equal(r.status, 1);
});

t.test("tap's own failure count wins when it is larger", async (t) => {
  const r = summary('ok 1 - fine\n1..1\n# { total: 2, pass: 1, fail: 1 }\n');
  t.equal(r.line, '1 passed, 1 failed');
  t.match(r.out, /count differs/);
});

t.test('zero tests ran is a failure', async (t) => {
  const r = summary('1..0\n');
  t.equal(r.line, '0 passed, 0 failed');
  t.equal(r.status, 1);
  t.match(r.out, /no tests ran/);
});

t.test('a non-zero tap exit fails even when every test passed', async (t) => {
  const r = summary(PASSING, '--tap-exit=1');
  t.equal(r.line, '3 passed, 0 failed');
  t.equal(r.status, 1);
  t.match(r.out, /tap exited with status 1/);
  t.equal(summary(PASSING, '--tap-exit=0').status, 0);
});

t.test('a missing TAP file fails with a zero line', async (t) => {
  const r = spawnSync(process.execPath, [script, join(dir, 'absent.tap')], { encoding: 'utf8', env });
  t.equal(r.status, 1);
  t.equal(r.stdout.trim(), '0 passed, 0 failed');
  t.match(r.stderr, /ENOENT/);
});

t.test('several runs (npm test, then test:slow) add up into one line', async (t) => {
  const second = join(dir, 'second.tap');
  writeFileSync(second, 'ok 1 - slow one\nnot ok 2 - slow two\nok 3 - later # SKIP no tool\n1..3\n');
  const first = join(dir, 'first.tap');
  writeFileSync(first, PASSING);
  const r = spawnSync(process.execPath, [script, first, second, '--tap-exit=0', '--tap-exit=1'], { encoding: 'utf8', env });
  const lines = r.stdout.trimEnd().split('\n');
  t.equal(lines.at(-1), '4 passed, 1 failed, 1 skipped');
  t.equal(r.status, 1);
  t.match(r.stdout, /tap exited with status 1/);
  const clean = spawnSync(process.execPath, [script, first, first, '--tap-exit=0', '--tap-exit=0'], { encoding: 'utf8', env });
  t.equal(clean.stdout.trimEnd().split('\n').at(-1), '6 passed, 0 failed');
  t.equal(clean.status, 0);
  const oneMissing = spawnSync(process.execPath, [script, first, join(dir, 'absent-2.tap')], { encoding: 'utf8', env });
  t.equal(oneMissing.stdout.trimEnd().split('\n').at(-1), '3 passed, 0 failed', 'the readable run still counts');
  t.equal(oneMissing.status, 1, 'but a run whose output is missing fails');
});
