/**
 * Kubernetes objects checked offline against the Kubernetes API's own
 * OpenAPI schemas, as shipped in the npm package `kubernetes-models` 4.5.1
 * (validators generated from the Kubernetes 1.33 API: it knows native
 * sidecars' restartPolicy, preStop `sleep`, PodDisruptionBudget policy/v1).
 * The validators check types, required fields and formats; unknown fields are
 * k8sUnknownFields' job; the semantic checks live in ./deploy-k8s.ts.
 */
import { join } from 'node:path';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';

type Validating = new (data: never) => { validate(): void };

const MODELS: Readonly<Record<string, Validating>> = {
  'v1/ConfigMap': ConfigMap as unknown as Validating,
  'v1/Secret': Secret as unknown as Validating,
  'v1/Service': Service as unknown as Validating,
  'apps/v1/Deployment': Deployment as unknown as Validating,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy as unknown as Validating,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget as unknown as Validating,
};

/** Why the object is not valid for its apiVersion and kind; [] when it is. */
export function k8sSchemaProblems(doc: { apiVersion?: string; kind?: string; metadata?: { name?: string } }): string[] {
  const key = `${doc.apiVersion}/${doc.kind}`;
  const Model = MODELS[key];
  const name = `${doc.kind ?? '?'} ${doc.metadata?.name ?? '?'}`;
  if (!Model) return [`${name}: no schema here for ${key} (add it to test/support/k8s-schema.ts)`];
  try {
    new Model(doc as never).validate();
    return [];
  } catch (err) {
    return [`${name}: ${(err as Error).message}`];
  }
}

const TYPES: Readonly<Record<string, readonly [string, string]>> = {
  'v1/ConfigMap': ['kubernetes-models/v1/ConfigMap', 'IConfigMap'],
  'v1/Secret': ['kubernetes-models/v1/Secret', 'ISecret'],
  'v1/Service': ['kubernetes-models/v1/Service', 'IService'],
  'apps/v1/Deployment': ['kubernetes-models/apps/v1/Deployment', 'IDeployment'],
  'networking.k8s.io/v1/NetworkPolicy': ['kubernetes-models/networking.k8s.io/v1/NetworkPolicy', 'INetworkPolicy'],
  'policy/v1/PodDisruptionBudget': ['kubernetes-models/policy/v1/PodDisruptionBudget', 'IPodDisruptionBudget'],
};

/**
 * Unknown fields, which the API schema allows but `kubectl apply` (strict
 * field validation) refuses: each object becomes a TypeScript object literal
 * typed with the package's interfaces (generated from the same schema), and
 * the compiler's excess-property check names any field the API does not have.
 * One compile for all objects (a few seconds).
 */
export async function k8sUnknownFields(docs: readonly { apiVersion?: string; kind?: string; metadata?: { name?: string } }[]): Promise<string[]> {
  const ts = (await import('typescript')).default;
  const lines: string[] = [];
  const owners: string[] = [];
  docs.forEach((doc, i) => {
    const type = TYPES[`${doc.apiVersion}/${doc.kind}`];
    if (!type) throw new Error(`no type for ${doc.apiVersion}/${doc.kind}`);
    lines.push(`import type { ${type[1]} as T${i} } from '${type[0]}';`);
    owners.push('');
  });
  docs.forEach((doc, i) => {
    lines.push(`export const doc${i}: T${i} = ${JSON.stringify(doc)};`);
    owners.push(`${doc.kind} ${doc.metadata?.name ?? '?'}`);
  });
  const file = join(process.cwd(), '__k8s_unknown_fields__.ts');
  const source = lines.join('\n');
  const host = ts.createCompilerHost({});
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.getSourceFile = (name, language, ...rest) => (name === file ? ts.createSourceFile(name, source, language) : getSourceFile(name, language, ...rest));
  host.fileExists = (name) => name === file || fileExists(name);
  const options = { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, skipLibCheck: true, types: [] };
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : -1;
    return `${owners[line] ?? 'manifest'}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}
