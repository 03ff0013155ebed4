/**
 * The operator files in deploy/ (Prometheus rules, Grafana dashboard) read
 * as tests need them: their PromQL expressions and the metric names in them.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export const RULES_FILE = 'deploy/prometheus/a2a-egress-rules.yaml';
export const RULES_TEST_FILE = 'deploy/prometheus/a2a-egress-rules.test.yaml';
export const DASHBOARD_FILE = 'deploy/grafana/a2a-egress-dashboard.json';

export interface Dashboard {
  uid: string;
  title: string;
  templating: { list: { name: string; type: string; query?: unknown; definition?: string }[] };
  panels: Panel[];
}
export interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { uid?: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: { expr: string; refId: string; datasource?: { uid?: string } }[];
}

export function ruleExpressions(): { alert: string; expr: string }[] {
  const doc = parse(readFileSync(RULES_FILE, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
  return doc.groups.flatMap((g) => g.rules.map((r) => ({ alert: r.alert, expr: r.expr })));
}

export function dashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;
}

/** Every panel query and variable query, with Grafana's variables filled in so it is plain PromQL. */
export function dashboardExpressions(): { where: string; expr: string }[] {
  const d = dashboard();
  const plain = (expr: string) => expr.replaceAll('$__rate_interval', '5m').replaceAll('$job', '.*').replaceAll('$remote', '.*');
  const panels = d.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `panel "${p.title}" ${t.refId}`, expr: plain(t.expr) })));
  // label_values(METRIC{...}, label) → the selector inside it.
  const variables = d.templating.list
    .filter((v) => v.type === 'query' && typeof v.definition === 'string')
    .map((v) => ({ where: `variable ${v.name}`, expr: plain(/^label_values\((.*),\s*\w+\)$/.exec(v.definition!)?.[1] ?? v.definition!) }));
  return [...panels, ...variables];
}

/** Metric names in a PromQL expression: identifiers followed by a selector, a range or an operator, not functions or labels. */
export function metricNames(expr: string): string[] {
  const withoutStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const withoutLabels = withoutStrings.replace(/\{[^}]*\}/g, '{}').replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  const names = new Set<string>();
  for (const m of withoutLabels.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)) {
    const word = m[1]!;
    if (/^(and|or|unless|by|without|on|ignoring|group_left|group_right|bool|offset|le|inf|nan)$/i.test(word)) continue;
    if (/^\d/.test(word)) continue;
    names.add(word);
  }
  return [...names];
}
