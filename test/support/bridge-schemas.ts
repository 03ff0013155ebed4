/**
 * Strict validators for what the version bridge writes: the official 0.3
 * JSON Schema and the 1.0 bundle, both made stricter than the gateway's own
 * result checks so a test fails on any member the target does not define.
 * - 0.3: every definition with `properties` gets `additionalProperties: false`
 *   (the official schema allows any extra member, so a leaked 1.0 member would pass).
 * - 1.0: the bundle's own `additionalProperties: false` is kept (a leaked `kind`
 *   fails); the proto's REQUIRED fields (the bundle has no `required`) and the
 *   oneofs are added: exactly one payload for the response wrappers, a Part's
 *   content and a SecurityScheme, at most one OAuth flow.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';
import schemaV03 from '../../src/a2a/schemas/schema-v0.3.0.json' with { type: 'json' };
import schemaV10 from '../../src/a2a/schemas/schema-v1.0.json' with { type: 'json' };
import type { OperationName, ProtocolGeneration } from '../../src/a2a/operations.js';
import { v10FileName } from '../../src/a2a/card-validate.js';

const addFormats = addFormatsImport as unknown as (ajv: Ajv | Ajv2020) => Ajv | Ajv2020;

/** Every field a2a.proto (1.0.1) marks `(google.api.field_behavior) = REQUIRED`, by message, as JSON names. */
export const PROTO_REQUIRED: Readonly<Record<string, readonly string[]>> = {
  Task: ['id', 'status'],
  TaskStatus: ['state'],
  Message: ['messageId', 'role', 'parts'],
  Artifact: ['artifactId', 'parts'],
  TaskStatusUpdateEvent: ['taskId', 'contextId', 'status'],
  TaskArtifactUpdateEvent: ['taskId', 'contextId', 'artifact'],
  AuthenticationInfo: ['scheme'],
  AgentInterface: ['url', 'protocolBinding', 'protocolVersion'],
  AgentCard: ['name', 'description', 'supportedInterfaces', 'version', 'capabilities', 'defaultInputModes', 'defaultOutputModes', 'skills'],
  AgentProvider: ['url', 'organization'],
  AgentSkill: ['id', 'name', 'description', 'tags'],
  AgentCardSignature: ['protected', 'signature'],
  TaskPushNotificationConfig: ['url'],
  APIKeySecurityScheme: ['location', 'name'],
  HTTPAuthSecurityScheme: ['scheme'],
  OAuth2SecurityScheme: ['flows'],
  OpenIdConnectSecurityScheme: ['openIdConnectUrl'],
  AuthorizationCodeOAuthFlow: ['authorizationUrl', 'tokenUrl', 'scopes'],
  ClientCredentialsOAuthFlow: ['tokenUrl', 'scopes'],
  DeviceCodeOAuthFlow: ['deviceAuthorizationUrl', 'tokenUrl', 'scopes'],
  SendMessageRequest: ['message'],
  GetTaskRequest: ['id'],
  ListTasksResponse: ['tasks', 'nextPageToken', 'pageSize', 'totalSize'],
  CancelTaskRequest: ['id'],
  GetTaskPushNotificationConfigRequest: ['taskId', 'id'],
  DeleteTaskPushNotificationConfigRequest: ['taskId', 'id'],
  SubscribeToTaskRequest: ['id'],
  ListTaskPushNotificationConfigsRequest: ['taskId'],
};

/** The proto's oneofs: exactly one member where a message without one means nothing, else at most one. */
const ONEOFS: Readonly<Record<string, { members: readonly string[]; exactlyOne: boolean }>> = {
  SendMessageResponse: { members: ['task', 'message'], exactlyOne: true },
  StreamResponse: { members: ['task', 'message', 'statusUpdate', 'artifactUpdate'], exactlyOne: true },
  Part: { members: ['text', 'raw', 'url', 'data'], exactlyOne: true },
  SecurityScheme: { members: ['apiKeySecurityScheme', 'httpAuthSecurityScheme', 'oauth2SecurityScheme', 'openIdConnectSecurityScheme', 'mtlsSecurityScheme'], exactlyOne: true },
  OAuthFlows: { members: ['authorizationCode', 'clientCredentials', 'implicit', 'password', 'deviceCode'], exactlyOne: false },
};

const V03_ID = 'https://a2a-egress.invalid/bridge-test/v0.3/a2a.json';
const V10_BASE = 'https://a2a-egress.invalid/bridge-test/v1/';
const v03 = (name: string) => ({ $ref: `${V03_ID}#/definitions/${name}` });
const v10 = (message: string) => ({ $ref: `${V10_BASE}lf.a2a.v1.${message}.jsonschema.json` });
const EMPTY = { type: 'object', maxProperties: 0 };

function strict03(): object {
  const definitions = Object.fromEntries(
    Object.entries(schemaV03.definitions as Record<string, Record<string, unknown>>).map(([name, d]) => [name, d.properties ? { ...d, additionalProperties: false } : d]),
  );
  return { ...schemaV03, definitions, $id: V03_ID };
}

const PARAMS_03: Record<string, object> = {
  SendMessage: v03('MessageSendParams'),
  SendStreamingMessage: v03('MessageSendParams'),
  GetTask: v03('TaskQueryParams'),
  CancelTask: v03('TaskIdParams'),
  SubscribeToTask: v03('TaskIdParams'),
  CreateTaskPushNotificationConfig: v03('TaskPushNotificationConfig'),
  GetTaskPushNotificationConfig: { anyOf: [v03('TaskIdParams'), v03('GetTaskPushNotificationConfigParams')] },
  ListTaskPushNotificationConfigs: v03('ListTaskPushNotificationConfigParams'),
  DeleteTaskPushNotificationConfig: v03('DeleteTaskPushNotificationConfigParams'),
  GetExtendedAgentCard: EMPTY,
};
const STREAM_03 = { anyOf: [v03('Task'), v03('Message'), v03('TaskStatusUpdateEvent'), v03('TaskArtifactUpdateEvent')] };
const RESULTS_03: Record<string, object> = {
  SendMessage: { anyOf: [v03('Task'), v03('Message')] },
  SendStreamingMessage: STREAM_03,
  SubscribeToTask: STREAM_03,
  GetTask: v03('Task'),
  CancelTask: v03('Task'),
  CreateTaskPushNotificationConfig: v03('TaskPushNotificationConfig'),
  GetTaskPushNotificationConfig: v03('TaskPushNotificationConfig'),
  ListTaskPushNotificationConfigs: { type: 'array', items: v03('TaskPushNotificationConfig') },
  DeleteTaskPushNotificationConfig: { type: 'null' },
  GetExtendedAgentCard: v03('AgentCard'),
};

const PARAMS_10: Record<string, object> = {
  SendMessage: v10('SendMessageRequest'),
  SendStreamingMessage: v10('SendMessageRequest'),
  GetTask: v10('GetTaskRequest'),
  ListTasks: v10('ListTasksRequest'),
  CancelTask: v10('CancelTaskRequest'),
  SubscribeToTask: v10('SubscribeToTaskRequest'),
  CreateTaskPushNotificationConfig: v10('TaskPushNotificationConfig'),
  GetTaskPushNotificationConfig: v10('GetTaskPushNotificationConfigRequest'),
  ListTaskPushNotificationConfigs: v10('ListTaskPushNotificationConfigsRequest'),
  DeleteTaskPushNotificationConfig: v10('DeleteTaskPushNotificationConfigRequest'),
  GetExtendedAgentCard: v10('GetExtendedAgentCardRequest'),
};
const RESULTS_10: Record<string, object> = {
  SendMessage: v10('SendMessageResponse'),
  SendStreamingMessage: v10('StreamResponse'),
  SubscribeToTask: v10('StreamResponse'),
  GetTask: v10('Task'),
  ListTasks: v10('ListTasksResponse'),
  CancelTask: v10('Task'),
  CreateTaskPushNotificationConfig: v10('TaskPushNotificationConfig'),
  GetTaskPushNotificationConfig: v10('TaskPushNotificationConfig'),
  ListTaskPushNotificationConfigs: v10('ListTaskPushNotificationConfigsResponse'),
  DeleteTaskPushNotificationConfig: EMPTY,
  GetExtendedAgentCard: v10('AgentCard'),
};

const DETAILS = { type: 'array', items: { type: 'object', required: ['@type'], properties: { '@type': { type: 'string' } } } };
/** 1.0 §9.5: code, message, and `data` as an array of `@type` objects. */
const ERROR_10 = { type: 'object', required: ['code', 'message'], additionalProperties: false, properties: { code: { type: 'integer' }, message: { type: 'string' }, data: DETAILS } };

type Kind = 'params' | 'result' | 'error';

interface Validators {
  readonly get: (generation: ProtocolGeneration, kind: Kind, operation?: OperationName) => ValidateFunction;
}

function build(): Validators {
  const ajv03 = addFormats(new Ajv({ strict: false, allErrors: true, validateSchema: false })) as Ajv;
  ajv03.addSchema(strict03());
  const ajv10 = addFormats(new Ajv2020({ strict: false, allErrors: true, validateSchema: false })) as Ajv2020;
  for (const [title, definition] of Object.entries(schemaV10.definitions as Record<string, Record<string, unknown>>)) {
    const { $schema: _ignored, ...body } = definition;
    const message = title.replace(/\s+/g, '');
    const required = PROTO_REQUIRED[message];
    const oneof = ONEOFS[message];
    const overlay: Record<string, unknown> = { ...body, $id: V10_BASE + v10FileName(title) };
    if (required) overlay.required = required;
    if (oneof) {
      const one = oneof.members.map((m) => ({ required: [m] }));
      overlay.allOf = [oneof.exactlyOne ? { oneOf: one } : { not: { anyOf: oneof.members.flatMap((a, i) => oneof.members.slice(i + 1).map((b) => ({ required: [a, b] }))) } }];
    }
    ajv10.addSchema(overlay);
  }
  const cache = new Map<string, ValidateFunction>();
  return {
    get(generation, kind, operation) {
      const key = `${generation} ${kind} ${operation ?? ''}`;
      let v = cache.get(key);
      if (!v) {
        const schema =
          kind === 'error'
            ? generation === '0.3' ? v03('JSONRPCError') : ERROR_10
            : (generation === '0.3' ? (kind === 'params' ? PARAMS_03 : RESULTS_03) : kind === 'params' ? PARAMS_10 : RESULTS_10)[operation ?? ''];
        if (!schema) throw new Error(`no ${generation} ${kind} schema for ${operation}`);
        v = (generation === '0.3' ? ajv03 : ajv10).compile(schema);
        cache.set(key, v);
      }
      return v;
    },
  };
}

let validators: Validators | undefined;

/** `undefined` when `value` is a valid `kind` of `operation` in `generation`, else ajv's errors as text. */
export function schemaProblem(generation: ProtocolGeneration, kind: Kind, operation: OperationName | undefined, value: unknown): string | undefined {
  validators ??= build();
  const validate = validators.get(generation, kind, operation);
  if (validate(value)) return undefined;
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`).slice(0, 6).join('; ');
}

/** The 0.3 stream results also cover single events; a card validates as GetExtendedAgentCard's result. */
export const CARD_OPERATION: OperationName = 'GetExtendedAgentCard';
export const EVENT_OPERATION: OperationName = 'SendStreamingMessage';
