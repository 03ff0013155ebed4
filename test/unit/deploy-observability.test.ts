/**
 * The alert rules and the dashboard name only metrics the gateway exports
 * (so a renamed metric cannot silently blank a panel or disarm an alert), and
 * the dashboard is well formed. PromQL syntax itself is checked by promtool
 * in test/integration/ops-promtool.test.ts.
 */
import t from 'tap';
import { GatewayMetrics } from '../../src/telemetry/metrics.js';
import { dashboard, dashboardExpressions, metricNames, ruleExpressions } from '../support/observability-files.js';

function exportedNames(): Set<string> {
  const metrics = new GatewayMetrics(true);
  const names = new Set<string>();
  for (const m of metrics.registry.getMetricsAsArray()) {
    names.add(m.name);
    const type = (m as unknown as { type: string }).type;
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${m.name}${suffix}`);
  }
  return names;
}

t.test('metricNames picks metric names out of PromQL, not functions, keywords or label names', async (t) => {
  t.same(
    metricNames('sum by (job, remote) (rate(a2a_egress_calls_total{outcome="ok", remote=~"a|b"}[5m])) / on (job) group_left sum(up) > 0.1 and x_total'),
    ['a2a_egress_calls_total', 'up', 'x_total'],
  );
  t.same(metricNames('histogram_quantile(0.95, sum by (le) (rate(h_bucket{method!~"message/stream"}[5m])))'), ['h_bucket']);
});

t.test('every metric in the alert rules and the dashboard is one the gateway exports', async (t) => {
  const exported = exportedNames();
  t.ok(exported.has('process_cpu_seconds_total') && exported.has('a2a_egress_call_duration_seconds_bucket'), 'the registry lists default and histogram series');
  const used = [
    ...ruleExpressions().map((r) => ({ where: `rule ${r.alert}`, expr: r.expr })),
    ...dashboardExpressions(),
  ];
  t.ok(used.length > 20, `${used.length} expressions`);
  for (const { where, expr } of used) {
    const names = metricNames(expr);
    t.ok(names.length > 0, `${where} names a metric`);
    for (const name of names) t.ok(exported.has(name), `${where}: ${name} is exported`);
  }
});

t.test('the alert rules cover breaker open, error-reason spikes, overload and internal errors', async (t) => {
  const alerts = ruleExpressions().map((r) => r.alert);
  for (const alert of ['A2AEgressCircuitOpen', 'A2AEgressErrorReasonSpike', 'A2AEgressOverloaded', 'A2AEgressInternalErrors']) t.ok(alerts.includes(alert), alert);
});

t.test('the dashboard: unique panel ids, every query on the datasource variable, panels inside the 24-column grid', async (t) => {
  const d = dashboard();
  t.equal(d.uid, 'a2a-egress');
  t.ok(d.templating.list.some((v) => v.type === 'datasource' && v.name === 'datasource'), 'a datasource variable');
  const ids = d.panels.map((p) => p.id);
  t.equal(new Set(ids).size, ids.length, 'unique ids');
  for (const p of d.panels) {
    t.ok(p.gridPos.x >= 0 && p.gridPos.x + p.gridPos.w <= 24, `${p.title}: inside the grid`);
    if (p.type === 'row') continue;
    t.equal(p.datasource?.uid, '${datasource}', `${p.title}: datasource variable`);
    t.ok((p.targets ?? []).length > 0, `${p.title}: has a query`);
  }
  const text = JSON.stringify(d);
  for (const name of ['a2a_egress_call_duration_seconds_bucket', 'a2a_egress_circuit_state', 'a2a_egress_normalizations_total', 'a2a_egress_internal_errors_total', 'a2a_egress_card_requests_total', 'process_cpu_seconds_total', 'nodejs_heap_size_used_bytes']) {
    t.ok(text.includes(name), `shows ${name}`);
  }
});
