/**
 * Checks a remote's agent card against the official JSON Schema of its
 * protocol generation (0.3 draft-07 schema, 1.0 2020-12 bundle generated
 * from the proto).
 *
 * Unknown members are allowed: the spec tells receivers to ignore fields
 * they do not recognise, and the 1.0 bundle marks every object
 * `additionalProperties: false` (its own sample card in spec §8.5 carries a
 * `security` member the bundle does not declare). So every
 * `additionalProperties: false` is removed when the schemas are compiled;
 * known members are still type-checked, and the rewriter decides which
 * members reach the caller.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';
import schemaV03 from './schemas/schema-v0.3.0.json' with { type: 'json' };
import schemaV10 from './schemas/schema-v1.0.json' with { type: 'json' };
import type { ProtocolGeneration } from './methods.js';

// ajv-formats' CommonJS default export is not typed as callable under NodeNext.
const addFormats = addFormatsImport as unknown as (ajv: Ajv | Ajv2020) => Ajv | Ajv2020;

export type CardValidation =
  | { readonly ok: true; readonly generation: ProtocolGeneration; readonly card: Record<string, unknown> }
  | { readonly ok: false; readonly problem: string };

/** A deep copy of `schema` without any `additionalProperties: false`. */
export function relaxAdditionalProperties(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(relaxAdditionalProperties);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'additionalProperties' && value === false) continue;
    out[key] = relaxAdditionalProperties(value);
  }
  return out;
}

const V03_ID = 'https://a2a-egress.invalid/schemas/v0.3/a2a.json';
// The 1.0 bundle's $refs name per-message files ("lf.a2a.v1.AgentInterface.jsonschema.json")
// that the bundle keys by title ("Agent Interface"); each definition is registered under the
// file name its referrers use, all beside one base URI so the relative refs resolve.
const V10_BASE = 'https://a2a-egress.invalid/schemas/v1/';
const PROTOBUF_WELL_KNOWN = new Set(['Struct', 'Timestamp', 'Value']);

export function v10FileName(title: string): string {
  const compact = title.replace(/\s+/g, '');
  return PROTOBUF_WELL_KNOWN.has(compact) ? `google.protobuf.${compact}.jsonschema.json` : `lf.a2a.v1.${compact}.jsonschema.json`;
}

// validateSchema: false — the schemas are files shipped with the gateway, not input; checking
// them against their meta-schemas cost ~1 s per start, and the unit tests compile them anyway.
function compileV03(): ValidateFunction {
  const ajv = addFormats(new Ajv({ strict: false, allErrors: false, validateSchema: false })) as Ajv;
  ajv.addSchema({ ...(relaxAdditionalProperties(schemaV03) as object), $id: V03_ID });
  const validate = ajv.getSchema(`${V03_ID}#/definitions/AgentCard`);
  if (!validate) throw new Error('0.3 schema has no AgentCard definition');
  return validate;
}

function compileV10(): ValidateFunction {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: false, validateSchema: false })) as Ajv2020;
  for (const [title, definition] of Object.entries(schemaV10.definitions as Record<string, object>)) {
    const { $schema: _ignored, ...body } = relaxAdditionalProperties(definition) as Record<string, unknown>;
    ajv.addSchema({ ...body, $id: V10_BASE + v10FileName(title) });
  }
  const validate = ajv.getSchema(V10_BASE + v10FileName('Agent Card'));
  if (!validate) throw new Error('1.0 schema has no Agent Card definition');
  return validate;
}

let validators: { v03: ValidateFunction; v10: ValidateFunction } | undefined;
/** Compiles both validators now (~150 ms) instead of on the first card a caller waits for. */
export function prepareCardValidators(): void {
  validators ??= { v03: compileV03(), v10: compileV10() };
}
function getValidators(): { v03: ValidateFunction; v10: ValidateFunction } {
  prepareCardValidators();
  return validators!;
}

/** 1.0 cards list `supportedInterfaces`; 0.3 cards carry `url` / `protocolVersion`. */
export function detectGeneration(card: Record<string, unknown>): ProtocolGeneration | undefined {
  if (Object.hasOwn(card, 'supportedInterfaces') || Object.hasOwn(card, 'supported_interfaces')) return '1.0';
  if (Object.hasOwn(card, 'url') || Object.hasOwn(card, 'protocolVersion')) return '0.3';
  return undefined;
}

export function validateCard(card: unknown): CardValidation {
  if (card === null || typeof card !== 'object' || Array.isArray(card)) {
    return { ok: false, problem: `card is ${Array.isArray(card) ? 'an array' : card === null ? 'null' : `a ${typeof card}`}, not an object` };
  }
  const record = card as Record<string, unknown>;
  const generation = detectGeneration(record);
  if (!generation) return { ok: false, problem: 'card has neither "supportedInterfaces" (A2A 1.0) nor "url" (A2A 0.3)' };
  const { v03, v10 } = getValidators();
  const validate = generation === '1.0' ? v10 : v03;
  if (!validate(record)) return { ok: false, problem: describeSchemaError(mostUsefulError(validate.errors ?? []), generation) };
  return { ok: true, generation, card: record };
}

/** A key a problem text may name: short and plain, or replaced by "*" (key names are remote bytes too). */
export function safeKey(key: string): string {
  return /^[A-Za-z0-9_-]{1,40}$/.test(key) ? key : '*';
}

export function pathOf(segments: readonly (string | number)[]): string {
  if (segments.length === 0) return 'card';
  return segments.map((s) => (typeof s === 'number' ? `[${s}]` : `.${safeKey(s)}`)).join('').replace(/^\./, '');
}

/**
 * A failed union reports each branch's error before its own; the branch
 * errors describe schemes the card never meant, so the union's error is the
 * one worth reading.
 */
function mostUsefulError(errors: readonly ErrorObject[]): ErrorObject | undefined {
  const unions = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  if (unions.length === 0) return errors[0];
  return unions.reduce((a, b) => (b.instancePath.length < a.instancePath.length ? b : a));
}

function describeSchemaError(error: ErrorObject | undefined, generation: ProtocolGeneration): string {
  if (!error) return `card does not match the A2A ${generation} schema`;
  const segments = error.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  if (error.keyword === 'required') {
    const missing = String((error.params as { missingProperty?: unknown }).missingProperty);
    return `${pathOf([...segments, missing])} is required (A2A ${generation})`;
  }
  // ajv's messages for the keywords these schemas use ("must be string", "must be array",
  // "must be equal to constant", "must match a schema in anyOf") name no instance values.
  return `${pathOf(segments)} ${error.message ?? 'is invalid'} (A2A ${generation})`;
}
