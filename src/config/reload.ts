/**
 * The reload contract, in one place: every config key takes effect on
 * reload (SIGHUP, `--watch-config`, `gateway.reload()`) except the keys in
 * RESTART_KEYS, which keep the value the gateway started with and are named
 * in the reload log line when the new file changes them. The README's config
 * table shows the same split (scripts/docs-tables.ts reads it from here).
 */
import type { GatewayConfig, RemoteConfig } from './schema.js';

/**
 * Keys a running gateway cannot change: the sockets it listens on (a remote's own listener and the push webhook
 * listener included, whose keys and bounds are built with it), and the trace exporter, built once at start-up.
 */
export const RESTART_KEYS: readonly string[] = Object.freeze([
  'server.host',
  'server.port',
  'server.opsPort',
  'server.push',
  'remotes.<name>.listen',
  'telemetry',
  // gRPC listeners (grpc-js binds its credentials with the port): the whole server.grpc, a remote's own gRPC port.
  'server.grpc',
  'remotes.<name>.grpc.listen',
  // The number of worker processes is fixed when the primary forks them.
  'server.workers',
]);

/** 'restart' for keys a reload leaves as started, 'live' for every other key (what the README table shows). */
export function reloadEffect(key: string): 'live' | 'restart' {
  return RESTART_KEYS.some((restart) => key === restart || key.startsWith(`${restart}.`)) ? 'restart' : 'live';
}

export interface ReloadPlan {
  /** `next` with the restart-only keys kept at their values in force. */
  readonly config: GatewayConfig;
  /** Restart-only keys whose value in `next` differs from the one in force. */
  readonly restartNeeded: readonly string[];
}

export function planReload(current: GatewayConfig, next: GatewayConfig): ReloadPlan {
  const before = current.server;
  const { host: _host, port: _port, opsPort: _opsPort, grpc: _grpc, push: _push, ...rest } = next.server;
  const restartNeeded = (['host', 'port', 'opsPort'] as const).filter((name) => next.server[name] !== before[name]).map((name) => `server.${name}`);
  if (!sameJson(next.server.grpc, before.grpc)) restartNeeded.push('server.grpc');
  if (!sameJson(next.server.push, before.push)) restartNeeded.push('server.push');
  if (next.server.workers !== before.workers) restartNeeded.push('server.workers');
  if (!sameJson(next.telemetry, current.telemetry)) restartNeeded.push('telemetry');
  const server = {
    ...rest,
    host: before.host,
    port: before.port,
    workers: before.workers,
    ...(before.opsPort !== undefined ? { opsPort: before.opsPort } : {}),
    ...(before.grpc !== undefined ? { grpc: before.grpc } : {}),
    ...(before.push !== undefined ? { push: before.push } : {}),
  };
  // A remote's own listener stays as started: its remote keeps `listen` as it was (a new remote gets none).
  const listenOf = (remote: RemoteConfig | undefined) => JSON.stringify(remote?.listen ?? null);
  const remotes = new Map<string, RemoteConfig>();
  for (const [name, remote] of next.remotes) {
    const old = current.remotes.get(name);
    const { listen: _listen, grpc, ...others } = remote;
    // The gRPC target takes effect; the remote's own gRPC listener stays as started.
    const { listen: _grpcListen, ...grpcRest } = grpc ?? {};
    const grpcKept = old?.grpc?.listen ? { ...grpcRest, listen: old.grpc.listen } : grpcRest;
    remotes.set(name, {
      ...others,
      ...(old?.listen ? { listen: old.listen } : {}),
      ...(Object.keys(grpcKept).length > 0 ? { grpc: grpcKept } : {}),
    });
  }
  const names = new Set([...current.remotes.keys(), ...next.remotes.keys()]);
  for (const name of names) if (listenOf(current.remotes.get(name)) !== listenOf(next.remotes.get(name))) restartNeeded.push(`remotes.${name}.listen`);
  for (const name of names) {
    if (!sameJson(current.remotes.get(name)?.grpc?.listen, next.remotes.get(name)?.grpc?.listen)) restartNeeded.push(`remotes.${name}.grpc.listen`);
  }
  const { telemetry: _telemetry, ...nextParts } = next;
  return { config: { ...nextParts, server, remotes, ...(current.telemetry ? { telemetry: current.telemetry } : {}) }, restartNeeded };
}

// Buffers (TLS files) serialize as their bytes; undefined and absent compare equal.
const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** Remotes of `before` that are gone or configured differently in `after` (their cached cards are dropped). */
export function changedRemotes(before: GatewayConfig, after: GatewayConfig): string[] {
  return [...before.remotes.values()]
    .filter((remote) => {
      const now = after.remotes.get(remote.name);
      return now === undefined || fingerprint(now) !== fingerprint(remote);
    })
    .map((remote) => remote.name);
}

// URLs serialize as their href, Buffers (TLS files) as their bytes, the method Set as a sorted list.
const fingerprint = (remote: RemoteConfig): string => JSON.stringify(remote, (_key, value: unknown) => (value instanceof Set ? [...value].sort() : value));
