/**
 * Starts and stops the bench's child processes: the upstream agent and the
 * built gateway (`node dist/cli.js`), each in its own process so the load
 * generator (this process) never shares their event loop.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, writeFileSync, closeSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const TMP = mkdtempSync(join(tmpdir(), 'a2a-egress-bench-'));

export interface Child {
  readonly name: string;
  readonly pid: number;
  readonly port: number;
  stop(): Promise<void>;
}

/** Compiles src/ into dist/. Others edit src/ while the bench runs: a failed build keeps the last dist. */
export function buildGateway(): { ok: boolean; output: string } {
  const run = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, encoding: 'utf8' });
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}`.trim() };
}

/** Starts a bench script that prints `{"port":N}` on its first stdout line. */
async function startScript(name: string, script: string, args: readonly string[] = []): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, script), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`bench ${name} exited early (code ${code})`)));
  });
  return wrap(name, child, port);
}

export function startUpstream(): Promise<Child> {
  return startScript('upstream', 'bench/upstream.ts');
}

/** The bare Fastify + undici proxy (bench/reference-hop.ts) in front of one upstream route. */
export function startReferenceHop(upstreamPort: number, path: string): Promise<Child> {
  return startScript('reference hop', 'bench/reference-hop.ts', [`http://127.0.0.1:${upstreamPort}`, path]);
}

export interface GatewayLaunch {
  readonly upstreamPort: number;
  readonly logLevel: 'silent' | 'warn' | 'info';
  /** Where the gateway's stdout (its pino log) goes; default: discarded. */
  readonly logFile?: string;
  /** Extra node flags, e.g. --cpu-prof. */
  readonly nodeArgs?: readonly string[];
  /** Overrides for the endless-body remote's maxResponseBytes. */
  readonly maxResponseBytes?: number;
}

/** The remotes every bench gateway has, one per upstream route. */
export function gatewayYaml(launch: GatewayLaunch): string {
  const up = `http://127.0.0.1:${launch.upstreamPort}`;
  const limits = launch.maxResponseBytes ? `\n    limits: { maxResponseBytes: ${launch.maxResponseBytes} }` : '';
  return `server:
  host: 127.0.0.1
  port: 0
  logLevel: ${launch.logLevel}
defaults:
  allowPrivateNetwork: true
  maxConnections: 128
remotes:
  unary1k:
    url: ${up}/unary/1024
  endless:
    url: ${up}/endless${limits}
  sse:
    url: ${up}/sse/2000/256
  ssepaced:
    url: ${up}/sse-paced/100/10
  sseendless:
    url: ${up}/sse-endless
  sseidle:
    url: ${up}/sse-idle
    maxConnections: 1200
    limits: { maxConcurrent: 1100, maxQueued: 100 }
`;
}

let gatewayCount = 0;

export async function startGateway(launch: GatewayLaunch): Promise<Child> {
  const configPath = join(TMP, `gateway-${++gatewayCount}.yaml`);
  writeFileSync(configPath, gatewayYaml(launch));
  const port = await freePort();
  const out = launch.logFile ? openSync(launch.logFile, 'a') : 'ignore';
  const child = spawn(
    process.execPath,
    [...(launch.nodeArgs ?? []), join(ROOT, 'dist/cli.js'), '--config', configPath, '--port', String(port)],
    { cwd: ROOT, stdio: ['ignore', out, 'inherit'] },
  );
  if (typeof out === 'number') closeSync(out);
  await waitForPort(port, child);
  return wrap(`gateway(${launch.logLevel})`, child, port);
}

function wrap(name: string, child: ChildProcess, port: number): Child {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    name,
    pid: child.pid!,
    port,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`gateway exited during startup (code ${child.exitCode})`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gateway did not listen on ${port} within 15 s`);
}

const CLOCK_TICKS_PER_SECOND = (() => {
  const run = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(run.stdout?.trim());
  return Number.isInteger(n) && n > 0 ? n : 100;
})();

/**
 * CPU time (user + system, µs) a process has used so far, from /proc/<pid>/stat.
 * Divided by calls answered, it says what each hop costs; it still inflates on a busy machine.
 */
export function cpuMicros(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; fields after its closing paren are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1e6) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/** Resident set size and its high-water mark, in MiB, from /proc (Linux only). */
export function readRss(pid: number): { rssMiB: number; hwmMiB: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMiB: kb('VmRSS') / 1024, hwmMiB: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}
