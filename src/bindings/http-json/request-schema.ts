/**
 * ProtoJSON validation of an operation's request message (A2A 1.0), before
 * anything goes upstream. The schema is the 1.0 bundle generated from
 * a2a.proto (src/a2a/schemas/schema-v1.0.json): it reads both JSON names of
 * a field (camelCase and the proto's snake_case), int32 as a number or a
 * decimal string, enums by name or number, timestamps as date-time strings.
 * Unknown members are allowed (spec §5.7: receivers ignore them). The bundle
 * has no `required`; an overlay adds what the proto marks REQUIRED (present,
 * and not the proto3 default: a non-empty string, a non-empty list), and a
 * field spelled both ways in one object is refused (which one would a
 * remote read?). Problems name a path, never a value.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';
import schemaV10 from '../../a2a/schemas/schema-v1.0.json' with { type: 'json' };
import { pathOf, relaxAdditionalProperties, v10FileName } from '../../a2a/card-validate.js';
import type { Operation } from '../../a2a/operations.js';
import { snakeCase } from './query-params.js';

const addFormats = addFormatsImport as unknown as (ajv: Ajv2020) => Ajv2020;

const BASE = 'https://a2a-egress.invalid/requests/v1/';

/** Proto REQUIRED fields of the messages a request contains, by definition title (camelCase JSON names). */
const REQUIRED: Readonly<Record<string, readonly string[]>> = {
  'Send Message Request': ['message'],
  Message: ['messageId', 'role', 'parts'],
  'Get Task Request': ['id'],
  'Cancel Task Request': ['id'],
  'Subscribe To Task Request': ['id'],
  'Task Push Notification Config': ['url'],
  'Authentication Info': ['scheme'],
  'Get Task Push Notification Config Request': ['taskId', 'id'],
  'Delete Task Push Notification Config Request': ['taskId', 'id'],
  'List Task Push Notification Configs Request': ['taskId'],
};

/** Set and not the proto3 default: keywords that only apply to strings and arrays. */
const SET_VALUE = { minLength: 1, minItems: 1 };

function requiredClause(field: string): object {
  const snake = snakeCase(field);
  const present = (name: string) => ({ required: [name], properties: { [name]: SET_VALUE } });
  return snake === field ? present(field) : { anyOf: [present(field), present(snake)] };
}

/** Both spellings of one field in one object. */
function bothSpellingsClauses(definition: Record<string, unknown>): object[] {
  const properties = Object.keys((definition.properties as Record<string, unknown> | undefined) ?? {});
  return properties.flatMap((field) => {
    const snake = snakeCase(field);
    return snake === field ? [] : [{ not: { required: [field, snake] } }];
  });
}

function compile(): Ajv2020 {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: false, validateSchema: false }));
  for (const [title, definition] of Object.entries(schemaV10.definitions as Record<string, object>)) {
    const { $schema: _ignored, ...body } = relaxAdditionalProperties(definition) as Record<string, unknown>;
    const clauses = [...(REQUIRED[title] ?? []).map(requiredClause), ...bothSpellingsClauses(body)];
    ajv.addSchema({ ...body, ...(clauses.length > 0 ? { allOf: clauses } : {}), $id: BASE + v10FileName(title) });
  }
  return ajv;
}

let ajv: Ajv2020 | undefined;
const validators = new Map<string, ValidateFunction>();

/** Compiles the validators now rather than on the first request that needs one. */
export function prepareRequestValidators(): void {
  ajv ??= compile();
}

export const MAX_PROBLEM_CHARS = 120;
const UNIONS = new Set(['anyOf', 'oneOf', 'allOf', 'not', 'if']);

export type RequestCheck = { readonly ok: true } | { readonly ok: false; readonly field: string; readonly problem: string };

/** Does `params` match the operation's 1.0 request message? */
export function checkRequest(operation: Operation, params: unknown): RequestCheck {
  prepareRequestValidators();
  let validate = validators.get(operation.requestType);
  if (!validate) {
    validate = ajv!.getSchema(`${BASE}lf.a2a.v1.${operation.requestType}.jsonschema.json`);
    if (!validate) throw new Error(`no schema for ${operation.requestType}`);
    validators.set(operation.requestType, validate);
  }
  if (validate(params)) return { ok: true };
  return describe(validate);
}

function describe(validate: ValidateFunction): RequestCheck & { ok: false } {
  const errors = validate.errors ?? [];
  // An empty required field, then a missing one, say the most (an empty `messageId` also fails the
  // `message_id` alternative as missing); else the first concrete (non-union) error.
  const error = errors.find((e) => e.keyword === 'minLength' || e.keyword === 'minItems')
    ?? errors.find((e) => e.keyword === 'required')
    ?? errors.find((e) => !UNIONS.has(e.keyword))
    ?? errors[0];
  // A failed branch of a union (enum name or number, int32 as number or string) is not the whole story.
  const inUnion = error !== undefined && errors.some((e) => e !== error && UNIONS.has(e.keyword) && e.instancePath === error.instancePath);
  const segments = (error?.instancePath ?? '')
    .split('/')
    .slice(1)
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s.replace(/~1/g, '/').replace(/~0/g, '~')));
  const where = segments.length === 0 ? '' : pathOf(segments);
  const join = (member: string) => (where === '' ? member : `${where}.${member}`);
  let field = where === '' ? 'request' : where;
  let problem: string;
  if (error?.keyword === 'required') {
    field = join(pathOf([String((error.params as { missingProperty?: unknown }).missingProperty)]));
    problem = `${field} is required`;
  } else if (error?.keyword === 'minLength' || error?.keyword === 'minItems') {
    problem = `${field} must not be empty`;
  } else if (error?.keyword === 'not') {
    problem = `${field} has a field spelled both in camelCase and in snake_case`;
  } else if (inUnion) {
    problem = `${field} has a value of the wrong type or format`;
  } else {
    problem = `${field} ${error?.message ?? 'does not match the A2A schema'}`;
  }
  return { ok: false, field, problem: problem.length > MAX_PROBLEM_CHARS ? `${problem.slice(0, MAX_PROBLEM_CHARS - 3)}...` : problem };
}
