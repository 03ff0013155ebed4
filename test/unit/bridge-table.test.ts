/** The README's version-bridging table is generated from the bridge's tables; this fails when it drifts. */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { bridgeMappingRows, withBridgeTable } from '../../src/a2a/bridge/mapping-table.js';
import { OPERATION_LIST } from '../../src/a2a/operations.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

t.test('README bridge table matches the code (run npx tsx scripts/bridge-table.ts --write)', async (t) => {
  t.equal(readme, withBridgeTable(readme));
});

t.test('the table names every operation and every state of both generations', async (t) => {
  const rows = bridgeMappingRows();
  for (const op of OPERATION_LIST) t.ok(rows.some((r) => r.v10 === `\`${op.name}\``), op.name);
  for (const state of ['unknown', 'auth-required', 'TASK_STATE_UNSPECIFIED', 'TASK_STATE_AUTH_REQUIRED']) t.ok(rows.some((r) => r.v03.includes(state) || r.v10.includes(state)), state);
});

t.test('a README without the markers is refused, not silently rewritten', async (t) => {
  t.throws(() => withBridgeTable('# no markers'), /markers/);
});
