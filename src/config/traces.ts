/**
 * `telemetry.traces` in the config file: the TypeBox fragment (to sit in
 * ConfigFileSchema as `telemetry: Type.Optional(TelemetrySchema)`), its
 * built-in defaults, and the step that turns the file's section into a
 * TracesConfig, reading the exporter's header values from the environment.
 *
 * Header values are secrets (an API key of a tracing backend): the file only
 * names the environment variable that holds each one, like `remotes.*.auth`.
 * A missing or unusable variable is a config problem reported with its file,
 * line and key (`gateway.yaml:41: telemetry.traces.headers.x-api-key.valueEnv:
 * environment variable OTLP_KEY is not set`). The values live in a closure:
 * printing, logging or JSON-serialising a TracesConfig shows the variable
 * names, never the values.
 */
import { inspect } from 'node:util';
import { Type, type Static } from '@sinclair/typebox';
import { ConfigError } from './errors.js';
import { CREDENTIAL_HEADER_NAME_PATTERN } from './auth.js';

const ENV_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';
const MAX_HEADERS = 32;

export const TraceHeaderSchema = Type.Object(
  { valueEnv: Type.String({ pattern: ENV_NAME_PATTERN, description: 'environment variable holding the header value' }) },
  { additionalProperties: false },
);

export const TracesSchema = Type.Object(
  {
    endpoint: Type.String({
      format: 'uri',
      pattern: '^https?://',
      maxLength: 2048,
      description: 'OTLP/HTTP (protobuf) traces URL, e.g. http://collector:4318/v1/traces; a URL without a path gets /v1/traces',
    }),
    headers: Type.Optional(
      Type.Record(Type.String({ pattern: CREDENTIAL_HEADER_NAME_PATTERN }), TraceHeaderSchema, {
        maxProperties: MAX_HEADERS,
        additionalProperties: false,
        description: 'headers sent with every export, each `{ valueEnv: NAME }`: the value comes from that environment variable, never from this file',
      }),
    ),
    sampleRatio: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'share of new traces recorded and exported (0..1)' })),
    parentBased: Type.Optional(Type.Boolean({ description: 'a call whose caller sent a traceparent follows the caller’s sampled flag instead of sampleRatio' })),
    serviceName: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$', description: 'the `service.name` of the exported spans' })),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 120_000, description: 'longest one export request may take, its retries included' })),
    maxQueueSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: 'finished spans held for export; past it new spans are dropped (calls never wait)' })),
    maxExportBatchSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: 'spans per export request (at most maxQueueSize)' })),
    scheduledDelayMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000, description: 'longest a finished span waits before it is exported' })),
    compression: Type.Optional(Type.Union([Type.Literal('none'), Type.Literal('gzip')], { description: 'compression of export requests' })),
  },
  { additionalProperties: false },
);

/** The `telemetry` section; absent (or without `traces`) means no trace export at all. */
export const TelemetrySchema = Type.Object(
  { traces: Type.Optional(TracesSchema) },
  { additionalProperties: false, description: 'OpenTelemetry trace export (off unless traces is set)' },
);

export type TelemetryFile = Static<typeof TelemetrySchema>;
export type TracesFile = Static<typeof TracesSchema>;

export const builtinTraces = {
  sampleRatio: 1,
  parentBased: true,
  serviceName: 'a2a-egress',
  timeoutMs: 10_000,
  maxQueueSize: 2048,
  maxExportBatchSize: 512,
  scheduledDelayMs: 5000,
  compression: 'none',
} as const satisfies Required<Omit<TracesFile, 'endpoint' | 'headers'>>;

/** The exporter's headers: names and where each value comes from are visible, values only through `values()`. */
export interface ExportHeaders {
  /** Lower-case header name → the environment variable it was read from. */
  readonly sources: Readonly<Record<string, string>>;
  /** Lower-case header name → value. Handed to the exporter only; never logged. */
  values(): Readonly<Record<string, string>>;
  toString(): string;
  toJSON(): Readonly<Record<string, string>>;
}

export interface TracesConfig {
  /** The full URL spans are POSTed to. */
  readonly endpoint: string;
  readonly headers: ExportHeaders;
  readonly sampleRatio: number;
  readonly parentBased: boolean;
  readonly serviceName: string;
  readonly timeoutMs: number;
  readonly maxQueueSize: number;
  readonly maxExportBatchSize: number;
  readonly scheduledDelayMs: number;
  readonly compression: 'none' | 'gzip';
}

export type Env = Readonly<Record<string, string | undefined>>;

/** `source:line` of the key at a path (load.ts's locator); without one, problems name only the key. */
export type Locate = (path: readonly string[]) => string;

// What a header value may hold (visible ASCII and space), as for remote credentials.
const HEADER_SAFE = /^[\x20-\x7e]+$/;

/**
 * The file's `telemetry.traces` with defaults applied and header values read
 * from `env`; `undefined` when traces are off. Throws a ConfigError listing
 * every problem, each as `<file>:<line>: <key.path>: <what is wrong>`.
 */
export function resolveTraces(file: TracesFile | undefined, env: Env, locate: Locate = () => 'config'): TracesConfig | undefined {
  if (file === undefined) return undefined;
  const problems: string[] = [];
  const report = (path: string[], problem: string) => problems.push(`${locate(path)}: ${path.join('.')}: ${problem}`);
  const base = ['telemetry', 'traces'];

  const endpoint = exportUrl(file.endpoint);
  if (typeof endpoint !== 'string') report([...base, 'endpoint'], endpoint.problem);

  const values: Record<string, string> = {};
  const sources: Record<string, string> = {};
  for (const [name, { valueEnv }] of Object.entries(file.headers ?? {})) {
    const lower = name.toLowerCase();
    if (lower in sources) {
      report([...base, 'headers', name], `the header ${lower} is named twice`);
      continue;
    }
    const value = env[valueEnv]?.trim();
    if (value === undefined) report([...base, 'headers', name, 'valueEnv'], `environment variable ${valueEnv} is not set`);
    else if (value === '') report([...base, 'headers', name, 'valueEnv'], `environment variable ${valueEnv} is empty`);
    else if (!HEADER_SAFE.test(value)) report([...base, 'headers', name, 'valueEnv'], `environment variable ${valueEnv} contains characters not allowed in a header value`);
    else values[lower] = value;
    sources[lower] = valueEnv;
  }

  const maxQueueSize = file.maxQueueSize ?? builtinTraces.maxQueueSize;
  const maxExportBatchSize = file.maxExportBatchSize ?? Math.min(builtinTraces.maxExportBatchSize, maxQueueSize);
  if (maxExportBatchSize > maxQueueSize) {
    report([...base, 'maxExportBatchSize'], `${maxExportBatchSize} is larger than maxQueueSize (${maxQueueSize})`);
  }
  if (problems.length > 0) throw new ConfigError(problems.join('\n'), problems);

  return {
    endpoint: endpoint as string,
    headers: exportHeaders(Object.freeze(sources), Object.freeze(values)),
    sampleRatio: file.sampleRatio ?? builtinTraces.sampleRatio,
    parentBased: file.parentBased ?? builtinTraces.parentBased,
    serviceName: file.serviceName ?? builtinTraces.serviceName,
    timeoutMs: file.timeoutMs ?? builtinTraces.timeoutMs,
    maxQueueSize,
    maxExportBatchSize,
    scheduledDelayMs: file.scheduledDelayMs ?? builtinTraces.scheduledDelayMs,
    compression: file.compression ?? builtinTraces.compression,
  };
}

/** The URL to POST to: `/v1/traces` added to a bare origin (as OTEL_EXPORTER_OTLP_ENDPOINT does); never userinfo. */
function exportUrl(text: string): string | { readonly problem: string } {
  if (!URL.canParse(text)) return { problem: 'not a valid URL' };
  const url = new URL(text);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: 'must be an http:// or https:// URL' };
  // A password in the URL would end up in logs and error reports; send it as a header from the environment.
  if (url.username !== '' || url.password !== '') return { problem: 'must not contain credentials; use headers with valueEnv' };
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/v1/traces';
  return url.href;
}

function exportHeaders(sources: Readonly<Record<string, string>>, values: Readonly<Record<string, string>>): ExportHeaders {
  const shown = `ExportHeaders(${Object.entries(sources).map(([name, env]) => `${name} from env ${env}`).join(', ')})`;
  const headers: ExportHeaders = { sources, values: () => values, toString: () => shown, toJSON: () => sources };
  Object.defineProperty(headers, inspect.custom, { value: () => shown, enumerable: false });
  return headers;
}
