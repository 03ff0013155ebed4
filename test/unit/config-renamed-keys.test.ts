/**
 * `maxUpstreamConnections` (sockets to a remote) and its deprecated name
 * `maxConnections` under `defaults` and a remote (src/config/renamed-keys.ts):
 * the new name loads quietly, the old one loads with a warning naming its
 * file:line, both in one place are refused, and `server.maxConnections`
 * (caller sockets) is untouched.
 */
import t, { type Test } from 'tap';
import { Ajv } from 'ajv';
import { ConfigError } from '../../src/config/errors.js';
import { configJsonSchema } from '../../src/config/json-schema.js';
import { effectiveConfig } from '../../src/commands/effective-config.js';
import { parseConfig } from '../../src/loader/load.js';

function problemsOf(t: Test, text: string): string[] {
  try {
    parseConfig(text, 'g.yaml');
  } catch (err) {
    t.type(err, ConfigError);
    return [...(err as ConfigError).problems];
  }
  t.fail('expected a ConfigError');
  return [];
}

t.test('the new name loads, with no warning', async (t) => {
  const config = parseConfig('remotes:\n  a:\n    url: https://a.example/\n    maxUpstreamConnections: 7\n', 'g.yaml');
  t.equal(config.remotes.get('a')?.maxUpstreamConnections, 7);
  t.equal(config.warnings, undefined);
  t.match(effectiveConfig(config), { remotes: { a: { maxUpstreamConnections: 7 } } }, '`check` prints the new name');
});

t.test('the old name loads with a warning naming file:line and the new name', async (t) => {
  const text = [
    'server: { maxConnections: 50 }',
    'defaults:',
    '  maxConnections: 9',
    'remotes:',
    '  a:',
    '    url: https://a.example/',
    '    maxConnections: 3',
    '  b:',
    '    url: https://b.example/',
    '',
  ].join('\n');
  const config = parseConfig(text, 'g.yaml');
  t.equal(config.remotes.get('a')?.maxUpstreamConnections, 3, 'the remote’s own value');
  t.equal(config.remotes.get('b')?.maxUpstreamConnections, 9, 'defaults’ value');
  t.equal(config.server.maxConnections, 50, 'server.maxConnections is caller sockets, not renamed, no warning');
  t.same(config.warnings, [
    'g.yaml:3: defaults.maxConnections is deprecated; rename it maxUpstreamConnections (it counts sockets to the remote; server.maxConnections counts caller sockets)',
    'g.yaml:7: remotes.a.maxConnections is deprecated; rename it maxUpstreamConnections (it counts sockets to the remote; server.maxConnections counts caller sockets)',
  ]);
});

t.test('a remote’s value wins over defaults whichever name each uses', async (t) => {
  const text = 'defaults:\n  maxUpstreamConnections: 9\nremotes:\n  a:\n    url: https://a.example/\n    maxConnections: 2\n  b:\n    url: https://b.example/\n';
  const config = parseConfig(text, 'g.yaml');
  t.equal(config.remotes.get('a')?.maxUpstreamConnections, 2);
  t.equal(config.remotes.get('b')?.maxUpstreamConnections, 9);
  t.equal(config.warnings?.length, 1);
});

t.test('both names in one place are refused, naming the line and which to keep', async (t) => {
  t.same(problemsOf(t, 'remotes:\n  a:\n    url: https://a.example/\n    maxUpstreamConnections: 4\n    maxConnections: 4\n'), [
    'g.yaml:5: remotes.a: maxConnections and maxUpstreamConnections are one setting (maxConnections is its deprecated name); keep only maxUpstreamConnections',
  ]);
  t.same(problemsOf(t, 'defaults: { maxConnections: 4, maxUpstreamConnections: 5 }\nremotes:\n  a:\n    url: https://a.example/\n'), [
    'g.yaml:1: defaults: maxConnections and maxUpstreamConnections are one setting (maxConnections is its deprecated name); keep only maxUpstreamConnections',
  ]);
});

t.test('the new name has the old one’s bounds; the JSON Schema marks the old one deprecated', async (t) => {
  t.match(problemsOf(t, 'remotes:\n  a:\n    url: https://a.example/\n    maxUpstreamConnections: 10001\n'), [/remotes\.a\.maxUpstreamConnections/]);
  t.equal(parseConfig('remotes:\n  a:\n    url: https://a.example/\n    maxUpstreamConnections: 10000\n', 'g.yaml').remotes.get('a')?.maxUpstreamConnections, 10000);
  const schema = configJsonSchema() as { properties: { defaults: { properties: Record<string, { deprecated?: boolean }> } } };
  t.equal(schema.properties.defaults.properties.maxConnections?.deprecated, true);
  t.equal(schema.properties.defaults.properties.maxUpstreamConnections?.deprecated, undefined);
  t.ok(new Ajv({ strict: true, allowUnionTypes: true }).validateSchema(schema), 'still a valid schema for a strict validator');
});
