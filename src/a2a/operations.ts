/**
 * The eleven A2A operations, once, with everything each binding and each
 * protocol generation calls them. Every codec reads this table: a JSON-RPC
 * method name, a REST route and a gRPC method all resolve to one Operation,
 * and the internal call carries the Operation, never a wire name.
 *
 * Sources: spec 1.0.1 §5.3 (method mapping), §11.3/§11.5 (REST paths and
 * query parameters), a2a.proto (google.api.http annotations, message types),
 * spec 0.3 §7 (JSON-RPC method names; 0.3 has no ListTasks).
 */

export type ProtocolGeneration = '0.3' | '1.0';

export type OperationName =
  | 'SendMessage'
  | 'SendStreamingMessage'
  | 'GetTask'
  | 'ListTasks'
  | 'CancelTask'
  | 'SubscribeToTask'
  | 'CreateTaskPushNotificationConfig'
  | 'GetTaskPushNotificationConfig'
  | 'ListTaskPushNotificationConfigs'
  | 'DeleteTaskPushNotificationConfig'
  | 'GetExtendedAgentCard';

export type HttpVerb = 'GET' | 'POST' | 'DELETE';

/** One HTTP+JSON route of an operation (1.0: spec §11.3; every route also exists under `/{tenant}`). */
export interface RestRoute {
  readonly verb: HttpVerb;
  /** Path template, `{name}` segments bound to request fields (camelCase, as in ProtoJSON). */
  readonly path: string;
  /** The request travels as the JSON body (`body: "*"` in the proto). */
  readonly body: boolean;
  /** Request fields that may travel as query parameters (GET/DELETE), with their ProtoJSON kind. */
  readonly query: Readonly<Record<string, 'string' | 'int32' | 'bool' | 'enum' | 'timestamp'>>;
  /** The success status a conformant server answers with (the @a2a-js/sdk server: 201 on create, 204 on delete). */
  readonly successStatus: 200 | 201 | 204;
}

export interface Operation {
  readonly name: OperationName;
  /** Answered with a stream of events (SSE, or a gRPC server stream). */
  readonly streaming: boolean;
  /** No side effect on the remote: a transport failure before any byte was sent may be retried. */
  readonly readOnly: boolean;
  /** The result is an agent card (rewritten like the public one). */
  readonly returnsCard: boolean;
  /** JSON-RPC method name per generation; 0.3 has no ListTasks. */
  readonly jsonrpc: Readonly<Partial<Record<ProtocolGeneration, string>>>;
  /** HTTP+JSON route of 1.0 (0.3's REST routes: see restPathOf). */
  readonly rest: RestRoute;
  /** A2AService method (gRPC), the same name as the operation. */
  readonly grpc: OperationName;
  /** Protobuf message type of the request and of the response (or of each stream event), package lf.a2a.v1. */
  readonly requestType: string;
  readonly responseType: string;
}

const op = (
  name: OperationName,
  flags: { streaming?: boolean; readOnly?: boolean; returnsCard?: boolean },
  jsonrpc: Partial<Record<ProtocolGeneration, string>>,
  rest: Omit<RestRoute, 'query' | 'successStatus'> & Partial<Pick<RestRoute, 'query' | 'successStatus'>>,
  requestType: string,
  responseType: string,
): Operation => ({
  name,
  streaming: flags.streaming ?? false,
  readOnly: flags.readOnly ?? false,
  returnsCard: flags.returnsCard ?? false,
  jsonrpc,
  rest: { query: {}, successStatus: 200, ...rest },
  grpc: name,
  requestType,
  responseType,
});

export const OPERATIONS: Readonly<Record<OperationName, Operation>> = {
  SendMessage: op('SendMessage', {}, { '1.0': 'SendMessage', '0.3': 'message/send' },
    { verb: 'POST', path: '/message:send', body: true }, 'SendMessageRequest', 'SendMessageResponse'),
  SendStreamingMessage: op('SendStreamingMessage', { streaming: true }, { '1.0': 'SendStreamingMessage', '0.3': 'message/stream' },
    { verb: 'POST', path: '/message:stream', body: true }, 'SendMessageRequest', 'StreamResponse'),
  GetTask: op('GetTask', { readOnly: true }, { '1.0': 'GetTask', '0.3': 'tasks/get' },
    { verb: 'GET', path: '/tasks/{id}', body: false, query: { historyLength: 'int32' } }, 'GetTaskRequest', 'Task'),
  ListTasks: op('ListTasks', { readOnly: true }, { '1.0': 'ListTasks' },
    {
      verb: 'GET', path: '/tasks', body: false,
      query: { contextId: 'string', status: 'enum', pageSize: 'int32', pageToken: 'string', historyLength: 'int32', statusTimestampAfter: 'timestamp', includeArtifacts: 'bool' },
    }, 'ListTasksRequest', 'ListTasksResponse'),
  CancelTask: op('CancelTask', {}, { '1.0': 'CancelTask', '0.3': 'tasks/cancel' },
    { verb: 'POST', path: '/tasks/{id}:cancel', body: true }, 'CancelTaskRequest', 'Task'),
  // The proto annotates GET, the spec text (§11.3.2) and the SDKs use POST: callers may use either; upstream gets POST.
  SubscribeToTask: op('SubscribeToTask', { streaming: true }, { '1.0': 'SubscribeToTask', '0.3': 'tasks/resubscribe' },
    { verb: 'POST', path: '/tasks/{id}:subscribe', body: false }, 'SubscribeToTaskRequest', 'StreamResponse'),
  CreateTaskPushNotificationConfig: op('CreateTaskPushNotificationConfig', {}, { '1.0': 'CreateTaskPushNotificationConfig', '0.3': 'tasks/pushNotificationConfig/set' },
    { verb: 'POST', path: '/tasks/{taskId}/pushNotificationConfigs', body: true, successStatus: 201 }, 'TaskPushNotificationConfig', 'TaskPushNotificationConfig'),
  GetTaskPushNotificationConfig: op('GetTaskPushNotificationConfig', { readOnly: true }, { '1.0': 'GetTaskPushNotificationConfig', '0.3': 'tasks/pushNotificationConfig/get' },
    { verb: 'GET', path: '/tasks/{taskId}/pushNotificationConfigs/{id}', body: false }, 'GetTaskPushNotificationConfigRequest', 'TaskPushNotificationConfig'),
  ListTaskPushNotificationConfigs: op('ListTaskPushNotificationConfigs', { readOnly: true }, { '1.0': 'ListTaskPushNotificationConfigs', '0.3': 'tasks/pushNotificationConfig/list' },
    { verb: 'GET', path: '/tasks/{taskId}/pushNotificationConfigs', body: false, query: { pageSize: 'int32', pageToken: 'string' } },
    'ListTaskPushNotificationConfigsRequest', 'ListTaskPushNotificationConfigsResponse'),
  DeleteTaskPushNotificationConfig: op('DeleteTaskPushNotificationConfig', {}, { '1.0': 'DeleteTaskPushNotificationConfig', '0.3': 'tasks/pushNotificationConfig/delete' },
    { verb: 'DELETE', path: '/tasks/{taskId}/pushNotificationConfigs/{id}', body: false, successStatus: 204 }, 'DeleteTaskPushNotificationConfigRequest', 'google.protobuf.Empty'),
  GetExtendedAgentCard: op('GetExtendedAgentCard', { readOnly: true, returnsCard: true }, { '1.0': 'GetExtendedAgentCard', '0.3': 'agent/getAuthenticatedExtendedCard' },
    { verb: 'GET', path: '/extendedAgentCard', body: false }, 'GetExtendedAgentCardRequest', 'AgentCard'),
};

export const OPERATION_LIST: readonly Operation[] = Object.freeze(Object.values(OPERATIONS));

/** JSON-RPC method name → operation and the generation the name belongs to. */
const BY_JSONRPC_METHOD: ReadonlyMap<string, { readonly operation: Operation; readonly generation: ProtocolGeneration }> = new Map(
  OPERATION_LIST.flatMap((operation) =>
    (Object.entries(operation.jsonrpc) as [ProtocolGeneration, string][]).map(([generation, method]) => [method, { operation, generation }] as const),
  ),
);

export function operationForJsonRpcMethod(method: string): { readonly operation: Operation; readonly generation: ProtocolGeneration } | undefined {
  return BY_JSONRPC_METHOD.get(method);
}

/** Every JSON-RPC method name the gateway knows, both generations (the config's `methods` allowlist takes these). */
export const JSONRPC_METHOD_NAMES: readonly string[] = Object.freeze([...BY_JSONRPC_METHOD.keys()]);

/** A bounded label for metrics and logs: the operation name, never caller text. */
export function operationLabel(operation: Operation | undefined): string {
  return operation?.name ?? 'other';
}

/**
 * The REST path template of an operation in a generation: 1.0 as in the table;
 * 0.3 (spec 0.3 §3.5.3) the same under `/v1`, except the extended card at `/v1/card`.
 */
export function restPathOf(operation: Operation, generation: ProtocolGeneration): string {
  if (generation === '1.0') return operation.rest.path;
  return operation.name === 'GetExtendedAgentCard' ? '/v1/card' : `/v1${operation.rest.path}`;
}
