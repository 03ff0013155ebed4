/**
 * fast-check arbitraries for the version bridge: valid A2A 0.3 and 1.0
 * messages, tasks, events, params, push configs and cards (shapes both
 * generations can carry, so a round trip must give back what went in), and
 * "shapely junk": objects built from the member names the translators know,
 * holding anything, so the odd-input paths are reached, not just rejected at
 * the top.
 */
import fc from 'fast-check';

const MAX = 3;
const id = fc.string({ minLength: 1, maxLength: 8 });
const text = fc.string({ maxLength: 12 });
const nonEmpty = fc.string({ minLength: 1, maxLength: 12 });
/** Map keys a translator copies (the bridge drops the prototype-touching ones, as the normalizer refuses them). */
const key = nonEmpty.filter((k) => !['__proto__', 'constructor', 'prototype'].includes(k));
const strings = fc.array(nonEmpty, { maxLength: MAX });
// The gateway refuses a caller's JSON that names __proto__ or constructor at any depth (fc.jsonValue makes such keys):
// valid params never do.
const noPrototypeNames = (value: unknown) => !/"(?:__proto__|constructor)":/.test(JSON.stringify(value));
const struct = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3, noNullPrototype: true }).filter(noPrototypeNames);
/** An empty Struct is the proto default, i.e. absent: a round trip may not keep `{}`. */
const filledStruct = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1, maxKeys: 3, noNullPrototype: true }).filter(noPrototypeNames);
const base64 = fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b).toString('base64'));
/** RFC 3339 with Z, years 1..9999 (what a 1.0 Timestamp holds). */
const timestamp = fc
  .date({ min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true })
  .map((d) => d.toISOString());

/** An object with `required` members and any subset of `optional` ones. */
function obj<R extends Record<string, fc.Arbitrary<unknown>>, O extends Record<string, fc.Arbitrary<unknown>>>(required: R, optional: O) {
  return fc.record({ ...required, ...optional } as R & O, { requiredKeys: Object.keys(required) as (keyof R & string)[] });
}

export const STATES_03 = ['submitted', 'working', 'input-required', 'completed', 'canceled', 'failed', 'rejected', 'auth-required', 'unknown'] as const;
export const STATES_10 = ['TASK_STATE_UNSPECIFIED', 'TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_REJECTED', 'TASK_STATE_AUTH_REQUIRED'] as const;
const ENDING = new Set(['completed', 'canceled', 'failed', 'rejected', 'input-required', 'auth-required']);

// ---- 0.3 -----------------------------------------------------------------
const part03 = fc.oneof(
  obj({ kind: fc.constant('text'), text }, { metadata: struct }),
  obj({ kind: fc.constant('file'), file: obj({ bytes: base64 }, { name: nonEmpty, mimeType: nonEmpty }) }, { metadata: struct }),
  obj({ kind: fc.constant('file'), file: obj({ uri: nonEmpty }, { name: nonEmpty, mimeType: nonEmpty }) }, { metadata: struct }),
  obj({ kind: fc.constant('data'), data: struct }, { metadata: struct }),
  // What a 1.0 data value that is not an object looks like in 0.3.
  obj({ kind: fc.constant('data'), data: fc.record({ value: fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.integer())) }), metadata: fc.constant({ data_part_compat: true }) }, {}),
);
export const message03 = obj(
  { kind: fc.constant('message'), messageId: id, role: fc.constantFrom('user', 'agent'), parts: fc.array(part03, { maxLength: MAX }) },
  { contextId: id, taskId: id, metadata: struct, extensions: strings, referenceTaskIds: strings },
);
const artifact03 = obj({ artifactId: id, parts: fc.array(part03, { maxLength: MAX }) }, { name: nonEmpty, description: nonEmpty, metadata: struct, extensions: strings });
const status03 = obj({ state: fc.constantFrom(...STATES_03) }, { message: message03, timestamp });
export const task03 = obj(
  { kind: fc.constant('task'), id, contextId: id, status: status03 },
  { artifacts: fc.array(artifact03, { maxLength: MAX }), history: fc.array(message03, { maxLength: MAX }), metadata: struct },
);
const statusUpdate03 = obj({ kind: fc.constant('status-update'), taskId: id, contextId: id, status: status03 }, { metadata: struct }).map((e) => ({
  ...e,
  final: ENDING.has((e.status as { state: string }).state),
}));
const artifactUpdate03 = obj({ kind: fc.constant('artifact-update'), taskId: id, contextId: id, artifact: artifact03 }, { append: fc.boolean(), lastChunk: fc.boolean(), metadata: struct });
export const event03 = fc.oneof(task03, message03, statusUpdate03, artifactUpdate03);

const auth03 = obj({ schemes: fc.array(nonEmpty, { maxLength: 1 }) }, { credentials: nonEmpty });
const pushConfig03 = obj({ url: nonEmpty }, { id, token: nonEmpty, authentication: auth03 });
export const taskPushConfig03 = obj({ taskId: id, pushNotificationConfig: pushConfig03 }, {});
export const sendParams03 = obj(
  { message: message03 },
  { configuration: obj({}, { acceptedOutputModes: strings, blocking: fc.boolean(), historyLength: fc.integer({ min: -2147483648, max: 2147483647 }), pushNotificationConfig: pushConfig03 }), metadata: struct },
);

// ---- 1.0 -----------------------------------------------------------------
const part10 = fc.oneof(
  obj({ text }, { metadata: struct }),
  obj({ raw: base64 }, { filename: nonEmpty, mediaType: nonEmpty, metadata: struct }),
  obj({ url: nonEmpty }, { filename: nonEmpty, mediaType: nonEmpty, metadata: struct }),
  obj({ data: fc.jsonValue({ maxDepth: 2 }) }, { metadata: filledStruct }),
).filter((p) => !(p.metadata && Object.hasOwn(p.metadata as object, 'data_part_compat')));
export const message10 = obj(
  { messageId: id, role: fc.constantFrom('ROLE_USER', 'ROLE_AGENT'), parts: fc.array(part10, { maxLength: MAX }) },
  { contextId: id, taskId: id, metadata: struct, extensions: strings, referenceTaskIds: strings },
);
const artifact10 = obj({ artifactId: id, parts: fc.array(part10, { maxLength: MAX }) }, { name: nonEmpty, description: nonEmpty, metadata: struct, extensions: strings });
const status10 = obj({ state: fc.constantFrom(...STATES_10) }, { message: message10, timestamp });
export const task10 = obj({ id, contextId: id, status: status10 }, { artifacts: fc.array(artifact10, { maxLength: MAX }), history: fc.array(message10, { maxLength: MAX }), metadata: struct });
export const event10 = fc.oneof(
  task10.map((task) => ({ task })),
  message10.map((message) => ({ message })),
  obj({ taskId: id, contextId: id, status: status10 }, { metadata: struct }).map((statusUpdate) => ({ statusUpdate })),
  obj({ taskId: id, contextId: id, artifact: artifact10 }, { append: fc.boolean(), lastChunk: fc.boolean(), metadata: struct }).map((artifactUpdate) => ({ artifactUpdate })),
);
export const taskPushConfig10 = obj({ taskId: id, url: nonEmpty }, { id, token: nonEmpty, authentication: obj({ scheme: nonEmpty }, { credentials: nonEmpty }) });

// ---- cards (0.3 shapes that 1.0 can carry) --------------------------------
const url = nonEmpty.map((s) => `https://${encodeURIComponent(s)}.example/`);
const scopes = fc.dictionary(key, text, { maxKeys: 2, noNullPrototype: true });
const flow = fc.oneof(
  obj({ authorizationCode: obj({ authorizationUrl: url, tokenUrl: url, scopes }, { refreshUrl: url }) }, {}),
  obj({ clientCredentials: obj({ tokenUrl: url, scopes }, { refreshUrl: url }) }, {}),
  obj({ implicit: obj({ authorizationUrl: url, scopes }, { refreshUrl: url }) }, {}),
  obj({ password: obj({ tokenUrl: url, scopes }, { refreshUrl: url }) }, {}),
);
const scheme03 = fc.oneof(
  obj({ type: fc.constant('apiKey'), in: fc.constantFrom('header', 'query', 'cookie'), name: nonEmpty }, { description: nonEmpty }),
  obj({ type: fc.constant('http'), scheme: nonEmpty }, { bearerFormat: nonEmpty, description: nonEmpty }),
  obj({ type: fc.constant('oauth2'), flows: flow }, { oauth2MetadataUrl: url, description: nonEmpty }),
  obj({ type: fc.constant('openIdConnect'), openIdConnectUrl: url }, { description: nonEmpty }),
  obj({ type: fc.constant('mutualTLS') }, { description: nonEmpty }),
);
const requirements03 = fc.array(fc.dictionary(key, strings, { maxKeys: 2, noNullPrototype: true }), { maxLength: 2 });
const skill03 = obj({ id, name: text, description: text, tags: strings }, { examples: strings, inputModes: strings, outputModes: strings, security: requirements03 });
const transport = fc.constantFrom('JSONRPC', 'GRPC', 'HTTP+JSON');
export const card03 = obj(
  {
    name: text, description: text, version: text, url, preferredTransport: transport, protocolVersion: fc.constant('0.3.0'),
    capabilities: obj({}, { streaming: fc.boolean(), pushNotifications: fc.boolean(), extensions: fc.array(obj({ uri: url }, { description: nonEmpty, required: fc.boolean(), params: struct }), { maxLength: 2 }) }),
    defaultInputModes: strings, defaultOutputModes: strings, skills: fc.array(skill03, { maxLength: 2 }),
  },
  {
    provider: obj({ url, organization: text }, {}), iconUrl: url, documentationUrl: url, supportsAuthenticatedExtendedCard: fc.boolean(),
    securitySchemes: fc.dictionary(key, scheme03, { maxKeys: 3, noNullPrototype: true }), security: requirements03,
    additionalInterfaces: fc.uniqueArray(fc.record({ url, transport }), { maxLength: 3, selector: (i) => `${i.transport} ${i.url}` }),
  },
).map((card) => {
  // 0.3 lists the main interface among the additional ones (§5.6); a bridged card always does, when there are several.
  const { additionalInterfaces, ...rest } = card as typeof card & { additionalInterfaces?: { url: string; transport: string }[] };
  const others = (additionalInterfaces ?? []).filter((i) => !(i.url === card.url && i.transport === card.preferredTransport));
  return others.length === 0 ? rest : { ...rest, additionalInterfaces: [{ url: card.url, transport: card.preferredTransport }, ...others] };
});

// ---- junk -----------------------------------------------------------------
/** Every member name the translators read, in either generation, plus proto spellings and a marker name. */
export const KNOWN_NAMES = [
  'kind', 'text', 'file', 'data', 'metadata', 'bytes', 'uri', 'name', 'mimeType', 'raw', 'url', 'filename', 'mediaType', 'media_type',
  'messageId', 'message_id', 'contextId', 'taskId', 'role', 'parts', 'extensions', 'referenceTaskIds', 'artifactId', 'description',
  'state', 'message', 'timestamp', 'id', 'status', 'artifacts', 'history', 'final', 'artifact', 'append', 'lastChunk', 'task',
  'statusUpdate', 'artifactUpdate', 'status_update', 'configuration', 'tenant', 'blocking', 'returnImmediately', 'historyLength',
  'acceptedOutputModes', 'pushNotificationConfig', 'taskPushNotificationConfig', 'token', 'authentication', 'schemes', 'scheme',
  'credentials', 'pushNotificationConfigId', 'pageSize', 'pageToken', 'configs', 'nextPageToken', 'code', 'data', '@type', 'domain',
  'supportedInterfaces', 'protocolBinding', 'protocolVersion', 'preferredTransport', 'additionalInterfaces', 'transport', 'capabilities',
  'streaming', 'pushNotifications', 'stateTransitionHistory', 'extendedAgentCard', 'supportsAuthenticatedExtendedCard', 'skills', 'tags',
  'securitySchemes', 'security', 'securityRequirements', 'type', 'in', 'location', 'flows', 'authorizationCode', 'deviceCode',
  'tokenUrl', 'scopes', 'pkceRequired', 'list', 'provider', 'organization', 'signatures', 'apiKeySecurityScheme', 'mtlsSecurityScheme',
  'oauth2SecurityScheme', 'value', 'data_part_compat', 'zqUnknown', '__proto__',
];
const KNOWN_VALUES = ['text', 'file', 'data', 'task', 'message', 'status-update', 'artifact-update', 'user', 'agent', 'ROLE_USER', 'ROLE_AGENT', 'completed', 'TASK_STATE_WORKING', 'apiKey', 'oauth2', 'mutualTLS', 'aGk=', '2025-01-01T00:00:00', ''];

/** Objects of known member names holding anything (including more such objects), and plain JSON junk. */
export const junk: fc.Arbitrary<unknown> = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(...KNOWN_VALUES),
    fc.integer({ min: -9, max: 9 }),
    fc.array(tie('node'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...KNOWN_NAMES), tie('node'), { maxKeys: 6 }),
  ),
})).node;
