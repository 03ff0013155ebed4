/**
 * npx tsx bench/grpc-forwarding.ts [--calls 4000] [--concurrency 16] [--rounds 3]
 *
 * gRPC unary CPU per call: a grpc-js caller calls the @a2a-js/sdk gRPC server
 * directly, then through the gRPC binding's forwarding harness (listener →
 * A2ACall → client, no policy), then through the whole gateway (its own gRPC
 * listener for the remote: policy, metrics and the info-level log line to
 * /dev/null), in alternating rounds of one run. Upstream
 * and harness are separate processes; each one's CPU (utime+stime from
 * /proc/PID/stat) is read before and after a round and divided by the calls.
 * The headline is the harness's CPU per call beside the upstream's own (the
 * cost of a direct grpc-js server answering the same call) and beside a bare
 * grpc-js passthrough hop (raw bytes in, raw bytes out: the floor of any hop). Not a test: it
 * prints a table and exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { jsonToBinary } from '../src/bindings/grpc/proto-json.js';

const SELF = fileURLToPath(import.meta.url);
const role = process.argv[2];

if (role === 'upstream') {
  const { startSdkGrpcUpstream } = await import('../test/support/grpc-peers.js');
  const up = await startSdkGrpcUpstream();
  process.stdout.write(`${JSON.stringify({ target: up.target })}\n`);
  process.on('SIGTERM', () => void up.close().then(() => process.exit(0)));
} else if (role === 'harness') {
  const { grpcClientFor, startHarness } = await import('../test/support/grpc-peers.js');
  const client = grpcClientFor(process.argv[3]!, { maxSessions: 1 });
  const harness = await startHarness(client);
  process.stdout.write(`${JSON.stringify({ target: harness.target })}\n`);
  process.on('SIGTERM', () => void harness.close().then(() => process.exit(0)));
} else if (role === 'gateway') {
  // The gateway as the CLI runs it: config through the loader, the remote's own gRPC listener, logs at info.
  const { createWriteStream } = await import('node:fs');
  const { parseConfig } = await import('../src/loader/load.js');
  const { createGateway } = await import('../src/server.js');
  const { createLogger } = await import('../src/telemetry/logger.js');
  const config = parseConfig(
    `server: { host: 127.0.0.1, port: 0 }\nremotes:\n  bench:\n    url: http://127.0.0.1:1/\n    allowPrivateNetwork: true\n    grpc: { target: "${process.argv[3]!}", listen: { port: 0 } }\n`,
  );
  const gateway = await createGateway(config, { logger: createLogger('info', createWriteStream('/dev/null')), processMetrics: false });
  const { grpc: addresses } = await gateway.listen();
  process.stdout.write(`${JSON.stringify({ target: addresses!.remotes.bench })}\n`);
  process.on('SIGTERM', () => void gateway.close().then(() => process.exit(0)));
} else if (role === 'passthrough') {
  // The least any gRPC hop can cost: grpc-js server + grpc-js client, bytes passed through untouched.
  const upstreamClient = new grpc.Client(process.argv[3]!, grpc.credentials.createInsecure());
  const raw = (b: Buffer) => b;
  const server = new grpc.Server();
  server.register('/lf.a2a.v1.A2AService/SendMessage', ((call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
    upstreamClient.makeUnaryRequest('/lf.a2a.v1.A2AService/SendMessage', raw, raw, call.request, call.metadata, {}, callback);
  }) as grpc.handleUnaryCall<Buffer, Buffer>, raw, raw, 'unary');
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  process.stdout.write(`${JSON.stringify({ target: `127.0.0.1:${port}` })}\n`);
  process.on('SIGTERM', () => server.tryShutdown(() => process.exit(0)));
} else if (process.argv[1] !== undefined && resolve(process.argv[1]) === SELF) {
  // Run as a script only: imported by the unary-peers scenario it must not start its own benchmark.
  await main();
}

function startChild(args: string[]): Promise<{ child: ChildProcess; target: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', SELF, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const line = buffered.split('\n')[0];
      if (buffered.includes('\n') && line) resolve({ child, target: (JSON.parse(line) as { target: string }).target });
    });
    child.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}`)));
  });
}

/** utime + stime of a process, in microseconds. */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1e6) / 100; // USER_HZ is 100 on Linux
}

async function load(target: string, calls: number, concurrency: number): Promise<void> {
  const client = new grpc.Client(target, grpc.credentials.createInsecure());
  const body = Buffer.from(jsonToBinary('SendMessageRequest', { message: { messageId: 'bench', role: 'ROLE_USER', parts: [{ text: 'hello bench' }] } }));
  const raw = (b: Buffer) => b;
  // The SDK server refuses a call without a2a-version 1.0 (it would be 0.3).
  const metadata = new grpc.Metadata();
  metadata.set('a2a-version', '1.0');
  let next = 0;
  const worker = async () => {
    while (next < calls) {
      next++;
      await new Promise<void>((resolve, reject) =>
        client.makeUnaryRequest('/lf.a2a.v1.A2AService/SendMessage', raw, raw, body, metadata.clone(), {}, (err) => (err ? reject(err) : resolve())),
      );
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  client.close();
}

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { calls: { type: 'string' }, concurrency: { type: 'string' }, rounds: { type: 'string' } } });
  const calls = Number(values.calls ?? 4000);
  const concurrency = Number(values.concurrency ?? 16);
  const rounds = Number(values.rounds ?? 3);
  const upstream = await startChild(['upstream']);
  const harness = await startChild(['harness', upstream.target]);
  const passthrough = await startChild(['passthrough', upstream.target]);
  const gatewayChild = await startChild(['gateway', upstream.target]);
  const up = upstream.child.pid!;
  const pids: Record<string, number> = { 'via harness': harness.child.pid!, 'via passthrough': passthrough.child.pid!, 'via gateway': gatewayChild.child.pid!, direct: harness.child.pid! };
  try {
    // Warm-up: JIT, connections.
    await load(upstream.target, 500, concurrency);
    await load(harness.target, 500, concurrency);
    await load(passthrough.target, 500, concurrency);
    await load(gatewayChild.target, 500, concurrency);
    const rows: { round: number; path: string; upstreamUs: number; harnessUs: number; wallMs: number }[] = [];
    for (let round = 1; round <= rounds; round++) {
      for (const [path, target] of [['direct', upstream.target], ['via harness', harness.target], ['via passthrough', passthrough.target], ['via gateway', gatewayChild.target]] as const) {
        const hop = pids[path]!;
        const [u0, h0, t0] = [cpuMicros(up), cpuMicros(hop), performance.now()];
        await load(target, calls, concurrency);
        const [u1, h1, t1] = [cpuMicros(up), cpuMicros(hop), performance.now()];
        rows.push({ round, path, upstreamUs: (u1 - u0) / calls, harnessUs: (h1 - h0) / calls, wallMs: t1 - t0 });
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    process.stdout.write(`gRPC unary SendMessage, ${calls} calls x ${rounds} rounds, concurrency ${concurrency}\n`);
    process.stdout.write('round  path             upstream µs/call   hop µs/call  calls/s\n');
    for (const r of rows) {
      process.stdout.write(`${String(r.round).padEnd(6)} ${r.path.padEnd(16)} ${r.upstreamUs.toFixed(1).padStart(16)} ${r.harnessUs.toFixed(1).padStart(16)} ${(calls / (r.wallMs / 1000)).toFixed(0).padStart(8)}\n`);
    }
    const direct = median(rows.filter((r) => r.path === 'direct').map((r) => r.upstreamUs));
    const hopCost = median(rows.filter((r) => r.path === 'via harness').map((r) => r.harnessUs));
    const bare = median(rows.filter((r) => r.path === 'via passthrough').map((r) => r.harnessUs));
    const whole = median(rows.filter((r) => r.path === 'via gateway').map((r) => r.harnessUs));
    process.stdout.write(
      `median µs/call: direct grpc-js server ${direct.toFixed(1)}; forwarding harness ${hopCost.toFixed(1)}; bare grpc-js passthrough hop ${bare.toFixed(1)} ` +
        `(harness = ${(hopCost / bare).toFixed(2)}x the bare hop); the whole gateway ${whole.toFixed(1)} (${(whole / bare).toFixed(2)}x the bare hop)\n`,
    );
  } finally {
    upstream.child.kill('SIGTERM');
    harness.child.kill('SIGTERM');
    passthrough.child.kill('SIGTERM');
    gatewayChild.child.kill('SIGTERM');
  }
}
