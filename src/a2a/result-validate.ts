/**
 * `limits.validateResults`: checks a remote's successful result against the
 * A2A schema of the method's generation (0.3 official schema, 1.0 bundle).
 *
 * As for cards, unknown members are allowed (every `additionalProperties:
 * false` is removed): the spec says receivers ignore what they do not know.
 * The 1.0 bundle is generated from the proto and has no `required` at all and
 * no `oneof`, so `{}` would pass as any result; a small overlay adds what
 * the proto marks REQUIRED for the objects a caller branches on (a task's id
 * and status, a message's id, role and parts, an update's task id and
 * payload) and the oneof of SendMessage / stream results (exactly one payload).
 * Methods without a validator here (deletes, the extended card, which has its
 * own validation in the card rewrite) always pass.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';
import schemaV03 from './schemas/schema-v0.3.0.json' with { type: 'json' };
import schemaV10 from './schemas/schema-v1.0.json' with { type: 'json' };
import { pathOf, relaxAdditionalProperties, v10FileName } from './card-validate.js';

const addFormats = addFormatsImport as unknown as (ajv: Ajv | Ajv2020) => Ajv | Ajv2020;

export type ResultCheck = { readonly ok: true } | { readonly ok: false; readonly problem: string };

const V03_ID = 'https://a2a-egress.invalid/results/v0.3/a2a.json';
const V10_BASE = 'https://a2a-egress.invalid/results/v1/';

const v03 = (name: string) => ({ $ref: `${V03_ID}#/definitions/${name}` });
const v10 = (title: string) => ({ $ref: V10_BASE + v10FileName(title) });
/** Exactly one of `members` (either spelling the proto JSON mapping allows). */
const oneOf = (members: readonly string[]) => ({
  oneOf: members.map((m) => ({ anyOf: [{ required: [m] }, { required: [m.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] }] })),
});

const RESULT_SCHEMAS_V03: Record<string, object> = {
  'message/send': { anyOf: [v03('Task'), v03('Message')] },
  'message/stream': { anyOf: [v03('Task'), v03('Message'), v03('TaskStatusUpdateEvent'), v03('TaskArtifactUpdateEvent')] },
  'tasks/get': v03('Task'),
  'tasks/cancel': v03('Task'),
  'tasks/pushNotificationConfig/set': v03('TaskPushNotificationConfig'),
  'tasks/pushNotificationConfig/get': v03('TaskPushNotificationConfig'),
  'tasks/pushNotificationConfig/list': { type: 'array', items: v03('TaskPushNotificationConfig') },
};
RESULT_SCHEMAS_V03['tasks/resubscribe'] = RESULT_SCHEMAS_V03['message/stream']!;

const STREAM_MEMBERS = ['task', 'message', 'statusUpdate', 'artifactUpdate'];
const RESULT_SCHEMAS_V10: Record<string, object> = {
  SendMessage: { allOf: [v10('Send Message Response'), oneOf(['task', 'message'])] },
  SendStreamingMessage: { allOf: [v10('Stream Response'), oneOf(STREAM_MEMBERS)] },
  SubscribeToTask: { allOf: [v10('Stream Response'), oneOf(STREAM_MEMBERS)] },
  GetTask: v10('Task'),
  CancelTask: v10('Task'),
  ListTasks: v10('List Tasks Response'),
  CreateTaskPushNotificationConfig: v10('Task Push Notification Config'),
  GetTaskPushNotificationConfig: v10('Task Push Notification Config'),
  ListTaskPushNotificationConfigs: v10('List Task Push Notification Configs Response'),
};

/** Proto REQUIRED fields the 1.0 bundle leaves out, per definition title (camelCase JSON names). */
const V10_REQUIRED: Record<string, readonly string[]> = {
  Task: ['id', 'status'],
  'Task Status': ['state'],
  Message: ['messageId', 'role', 'parts'],
  'Task Status Update Event': ['taskId', 'status'],
  'Task Artifact Update Event': ['taskId', 'artifact'],
};

function compileV03(): Map<string, ValidateFunction> {
  const ajv = addFormats(new Ajv({ strict: false, allErrors: false, validateSchema: false })) as Ajv;
  ajv.addSchema({ ...(relaxAdditionalProperties(schemaV03) as object), $id: V03_ID });
  return new Map(Object.entries(RESULT_SCHEMAS_V03).map(([method, schema]) => [method, ajv.compile(schema)]));
}

function compileV10(): Map<string, ValidateFunction> {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: false, validateSchema: false })) as Ajv2020;
  for (const [title, definition] of Object.entries(schemaV10.definitions as Record<string, object>)) {
    const { $schema: _ignored, ...body } = relaxAdditionalProperties(definition) as Record<string, unknown>;
    const required = V10_REQUIRED[title];
    ajv.addSchema({ ...body, ...(required ? { required } : {}), $id: V10_BASE + v10FileName(title) });
  }
  return new Map(Object.entries(RESULT_SCHEMAS_V10).map(([method, schema]) => [method, ajv.compile(schema)]));
}

let validators: Map<string, ValidateFunction> | undefined;

/** Compiles every result validator now (a few hundred ms) rather than on the first call that needs one. */
export function prepareResultValidators(): void {
  validators ??= new Map([...compileV03(), ...compileV10()]);
}

/** Longest problem text: with the catalogue sentence before it, the error message stays under 200 bytes. */
export const MAX_PROBLEM_CHARS = 120;

/** Does `result` match the A2A schema of `method`'s result? The problem names a path, never a value. */
export function checkResult(method: string, result: unknown): ResultCheck {
  prepareResultValidators();
  const validate = validators!.get(method);
  if (!validate || validate(result)) return { ok: true };
  return { ok: false, problem: boundProblem(describeFailure(validate)) };
}

/** Paths are ASCII (safeKey), so characters are bytes. */
export function boundProblem(problem: string): string {
  return problem.length > MAX_PROBLEM_CHARS ? `${problem.slice(0, MAX_PROBLEM_CHARS - 3)}...` : problem;
}

function describeFailure(validate: ValidateFunction): string {
  // A failed union lists every branch's error first; those describe shapes the result never meant.
  const errors = validate.errors ?? [];
  const unions = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  // Among equally shallow unions the last is the outermost (ajv reports a union after its branches).
  const error = unions.length > 0 ? unions.reduce((a, b) => (b.instancePath.length <= a.instancePath.length ? b : a)) : errors[0];
  const segments = (error?.instancePath ?? '')
    .split('/')
    .slice(1)
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s.replace(/~1/g, '/').replace(/~0/g, '~')));
  const where = segments.length === 0 ? 'result' : `result${typeof segments[0] === 'number' ? '' : '.'}${pathOf(segments)}`;
  if (error?.keyword === 'required') {
    const missing = String((error.params as { missingProperty?: unknown }).missingProperty);
    return `${where}.${pathOf([missing])} is required`;
  }
  return `${where} ${error?.message ?? 'does not match the schema'}`;
}

/** Methods that have a result validator (for tests and docs). */
export function validatedMethods(): string[] {
  return [...Object.keys(RESULT_SCHEMAS_V03), ...Object.keys(RESULT_SCHEMAS_V10)];
}
