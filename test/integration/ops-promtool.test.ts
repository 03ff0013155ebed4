/**
 * promtool (Debian's prometheus package) on what operators load: the alert
 * rules pass `promtool check rules` and their unit tests (`promtool test
 * rules`), every dashboard query is valid PromQL, and a real gateway's
 * /metrics passes `promtool check metrics`. Without promtool these skip
 * loudly, unless A2A_EGRESS_REQUIRE_PROMTOOL=1 (set by .ci/run).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { stringify } from 'yaml';
import { rpc, rpcRequest } from '../support/gateway.js';
import { startHostileUpstream } from '../support/hostile-upstream.js';
import { dashboardExpressions, RULES_FILE, RULES_TEST_FILE } from '../support/observability-files.js';
import { getText, startOpsGateway } from '../support/ops-gateway.js';
import { PROMTOOL, skipWithout } from '../support/required-command.js';

const skip = skipWithout(PROMTOOL);

function promtool(args: string[], stdin?: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('promtool', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.on('error', (err) => (out += String(err)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
    child.stdin.end(stdin ?? '');
  });
}

t.test('promtool check rules: the alert rules parse and are well formed', { skip }, async (t) => {
  const r = await promtool(['check', 'rules', RULES_FILE]);
  t.equal(r.code, 0, 'exit 0', { output: r.out });
  t.match(r.out, /SUCCESS: \d+ rules found/);
});

t.test('promtool test rules: each alert fires on what should trigger it and not just short of it', { skip }, async (t) => {
  const r = await promtool(['test', 'rules', RULES_TEST_FILE]);
  t.equal(r.code, 0, 'exit 0', { output: r.out });
  t.notMatch(r.out, /FAILED/);
});

t.test('every dashboard query is valid PromQL (checked as recording rules)', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-egress-dashboard-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const queries = dashboardExpressions();
  const rules = { groups: [{ name: 'dashboard', rules: queries.map((q, i) => ({ record: `a2a_egress:dashboard_query_${i}`, expr: q.expr })) }] };
  const file = join(dir, 'dashboard-queries.yaml');
  writeFileSync(file, stringify(rules));
  const r = await promtool(['check', 'rules', file]);
  t.equal(r.code, 0, `${queries.length} queries parse`, { output: r.out });
  // A query promtool refuses does fail here: the check is live.
  writeFileSync(file, stringify({ groups: [{ name: 'bad', rules: [{ record: 'x:y', expr: 'sum by (remote) (rate(a2a_egress_calls_total[5m])' }] }] }));
  t.not((await promtool(['check', 'rules', file])).code, 0, 'an unbalanced query is refused');
});

// prom-client's default Node.js metrics keep their standard names (stock dashboards use them),
// three of which promtool's linter dislikes. Nothing else may appear.
const STANDARD_NAME_LINT = [
  'nodejs_active_handles_total non-counter metrics should not have "_total" suffix',
  'nodejs_active_requests_total non-counter metrics should not have "_total" suffix',
  'nodejs_active_resources_total non-counter metrics should not have "_total" suffix',
];

t.test('promtool check metrics: a live /metrics after real traffic', { skip }, async (t) => {
  const upstream = await startHostileUpstream();
  t.teardown(() => upstream.close());
  const gw = await startOpsGateway(
    `server: { drainMs: 300 }\nremotes:\n  hostile:\n    url: ${upstream.url}/\n    allowPrivateNetwork: true\n  idle:\n    url: ${upstream.url}/\n    allowPrivateNetwork: true\n`,
    { processMetrics: true },
  );
  t.teardown(() => gw.close());
  await rpc(`${gw.url}/remotes/hostile/ok`, rpcRequest('GetTask', 1, { id: 't' }));
  await rpc(`${gw.url}/remotes/hostile/html-502`, rpcRequest('SendMessage', 2));
  await rpc(`${gw.url}/remotes/hostile/ok`, rpcRequest('NotAMethod', 3));
  const scrape = await getText(`${gw.url}/metrics`);
  t.equal(scrape.status, 200);
  const r = await promtool(['check', 'metrics'], scrape.text);
  const problems = r.out.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  t.same(problems.filter((p) => !STANDARD_NAME_LINT.includes(p)), [], 'no problem beyond the standard Node.js names', { output: r.out });
  t.ok(r.code === 0 || (r.code === 3 && problems.length > 0), `exit ${r.code}: 0, or 3 for lint findings only`);
  t.notMatch(r.out, /a2a_egress_/, "none about the gateway's own metrics");
  // The check is live: a gateway metric with a bad name is reported.
  const broken = `${scrape.text}# HELP a2a_egress_broken_total x\n# TYPE a2a_egress_broken_total gauge\na2a_egress_broken_total 1\n`;
  t.match((await promtool(['check', 'metrics'], broken)).out, /a2a_egress_broken_total non-counter metrics should not have "_total" suffix/);
});
