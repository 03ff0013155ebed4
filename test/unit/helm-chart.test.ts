/**
 * The Helm chart in deploy/helm/a2a-egress, rendered without helm by
 * test/support/helm-template.ts (a strict subset of Go templates; anything
 * else fails): with ci/shared-gateway-values.yaml it renders exactly the
 * objects of deploy/kubernetes/shared-gateway.yaml; with its defaults it
 * renders valid Kubernetes objects that pass the same deployment checks.
 * (Unknown fields, a TypeScript compile: test/slow/k8s-unknown-fields.test.ts.)
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { parse, parseAllDocuments } from 'yaml';
import { k8sProblems, type K8sObject } from '../support/deploy-k8s.js';
import { mergeValues, renderChart, renderText, TemplateError } from '../support/helm-template.js';
import { k8sSchemaProblems } from '../support/k8s-schema.js';

const CHART = 'deploy/helm/a2a-egress';

function docsOf(rendered: { text: string }[]): K8sObject[] {
  return rendered.map((r) => {
    const doc = parse(r.text) as K8sObject;
    return doc;
  });
}

/** One object per kind/name, with the gateway YAML compared as data rather than text. */
function byKey(docs: K8sObject[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const doc of docs) {
    const copy = structuredClone(doc);
    if (copy.kind === 'ConfigMap' && copy.data?.['gateway.yaml']) (copy.data as Record<string, unknown>)['gateway.yaml'] = parse(copy.data['gateway.yaml']);
    out[`${copy.kind}/${copy.metadata?.name}`] = copy;
  }
  return out;
}

t.test('with ci/shared-gateway-values.yaml the chart renders deploy/kubernetes/shared-gateway.yaml', async (t) => {
  const values = parse(readFileSync(`${CHART}/ci/shared-gateway-values.yaml`, 'utf8'));
  const rendered = docsOf(renderChart(CHART, { releaseName: 'a2a-egress', values }));
  const plain = parseAllDocuments(readFileSync('deploy/kubernetes/shared-gateway.yaml', 'utf8')).map((d) => d.toJS() as K8sObject);
  t.same(Object.keys(byKey(rendered)).sort(), Object.keys(byKey(plain)).sort(), 'the same objects');
  t.same(byKey(rendered), byKey(plain), 'with the same content');
});

t.test('with its defaults the chart renders valid objects that pass the deployment checks', async (t) => {
  const docs = docsOf(renderChart(CHART, { releaseName: 'egress', namespace: 'agents' }));
  t.same(docs.map((d) => d.kind).sort(), ['ConfigMap', 'Deployment', 'NetworkPolicy', 'NetworkPolicy', 'NetworkPolicy', 'PodDisruptionBudget', 'Service'], 'no Secret unless asked for');
  for (const doc of docs) t.same(k8sSchemaProblems(doc), [], `${doc.kind} ${doc.metadata?.name}: valid`);
  t.same(k8sProblems(docs, { sidecar: false }), [], 'wired correctly');
  const deployment = docs.find((d) => d.kind === 'Deployment')!;
  const container = deployment.spec!.template!.spec!.containers![0]!;
  const chart = parse(readFileSync(`${CHART}/Chart.yaml`, 'utf8')) as { appVersion: string; version: string };
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
  t.equal(chart.appVersion, pkg.version, "the chart's appVersion is the package version");
  t.equal(container.image, `a2a-egress:${pkg.version}`, 'the image tag defaults to appVersion');
  t.equal(deployment.metadata?.name, 'egress', 'objects are named after the release');
});

t.test('the rendered chart fails the checks when values break it', async (t) => {
  const noOps = () => renderChart(CHART, { releaseName: 'x', values: { config: { server: { opsPort: null } } } });
  t.throws(noOps, new TemplateError('config.server.opsPort is required: probes and Prometheus use it'));
  const lowMemory = docsOf(renderChart(CHART, { releaseName: 'x', values: { resources: { limits: { memory: '256Mi' } } } }));
  t.match(k8sProblems(lowMemory, { sidecar: false }).join('\n'), /memory limit 256Mi is under/);
  const open = docsOf(renderChart(CHART, { releaseName: 'x', values: { networkPolicy: { enabled: false } } }));
  t.match(k8sProblems(open, { sidecar: false }).join('\n'), /no egress NetworkPolicy/);
  const badConfig = docsOf(renderChart(CHART, { releaseName: 'x', values: { config: { remotes: { example: { timeout: {} } } } } }));
  t.match(k8sProblems(badConfig, { sidecar: false }).join('\n'), /remotes\.example\.timeout: unknown key; did you mean "timeouts"\?/);
});

t.test('the renderer: Go template semantics for what the chart uses', async (t) => {
  const ctx = { Values: { a: { b: 'x', n: 0, list: [1], empty: {} }, s: 'hi' }, Release: { Name: 'r' } };
  t.equal(renderText('a {{ .Values.a.b }} b', ctx), 'a x b');
  t.equal(renderText('a  {{- .Values.a.b -}}  \n b', ctx), 'axb', 'trim markers eat whitespace and newlines');
  t.equal(renderText('{{ if .Values.a.n }}yes{{ else if .Values.a.list }}list{{ else }}no{{ end }}', ctx), 'list', '0 is false, a non-empty list true');
  t.equal(renderText('{{ if .Values.a.empty }}yes{{ else }}no{{ end }}', ctx), 'no', 'an empty map is false');
  t.equal(renderText('{{ with .Values.a }}{{ .b }}{{ $.Release.Name }}{{ end }}', ctx), 'xr', 'with moves the dot; $ stays the root');
  t.equal(renderText('{{ with .Values.missing }}x{{ else }}none{{ end }}', ctx), 'none');
  t.equal(renderText('{{ .Values.missing }}', ctx), '', 'a missing value prints nothing');
  t.equal(renderText('{{ default "d" .Values.missing }} {{ default "d" .Values.s }}', ctx), 'd hi');
  t.equal(renderText('{{ .Values.s | quote }}', ctx), '"hi"');
  t.equal(renderText('x:{{ toYaml .Values.a | nindent 2 }}', ctx), 'x:\n  b: x\n  n: 0\n  list:\n    - 1\n  empty: {}');
  t.equal(renderText('{{ include "n" . }}', ctx, '{{- define "n" -}}\nname-{{ .Release.Name }}\n{{- end }}'), 'name-r');
  t.equal(renderText('{{/* a comment */}}ok', ctx), 'ok');
  t.equal(renderText('{{ not .Values.a.n }} {{ eq .Values.s "hi" }}', ctx), 'true true');
});

t.test('the renderer refuses what it does not implement instead of guessing', async (t) => {
  const ctx = { Values: { a: { b: 1 } } };
  t.throws(() => renderText('{{ range .Values.a }}x{{ end }}', ctx), TemplateError, 'range');
  t.throws(() => renderText('{{ $x := 1 }}', ctx), TemplateError, 'variables');
  t.throws(() => renderText('{{ upper "a" }}', ctx), /function "upper" is not supported/);
  t.throws(() => renderText('{{ toYaml (list 1) }}', ctx), /parentheses/);
  t.throws(() => renderText('{{ .Values.a }}', ctx), /prints a map/, 'printing a map is helm’s map[...] text: refused');
  t.throws(() => renderText('{{ .Values.nope.deeper }}', ctx), /nil pointer/, 'a field of a missing value, as Go fails');
  t.throws(() => renderText('{{ if .Values.a }}x', ctx), /missing \{\{ end \}\}/);
  t.throws(() => renderText('{{ required "need b" .Values.a.c }}', ctx), /need b/);
});

t.test("values merge like helm's: maps by key, null deletes, lists replace", async (t) => {
  t.same(mergeValues({ a: { b: 1, c: 2 }, l: [1, 2] }, { a: { c: 3, d: 4 }, l: [9] }), { a: { b: 1, c: 3, d: 4 }, l: [9] });
  t.same(mergeValues({ a: { b: 1, c: 2 } }, { a: { b: null } }), { a: { c: 2 } });
});
