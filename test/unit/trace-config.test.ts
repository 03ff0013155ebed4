/**
 * `telemetry.traces`: the schema fragment validated by ajv as the config
 * loader does (strict mode, formats), defaults, the endpoint rules, and the
 * header values read from the environment with file:line:key problems.
 * The YAML is located with the `yaml` package's line counter, the way
 * src/loader/load.ts locates keys, until the fragment is merged there.
 */
import { inspect } from 'node:util';
import t from 'tap';
import { Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { LineCounter, isMap, isNode, isScalar, parseDocument } from 'yaml';
import { ConfigError } from '../../src/config/errors.js';
import { TelemetrySchema, builtinTraces, resolveTraces, type Env, type TelemetryFile, type TracesFile } from '../../src/config/traces.js';

const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;
const validate = addFormats(new Ajv({ allErrors: true, strict: true, allowUnionTypes: true })).compile<{ telemetry?: TelemetryFile }>(
  Type.Object({ telemetry: Type.Optional(TelemetrySchema) }, { additionalProperties: false }),
);

/** Parses YAML, validates it, resolves traces; problems come back as the loader would print them. */
function load(yaml: string, env: Env = {}): ReturnType<typeof resolveTraces> {
  const lines = new LineCounter();
  const doc = parseDocument(yaml, { lineCounter: lines });
  const raw = (doc.toJS() ?? {}) as unknown;
  if (!validate(raw)) throw new Error(`schema: ${JSON.stringify(validate.errors)}`);
  const locate = (path: readonly string[]) => {
    const parent = doc.getIn(path.slice(0, -1), true);
    const pair = isMap(parent) ? parent.items.find((p) => isScalar(p.key) && String(p.key.value) === path[path.length - 1]) : undefined;
    return pair && isNode(pair.key) && pair.key.range ? `gateway.yaml:${lines.linePos(pair.key.range[0]).line}` : 'gateway.yaml';
  };
  return resolveTraces(raw.telemetry?.traces, env, locate);
}

function problemsOf(yaml: string, env: Env = {}): string[] {
  try {
    load(yaml, env);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  return [];
}

t.test('off unless telemetry.traces is set', async (t) => {
  t.equal(load(''), undefined);
  t.equal(load('telemetry: {}\n'), undefined);
});

t.test('an endpoint alone gets every default; a bare origin gets /v1/traces', async (t) => {
  const traces = load('telemetry:\n  traces:\n    endpoint: http://collector:4318\n');
  t.match(traces, { ...builtinTraces, endpoint: 'http://collector:4318/v1/traces' });
  t.same(traces?.headers.sources, {});
  t.equal(load('telemetry:\n  traces:\n    endpoint: https://otel.example/custom/path\n')?.endpoint, 'https://otel.example/custom/path');
  t.equal(builtinTraces.sampleRatio, 1, 'every trace by default once export is on');
  t.equal(builtinTraces.parentBased, true);
});

t.test('every key read, bounds checked by the schema', async (t) => {
  const traces = load(
    [
      'telemetry:',
      '  traces:',
      '    endpoint: https://otel.example/v1/traces',
      '    sampleRatio: 0.25',
      '    parentBased: false',
      '    serviceName: egress-eu',
      '    timeoutMs: 2000',
      '    maxQueueSize: 100',
      '    maxExportBatchSize: 100',
      '    scheduledDelayMs: 250',
      '    compression: gzip',
      '',
    ].join('\n'),
  );
  t.match(traces, { sampleRatio: 0.25, parentBased: false, serviceName: 'egress-eu', timeoutMs: 2000, maxQueueSize: 100, maxExportBatchSize: 100, scheduledDelayMs: 250, compression: 'gzip' });
  t.equal(load('telemetry:\n  traces:\n    endpoint: http://c:4318\n    maxQueueSize: 10\n')?.maxExportBatchSize, 10, 'the default batch follows a smaller queue');
  for (const bad of ['sampleRatio: 1.01', 'sampleRatio: -0.01', 'maxQueueSize: 0', 'maxQueueSize: 100001', 'timeoutMs: 0', 'compression: brotli', 'serviceName: "a b"', 'colour: red', 'headers: { host: { valueEnv: X } }', 'headers: { Content-Type: { valueEnv: X } }', 'headers: { x-key: X }']) {
    t.throws(() => load(`telemetry:\n  traces:\n    endpoint: http://c:4318\n    ${bad}\n`), /schema/, bad);
  }
  for (const ok of ['sampleRatio: 1', 'sampleRatio: 0', 'maxQueueSize: 100000', 'maxQueueSize: 1']) {
    t.doesNotThrow(() => load(`telemetry:\n  traces:\n    endpoint: http://c:4318\n    ${ok}\n`), ok);
  }
  t.throws(() => load('telemetry:\n  traces:\n    sampleRatio: 1\n'), /schema/, 'endpoint is required');
  t.throws(() => load('telemetry:\n  traces:\n    endpoint: ftp://c/\n'), /schema/);
});

t.test('endpoint problems name the file, line and key', async (t) => {
  t.same(problemsOf('telemetry:\n  traces:\n    endpoint: https://user:pw@otel.example/v1/traces\n'), [
    'gateway.yaml:3: telemetry.traces.endpoint: must not contain credentials; use headers with valueEnv',
  ]);
  t.same(problemsOf('telemetry:\n  traces:\n    endpoint: http://c:4318\n    maxQueueSize: 10\n    maxExportBatchSize: 11\n'), [
    'gateway.yaml:5: telemetry.traces.maxExportBatchSize: 11 is larger than maxQueueSize (10)',
  ]);
});

const WITH_HEADERS = [
  'telemetry:',
  '  traces:',
  '    endpoint: https://otel.example',
  '    headers:',
  '      X-Api-Key:',
  '        valueEnv: OTLP_KEY',
  '      x-tenant: { valueEnv: OTLP_TENANT }',
  '',
].join('\n');

t.test('header values come from the environment; a missing one is a problem at its file, line and key', async (t) => {
  const traces = load(WITH_HEADERS, { OTLP_KEY: ' secret-key-123 ', OTLP_TENANT: 'acme' });
  t.same(traces?.headers.values(), { 'x-api-key': 'secret-key-123', 'x-tenant': 'acme' }, 'names lower-cased, values trimmed');
  t.same(traces?.headers.sources, { 'x-api-key': 'OTLP_KEY', 'x-tenant': 'OTLP_TENANT' });

  t.same(problemsOf(WITH_HEADERS, { OTLP_TENANT: 'acme' }), ['gateway.yaml:6: telemetry.traces.headers.X-Api-Key.valueEnv: environment variable OTLP_KEY is not set']);
  t.same(problemsOf(WITH_HEADERS, {}), [
    'gateway.yaml:6: telemetry.traces.headers.X-Api-Key.valueEnv: environment variable OTLP_KEY is not set',
    'gateway.yaml:7: telemetry.traces.headers.x-tenant.valueEnv: environment variable OTLP_TENANT is not set',
  ], 'every missing variable at once');
  t.same(problemsOf(WITH_HEADERS, { OTLP_KEY: '  ', OTLP_TENANT: 'ok' }), ['gateway.yaml:6: telemetry.traces.headers.X-Api-Key.valueEnv: environment variable OTLP_KEY is empty']);
  t.same(problemsOf(WITH_HEADERS, { OTLP_KEY: 'a\r\nx-evil: 1', OTLP_TENANT: 'ok' }), [
    'gateway.yaml:6: telemetry.traces.headers.X-Api-Key.valueEnv: environment variable OTLP_KEY contains characters not allowed in a header value',
  ]);
  const twice = 'telemetry:\n  traces:\n    endpoint: http://c:4318\n    headers:\n      x-key: { valueEnv: A }\n      X-KEY: { valueEnv: B }\n';
  t.same(problemsOf(twice, { A: 'a', B: 'b' }), ['gateway.yaml:6: telemetry.traces.headers.X-KEY: the header x-key is named twice']);
  t.throws(() => resolveTraces({ endpoint: 'http://c:4318', headers: { k: { valueEnv: 'NOPE' } } }, {}), {
    name: 'ConfigError',
    message: 'config: telemetry.traces.headers.k.valueEnv: environment variable NOPE is not set',
  }, 'without a locator the key still names it');
});

t.test('printing the resolved config shows where header values come from, never the values', async (t) => {
  const traces = load(WITH_HEADERS, { OTLP_KEY: 'secret-key-123', OTLP_TENANT: 'tenant-value' });
  for (const shown of [JSON.stringify(traces), inspect(traces, { depth: 10 }), String(traces?.headers), `${inspect(traces?.headers)}`]) {
    t.notMatch(shown, /secret-key-123|tenant-value/);
  }
  t.match(inspect(traces), /x-api-key from env OTLP_KEY/);
  t.match(JSON.stringify(traces), /"x-api-key":"OTLP_KEY"/);
});

t.test('a file section typed as the schema says compiles against TracesFile', async (t) => {
  const file: TracesFile = { endpoint: 'http://c:4318', headers: { 'x-k': { valueEnv: 'K' } }, compression: 'none' };
  t.equal(resolveTraces(file, { K: 'v' })?.compression, 'none');
});
