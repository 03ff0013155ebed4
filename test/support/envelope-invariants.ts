/**
 * What every normalized envelope must satisfy, whatever the remote sent, and
 * fast-check generators for hostile upstream replies. Shared by the property
 * test and any longer-running fuzz script, so both check the same contract.
 */
import fc from 'fast-check';
import sjson from 'secure-json-parse';
import { A2A_ERROR_DOMAIN, ERROR_DOMAIN, ERROR_INFO_TYPE, REMOTE_ERROR_REASON, a2aErrorReasons, gatewayErrors, type Reason } from '../../src/envelope/codes.js';
import type { JsonRpcId } from '../../src/envelope/envelope.js';
import type { Normalized, NormalizePolicy } from '../../src/envelope/normalize.js';

const INVISIBLE = /[\p{Cc}\p{Cf}]/u;
const MAX_REMOTE_DETAILS = 4;
/** Keys in a detail object are sanitized to this many bytes by the normalizer. */
const MAX_DETAIL_KEY_BYTES = 64;

export interface InvariantContext {
  readonly callerId: JsonRpcId;
  readonly status: number;
  readonly policy: NormalizePolicy;
  /** Strings that must not appear anywhere in the output (markers planted in a non-JSON body). */
  readonly forbidden?: readonly string[];
}

/** Returns every broken rule (empty when the envelope is valid); never throws. */
export function envelopeViolations(out: Normalized, ctx: InvariantContext): string[] {
  const problems: string[] = [];
  const bad = (rule: string): void => void problems.push(rule);

  for (const marker of ctx.forbidden ?? []) if (out.json.includes(marker)) bad(`output contains body marker ${marker}`);

  let env: unknown;
  try {
    // The gateway's own reply must pass the strict parse it applies to remotes.
    env = sjson.parse(out.json, null, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    return [...problems, `output is not safe JSON: ${(err as Error).message}`];
  }
  if (!isPlainObject(env)) return [...problems, 'output is not a JSON object'];

  const keys = Object.keys(env).sort();
  const hasResult = Object.hasOwn(env, 'result');
  const hasError = Object.hasOwn(env, 'error');
  if (hasResult === hasError) bad('not exactly one of result/error');
  const expectedKeys = ['error', 'id', 'jsonrpc', 'result'].filter((k) => k !== (hasResult ? 'error' : 'result'));
  if (keys.join() !== expectedKeys.join()) bad(`unexpected members ${keys.join()}`);
  if (env.jsonrpc !== '2.0') bad('jsonrpc is not "2.0"');
  if (env.id !== ctx.callerId) bad(`id ${JSON.stringify(env.id)} is not the caller's ${JSON.stringify(ctx.callerId)}`);

  if (hasResult) {
    if (out.outcome !== 'ok') bad(`result with outcome ${out.outcome}`);
    if (ctx.status < 200 || ctx.status > 299) bad(`result passed on HTTP ${ctx.status}`);
  } else {
    if (out.outcome === 'ok') bad('error with outcome ok');
    errorViolations(env.error, out.outcome, ctx).forEach(bad);
  }
  return problems;
}

/** Throws an Error listing the violations; for tests and fuzz loops. */
export function assertEnvelope(out: Normalized, ctx: InvariantContext): void {
  const problems = envelopeViolations(out, ctx);
  if (problems.length > 0) throw new Error(`envelope invariant broken:\n  ${problems.join('\n  ')}\noutput: ${out.json.slice(0, 2000)}`);
}

function errorViolations(error: unknown, outcome: Normalized['outcome'], ctx: InvariantContext): string[] {
  const problems: string[] = [];
  if (!isPlainObject(error)) return ['error is not an object'];
  const keys = Object.keys(error).sort().join();
  if (keys !== 'code,data,message') problems.push(`error members are ${keys}`);
  const { code, message, data } = error;
  if (typeof code !== 'number' || !Number.isSafeInteger(code)) problems.push('error.code is not an integer');
  if (typeof message !== 'string') return [...problems, 'error.message is not a string'];
  if (INVISIBLE.test(message)) problems.push('error.message contains a control or format character');

  if (outcome === REMOTE_ERROR_REASON) {
    const size = Buffer.byteLength(message, 'utf8');
    if (size > ctx.policy.maxErrorMessageBytes) problems.push(`remote message is ${size} bytes > ${ctx.policy.maxErrorMessageBytes}`);
    if (message === '') problems.push('remote message is empty');
  } else if (outcome !== 'ok') {
    // Gateway errors carry the catalogue's fixed text (plus a gateway-written detail) and code.
    const spec = gatewayErrors[outcome as Reason];
    if (!spec) problems.push(`unknown outcome ${outcome}`);
    else {
      if (code !== spec.code) problems.push(`code ${String(code)} is not the catalogue's ${spec.code} for ${outcome}`);
      if (!message.startsWith(spec.message)) problems.push(`message does not start with the catalogue text for ${outcome}`);
    }
  }

  if (!Array.isArray(data) || data.length === 0) return [...problems, 'error.data is not a non-empty array'];
  // A2A's ErrorInfo comes first for an A2A-specific code and a 1.0 caller; then the gateway's; then kept details.
  const a2aReason = typeof code === 'number' ? a2aErrorReasons[code] : undefined;
  const withA2a = a2aReason !== undefined && ctx.policy.caller !== '0.3';
  const [a2a, info, ...details] = withA2a ? (data as unknown[]) : [undefined, ...(data as unknown[])];
  if (withA2a) problems.push(...a2aInfoViolations(a2a, a2aReason, ctx));
  problems.push(...errorInfoViolations(info, outcome, ctx));
  if (details.length > 0 && (!ctx.policy.keepRemoteErrorData || outcome !== REMOTE_ERROR_REASON)) {
    problems.push('remote error details present although not kept');
  }
  if (details.length > MAX_REMOTE_DETAILS) problems.push(`${details.length} remote details > ${MAX_REMOTE_DETAILS}`);
  for (const d of details) {
    if (!isPlainObject(d) || typeof d['@type'] !== 'string') problems.push('remote detail without a string @type');
    else problems.push(...cleanTextViolations(d, ctx.policy.maxErrorMessageBytes));
    if (isPlainObject(d) && d['@type'] === ERROR_INFO_TYPE && (d.domain === ERROR_DOMAIN || d.domain === A2A_ERROR_DOMAIN)) {
      problems.push(`a remote detail is an ErrorInfo in the reserved domain ${String(d.domain)}`);
    }
  }
  return problems;
}

function a2aInfoViolations(info: unknown, reason: string, ctx: InvariantContext): string[] {
  if (!isPlainObject(info)) return ['error.data[0] (A2A ErrorInfo) is not an object'];
  const problems: string[] = [];
  if (info['@type'] !== ERROR_INFO_TYPE) problems.push('error.data[0] is not an ErrorInfo');
  if (info.domain !== A2A_ERROR_DOMAIN) problems.push('A2A ErrorInfo.domain is not a2a-protocol.org');
  if (info.reason !== reason) problems.push(`A2A ErrorInfo.reason ${String(info.reason)} is not ${reason}`);
  const extra = Object.keys(info).filter((k) => !['@type', 'domain', 'reason', 'metadata'].includes(k));
  if (extra.length > 0) problems.push(`A2A ErrorInfo has members ${extra.join()}`);
  if (Object.hasOwn(info, 'metadata')) {
    const metadata = info.metadata;
    if (!isPlainObject(metadata)) return [...problems, 'A2A ErrorInfo.metadata is not an object'];
    if (Object.keys(metadata).length > 8) problems.push('A2A ErrorInfo.metadata has more than 8 entries');
    for (const [k, v] of Object.entries(metadata)) if (typeof v !== 'string') problems.push(`A2A metadata.${k} is not a string`);
    problems.push(...cleanTextViolations(metadata, ctx.policy.maxErrorMessageBytes));
  }
  return problems;
}

function errorInfoViolations(info: unknown, outcome: Normalized['outcome'], ctx: InvariantContext): string[] {
  if (!isPlainObject(info)) return ['error.data[0] is not an object'];
  const problems: string[] = [];
  if (info['@type'] !== ERROR_INFO_TYPE) problems.push('error.data[0] is not an ErrorInfo');
  if (info.domain !== ERROR_DOMAIN) problems.push('ErrorInfo.domain is wrong');
  if (info.reason !== outcome) problems.push(`ErrorInfo.reason ${String(info.reason)} is not the outcome ${outcome}`);
  const metadata = info.metadata;
  if (!isPlainObject(metadata)) return [...problems, 'ErrorInfo.metadata is not an object'];
  for (const [k, v] of Object.entries(metadata)) if (typeof v !== 'string') problems.push(`metadata.${k} is not a string`);
  if (metadata.remote !== ctx.policy.remote) problems.push('metadata.remote is not the remote name');
  if (metadata.httpStatus !== String(ctx.status)) problems.push('metadata.httpStatus is not the HTTP status');
  return problems;
}

/** Every string and key inside a kept remote detail must be sanitized and bounded. */
function cleanTextViolations(value: unknown, maxBytes: number): string[] {
  if (typeof value === 'string') {
    if (INVISIBLE.test(value)) return ['remote detail string contains a control or format character'];
    if (Buffer.byteLength(value) > maxBytes) return ['remote detail string exceeds the bound'];
    return [];
  }
  if (Array.isArray(value)) return value.flatMap((v) => cleanTextViolations(v, maxBytes));
  if (!isPlainObject(value)) return [];
  return Object.entries(value).flatMap(([k, v]) => [
    ...cleanTextViolations(k, MAX_DETAIL_KEY_BYTES),
    ...cleanTextViolations(v, maxBytes),
  ]);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// ---------------------------------------------------------------- generators

/** Characters that have broken sanitizers before: controls, bidi, zero-width, tags, lone surrogates. */
export const NASTY_UNITS = [
  '\u0000', '\u0007', '\t', '\n', '\r', '\u001b', '\u007f', '\u0085', '\u009b', '\u00ad',
  '\u200b', '\u200c', '\u200d', '\u200e', '\u2028', '\u2029', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e',
  '\u2066', '\u2067', '\u2068', '\u2069', '\ufeff', '\ud800', '\udfff', '\u{E0041}', '\u{E007F}',
  'é', '€', '😀', ' ', '"', '\\', '{', '}', '[', ']',
];

export const hostileTextArb: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: fc.oneof(fc.constantFrom(...NASTY_UNITS), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength: 80 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  // Long strings cross every byte bound between 16 and 512.
  fc.tuple(fc.constantFrom('a', 'é', '€', '😀', '\u202e'), fc.integer({ min: 1, max: 700 })).map(([c, n]) => c.repeat(n)),
);

/** Any status 100..599, weighted towards 2xx so success paths get exercised too. */
export const statusArb = fc.oneof(
  { weight: 2, arbitrary: fc.integer({ min: 100, max: 599 }) },
  { weight: 1, arbitrary: fc.integer({ min: 200, max: 299 }) },
  { weight: 1, arbitrary: fc.constant(200) },
);

export const callerIdArb: fc.Arbitrary<JsonRpcId> = fc.oneof(
  fc.string({ maxLength: 40 }),
  hostileTextArb,
  fc.maxSafeInteger(),
  fc.constant(null),
);

export const policyArb: fc.Arbitrary<NormalizePolicy> = fc.record({
  remote: fc.constantFrom('weather', 'r', 'agent_2-b'),
  maxErrorMessageBytes: fc.integer({ min: 16, max: 512 }),
  maxJsonDepth: fc.integer({ min: 2, max: 64 }),
  keepRemoteErrorData: fc.boolean(),
  caller: fc.constantFrom('0.3', '1.0'),
});

const codeArb = fc.oneof(
  fc.constantFrom(-32700, -32600, -32601, -32602, -32603, -32001, -32002, -32006, -32009, 0, 1),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 8 }),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 2 }),
);

const detailArb = fc.oneof(
  fc.record({ '@type': hostileTextArb, reason: hostileTextArb, metadata: fc.dictionary(hostileTextArb, hostileTextArb, { maxKeys: 4 }) }, { requiredKeys: ['@type'] }),
  // ErrorInfos in the reserved domains, well-formed or not: A2A's own (whose metadata is carried) and forged ones.
  fc.record(
    {
      '@type': fc.constantFrom('type.googleapis.com/google.rpc.ErrorInfo', 'type.googleapis.com/google.rpc.ErrorInfo\u200b'),
      reason: fc.oneof(fc.constantFrom('TASK_NOT_FOUND', 'INVALID_AGENT_RESPONSE', 'VERSION_NOT_SUPPORTED'), hostileTextArb),
      domain: fc.constantFrom('a2a-protocol.org', 'a2a-egress', 'a2a-egress\u202e'),
      metadata: fc.oneof(fc.dictionary(hostileTextArb, fc.oneof(hostileTextArb, fc.jsonValue({ maxDepth: 1 })), { maxKeys: 12 }), fc.jsonValue({ maxDepth: 1 })),
    },
    { requiredKeys: ['@type', 'domain'] },
  ),
  fc.dictionary(hostileTextArb, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }).map((d) => ({ '@type': 'x.y/Z', ...d })),
  fc.jsonValue({ maxDepth: 2 }),
);

export const errorMemberArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.record(
    {
      code: codeArb,
      message: fc.oneof(hostileTextArb, fc.jsonValue({ maxDepth: 1 })),
      data: fc.oneof({ weight: 3, arbitrary: fc.array(detailArb, { maxLength: 7 }) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) }),
      reason: hostileTextArb,
      stack: hostileTextArb,
    },
    { requiredKeys: [] },
  ) },
  { weight: 1, arbitrary: hostileTextArb },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);

const upstreamIdArb = fc.oneof(
  { weight: 4, arbitrary: fc.oneof(fc.maxSafeInteger(), fc.string({ maxLength: 10 }), fc.constant(null)) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
);

/** Objects that look like JSON-RPC responses, with members mixed, missing or wrong. */
export const jsonRpcObjectArb: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(
    fc.record(
      {
        jsonrpc: fc.oneof(fc.constant('2.0'), fc.jsonValue({ maxDepth: 1 })),
        id: upstreamIdArb,
        result: fc.jsonValue({ maxDepth: 6 }),
        error: errorMemberArb,
      },
      { requiredKeys: [] },
    ),
    fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  )
  .map(([rpc, extra]) => ({ ...extra, ...rpc }));

/** Text edits that make a near-valid body hostile in ways JSON.stringify never produces. */
const TWEAKS = [
  'none', 'none', 'none', 'none', 'none', 'none', 'bom', 'truncate', 'duplicate-id', 'duplicate-result', 'proto', 'escaped-proto',
  'constructor-prototype', 'huge-id', 'deep', 'trailing-garbage', 'lone-surrogate',
] as const;

function tweak(json: string, how: (typeof TWEAKS)[number], cut: number): string {
  const inner = json.startsWith('{') && json.length > 2 ? json.slice(1) : undefined;
  const prepend = (member: string): string => (inner ? `{${member},${inner}` : json);
  switch (how) {
    case 'bom': return `\ufeff${json}`;
    case 'truncate': return json.slice(0, cut % (json.length + 1));
    case 'duplicate-id': return prepend('"id":1');
    case 'duplicate-result': return prepend('"result":1');
    case 'proto': return prepend('"__proto__":{"polluted":true}');
    case 'escaped-proto': return prepend('"\\u005f_proto__":{"polluted":true}');
    case 'constructor-prototype': return prepend('"x":{"constructor":{"prototype":{"polluted":true}}}');
    case 'huge-id': return prepend(cut % 2 ? '"id":1e400' : '"id":9007199254740993');
    case 'deep': return prepend(`"x":${'['.repeat(70 + (cut % 200))}${']'.repeat(70 + (cut % 200))}`);
    case 'trailing-garbage': return `${json} trailing`;
    case 'lone-surrogate': return prepend('"x":"\\ud800"');
    case 'none': return json;
  }
}

export const nearValidBodyArb: fc.Arbitrary<Buffer> = fc
  .tuple(fc.oneof({ weight: 5, arbitrary: jsonRpcObjectArb }, { weight: 1, arbitrary: fc.jsonValue() }), fc.constantFrom(...TWEAKS), fc.nat())
  .map(([value, how, cut]) => Buffer.from(tweak(JSON.stringify(value) ?? 'null', how, cut), 'utf8'));

/** A body that is certainly not JSON, carrying a unique marker that must never reach the caller. */
export interface MarkedBody {
  readonly body: Buffer;
  readonly marker: string;
}

const NON_JSON_PREFIXES = [
  '<!DOCTYPE html><html><head><title>Sign in</title></head><body>',
  '<html><body><h1>502 Bad Gateway</h1>',
  'Internal Server Error: ',
  'upstream connect error or disconnect/reset before headers. ',
  'Traceback (most recent call last):\n  File "app.py"',
  '\r\n\t x',
];

export const nonJsonBodyArb: fc.Arbitrary<MarkedBody> = fc
  .tuple(
    fc.constantFrom(...NON_JSON_PREFIXES),
    fc.uint8Array({ maxLength: 2048 }),
    fc.stringMatching(/^[A-Z]{6}[0-9]{6}$/),
    fc.uint8Array({ maxLength: 512 }),
  )
  .map(([prefix, before, token, after]) => {
    const marker = `MRK_${token}`;
    const body = Buffer.concat([Buffer.from(prefix), before, Buffer.from(marker), after]);
    return { body, marker };
  });

/** Raw bytes: mostly garbage, sometimes (by chance) JSON. */
export const rawBodyArb: fc.Arbitrary<Buffer> = fc.uint8Array({ maxLength: 4096 }).map((a) => Buffer.from(a));

/** `buf` cut at `cuts` (taken modulo its length): every chunking is reachable, one byte at a time included. */
export function cutAt(buf: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (buf.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of [...points, buf.length]) {
    out.push(buf.subarray(prev, p));
    prev = p;
  }
  return out;
}
