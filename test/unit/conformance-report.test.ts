import { readFileSync } from 'node:fs';
import t from 'tap';
import { RUNS, conformanceSection, reasonFor, verdict, withSection, type TckReport } from '../../scripts/conformance.js';

const report = (over: Partial<TckReport> = {}): TckReport => ({
  label: 'tck 1.0 jsonrpc',
  direct: { passed: 91, failed: 1, skipped: 172, xfailed: 1 },
  gateway: { passed: 92, skipped: 172, xfailed: 1 },
  regressions: [],
  skipped_only_through_gateway: [],
  other: [],
  summary: 'tck 1.0 jsonrpc: direct 91 passed, gateway 92 passed, 0 regressions, 0 skipped-only-through-gateway',
  ...over,
});
const lastModified = {
  test: 'tests/compatibility/agent_card/test_agent_card_caching.py::TestAgentCardLastModified::test_last_modified_present',
  direct: 'failed',
  gateway: 'passed',
  message: 'AssertionError: CARD-CACHE-003 ...',
};
const regression = { test: 'tests/x.py::TestX::test_y', direct: 'passed', gateway: 'failed', message: 'AssertionError: a | b' };

t.test('a deliberate difference is named with its reason; anything else is "not explained" and fails the verdict', async (t) => {
  t.match(reasonFor(lastModified), /CARD-CACHE-003/);
  t.equal(reasonFor({ ...lastModified, direct: 'passed', gateway: 'failed' }), undefined, 'the same test the other way round is not deliberate');
  const [v10, v03] = RUNS as [(typeof RUNS)[number], (typeof RUNS)[number]];
  const ok = [{ run: v10, report: report({ other: [lastModified] }) }, { run: v03, report: report() }];
  t.equal(verdict(ok), 0);
  const section = conformanceSection(ok, '2026-12-03');
  t.match(section, '(2026-12-03)');
  t.match(section, '| 1.0 | a2a-tck 1.0-dev, tests/compatibility | `http://127.0.0.1:<port>/remotes/tck` (the shared form; the kit’s own config) | 91 passed, 1 failed, 172 skipped, 1 xfailed | 92 passed, 172 skipped, 1 xfailed | 0 |');
  t.match(section, '| 1.0 | `TestAgentCardLastModified::test_last_modified_present` | failed → passed | CARD-CACHE-003');
  const bad = [{ run: v10, report: report({ regressions: [regression] }) }];
  t.equal(verdict(bad), 1);
  t.match(conformanceSection(bad, 'd'), '| 1.0 | `TestX::test_y` | passed → failed | **not explained** (AssertionError: a \\| b) |');
  const improved = [{ run: v10, report: report({ other: [{ ...regression, direct: 'failed', gateway: 'passed' }] }) }];
  t.equal(verdict(improved), 1, 'an unexplained improvement is looked at too');
  t.match(conformanceSection([{ run: v10, report: report() }], 'd'), 'No test differs');
});

t.test('the README has the section\'s markers, and withSection replaces only what is between them', async (t) => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  t.match(readme, /## Conformance[\s\S]*<!-- conformance:start -->[\s\S]*<!-- conformance:end -->/);
  t.equal(withSection('a\n<!-- conformance:start -->\nold\n<!-- conformance:end -->\nb', 'new'), 'a\n<!-- conformance:start -->\nnew\n<!-- conformance:end -->\nb');
  t.throws(() => withSection('no markers', 'x'), /markers/);
});
