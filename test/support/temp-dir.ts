/**
 * A temporary directory for one test process, removed when that process exits (tap runs each test file in a
 * process of its own). Configs, token files and certificates written for a gateway under test live here, so a
 * test run leaves nothing behind in the system's temp directory, whether its tests pass, fail or bail out.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

process.once('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A new directory named `<prefix><random>` under the system's temp directory. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
