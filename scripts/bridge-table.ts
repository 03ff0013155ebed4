/**
 * Prints the README's version-bridging table, or (`--write`) puts it into the
 * README between its markers. test/unit/bridge-table.test.ts fails when they drift.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bridgeMappingTable, withBridgeTable } from '../src/a2a/bridge/mapping-table.js';

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--write')) {
    const readme = new URL('../README.md', import.meta.url);
    writeFileSync(readme, withBridgeTable(readFileSync(readme, 'utf8')));
  } else {
    process.stdout.write(`${bridgeMappingTable()}\n`);
  }
}
