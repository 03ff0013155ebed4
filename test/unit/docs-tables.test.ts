/** The README's config reference and reason table are generated; this fails when they drift. */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { gatewayErrors } from '../../src/envelope/codes.js';
import { withTables } from '../../scripts/docs-tables.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

t.test('README tables match the schema, defaults and error catalogue (run scripts/docs-tables.ts --write)', async (t) => {
  t.equal(readme, withTables(readme));
});

t.test('every reason in the catalogue is documented', async (t) => {
  for (const reason of Object.keys(gatewayErrors)) t.ok(readme.includes(`\`${reason}\``), reason);
});

t.test('the README starts with the two commands a newcomer runs', async (t) => {
  const firstBlock = readme.split('```')[1] ?? '';
  t.match(firstBlock, /npm ci && npm run demo/);
  t.match(firstBlock, /npm ci && npm test/);
});
