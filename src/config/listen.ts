/**
 * Where the gateway listens, decided in one place for the gateway and its
 * container health check (src/healthcheck.ts), so the two can never disagree:
 *   caller port: --port, else $A2A_EGRESS_PORT, else server.port (8080)
 *   ops port:    server.opsPort when set (the ops routes move there), else the caller port
 * The health check probes the ops port: the config file is the one place a
 * deployment states it.
 */
import { builtinServer } from './defaults.js';

export type Env = Readonly<Record<string, string | undefined>>;

export const PORT_ENV = 'A2A_EGRESS_PORT';
export const CONFIG_ENV = 'A2A_EGRESS_CONFIG';
export const DEFAULT_CONFIG_PATH = 'config/gateway.yaml';

export class PortError extends Error {
  override readonly name = 'PortError';
}

/** A port number from text, or a PortError naming where the text came from. */
export function parsePort(text: string, from: string): number {
  const port = Number(text);
  if (text.trim() === '' || !Number.isInteger(port) || port < 0 || port > 65535) throw new PortError(`${from}: must be an integer 0..65535`);
  return port;
}

/** The caller port: the --port argument, else $A2A_EGRESS_PORT, else the config's server.port. */
export function callerPort(configPort: number | undefined, portArg: string | undefined, env: Env): number {
  if (portArg !== undefined) return parsePort(portArg, '--port');
  const fromEnv = env[PORT_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return parsePort(fromEnv, PORT_ENV);
  return configPort ?? builtinServer.port;
}

/** The port that serves /healthz, /readyz and /metrics. */
export function opsPort(server: { port?: number; opsPort?: number } | undefined, env: Env, portArg?: string): number {
  return server?.opsPort ?? callerPort(server?.port, portArg, env);
}

export function configPath(configArg: string | undefined, env: Env): string {
  return configArg ?? env[CONFIG_ENV] ?? DEFAULT_CONFIG_PATH;
}
