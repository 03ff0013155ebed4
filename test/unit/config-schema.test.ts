/**
 * The config's JSON Schema as editors and other tools get it: the shipped
 * config/gateway.schema.json is exactly what the TypeBox source emits, it
 * works on its own (a plain ajv accepts the configs we ship and refuses what
 * the loader refuses), and the bundled YAML points editors at it.
 */
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormatsImport from 'ajv-formats';
import t from 'tap';
import { parse, parseAllDocuments } from 'yaml';
import { configJsonSchemaText } from '../../src/config/json-schema.js';

const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;
const SHIPPED = 'config/gateway.schema.json';

t.test('config/gateway.schema.json is what the TypeBox schema emits (regenerate: npx tsx scripts/docs-tables.ts --write)', async (t) => {
  t.equal(readFileSync(SHIPPED, 'utf8'), configJsonSchemaText());
});

t.test('the shipped schema stands alone: a plain draft-07 validator accepts our configs and refuses bad ones', async (t) => {
  const schema = JSON.parse(readFileSync(SHIPPED, 'utf8')) as Record<string, unknown>;
  t.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#');
  const validate = addFormats(new Ajv({ allErrors: true, strict: false })).compile(schema);
  const shipped: [string, unknown][] = [['config/gateway.yaml', parse(readFileSync('config/gateway.yaml', 'utf8'))]];
  for (const file of ['deploy/kubernetes/sidecar.yaml', 'deploy/kubernetes/shared-gateway.yaml']) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8')) as unknown as { toJS(): { kind?: string; data?: Record<string, string> } }[]) {
      const k8s = doc.toJS();
      if (k8s.kind === 'ConfigMap' && k8s.data?.['gateway.yaml']) shipped.push([`${file}#gateway.yaml`, parse(k8s.data['gateway.yaml'])]);
    }
  }
  t.ok(shipped.length >= 3, 'the bundled config and both Kubernetes configs');
  for (const [name, config] of shipped) t.ok(validate(config), `${name}: ${JSON.stringify(validate.errors)}`);

  const bad: [string, unknown][] = [
    ['unknown top-level key', { remotes: { a: { url: 'https://a.example/' } }, extra: 1 }],
    ['no remotes', {}],
    ['a bound one past its maximum', { remotes: { a: { url: 'https://a.example/', limits: { maxErrorMessageBytes: 65537 } } } }],
    ['a typo in a remote', { remotes: { a: { url: 'https://a.example/', timeout: {} } } }],
    ['a bad remote name', { remotes: { 'a b': { url: 'https://a.example/' } } }],
    ['not http(s)', { remotes: { a: { url: 'ftp://a.example/' } } }],
  ];
  for (const [name, config] of bad) t.notOk(validate(config), name);
});

t.test('the bundled YAML names its schema for editors on its first line', async (t) => {
  const first = readFileSync('config/gateway.yaml', 'utf8').split('\n')[0];
  t.equal(first, '# yaml-language-server: $schema=./gateway.schema.json');
});
