/**
 * The README's "Version bridging" table, generated from the tables the
 * translators run on (operations, states, roles, stream payloads, security
 * schemes, OAuth flows, error reasons) plus one row per structural rule.
 * test/unit/bridge-table.test.ts fails when the README drifts from it;
 * `npx tsx scripts/bridge-table.ts --write` rewrites it.
 */
import { OPERATION_LIST } from '../operations.js';
import { DEFAULT_TRANSPORT_03, TARGET_PROTOCOL_VERSION } from './card.js';
import { ROLES, TASK_STATES } from './enums.js';
import { A2A_ERROR_REASONS } from './errors.js';
import { STREAM_PAYLOADS } from './events.js';
import { MAX_DROP_LABELS } from './json.js';
import { DATA_PART_COMPAT_FLAG } from './parts.js';
import { OAUTH_FLOWS, SECURITY_SCHEMES } from './security.js';

export interface MappingRow {
  readonly area: string;
  readonly v03: string;
  readonly v10: string;
  /** What changes on the way, and what is dropped (and counted) because the other side has no counterpart. */
  readonly note: string;
}

const code = (s: string): string => (s === '—' ? s : `\`${s}\``);
const row = (area: string, v03: string, v10: string, note = ''): MappingRow => ({ area, v03, v10, note });

function methodRows(): MappingRow[] {
  return OPERATION_LIST.map((op) =>
    row('method', code(op.jsonrpc['0.3'] ?? '—'), code(op.jsonrpc['1.0'] ?? '—'), op.jsonrpc['0.3'] ? '' : 'no 0.3 counterpart: the call is answered -32004 (UnsupportedOperation)'),
  );
}

const PARAMS: readonly MappingRow[] = [
  row('params', '`MessageSendParams` `{message, configuration, metadata}`', '`SendMessageRequest` `{tenant, message, configuration, metadata}`', '`tenant` dropped toward 0.3 (here and in every request)'),
  row('params', '`configuration.blocking`', '`configuration.returnImmediately`', 'negated; absent stays absent (both generations block by default)'),
  row('params', '`configuration.pushNotificationConfig`', '`configuration.taskPushNotificationConfig`', 'its `taskId` and `tenant` dropped toward 0.3'),
  row('params', '`configuration.acceptedOutputModes`, `historyLength`', 'the same', 'int32 (ProtoJSON numbers or decimal strings) read; out of range dropped'),
  row('params', '`TaskQueryParams` `{id, historyLength, metadata}`', '`GetTaskRequest` `{tenant, id, historyLength}`', '0.3 `metadata` dropped'),
  row('params', '`TaskIdParams` `{id, metadata}` (tasks/cancel)', '`CancelTaskRequest` `{tenant, id, metadata}`'),
  row('params', '`TaskIdParams` `{id, metadata}` (tasks/resubscribe)', '`SubscribeToTaskRequest` `{tenant, id}`', '0.3 `metadata` dropped'),
  row('params', '`TaskPushNotificationConfig` `{taskId, pushNotificationConfig}` (set)', '`TaskPushNotificationConfig` (flat)', 'a config set without an id gets the task id (where 0.3 servers store it, so a later get or delete without a config id finds it)'),
  row('params', '`GetTaskPushNotificationConfigParams` `{id, pushNotificationConfigId?}`', '`GetTaskPushNotificationConfigRequest` `{tenant, taskId, id}`', 'no `pushNotificationConfigId` means the config stored under the task id'),
  row('params', '`ListTaskPushNotificationConfigParams` `{id, metadata}`', '`ListTaskPushNotificationConfigsRequest` `{tenant, taskId, pageSize, pageToken}`', 'paging dropped toward 0.3; 0.3 `metadata` dropped'),
  row('params', '`DeleteTaskPushNotificationConfigParams` `{id, pushNotificationConfigId, metadata}`', '`DeleteTaskPushNotificationConfigRequest` `{tenant, taskId, id}`', '0.3 `metadata` dropped'),
  row('params', 'none', '`GetExtendedAgentCardRequest` `{tenant}`'),
];

const OBJECTS: readonly MappingRow[] = [
  row('result', '`Task` or `Message` with `kind`', '`SendMessageResponse` `{task}` or `{message}`'),
  row('object', '`Task` `{kind: "task", id, contextId, status, artifacts, history, metadata}`', '`Task` (no `kind`)', '`contextId` is required in 0.3: `""` when 1.0 leaves it out'),
  row('object', '`Message` `{kind: "message", messageId, contextId, taskId, role, parts, metadata, extensions, referenceTaskIds}`', '`Message` (no `kind`)', 'empty optional ids are ProtoJSON defaults: not written toward 0.3'),
  row('object', '`Artifact`', '`Artifact`', 'same members; parts translated'),
  row('object', '`TaskStatus.timestamp` (free text)', '`TaskStatus.timestamp` (RFC 3339)', 'a date-time without offset is read as UTC; other text dropped'),
  row('part', '`{kind: "text", text}`', '`{text}`', 'a text part’s `filename`, and a `mediaType` other than `text/plain`, dropped toward 0.3'),
  row('part', '`{kind: "file", file: {bytes, name, mimeType}}`', '`{raw, filename, mediaType}`', 'base64 normalized to the standard alphabet; a part whose bytes are not base64 is dropped'),
  row('part', '`{kind: "file", file: {uri, name, mimeType}}`', '`{url, filename, mediaType}`'),
  row('part', '`{kind: "data", data: {…}}`', '`{data}` (any JSON value)', `a 1.0 value that is not an object travels as \`{value: X}\` with \`metadata.${DATA_PART_COMPAT_FLAG}: true\` (the @a2a-js/sdk convention) and is unwrapped back; \`filename\`, and a \`mediaType\` other than \`application/json\`, dropped toward 0.3`),
  row('part', 'a part with no content', 'a part with no content', 'dropped (no counterpart)'),
  row('push config', '`{taskId, pushNotificationConfig: {url, id, token, authentication}}`', '`{tenant, id, taskId, url, token, authentication}`'),
  row('push config', '`authentication` `{schemes: [...], credentials}`', '`authentication` `{scheme, credentials}`', 'only the first scheme kept toward 1.0'),
  row('result', '`[TaskPushNotificationConfig]` (tasks/pushNotificationConfig/list)', '`{configs, nextPageToken}`', '`nextPageToken` dropped toward 0.3 (a 0.3 caller sees the first page)'),
  row('result', '`null` (tasks/pushNotificationConfig/delete)', '`{}` (`google.protobuf.Empty`)'),
];

function enumRows(): MappingRow[] {
  return [
    ...TASK_STATES.map(([v03, v10, n]) => row('task state', code(v03), `${code(v10)} (${n})`)),
    ...ROLES.map(([v03, v10, n]) => row('role', code(v03), `${code(v10)} (${n})`)),
    row('role', '`user` / `agent`', '`ROLE_UNSPECIFIED` (0)', 'no 0.3 counterpart: `user` for the message a caller sends, `agent` elsewhere; counted'),
  ];
}

function streamRows(): MappingRow[] {
  return [
    ...STREAM_PAYLOADS.map(([v10, v03]) => row('stream event', `\`{kind: "${v03}", …}\``, `\`{${v10}: {…}}\``)),
    row('stream event', '`status-update.final`', '— (the stream ends)', 'toward 0.3 `final` is true for terminal and interrupted states (1.0 ends the stream there); toward 1.0 a `final` that disagrees with its state is counted'),
  ];
}

function errorRows(): MappingRow[] {
  return [
    row('error', '`code`', '`code`', 'the same numbers; -32008 and -32009 (1.0 only) pass unchanged'),
    row('error', '`data` (free-form)', '`data` (array of `@type` objects)', 'both sides get the array of `@type` objects; other 0.3 data dropped toward 1.0 (a lone `@type` object is wrapped)'),
    row('error', '—', '`google.rpc.ErrorInfo` (domain `a2a-protocol.org`)', `added toward 1.0 for A2A codes that lack it: ${Object.entries(A2A_ERROR_REASONS).map(([c, r]) => `${c} \`${r}\``).join(', ')}`),
  ];
}

function cardRows(): MappingRow[] {
  return [
    row('card', `\`url\` + \`preferredTransport\` (default \`${DEFAULT_TRANSPORT_03}\`) + \`additionalInterfaces[]\``, '`supportedInterfaces[]` `{url, protocolBinding, protocolVersion, tenant}`', 'interfaces deduplicated by URL and binding; `tenant` dropped toward 0.3'),
    row('card', '`protocolVersion`', '`supportedInterfaces[].protocolVersion`', `the bridged card states what the caller speaks to the gateway: \`${TARGET_PROTOCOL_VERSION['0.3']}\` / \`${TARGET_PROTOCOL_VERSION['1.0']}\``),
    row('card', '`supportsAuthenticatedExtendedCard`', '`capabilities.extendedAgentCard`', 'spec 1.0 Appendix A.2.2'),
    row('card', '`capabilities.stateTransitionHistory`', '—', 'dropped (counted when true)'),
    row('card', '`security`, `skills[].security` `[{name: [scopes]}]`', '`securityRequirements` `[{schemes: {name: {list: [scopes]}}}]`'),
    row('card', '`signatures`', '`signatures`', 'dropped: they sign the other generation’s card and could not verify'),
    ...SECURITY_SCHEMES.map(([v03, v10, members]) =>
      row('security scheme', `\`{type: "${v03}"${members.map(([m]) => `, ${m}`).join('')}}\``, `\`{${v10}: {${members.map(([, m]) => m).join(', ')}}}\``, v03 === 'apiKey' ? 'a `location` other than cookie, header, query becomes `header`; counted' : ''),
    ),
    row('oauth flows', OAUTH_FLOWS.filter(([f]) => f !== 'deviceCode').map(([f]) => `\`${f}\``).join(', ') + ' side by side', `one of ${OAUTH_FLOWS.map(([f]) => `\`${f}\``).join(', ')}`, 'toward 1.0 the first (in that order) is kept, the others dropped; `deviceCode` and `pkceRequired: true` dropped toward 0.3'),
  ];
}

const GENERAL: readonly MappingRow[] = [
  row('any', 'a member the translator does not know', 'the same', 'dropped, counted as `<path>.*` (member names never become labels)'),
  row('any', 'a list element without its identity', 'the same', 'a message without `messageId`, an artifact without `artifactId`, a skill without `id`, an interface without `url`, …: dropped, counted as `<path>[]`'),
  row('any', 'a required member missing', 'the same', `written with its proto default (\`""\`, \`[]\`, \`{}\`, unspecified) so the output validates; at most ${MAX_DROP_LABELS} distinct labels per translation`),
];

export function bridgeMappingRows(): MappingRow[] {
  return [...methodRows(), ...PARAMS, ...OBJECTS, ...enumRows(), ...streamRows(), ...errorRows(), ...cardRows(), ...GENERAL];
}

export function bridgeMappingTable(): string {
  const lines = ['| area | A2A 0.3 | A2A 1.0 | what changes, what is dropped |', '|---|---|---|---|'];
  for (const r of bridgeMappingRows()) lines.push(`| ${r.area} | ${r.v03} | ${r.v10} | ${r.note} |`);
  return lines.join('\n');
}

const START = '<!-- bridge:start -->';
const END = '<!-- bridge:end -->';

/** The README with the bridge table put between its markers. */
export function withBridgeTable(readme: string): string {
  const a = readme.indexOf(START);
  const b = readme.indexOf(END);
  if (a === -1 || b === -1 || b < a) throw new Error(`README has no ${START} ... ${END} markers`);
  return `${readme.slice(0, a + START.length)}\n${bridgeMappingTable()}\n${readme.slice(b)}`;
}
