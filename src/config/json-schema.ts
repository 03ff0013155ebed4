/**
 * The config file's JSON Schema, emitted from the TypeBox source the loader
 * validates with (src/config/schema.ts), for editors and other tools:
 * `a2a-egress schema` prints it, and config/gateway.schema.json is this text
 * (written with the README tables by `npx tsx scripts/docs-tables.ts --write`,
 * checked for drift by test/unit/config-schema.test.ts). Built-in defaults are not part of it:
 * they live in ./defaults.ts and the README's table.
 */
import { ConfigFileSchema } from './schema.js';

export const CONFIG_SCHEMA_FILE = 'gateway.schema.json';

export function configJsonSchema(): Record<string, unknown> {
  // A JSON round trip drops TypeBox's symbol-keyed metadata and keeps the plain schema.
  const plain = JSON.parse(JSON.stringify(ConfigFileSchema)) as Record<string, unknown>;
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'a2a-egress gateway configuration',
    description: 'One YAML file: server, defaults (inherited by every remote, key by key) and remotes.<name>. Unknown keys are errors.',
    ...plain,
  };
}

/** The exact text of config/gateway.schema.json. */
export function configJsonSchemaText(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}
