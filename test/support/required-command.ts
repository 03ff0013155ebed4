/**
 * Tests that need an outside program (redis-server, promtool) skip where it
 * is missing, so `npm ci && npm test` passes on a machine with only Node,
 * and say so loudly. CI sets the matching A2A_EGRESS_REQUIRE_* variable after
 * installing the program: there a missing program is a failure, never a skip.
 */
import { spawnSync } from 'node:child_process';

export interface RequiredCommand {
  /** The program, looked up on PATH. */
  readonly command: string;
  /** Arguments that make it print its version and exit 0. */
  readonly versionArgs: readonly string[];
  /** When this variable is "1", a missing program fails instead of skipping. */
  readonly requireVar: string;
  /** How to get it, for the notice. */
  readonly install: string;
}

/** True when `command` runs. */
export function commandAvailable(command: string, versionArgs: readonly string[]): boolean {
  const found = spawnSync(command, versionArgs, { stdio: 'ignore', timeout: 10_000 });
  return found.error === undefined && found.status === 0;
}

/**
 * The skip reason when the program is missing and not required, else false
 * (it is there, or it is required and the tests must fail without it).
 */
export function skipWithout(required: RequiredCommand): string | false {
  if (commandAvailable(required.command, required.versionArgs)) return false;
  if (process.env[required.requireVar] === '1') return false;
  const reason = `${required.command} not found: SKIPPING the tests that need it (install: ${required.install}; set ${required.requireVar}=1 to make this a failure, as .ci/run does)`;
  const bar = '!'.repeat(Math.min(100, reason.length));
  process.stderr.write(`\n${bar}\n${reason}\n${bar}\n\n`);
  return reason;
}

export const REDIS: RequiredCommand = {
  command: 'redis-server',
  versionArgs: ['--version'],
  requireVar: 'A2A_EGRESS_REQUIRE_REDIS',
  install: 'apt-get install redis-server',
};

export const PROMTOOL: RequiredCommand = {
  command: 'promtool',
  versionArgs: ['--version'],
  requireVar: 'A2A_EGRESS_REQUIRE_PROMTOOL',
  install: 'apt-get install --no-install-recommends prometheus',
};
