#!/usr/bin/env node
/**
 * Counts a tap run's results from its raw TAP (`tap --output-file=FILE`) and
 * prints one line CI can read: `N passed, N failed` (`, N skipped` when any).
 *
 * Usage: node scripts/tap-summary.mjs FILE... [--tap-exit=CODE]...
 * Several files (one per tap run: `npm test`, then `npm run test:slow`) are
 * added up into the one line; give one --tap-exit per run.
 * Exit status: 0 only if nothing failed, something ran, and every tap run exited 0.
 *
 * It counts what tap counts in its own `# { total, pass, fail }` comment:
 * assertions, plus each subtest that has none of its own (a skipped test, an
 * empty test, a file that crashed before asserting), plus one failure for a
 * subtest that failed with all of its assertions passing (a non-zero exit, a
 * timeout, a plan mismatch). TODO points are reported as skipped.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const POINT = /^( *)(not ok|ok)\b(.*)$/;
const SUBTEST = /^( *)# Subtest\b/;
const DIRECTIVE = /(?<!\\)#\s*(skip|todo)\b/i;
const ROOT_COUNTS = /^# \{(.*)\}\s*$/;

/** @returns {{ passed: number, failed: number, skipped: number, files: number, subtests: number, bailedOut: boolean, tapCountsDiffer: boolean, tapCounts?: Record<string, number> }} */
export function summarize(text) {
  const root = frame(-4);
  /** @type {ReturnType<typeof frame>[]} */
  const stack = [root];
  const totals = { files: 0, subtests: 0, bailedOut: false };
  /** @type {Record<string, number> | undefined} */
  let tapCounts;
  let yamlIndent = -1;
  let lastPointIndent = -1;

  for (const line of text.split(/\r?\n/)) {
    if (yamlIndent >= 0) {
      // A diagnostic block can quote source that looks like TAP; skip it whole.
      if (line.trim() === '...' && indentOf(line) === yamlIndent) yamlIndent = -1;
      continue;
    }
    if (line.trim() === '---' && indentOf(line) === lastPointIndent + 2) {
      yamlIndent = lastPointIndent + 2;
      continue;
    }
    lastPointIndent = -1;
    if (/^\s*Bail out!/.test(line)) {
      totals.bailedOut = true;
      continue;
    }
    const rootCounts = ROOT_COUNTS.exec(line);
    if (rootCounts) {
      tapCounts = parseCounts(rootCounts[1] ?? '');
      continue;
    }
    const subtest = SUBTEST.exec(line);
    if (subtest) {
      stack.push(frame(subtest[1]?.length ?? 0));
      continue;
    }
    const point = POINT.exec(line);
    if (!point) continue;
    const indent = point[1]?.length ?? 0;
    const ok = point[2] === 'ok';
    const directive = DIRECTIVE.exec(point[3] ?? '')?.[1]?.toLowerCase();
    lastPointIndent = indent;
    const top = stack[stack.length - 1] ?? root;
    if (top !== root && top.indent === indent) {
      // The point that closes a subtest.
      stack.pop();
      const parent = stack[stack.length - 1] ?? root;
      if (indent === 0) totals.files++;
      else totals.subtests++;
      if (top.points === 0) count(top, ok, directive);
      else if (!ok && top.failed === 0) top.failed++;
      parent.passed += top.passed;
      parent.failed += top.failed;
      parent.skipped += top.skipped;
      parent.points++;
    } else {
      count(top, ok, directive);
    }
  }
  // Frames never closed mean the output stopped mid-run.
  for (const open of stack.slice(1)) {
    root.passed += open.passed;
    root.failed += open.failed + 1;
    root.skipped += open.skipped;
  }
  const counted = root.failed + (totals.bailedOut ? 1 : 0);
  // Never report fewer failures than tap itself saw.
  const failed = Math.max(counted, tapCounts?.fail ?? 0);
  const differs = tapCounts !== undefined && ((tapCounts.pass ?? 0) !== root.passed || (tapCounts.fail ?? 0) !== counted);
  return { passed: root.passed, failed, skipped: root.skipped, ...totals, tapCountsDiffer: differs, ...(tapCounts ? { tapCounts } : {}) };
}

function frame(indent) {
  return { indent, points: 0, passed: 0, failed: 0, skipped: 0 };
}

function count(f, ok, directive) {
  f.points++;
  if (directive) f.skipped++;
  else if (ok) f.passed++;
  else f.failed++;
}

function indentOf(line) {
  return line.length - line.trimStart().length;
}

function parseCounts(body) {
  /** @type {Record<string, number>} */
  const out = {};
  for (const m of body.matchAll(/(\w+):\s*(\d+)/g)) out[m[1] ?? ''] = Number(m[2]);
  return out;
}

/** The line CI reads. */
export function formatLine({ passed, failed, skipped }) {
  return `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`;
}

function main(argv) {
  const files = argv.filter((a) => !a.startsWith('--'));
  const tapExits = argv.filter((a) => a.startsWith('--tap-exit=')).map((a) => Number(a.slice('--tap-exit='.length)));
  if (files.length === 0) {
    console.error('usage: tap-summary.mjs FILE... [--tap-exit=CODE]...');
    return 2;
  }
  const total = { passed: 0, failed: 0, skipped: 0 };
  let unreadable = false;
  for (const file of files) {
    let text;
    try {
      text = readFileSync(file === '-' ? 0 : file, 'utf8');
    } catch (err) {
      console.error(`tap-summary: cannot read ${file}: ${err.code ?? err.message}`);
      unreadable = true;
      continue;
    }
    const s = summarize(text);
    const name = files.length > 1 ? ` (${file})` : '';
    console.log(`tap-summary: ${s.files} test files, ${s.subtests} subtests${s.bailedOut ? ', bailed out' : ''}${name}`);
    if (s.passed + s.failed === 0) console.log(`tap-summary: no tests ran${name}`);
    if (s.tapCountsDiffer) {
      console.log(`tap-summary: tap's own count differs (pass ${s.tapCounts?.pass ?? 0}, fail ${s.tapCounts?.fail ?? 0}); failures use the larger${name}`);
    }
    total.passed += s.passed;
    total.failed += s.failed;
    total.skipped += s.skipped;
  }
  for (const code of tapExits.filter((c) => c !== 0)) console.log(`tap-summary: tap exited with status ${code}`);
  console.log(formatLine(total));
  const ran = total.passed + total.failed;
  return unreadable || total.failed > 0 || ran === 0 || tapExits.some((c) => c !== 0) ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = main(process.argv.slice(2));
