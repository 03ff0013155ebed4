/**
 * Starts and stops the bench's child processes: the upstream agent and the
 * built gateway (`node dist/cli.js`), each in its own process so the load
 * generator (this process) never shares their event loop.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { YOUNG_GENERATION_FLAG } from '../src/cluster/young-generation.js';

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

/**
 * The V8 flags of every Node process on a measured path (the gateway and each hop): the gateway's young generation as
 * its launchers set it (src/cluster/young-generation.ts), so that peers differ by their code, not their runtime
 * settings. The unary table also has a gateway without it (V8's default), to show what the flag is worth.
 */
export const PEER_NODE_FLAGS: readonly string[] = [YOUNG_GENERATION_FLAG];

/**
 * Loaded first into every bench script's process, as the gateway loads it first (src/v8/tick-object-maps.ts): without
 * it a process's nextTick runs fast or slow by the luck of its garbage collector's timing (the dispatch hop lost 3.4
 * µs per call to it in one profile of 2026-12-06, none in others), so peers would differ by luck, not by their code.
 */
const KEEP_TICK_OBJECT = join(ROOT, 'src/v8/tick-object-maps.ts');

/**
 * A command a measured process is started under (Valgrind's callgrind, say): it runs node in the same process, so the
 * child's pid is node's. Such a process starts slowly: it is given `startupMs` to listen.
 */
export interface Launcher {
  readonly command: string;
  readonly args: readonly string[];
  readonly startupMs: number;
}

/** `node <args>`, or the launcher's command with node and the args after its own. */
function spawnNode(args: readonly string[], launcher: Launcher | undefined, options: SpawnOptions): ChildProcess {
  return launcher ? spawn(launcher.command, [...launcher.args, process.execPath, ...args], options) : spawn(process.execPath, args, options);
}

/** Starts a bench script that prints `{"port":N}` on its first stdout line. */
async function startScript(name: string, script: string, args: readonly string[] = [], nodeArgs: readonly string[] = [], launcher?: Launcher): Promise<Child> {
  const child = spawnNode([...PEER_NODE_FLAGS, ...nodeArgs, '--import', 'tsx', '--import', KEEP_TICK_OBJECT, join(ROOT, script), ...args], launcher, {
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

/** The bare Fastify + undici.request proxy (bench/reference-hop.ts) in front of one upstream route; `spinMicros` of CPU burnt per call. */
export function startReferenceHop(upstreamPort: number, path: string, spinMicros = 0): Promise<Child> {
  return startScript(spinMicros > 0 ? `fastify hop +${spinMicros} µs` : 'fastify hop', 'bench/reference-hop.ts', [`http://127.0.0.1:${upstreamPort}`, path, String(spinMicros)]);
}

/** The bare node:http + undici Pool.dispatch proxy (bench/dispatch-hop.ts) in front of one upstream route; `nodeArgs` as for the gateway (a profiler's). */
export function startDispatchHop(upstreamPort: number, path: string, nodeArgs: readonly string[] = [], launcher?: Launcher): Promise<Child> {
  return startScript('dispatch hop', 'bench/dispatch-hop.ts', [`http://127.0.0.1:${upstreamPort}`, path], nodeArgs, launcher);
}

/** @fastify/http-proxy (bench/http-proxy-hop.ts) mapping /remotes/<remote> to one upstream route. */
export function startHttpProxyHop(upstreamPort: number, path: string, remote: string): Promise<Child> {
  return startScript('@fastify/http-proxy', 'bench/http-proxy-hop.ts', [`http://127.0.0.1:${upstreamPort}`, path, remote]);
}

/** An SSE relay (bench/sse-relay-hop.ts): `raw` passes bytes through, `validate` parses each event and splices the caller id. */
export function startSseRelay(upstreamPort: number, path: string, mode: 'raw' | 'validate'): Promise<Child> {
  return startScript(`sse relay (${mode})`, 'bench/sse-relay-hop.ts', [`http://127.0.0.1:${upstreamPort}`, path, mode]);
}

export interface GatewayLaunch {
  readonly upstreamPort: number;
  readonly logLevel: 'silent' | 'warn' | 'info';
  /** Where the gateway's stdout (its pino log) goes; default: discarded. */
  readonly logFile?: string;
  /** Extra node flags, e.g. --cpu-prof. */
  readonly nodeArgs?: readonly string[];
  /** 'v8-default': without PEER_NODE_FLAGS' young generation (what a bare `node dist/cli.js` gets). */
  readonly youngGeneration?: 'gateway' | 'v8-default';
  /** Overrides for the endless-body remote's maxResponseBytes. */
  readonly maxResponseBytes?: number;
  /** Extra `server:` keys, e.g. `{ workers: 2 }`; a gateway that does not know one refuses to start (GatewayRefused). */
  readonly server?: Readonly<Record<string, string | number | boolean>>;
  /** Started under this command (see Launcher). */
  readonly launcher?: Launcher;
}

/** The gateway exited during startup, usually because its config was refused (exit code 2). */
export class GatewayRefused extends Error {
  override readonly name = 'GatewayRefused';
  constructor(
    readonly exitCode: number | null,
    /** The last lines it wrote to stderr: the config error, when that was the cause. */
    readonly stderr: string,
  ) {
    super(`gateway exited during startup (code ${exitCode}): ${stderr.trim().split('\n').slice(-3).join(' | ') || 'no message'}`);
  }
}

/** The remotes every bench gateway has, one per upstream route. */
export function gatewayYaml(launch: GatewayLaunch): string {
  const up = `http://127.0.0.1:${launch.upstreamPort}`;
  const limits = launch.maxResponseBytes ? `\n    limits: { maxResponseBytes: ${launch.maxResponseBytes} }` : '';
  const extra = Object.entries(launch.server ?? {})
    .map(([key, value]) => `\n  ${key}: ${JSON.stringify(value)}`)
    .join('');
  return `server:
  host: 127.0.0.1
  port: 0
  logLevel: ${launch.logLevel}${extra}
defaults:
  allowPrivateNetwork: true
  maxUpstreamConnections: 128
remotes:
  unary1k:
    url: ${up}/unary/1024
  unary1krest:
    url: ${up}/unary/1024
    binding: http+json
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
    maxUpstreamConnections: 1200
    limits: { maxConcurrent: 1100, maxQueued: 100 }
`;
}

let gatewayCount = 0;

export async function startGateway(launch: GatewayLaunch): Promise<Child> {
  const configPath = join(TMP, `gateway-${++gatewayCount}.yaml`);
  writeFileSync(configPath, gatewayYaml(launch));
  const port = await freePort();
  const out = launch.logFile ? openSync(launch.logFile, 'a') : 'ignore';
  const child = spawnNode(
    [...(launch.youngGeneration === 'v8-default' ? [] : PEER_NODE_FLAGS), ...(launch.nodeArgs ?? []), join(ROOT, 'dist/cli.js'), '--config', configPath, '--port', String(port)],
    launch.launcher,
    { cwd: ROOT, stdio: ['ignore', out, 'pipe'] },
  );
  if (typeof out === 'number') closeSync(out);
  // Held back until the gateway listens, then passed through: a refused config is reported once, in the note that
  // skips what needed it, not also as an alarming error in the bench's output.
  let stderr = '';
  let started = false;
  child.stderr!.on('data', (chunk: Buffer) => {
    if (started) process.stderr.write(chunk);
    else stderr = (stderr + chunk.toString('utf8')).slice(-4096);
  });
  try {
    await waitForPort(port, child, launch.launcher?.startupMs);
  } catch (err) {
    if (child.exitCode === null) {
      child.kill('SIGKILL');
      throw err;
    }
    await new Promise<void>((resolve) => {
      if (child.stderr!.readableEnded) resolve();
      child.stderr!.once('end', resolve);
      setTimeout(resolve, 500).unref();
    });
    throw new GatewayRefused(child.exitCode, stderr);
  }
  started = true;
  if (stderr) process.stderr.write(stderr);
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
      // A process with children of its own (cluster workers) should stop them; any it leaves behind are stopped here.
      const below = descendants(child.pid!);
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
      for (const pid of below) {
        for (let i = 0; i < 20 && existsSync(`/proc/${pid}`); i++) await new Promise((r) => setTimeout(r, 100));
        try {
          if (existsSync(`/proc/${pid}`)) process.kill(pid, 'SIGKILL');
        } catch {
          // Gone between the check and the kill.
        }
      }
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

async function waitForPort(port: number, child: ChildProcess, startupMs = 15_000): Promise<void> {
  const deadline = Date.now() + startupMs;
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
  throw new Error(`gateway did not listen on ${port} within ${startupMs / 1000} s`);
}

const CLOCK_TICKS_PER_SECOND = (() => {
  const run = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(run.stdout?.trim());
  return Number.isInteger(n) && n > 0 ? n : 100;
})();

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces), or undefined once the process is gone. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * CPU time (user + system, µs) a process has used so far, from /proc/<pid>/stat.
 * Divided by calls answered, it says what each hop costs; it still inflates on a busy machine.
 */
export function cpuMicros(pid: number): number {
  const fields = statFields(pid);
  if (!fields) return NaN;
  // utime and stime are fields 14 and 15 of the whole line, 11 and 12 after the name.
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS_PER_SECOND;
}

/** The pids of every live process below `pid` (a cluster primary's workers, say), found by their parent pid in /proc. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = Number(statFields(Number(entry))?.[1]);
    if (!Number.isInteger(parent)) continue;
    const list = children.get(parent) ?? [];
    list.push(Number(entry));
    children.set(parent, list);
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

/**
 * CPU time (µs) of a process and every process below it: one figure for a
 * proxy whatever its shape (one process, or a primary and its workers).
 * Workers must live through the measured window: a process that exits inside
 * it takes its CPU time out of the sum.
 */
export function treeCpuMicros(pid: number): number {
  return [pid, ...descendants(pid)].reduce((sum, p) => sum + (cpuMicros(p) || 0), 0);
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
