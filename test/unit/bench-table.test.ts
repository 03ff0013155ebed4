/** The README's Performance tables are generated from bench/results/latest.json; this fails when they drift apart. */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { benchBlock, readResults, withBenchTable, type BenchResults } from '../../scripts/bench-table.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

t.test('README Performance tables match bench/results/latest.json (after a full bench: npx tsx scripts/bench-table.ts --write)', async (t) => {
  t.equal(readme, withBenchTable(readme, readResults()));
});

t.test('every goal row of the results file is in the README with its numbers', async (t) => {
  const results = readResults();
  t.ok(results.table.length > 0, 'the results file has goal rows');
  for (const row of results.table) t.ok(readme.includes(`| ${row.scenario} | ${row.direct} | ${row.gateway} | ${row.ratio} |`), row.scenario);
});

const SAMPLE: BenchResults = {
  machine: {
    cpus: 2,
    cpuModel: 'Test CPU',
    memoryMiB: 8192,
    node: 'v20.20.2',
    platform: 'linux-x64',
    date: '2026-12-03T10:11:12.345Z',
    loadAverage1m: 3.5,
    loadAverage1mBefore: 1.25,
    loadAverage1mDuring: { min: 1.5, max: 4.75 },
  },
  command: 'npm run bench',
  mode: 'full',
  seconds: 400,
  table: [
    { scenario: 'cpu: gateway vs hop', direct: '100', gateway: '250', ratio: '2.50', goal: '<= 1.50', met: false },
    { scenario: 'normalizer 1 KiB', direct: '97.9', gateway: '79.8', ratio: '0.82', goal: '>= 0.80', met: true },
    { scenario: 'reported | piped', direct: '1', gateway: '2', ratio: '2.00', goal: 'report', met: null },
  ],
  tables: [
    {
      title: 'Unary peers',
      header: ['peer', 'CPU'],
      rows: [
        ['direct', '—'],
        ['a2a-egress, HTTP+JSON', 'skipped'],
      ],
      notes: ['a2a-egress, HTTP+JSON: not served: HTTP 404 UNKNOWN_OPERATION'],
    },
  ],
};

t.test('the block states the machine, the load average and the date of the run', async (t) => {
  const block = benchBlock(SAMPLE);
  t.match(block, /Run of 2026-12-03 10:11 UTC/);
  t.match(block, /2 × Test CPU, 8 GiB, Node v20\.20\.2/);
  t.match(block, /load average 1\.25 before the run, 1\.5–4\.75 during it, 3\.5 after \(above the CPU count/);
});

t.test('goals read met / not met, peer tables and their notes are rendered, pipes escaped', async (t) => {
  const block = benchBlock(SAMPLE);
  t.match(block, /\| cpu: gateway vs hop \| 100 \| 250 \| 2\.50 \| <= 1\.50 — \*\*not met\*\* \|/);
  t.match(block, /\| normalizer 1 KiB \| 97\.9 \| 79\.8 \| 0\.82 \| >= 0\.80 — met \|/);
  t.match(block, /\| reported \\\| piped \| 1 \| 2 \| 2\.00 \| report \|/);
  t.match(block, /\*\*Unary peers\*\*\n\n\| peer \| CPU \|\n\|---\|---\|\n\| direct \| — \|\n\| a2a-egress, HTTP\+JSON \| skipped \|/);
  t.match(block, /- a2a-egress, HTTP\+JSON: not served: HTTP 404 UNKNOWN_OPERATION/);
});

t.test('a quiet run is not called busy; a README without markers is an error', async (t) => {
  const quiet = { ...SAMPLE, machine: { ...SAMPLE.machine, loadAverage1m: 0.5, loadAverage1mBefore: 0.2, loadAverage1mDuring: { min: 0.3, max: 1.9 } } };
  t.notMatch(benchBlock(quiet), /above the CPU count/);
  t.throws(() => withBenchTable('# no markers here\n', SAMPLE), /no <!-- bench:start -->/);
  const replaced = withBenchTable('a\n<!-- bench:start -->\nold\n<!-- bench:end -->\nb\n', SAMPLE);
  t.notMatch(replaced, /\nold\n/);
  t.match(replaced, /^a\n<!-- bench:start -->\nRun of /);
  t.match(replaced, /<!-- bench:end -->\nb\n$/);
});
