/**
 * No Kubernetes object we ship has a field the API does not know (what
 * `kubectl apply`'s strict field validation refuses): the plain manifests in
 * deploy/kubernetes and the Helm chart rendered with its defaults, checked in
 * one TypeScript compile against kubernetes-models' interfaces (a few seconds
 * of CPU, so it runs with the slow checks).
 */
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { parse, parseAllDocuments } from 'yaml';
import type { K8sObject } from '../support/deploy-k8s.js';
import { renderChart } from '../support/helm-template.js';
import { k8sUnknownFields } from '../support/k8s-schema.js';

t.test('plain manifests and the rendered chart: no unknown field; a misspelt one is named', async (t) => {
  const plain = readdirSync('deploy/kubernetes')
    .filter((f) => /\.ya?ml$/.test(f))
    .flatMap((f) => parseAllDocuments(readFileSync(`deploy/kubernetes/${f}`, 'utf8')).map((d) => d.toJS() as K8sObject));
  const chart = renderChart('deploy/helm/a2a-egress', { releaseName: 'egress' }).map((r) => parse(r.text) as K8sObject);
  const misspelt = structuredClone(plain.find((d) => d.kind === 'Deployment')!);
  misspelt.metadata = { name: 'misspelt' };
  const pod = misspelt.spec!.template!.spec!;
  ((pod.initContainers ?? pod.containers)![0] as unknown as Record<string, unknown>).restartPolice = 'Always';
  t.ok(plain.length >= 10 && chart.length >= 6, `${plain.length} plain objects, ${chart.length} rendered`);
  const problems = await k8sUnknownFields([...plain, ...chart, misspelt]);
  t.same(problems.filter((p) => !p.startsWith('Deployment misspelt:')), [], 'no field the API does not know');
  t.match(problems.join('\n'), /Deployment misspelt: .*restartPolice/, 'the check is live: a misspelt field is named');
});
