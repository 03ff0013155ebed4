/**
 * Starts the gateway for a test the way a user would: from YAML config text,
 * through the real config loader, listening on 127.0.0.1 with an OS-chosen
 * port. `spawnGatewayCli` runs the built CLI (`node dist/cli.js`) as a child
 * process, for tests about start-up, exit codes and signals.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import { parseConfig } from '../../src/loader/load.js';
import { findGatewayErrorInfo } from '../../src/envelope/envelope.js';
import { buildGateway, type GatewayOptions } from '../../src/server.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { tempDir } from './temp-dir.js';

export interface RunningGateway {
  readonly app: FastifyInstance;
  readonly url: string;
  /** Every log line the gateway wrote, parsed. */
  readonly logs: Record<string, unknown>[];
  close(): Promise<void>;
}

export async function startGateway(yaml: string, options: Omit<GatewayOptions, 'logger'> = {}): Promise<RunningGateway> {
  const config = parseConfig(yaml, 'test.yaml');
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const app = await buildGateway(config, { ...options, logger: createLogger('debug', sink) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('gateway did not bind a TCP port');
  return { app, url: `http://127.0.0.1:${address.port}`, logs, close: () => app.close() };
}

export interface RpcReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  readonly json: Record<string, unknown> & { error?: { code: number; message: string; data: { reason: string; metadata: Record<string, string> }[] } };
}

/** POSTs a body (object → JSON, string/Buffer → as-is) and reads the whole reply. */
export async function rpc(url: string, body: unknown, headers: Record<string, string> = {}): Promise<RpcReply> {
  const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const res = await request(url, { method: 'POST', body: payload, headers: { 'content-type': 'application/json', ...headers } });
  const text = await res.body.text();
  let json: RpcReply['json'];
  try {
    json = JSON.parse(text) as RpcReply['json'];
  } catch {
    json = {} as RpcReply['json'];
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

export function rpcRequest(method: string, id: string | number | null = 1, params: unknown = {}): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method, params };
}

/** The gateway's ErrorInfo (domain a2a-egress, wherever it sits in error.data); undefined for a success. */
export function gatewayInfoOf(reply: { json: RpcReply['json'] } | Record<string, unknown> | undefined): { reason: string; metadata: Record<string, string> } | undefined {
  const json = reply && 'json' in reply ? (reply.json as Record<string, unknown>) : reply;
  return findGatewayErrorInfo((json?.error as { data?: unknown } | undefined)?.data);
}

/** The gateway's ErrorInfo reason, or undefined for a success. */
export function reasonOf(reply: RpcReply): string | undefined {
  return gatewayInfoOf(reply)?.reason;
}

export interface SpawnedGateway {
  readonly child: ChildProcess;
  readonly url: Promise<string>;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<number | null>;
}

export function writeTempConfig(yaml: string): string {
  const dir = tempDir('a2a-egress-test-');
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, yaml);
  return file;
}

/** Runs the built CLI; resolves `url` from its "listening" log line. */
export function spawnGatewayCli(args: string[], env: Record<string, string> = {}): SpawnedGateway {
  const child = spawn(process.execPath, ['dist/cli.js', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const url = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /"address":"(http:\/\/[^"]+)"/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`gateway exited with ${code} before listening: ${err}`)));
  });
  url.catch(() => {});
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, url, stdout: () => out, stderr: () => err, exited };
}
