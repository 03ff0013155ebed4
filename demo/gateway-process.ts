/**
 * Runs the real gateway CLI as a child process, the way `npm start` does,
 * but from source through tsx: `npm run demo` then needs no build step and
 * can never show a stale dist/.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import { YOUNG_GENERATION_FLAG } from '../src/cluster/young-generation.js';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BUNDLED_CONFIG = join(REPO_ROOT, 'config', 'gateway.yaml');

export interface DemoConfig {
  readonly path: string;
  remove(): void;
}

/**
 * A temporary copy of config/gateway.yaml (comments and all) with two
 * changes: the `sample` remote points at wherever the sample agent is
 * listening, and its total timeout is short so the never-ending reply is
 * cut within the demo's time budget.
 */
export function writeDemoConfig(sampleRpcUrl: string, totalMs: number): DemoConfig {
  const doc = parseDocument(readFileSync(BUNDLED_CONFIG, 'utf8'));
  if (!doc.hasIn(['remotes', 'sample'])) throw new Error(`${BUNDLED_CONFIG} has no remotes.sample`);
  doc.setIn(['remotes', 'sample', 'url'], sampleRpcUrl);
  doc.setIn(['remotes', 'sample', 'timeouts', 'totalMs'], totalMs);
  const dir = mkdtempSync(join(tmpdir(), 'a2a-egress-demo-'));
  const path = join(dir, 'gateway.yaml');
  writeFileSync(path, doc.toString());
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface GatewayProcess {
  /** e.g. http://127.0.0.1:40123 */
  readonly url: string;
  /** The gateway's own log lines (pino JSON), for a reader who wants to see them. */
  logs(): string;
  /** SIGTERM, then SIGKILL if it has not exited in time; resolves with the exit code. */
  stop(): Promise<number | null>;
}

// tsx compiles the gateway on start: seconds on a busy machine.
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;

export function startGatewayProcess(configPath: string): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [YOUNG_GENERATION_FLAG, '--import', 'tsx', 'src/cli.ts', '--config', configPath, '--port', '0'], {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const stop = async (): Promise<number | null> => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`the gateway did not report listening within ${START_TIMEOUT_MS / 1000} s\n${err}`));
    }, START_TIMEOUT_MS);
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /"address":"(http:\/\/[^"]+)"/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ url: match[1], logs: () => out, stop });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited with code ${code} before listening\n${err.trim()}`));
    });
  });
}
