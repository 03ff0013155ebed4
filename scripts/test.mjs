#!/usr/bin/env node
/**
 * `npm test`: runs the test files that scripts/build-tests.mjs transpiled into
 * build/tests/ (`pretest` builds them), several at a time, each in its own
 * plain `node` process, and prints one TAP stream in the shape tap's runner
 * prints (`# Subtest: <file>`, the file's TAP indented, `ok N - <file>`), then
 * the counts and the failing files.
 *
 *   npm test                                   every unit, property and integration file
 *   npm test -- test/unit/sanitize.test.ts     only those files (named as in the sources)
 *   npm test -- --jobs=2                       files run at once (default: 2 per core)
 *   npm test -- --timeout=120                  seconds a file may take (default: package.json tap.timeout)
 *
 * Why not tap's own runner: it starts every test process, and through
 * NODE_OPTIONS every process a test starts, with @tapjs/processinfo's module
 * hooks (coverage bookkeeping, on even with coverage off). That was about
 * 0.45 s of CPU per process, a quarter of the suite's CPU. The files are still
 * tap tests (`import t from 'tap'`); `npx tap <file>` and `npm run coverage`
 * run them under tap's runner as before.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { formatLine, summarize } from './tap-summary.mjs';

const BUILT = 'build/tests/';
const SUITES = ['test/unit', 'test/integration'];
/** tap's per-file timeout, kept in package.json's `tap` section for both runners. */
const DEFAULT_TIMEOUT_S = Number(JSON.parse(readFileSync('package.json', 'utf8')).tap?.timeout ?? 60);
/** How long after its own timeout a file is killed. */
const KILL_GRACE_S = 5;

/** test/unit/x.test.ts → build/tests/test/unit/x.test.js; a JavaScript file is run as named. */
function builtPath(source) {
  if (!source.endsWith('.ts')) return source;
  return BUILT + source.replace(/^\.\//, '').replace(/\.ts$/, '.js');
}

function testFilesUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.test.js'))
    .map((e) => join(e.parentPath ?? e.path, e.name))
    .sort();
}

function parseArgs(argv) {
  let jobs = Math.max(2, availableParallelism() * 2);
  let timeoutS = DEFAULT_TIMEOUT_S;
  const files = [];
  for (const arg of argv) {
    if (arg.startsWith('--jobs=')) jobs = Number(arg.slice('--jobs='.length));
    else if (arg.startsWith('--timeout=')) timeoutS = Number(arg.slice('--timeout='.length));
    // .ci/run and older habits pass tap's reporter option; this runner only prints TAP.
    else if (arg === '--reporter=tap') continue;
    else if (arg.startsWith('-')) throw new Error(`npm test: unknown option ${arg} (tap's other options: run \`npx tap <file>\`)`);
    else files.push(builtPath(arg));
  }
  if (!Number.isInteger(jobs) || jobs < 1) throw new Error('npm test: --jobs needs a positive integer');
  if (!(timeoutS > 0)) throw new Error('npm test: --timeout needs a positive number of seconds');
  return { jobs, timeoutS, files };
}

const indent = (text) => text.replace(/^(?=.)/gm, '    ');

/** Runs one file; resolves with its indented TAP and, when it failed, why. */
function runFile(file, timeoutS) {
  return new Promise((resolve) => {
    const started = performance.now();
    // tap's own timeout inside the file (TAP_TIMEOUT; 30 s when unset) reports the handles still open;
    // the kill a few seconds later is for a file that cannot even do that.
    const child = spawn(process.execPath, ['--enable-source-maps', file], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, TAP_TIMEOUT: String(timeoutS) },
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, (timeoutS + KILL_GRACE_S) * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const ms = (performance.now() - started).toFixed(3);
      const problem = timedOut
        ? `killed ${KILL_GRACE_S} s after its ${timeoutS} s timeout`
        : signal
          ? `killed by ${signal}`
          : code !== 0
            ? `exit code ${code}`
            : /^1\.\.0\b/m.test(out) || !/^ok \d/m.test(out)
              ? 'no tests found'
              : undefined;
      const body = out.endsWith('\n') || out === '' ? out : `${out}\n`;
      resolve({ body: indent(body), ms, problem: problem ?? (/^not ok /m.test(out) ? 'assertions failed' : undefined) });
    });
  });
}

async function main() {
  const { jobs, timeoutS, files: asked } = parseArgs(process.argv.slice(2));
  const files = asked.length > 0 ? asked : SUITES.flatMap((dir) => testFilesUnder(BUILT + dir));
  const missing = files.filter((file) => !existsSync(file));
  if (missing.length > 0) {
    console.error(`npm test: not built: ${missing.join(', ')} (\`npm test\` builds build/tests/ first; or run \`node scripts/build-tests.mjs\`)`);
    return 2;
  }
  if (files.length === 0) {
    console.error('npm test: no test files found under build/tests/');
    return 2;
  }
  let next = 0;
  let done = 0;
  let output = '';
  const failedFiles = [];
  const worker = async () => {
    while (next < files.length) {
      const file = files[next++];
      const { body, ms, problem } = await runFile(file, timeoutS);
      // Numbered as they finish, so the points come out in order.
      const n = ++done;
      const point = problem
        ? `not ok ${n} - ${file} # time=${ms}ms\n  ---\n  problem: ${JSON.stringify(problem)}\n  ...\n`
        : `ok ${n} - ${file} # time=${ms}ms\n`;
      const text = `# Subtest: ${file}\n${body}${point}\n`;
      output += text;
      process.stdout.write(text);
      if (problem) failedFiles.push(file);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, files.length) }, worker));
  process.stdout.write(`1..${files.length}\n`);
  const counts = summarize(output);
  process.stdout.write(`# ${files.length} files, ${jobs} at a time: ${formatLine(counts)}\n`);
  for (const file of failedFiles.sort()) process.stdout.write(`# failed: ${file}\n`);
  return failedFiles.length > 0 || counts.failed > 0 ? 1 : 0;
}

main().then(
  (code) => (process.exitCode = code),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 2;
  },
);
