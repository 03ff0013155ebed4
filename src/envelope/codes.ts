/**
 * The one catalogue of every error the gateway can put in front of a caller.
 *
 * Callers branch on `reason` (stable, documented in the README); `code` is the
 * JSON-RPC code typed clients map to their own error classes; `message` is a
 * fixed sentence that never contains remote bytes, OS error text or addresses.
 */

/** JSON-RPC 2.0 and A2A codes the gateway emits or keeps. */
export const Code = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  TaskNotFound: -32001,
  TaskNotCancelable: -32002,
  PushNotificationNotSupported: -32003,
  UnsupportedOperation: -32004,
  ContentTypeNotSupported: -32005,
  InvalidAgentResponse: -32006,
  ExtendedAgentCardNotConfigured: -32007,
  ExtensionSupportRequired: -32008,
  VersionNotSupported: -32009,
} as const;

/** Standard names, used as the message when a remote's typed error carries none. */
export const standardMessages: Readonly<Record<number, string>> = {
  [-32700]: 'Parse error',
  [-32600]: 'Invalid Request',
  [-32601]: 'Method not found',
  [-32602]: 'Invalid params',
  [-32603]: 'Internal error',
  [-32001]: 'Task not found',
  [-32002]: 'Task cannot be canceled',
  [-32003]: 'Push Notification is not supported',
  [-32004]: 'This operation is not supported',
  [-32005]: 'Incompatible content types',
  [-32006]: 'Invalid agent response',
  [-32007]: 'Extended agent card not configured',
  [-32008]: 'Extension support required',
  [-32009]: 'Version not supported',
};

export interface GatewayErrorSpec {
  readonly code: number;
  readonly message: string;
}

/**
 * Every `reason` the gateway can emit. Keys are the stable enum values callers
 * see in the `reason` of the ErrorInfo whose domain is `a2a-egress`.
 */
export const gatewayErrors = {
  // --- the caller's request ---
  PARSE_ERROR: { code: Code.ParseError, message: 'request body is not valid JSON' },
  INVALID_REQUEST: { code: Code.InvalidRequest, message: 'request is not a JSON-RPC 2.0 request object' },
  BATCH_NOT_SUPPORTED: { code: Code.InvalidRequest, message: 'JSON-RPC batches are not supported by A2A' },
  // Parsers disagree on which of two same-named members counts: the gateway would check one and the remote run the other.
  DUPLICATE_MEMBER: { code: Code.InvalidRequest, message: 'request has an object with the same member twice' },
  REQUEST_TOO_LARGE: { code: Code.InvalidRequest, message: 'request body is larger than this gateway accepts' },
  UNKNOWN_REMOTE: { code: Code.InvalidRequest, message: 'no remote with that name is configured on this gateway' },
  INVALID_PATH: { code: Code.InvalidRequest, message: 'request path is not allowed' },
  METHOD_NOT_ALLOWED: { code: Code.MethodNotFound, message: 'method is not allowed for this remote' },
  UNAUTHENTICATED: { code: Code.InvalidRequest, message: 'caller is not authenticated to this gateway' },
  REQUEST_TIMEOUT: { code: Code.InvalidRequest, message: 'request was not received in time' },

  // --- what the remote sent (A2A's InvalidAgentResponse) ---
  UPSTREAM_HTTP_ERROR: { code: Code.InvalidAgentResponse, message: 'remote answered with an HTTP error and no A2A error' },
  NON_JSON_RESPONSE: { code: Code.InvalidAgentResponse, message: 'remote sent a body that is not JSON' },
  EMPTY_RESPONSE: { code: Code.InvalidAgentResponse, message: 'remote sent an empty body' },
  INVALID_UTF8: { code: Code.InvalidAgentResponse, message: 'remote sent a body that is not valid UTF-8' },
  INVALID_JSON: { code: Code.InvalidAgentResponse, message: 'remote sent invalid JSON' },
  JSON_TOO_DEEP: { code: Code.InvalidAgentResponse, message: 'remote sent JSON nested too deeply' },
  UNSAFE_JSON: { code: Code.InvalidAgentResponse, message: 'remote sent JSON with forbidden keys (__proto__ or constructor.prototype)' },
  INVALID_RESPONSE: { code: Code.InvalidAgentResponse, message: 'remote sent an invalid JSON-RPC response' },
  RESPONSE_TOO_LARGE: { code: Code.InvalidAgentResponse, message: 'remote response is too large' },
  TRUNCATED_RESPONSE: { code: Code.InvalidAgentResponse, message: 'remote response ended before it was complete' },
  UNSUPPORTED_ENCODING: { code: Code.InvalidAgentResponse, message: 'remote used a content encoding the gateway does not decode' },
  INVALID_ENCODING: { code: Code.InvalidAgentResponse, message: 'remote sent a compressed body that could not be decoded' },
  INVALID_RESULT: { code: Code.InvalidAgentResponse, message: 'remote sent a result that does not match the A2A schema' },
  INVALID_AGENT_CARD: { code: Code.InvalidAgentResponse, message: 'remote sent an agent card that does not match the A2A schema' },
  NO_USABLE_INTERFACE: { code: Code.InvalidAgentResponse, message: 'remote agent card offers no interface the gateway can carry' },
  CREDENTIAL_ECHOED: { code: Code.InvalidAgentResponse, message: 'remote sent back a credential of this gateway where it cannot be redacted' },
  WRONG_CONTENT_TYPE: { code: Code.InvalidAgentResponse, message: 'remote answered with a content type its binding does not use' },
  INVALID_STATUS: { code: Code.InvalidAgentResponse, message: 'remote ended the call with a status that is not valid' },

  // --- streams (also InvalidAgentResponse unless the gateway or the clock ends them) ---
  INVALID_EVENT: { code: Code.InvalidAgentResponse, message: 'remote sent a stream event that is not a valid A2A stream response' },
  EVENT_TOO_LARGE: { code: Code.InvalidAgentResponse, message: 'remote sent a stream event that is too large' },
  STREAM_TOO_LARGE: { code: Code.InvalidAgentResponse, message: 'remote stream exceeded the byte limit' },
  STREAM_TOO_MANY_EVENTS: { code: Code.InvalidAgentResponse, message: 'remote stream exceeded the event limit' },
  STREAM_IDLE: { code: Code.InternalError, message: 'remote stream sent nothing for too long' },
  STREAM_NO_DATA: { code: Code.InternalError, message: 'remote stream sent no data event for too long' },
  STREAM_TOO_LONG: { code: Code.InternalError, message: 'remote stream exceeded its maximum duration' },
  STREAM_TRUNCATED: { code: Code.InvalidAgentResponse, message: 'remote closed the stream in the middle of an event' },
  GATEWAY_SHUTDOWN: { code: Code.InternalError, message: 'gateway is shutting down' },

  // --- the HTTP+JSON binding (caller requests, remote replies) ---
  UNKNOWN_OPERATION: { code: Code.MethodNotFound, message: 'no A2A operation has this path' },
  HTTP_METHOD_NOT_ALLOWED: { code: Code.MethodNotFound, message: 'this path does not accept that HTTP method' },
  INVALID_PARAMS: { code: Code.InvalidParams, message: "request does not match the operation's A2A message" },
  UNSUPPORTED_CONTENT_TYPE: { code: Code.ContentTypeNotSupported, message: 'request Content-Type is not supported (JSON-RPC: application/json; HTTP+JSON: also application/a2a+json)' },
  INVALID_VERSION: { code: Code.VersionNotSupported, message: 'A2A-Version must be one Major.Minor version' },
  INVALID_EXTENSIONS: { code: Code.InvalidRequest, message: 'A2A-Extensions must be a comma-separated list of URIs' },
  UNSUPPORTED_BINDING_VERSION: { code: Code.VersionNotSupported, message: 'this gateway carries HTTP+JSON for A2A 1.0 only' },
  // Version bridge (issue 17): the A2A-Version asked for is one neither the gateway's bridge nor the remote serves.
  VERSION_NOT_SUPPORTED: { code: Code.VersionNotSupported, message: 'neither this gateway nor the remote serves the A2A version asked for' },
  // Version bridge: the operation exists only in the generation the remote does not speak (1.0's ListTasks to a 0.3 remote).
  NO_COUNTERPART: { code: Code.UnsupportedOperation, message: 'the operation does not exist in the A2A version the remote speaks' },
  INVALID_RESPONSE_MESSAGE: { code: Code.InvalidAgentResponse, message: "remote sent a body that is not the operation's response message" },
  NOT_AN_EVENT_STREAM: { code: Code.InvalidAgentResponse, message: 'remote answered a streaming call with a body that is not an event stream' },

  // --- push notification configs (server.push) ---
  PUSH_NOT_ENABLED: { code: Code.PushNotificationNotSupported, message: 'this gateway does not carry push notifications (server.push is not configured)' },
  PUSH_TARGET_NOT_ALLOWED: { code: Code.InvalidParams, message: 'push notification URL is not an allowed local target' },
  PUSH_CONFIG_TOO_LARGE: { code: Code.InvalidParams, message: 'push notification config is too large to carry through the gateway' },
  PUSH_CONFIG_UNREADABLE: { code: Code.InvalidAgentResponse, message: 'remote returned a push notification config the gateway cannot read back (made under a retired key, or altered)' },

  // --- transport (A2A defines none: -32603 is what typed clients map to a transport error) ---
  UPSTREAM_TIMEOUT: { code: Code.InternalError, message: 'remote did not answer in time' },
  UPSTREAM_CONNECT_TIMEOUT: { code: Code.InternalError, message: 'could not connect to the remote in time' },
  UPSTREAM_REFUSED: { code: Code.InternalError, message: 'remote refused the connection' },
  UPSTREAM_UNREACHABLE: { code: Code.InternalError, message: 'remote is unreachable' },
  UPSTREAM_DNS_FAILURE: { code: Code.InternalError, message: 'remote host name could not be resolved' },
  UPSTREAM_RESET: { code: Code.InternalError, message: 'connection to the remote was reset' },
  UPSTREAM_TLS_ERROR: { code: Code.InternalError, message: 'TLS handshake with the remote failed' },
  UPSTREAM_PROTOCOL_ERROR: { code: Code.InvalidAgentResponse, message: 'remote sent a malformed HTTP response' },
  UPSTREAM_STREAM_RESET: { code: Code.InternalError, message: 'remote reset the call before it was complete' },
  UPSTREAM_GOAWAY: { code: Code.InternalError, message: 'remote closed the connection while the call was in flight' },
  EGRESS_DENIED: { code: Code.InternalError, message: 'remote address is not allowed by the egress policy' },

  // --- the gateway's own limits ---
  OVERLOADED: { code: Code.InternalError, message: 'remote has too many calls in flight; try again later' },
  GATEWAY_OVERLOADED: { code: Code.InternalError, message: 'gateway is overloaded; try again later' },
  RATE_LIMITED: { code: Code.InternalError, message: 'rate limit for this remote exceeded; try again later' },
  CIRCUIT_OPEN: { code: Code.InternalError, message: 'remote is failing; calls are paused for a cooldown' },
  GATEWAY_ERROR: { code: Code.InternalError, message: 'gateway internal error' },
  // Never sent (the caller is gone); exists so logs and metrics can name the outcome.
  CALLER_CLOSED: { code: Code.InternalError, message: 'caller closed the connection' },
} as const satisfies Record<string, GatewayErrorSpec>;

export type Reason = keyof typeof gatewayErrors;

/** Reason carried in ErrorInfo when the remote itself sent a typed JSON-RPC error. */
export const REMOTE_ERROR_REASON = 'REMOTE_ERROR';

export const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
/** Domain of the gateway's own ErrorInfo; callers find it by this domain, wherever it sits in `data`. */
export const ERROR_DOMAIN = 'a2a-egress';
/** Domain of the ErrorInfo A2A 1.0 defines for its own error codes (spec §9.5, §11.6). */
export const A2A_ERROR_DOMAIN = 'a2a-protocol.org';

/** The ErrorInfo `reason` A2A 1.0 gives each A2A-specific code; the standard JSON-RPC codes have none. */
export const a2aErrorReasons: Readonly<Record<number, string>> = {
  [Code.TaskNotFound]: 'TASK_NOT_FOUND',
  [Code.TaskNotCancelable]: 'TASK_NOT_CANCELABLE',
  [Code.PushNotificationNotSupported]: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
  [Code.UnsupportedOperation]: 'UNSUPPORTED_OPERATION',
  [Code.ContentTypeNotSupported]: 'CONTENT_TYPE_NOT_SUPPORTED',
  [Code.InvalidAgentResponse]: 'INVALID_AGENT_RESPONSE',
  [Code.ExtendedAgentCardNotConfigured]: 'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
  [Code.ExtensionSupportRequired]: 'EXTENSION_SUPPORT_REQUIRED',
  [Code.VersionNotSupported]: 'VERSION_NOT_SUPPORTED',
};

/**
 * The A2A generation a caller speaks. It decides the shape of `error.data`:
 * 1.0 callers find A2A's ErrorInfo first for A2A error codes; 0.3 has no
 * ErrorInfo convention, so 0.3 callers get the gateway's ErrorInfo alone.
 */
export type CallerGeneration = '0.3' | '1.0';
