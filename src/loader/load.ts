/**
 * YAML file → validated, defaults-merged GatewayConfig. Every problem is
 * reported as `file:line: key.path: what is wrong` (the line where the YAML
 * parser knows it), an unknown key with the nearest known one, and — when an
 * environment is given — a missing secret with the key that names it.
 *
 * Why this is not in config/: the loader checks each section with its
 * owner's own parser (gRPC targets from bindings/grpc, push keys and targets
 * from push/), so it sits above them; config/ (schema, defaults, the pure
 * section checks) sits below everything that reads a config.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { LineCounter, parseDocument, isMap, isNode, isScalar, type Document } from 'yaml';
import { ConfigError } from '../config/errors.js';
import { A2A_METHODS } from '../a2a/methods.js';
import { builtinCircuitBreaker, builtinLimits, builtinListenHost, builtinPolicy, builtinRetries, builtinServer, builtinTimeouts } from '../config/defaults.js';
import { ConfigFileSchema, type ConfigFile, type GatewayConfig, type GrpcServerConfig, type RemoteConfig, type RemoteGrpcConfig, type ResolvedTls } from '../config/schema.js';
import { GrpcTargetError, parseGrpcTarget } from '../bindings/grpc/target.js';
import { secretProblems, type Env } from '../config/secrets.js';
import { nearestKey } from '../config/suggest.js';
import { PushConfigError, resolvePushConfig } from '../push/config.js';
import { workerShareProblems } from '../config/worker-share.js';
import { resolveTraces } from '../config/traces.js';
import { renamedKeyReport } from '../config/renamed-keys.js';

// ajv-formats' CommonJS default export is not typed as callable under NodeNext.
const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

// verbose: each error carries its schema, whose known keys feed "did you mean".
const ajv = addFormats(new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, verbose: true }));
const validateFile = ajv.compile<ConfigFile>(ConfigFileSchema);

export interface ParseOptions {
  /**
   * Check that every secret the config reads (credential env vars, token
   * files) is there, reporting a missing one with its file, line and key.
   * Unset: not checked here (the gateway still refuses to start without them).
   */
  readonly env?: Env;
}

export function loadConfigFile(path: string, options: ParseOptions = {}): GatewayConfig {
  return parseConfig(readConfigText(path), path, options);
}

/** The config file's text (a ConfigError when it cannot be read); with server.workers > 1 the primary hands it to the workers. */
export function readConfigText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new ConfigError(`cannot read config file ${path}: ${code}`);
  }
}

/** Parses and validates config text; `source` names it in messages. */
export function parseConfig(text: string, source = 'config', options: ParseOptions = {}): GatewayConfig {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const problems = doc.errors.map((e) => {
      // linePos is only filled in with prettyErrors; the offset always is.
      const pos = e.linePos?.[0] ?? lines.linePos(e.pos[0]);
      const where = pos ? `${source}:${pos.line}:${pos.col}` : source;
      return `${where}: YAML syntax: ${e.message.split('\n')[0]}`;
    });
    throw new ConfigError(problems.join('\n'), problems);
  }
  const raw: unknown = doc.toJS() ?? {};
  if (!validateFile(raw)) {
    const problems = describeErrors(validateFile.errors ?? [], doc, lines, source);
    throw new ConfigError(problems.join('\n'), problems);
  }
  // A renamed key under its old name loads with a warning; under both names it is refused.
  const renamed = renamedKeyReport(raw, (path) => where(doc, lines, source, path));
  if (renamed.problems.length > 0) throw new ConfigError(renamed.problems.join('\n'), [...renamed.problems]);
  // ajv's "uri" format accepts some strings WHATWG URL refuses ("https://", "http://h:99999/").
  const badUrls = Object.entries(raw.remotes)
    .filter(([, remote]) => !URL.canParse(remote.url))
    .map(([name]) => `${where(doc, lines, source, ['remotes', name, 'url'])}: remotes.${name}.url: not a valid URL`);
  if (badUrls.length > 0) throw new ConfigError(badUrls.join('\n'), badUrls);
  // Credentials in a URL end up in logs and error reports; `auth` keeps them out.
  const withUserinfo = Object.entries(raw.remotes)
    .filter(([, remote]) => {
      const url = new URL(remote.url);
      return url.username !== '' || url.password !== '';
    })
    .map(([name]) => `${where(doc, lines, source, ['remotes', name, 'url'])}: remotes.${name}.url: must not contain credentials; use remotes.${name}.auth`);
  if (withUserinfo.length > 0) throw new ConfigError(withUserinfo.join('\n'), withUserinfo);
  // Two remotes cannot own one port (0 = any free port never clashes).
  const byPort = new Map<string, string>();
  const clashes: string[] = [];
  for (const [name, remote] of Object.entries(raw.remotes)) {
    if (!remote.listen || remote.listen.port === 0) continue;
    const key = `${remote.listen.host ?? builtinListenHost}:${remote.listen.port}`;
    const other = byPort.get(key);
    if (other !== undefined) clashes.push(`${where(doc, lines, source, ['remotes', name, 'listen', 'port'])}: remotes.${name}.listen: ${key} is also remotes.${other}.listen`);
    else byPort.set(key, name);
  }
  if (clashes.length > 0) throw new ConfigError(clashes.join('\n'), clashes);
  const grpcProblems = grpcConfigProblems(raw, (path) => where(doc, lines, source, path));
  if (grpcProblems.length > 0) throw new ConfigError(grpcProblems.join('\n'), grpcProblems);
  if (options.env) {
    const missing = secretProblems(raw, options.env, (path) => where(doc, lines, source, path));
    if (missing.length > 0) throw new ConfigError(missing.join('\n'), missing);
    // The secrets and key files the gateway reads when it starts (trace exporter headers, push keys), with their line.
    const startProblems: string[] = [];
    try {
      resolveTraces(raw.telemetry?.traces, options.env, (path) => where(doc, lines, source, path));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      startProblems.push(...(err.problems ?? [err.message]));
    }
    const push = raw.server?.push;
    if (push) {
      try {
        resolvePushConfig(push, { env: options.env as NodeJS.ProcessEnv });
      } catch (err) {
        if (!(err instanceof PushConfigError)) throw err;
        // The message names its key (`server.push.keys: ...`, `server.push.allowedTargets: ...`): point at that line.
        const key = /^server\.push\.([A-Za-z]+)/.exec(err.message)?.[1];
        startProblems.push(`${where(doc, lines, source, ['server', 'push', ...(key ? [key] : [])])}: ${err.message}`);
      }
    }
    if (startProblems.length > 0) throw new ConfigError(startProblems.join('\n'), startProblems);
  }
  const resolved = resolve(raw, (path) => where(doc, lines, source, path));
  // One reply or event must fit in the gateway-wide buffer budget, or it could never succeed.
  const budget = resolved.server.maxBufferedBytes;
  const tooBig = [...resolved.remotes.values()].flatMap((r) =>
    (['maxResponseBytes', 'maxEventBytes'] as const)
      .filter((key) => r.limits[key] > budget)
      .map((key) => {
        const at = raw.remotes[r.name]?.limits?.[key] !== undefined ? ['remotes', r.name, 'limits', key] : ['defaults', 'limits', key];
        return `${where(doc, lines, source, at)}: remotes.${r.name}.limits.${key}: ${r.limits[key]} is larger than server.maxBufferedBytes (${budget})`;
      }),
  );
  if (tooBig.length > 0) throw new ConfigError(tooBig.join('\n'), tooBig);
  // server.workers > 1: every worker must get a share of each divided limit (src/config/worker-share.ts).
  const unshared = workerShareProblems(resolved).map((problem) => `${where(doc, lines, source, ['server', 'workers'])}: ${problem}`);
  if (unshared.length > 0) throw new ConfigError(unshared.join('\n'), unshared);
  return renamed.warnings.length > 0 ? { ...resolved, warnings: renamed.warnings } : resolved;
}

/** gRPC targets that do not parse, and gRPC listener ports two listeners would share (0 = any free port never clashes). */
function grpcConfigProblems(file: ConfigFile, locate: (path: readonly string[]) => string): string[] {
  const problems: string[] = [];
  const grpcHost = file.server?.grpc?.host ?? builtinListenHost;
  const byPort = new Map<string, string>();
  const claim = (host: string, port: number | undefined, owner: string, path: string[]) => {
    if (port === undefined || port === 0) return;
    const key = `${host}:${port}`;
    const other = byPort.get(key);
    if (other !== undefined) problems.push(`${locate(path)}: ${path.join('.')}: ${key} is also ${other}`);
    else byPort.set(key, owner);
  };
  claim(grpcHost, file.server?.grpc?.port, 'server.grpc.port', ['server', 'grpc', 'port']);
  for (const [name, remote] of Object.entries(file.remotes)) {
    const grpc = remote.grpc;
    if (grpc?.target !== undefined) {
      try {
        parseGrpcTarget(grpc.target, false);
      } catch (err) {
        if (!(err instanceof GrpcTargetError)) throw err;
        problems.push(`${locate(['remotes', name, 'grpc', 'target'])}: remotes.${name}.grpc.target: ${err.message}`);
      }
    }
    if (grpc?.listen) claim(grpc.listen.host ?? grpcHost, grpc.listen.port, `remotes.${name}.grpc.listen`, ['remotes', name, 'grpc', 'listen', 'port']);
  }
  return problems;
}

function resolveServerGrpc(file: ConfigFile, locate: (path: readonly string[]) => string): GrpcServerConfig | undefined {
  const grpc = file.server?.grpc;
  if (!grpc) return undefined;
  const tls = grpc.tls;
  const read = (key: 'certFile' | 'keyFile' | 'caFile'): Buffer | undefined => {
    const path = tls?.[key];
    if (path === undefined) return undefined;
    try {
      return readFileSync(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'unknown error';
      throw new ConfigError(`${locate(['server', 'grpc', 'tls', key])}: server.grpc.tls.${key}: cannot read ${path}: ${code}`);
    }
  };
  if (tls?.requireClientCert && tls.caFile === undefined) {
    throw new ConfigError(`${locate(['server', 'grpc', 'tls'])}: server.grpc.tls: requireClientCert needs caFile (the CAs client certificates are checked against)`);
  }
  const ca = read('caFile');
  return {
    host: grpc.host ?? builtinListenHost,
    ...(grpc.port !== undefined ? { port: grpc.port } : {}),
    ...(tls ? { tls: { cert: read('certFile')!, key: read('keyFile')!, ...(ca ? { ca } : {}), requireClientCert: tls.requireClientCert ?? false } } : {}),
  };
}

function resolveRemoteGrpc(remote: ConfigFile['remotes'][string], grpcHost: string): RemoteGrpcConfig | undefined {
  const grpc = remote.grpc;
  if (!grpc) return undefined;
  const listen = grpc.listen;
  return {
    ...(grpc.target !== undefined ? { target: grpc.target } : {}),
    ...(listen
      ? { listen: { host: listen.host ?? grpcHost, port: listen.port, ...(listen.publicTarget !== undefined ? { publicTarget: listen.publicTarget } : {}) } }
      : {}),
  };
}

function resolve(file: ConfigFile, locate: (path: readonly string[]) => string): GatewayConfig {
  const { grpc: _grpc, ...fileServer } = file.server ?? {};
  const grpc = resolveServerGrpc(file, locate);
  const server = { ...builtinServer, ...fileServer, ...(grpc ? { grpc } : {}) };
  const grpcHost = grpc?.host ?? builtinListenHost;
  const defaults = file.defaults ?? {};
  const remotes = new Map<string, RemoteConfig>();
  for (const [name, remote] of Object.entries(file.remotes)) {
    remotes.set(name, {
      name,
      url: new URL(remote.url),
      ...(remote.agentCardUrl !== undefined ? { agentCardUrl: new URL(remote.agentCardUrl) } : {}),
      allowPrivateNetwork: remote.allowPrivateNetwork ?? defaults.allowPrivateNetwork ?? builtinPolicy.allowPrivateNetwork,
      keepRemoteErrorData: remote.keepRemoteErrorData ?? defaults.keepRemoteErrorData ?? builtinPolicy.keepRemoteErrorData,
      maxUpstreamConnections:
        remote.maxUpstreamConnections ?? remote.maxConnections ?? defaults.maxUpstreamConnections ?? defaults.maxConnections ?? builtinPolicy.maxUpstreamConnections,
      ...((remote.rateLimit ?? defaults.rateLimit) ? { rateLimit: (remote.rateLimit ?? defaults.rateLimit)! } : {}),
      circuitBreaker: { ...builtinCircuitBreaker, ...defaults.circuitBreaker, ...remote.circuitBreaker },
      retries: { ...builtinRetries, ...defaults.retries, ...remote.retries },
      ...(remote.auth ? { auth: remote.auth } : {}),
      forwardHeaders: remote.forwardHeaders ?? defaults.forwardHeaders ?? builtinPolicy.forwardHeaders,
      methods: new Set(remote.methods ?? A2A_METHODS.keys()),
      ...(remote.versions !== undefined ? { versions: remote.versions } : {}),
      ...(remote.unversionedCard !== undefined ? { unversionedCard: remote.unversionedCard } : {}),
      ...(remote.listen
        ? {
            listen: {
              host: remote.listen.host ?? builtinListenHost,
              port: remote.listen.port,
              ...(remote.listen.publicBaseUrl !== undefined ? { publicBaseUrl: remote.listen.publicBaseUrl } : {}),
            },
          }
        : {}),
      binding: remote.binding ?? 'auto',
      advertiseBindings: remote.advertiseBindings ?? true,
      ...(remote.grpc ? { grpc: resolveRemoteGrpc(remote, grpcHost)! } : {}),
      tls: resolveTls(name, remote.tls, locate),
      timeouts: { ...builtinTimeouts, ...defaults.timeouts, ...remote.timeouts },
      limits: { ...builtinLimits, ...defaults.limits, ...remote.limits },
    });
  }
  return { server, remotes, ...(file.telemetry ? { telemetry: file.telemetry } : {}) };
}

function resolveTls(remote: string, tls: ConfigFile['remotes'][string]['tls'], locate: (path: readonly string[]) => string): ResolvedTls {
  if (!tls) return {};
  const read = (key: 'caFile' | 'certFile' | 'keyFile'): Buffer | undefined => {
    const file = tls[key];
    if (file === undefined) return undefined;
    try {
      return readFileSync(file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'unknown error';
      throw new ConfigError(`${locate(['remotes', remote, 'tls', key])}: remotes.${remote}.tls.${key}: cannot read ${file}: ${code}`);
    }
  };
  if ((tls.certFile === undefined) !== (tls.keyFile === undefined)) {
    throw new ConfigError(`${locate(['remotes', remote, 'tls'])}: remotes.${remote}.tls: certFile and keyFile must be set together`);
  }
  const out: { ca?: Buffer; cert?: Buffer; key?: Buffer; minVersion?: 'TLSv1.2' | 'TLSv1.3' } = {};
  const ca = read('caFile');
  const cert = read('certFile');
  const key = read('keyFile');
  if (ca) out.ca = ca;
  if (cert) out.cert = cert;
  if (key) out.key = key;
  if (tls.minVersion) out.minVersion = tls.minVersion;
  return out;
}

function describeErrors(errors: readonly ErrorObject[], doc: Document, lines: LineCounter, source: string): string[] {
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const e of errors) {
    // Unions report once per branch; the first message per key is the useful one.
    const segments = e.instancePath.split('/').slice(1).map(unescapePointer);
    let key = segments.join('.');
    let what: string;
    if (e.keyword === 'additionalProperties') {
      const extra = String((e.params as { additionalProperty: string }).additionalProperty);
      segments.push(extra);
      key = segments.join('.');
      what = e.instancePath === '/remotes' ? 'not a valid remote name (letters, digits, "_" and "-", at most 63)' : unknownKey(extra, e.parentSchema);
    } else if (e.keyword === 'required') {
      const missing = String((e.params as { missingProperty: string }).missingProperty);
      key = [...segments, missing].join('.');
      what = 'is required';
    } else if (e.keyword === 'anyOf' || e.keyword === 'const') {
      if (e.keyword === 'const') continue;
      what = 'must be one of the documented values';
    } else {
      what = e.message ?? 'is invalid';
    }
    const line = `${where(doc, lines, source, segments)}: ${key || '(top level)'}: ${what}`;
    if (!seen.has(line)) {
      seen.add(line);
      problems.push(line);
    }
  }
  return problems;
}

/** "unknown key", with the nearest key the schema knows at that level when one is close. */
function unknownKey(extra: string, schema: unknown): string {
  const known = Object.keys((schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {});
  const near = nearestKey(extra, known);
  return near === undefined ? 'unknown key' : `unknown key; did you mean "${near}"?`;
}

/** `source:line` of the key at `path`, or just `source` when the YAML has no such node. */
function where(doc: Document, lines: LineCounter, source: string, path: readonly string[]): string {
  const offset = keyOffset(doc, path);
  return offset !== undefined ? `${source}:${lines.linePos(offset).line}` : source;
}

/** Where the key at `path` is written (not its value, which may start lines later). */
function keyOffset(doc: Document, path: readonly string[]): number | undefined {
  const parent = path.length > 0 ? doc.getIn(path.slice(0, -1), true) : undefined;
  if (isMap(parent)) {
    const pair = parent.items.find((p) => isScalar(p.key) && String(p.key.value) === path[path.length - 1]);
    if (pair && isNode(pair.key) && pair.key.range) return pair.key.range[0];
  }
  const node = path.length > 0 ? doc.getIn(path, true) : doc.contents;
  return isNode(node) && node.range ? node.range[0] : undefined;
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}
