/**
 * The outbound half of push notifications, on the way to the remote: a
 * call that registers a push config (CreateTaskPushNotificationConfig /
 * tasks/pushNotificationConfig/set, or SendMessage / SendStreamingMessage /
 * message/send / message/stream with a config in `configuration`) leaves
 * the gateway with the caller's webhook URL and authentication replaced by
 * the gateway's webhook URL (`<publicBaseUrl>/<ticket>`, ./ticket.ts) and a
 * credential minted for that config (as `authentication` Bearer and as
 * `token`, so senders that use either present it). The caller's URL must
 * pass the local-target allowlist (./targets.ts) first.
 *
 * Pure apart from the injected random source: the wiring calls
 * `rewritePushRequest` on the call in the caller's generation, before the
 * version bridge, and forwards the returned call (its `rawJsonRpcBody` is
 * gone: the bytes changed). ./reply.ts is the way back.
 */
import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import type { ProtocolGeneration } from '../a2a/operations.js';
import { gatewayErrorOutcome } from '../bindings/error-outcome.js';
import type { A2ACall } from '../core/call.js';
import type { ErrorOutcome } from '../core/outcome.js';
import type { Reason } from '../envelope/codes.js';
import { isObject, member, optionalString, readConfig, ShapeError, writeConfig, type ConfigFields, type JsonObject } from './config-shapes.js';
import type { PushKeyRing } from './keys.js';
import type { TargetPolicy } from './targets.js';
import { mintCredential, sealTicket, type PushTicket } from './ticket.js';

/** The gateway side of push notifications the rewrite needs (PushSettings has these). */
export interface PushGateway {
  /** `publicBaseUrl` without a trailing slash. */
  readonly webhookBase: string;
  readonly keys: PushKeyRing;
  readonly targets: TargetPolicy;
  readonly maxWebhookUrlBytes: number;
}

export interface PushRewriteContext {
  /** Undefined when `server.push` is not configured: push configs are then refused (PUSH_NOT_ENABLED). */
  readonly push: PushGateway | undefined;
  /** The generation the remote speaks (what it will push); default: the call's. */
  readonly remoteGeneration?: ProtocolGeneration;
  /** Wall clock (ms since the epoch) for the ticket's issue time. */
  readonly nowMs: number;
  readonly randomBytes?: (n: number) => Buffer;
}

export type PushRequestRewrite =
  | { readonly kind: 'unchanged' }
  | { readonly kind: 'rewritten'; readonly call: A2ACall }
  | { readonly kind: 'refused'; readonly error: ErrorOutcome };

/** The scheme the gateway's minted credential is presented with. */
export const MINTED_SCHEME = 'Bearer';
/** The caller's token and credentials travel as HTTP header values to its webhook: visible ASCII, bounded. */
const HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
const MAX_TOKEN_BYTES = 1024;
const MAX_CREDENTIAL_BYTES = 4096;

const UNCHANGED: PushRequestRewrite = Object.freeze({ kind: 'unchanged' });

/** Where the config sits in an operation's params, and how to put a new one there. */
interface Site {
  readonly config: unknown;
  readonly taskId: string | undefined;
  readonly write: (config: JsonObject) => JsonObject;
}

export function rewritePushRequest(call: A2ACall, rewriteEnv: PushRewriteContext): PushRequestRewrite {
  const refuse = (reason: Reason, detail?: string): PushRequestRewrite => ({
    kind: 'refused',
    error: gatewayErrorOutcome(reason, { remote: call.remote }, detail),
  });
  let site: Site | undefined;
  let fields: ConfigFields;
  try {
    site = siteOf(call);
    if (site === undefined) return UNCHANGED;
    fields = readConfig(site.config, call.generation, 'the push notification config');
  } catch (err) {
    if (err instanceof ShapeError) return refuse('INVALID_PARAMS', err.message);
    throw err;
  }
  if (!rewriteEnv.push) return refuse('PUSH_NOT_ENABLED');
  if (fields.url === undefined) return refuse('INVALID_PARAMS', 'the push notification config has no url');
  const push = rewriteEnv.push;
  const target = push.targets.check(fields.url, [push.webhookBase]);
  if (!target.ok) return refuse('PUSH_TARGET_NOT_ALLOWED', target.problem);
  if (fields.token !== undefined && !headerSafe(fields.token, MAX_TOKEN_BYTES)) {
    return refuse('INVALID_PARAMS', `the push notification token must be printable ASCII of at most ${MAX_TOKEN_BYTES} bytes`);
  }
  const credentials = fields.auth?.credentials;
  if (credentials !== undefined && !headerSafe(credentials, MAX_CREDENTIAL_BYTES)) {
    return refuse('INVALID_PARAMS', `the push notification credentials must be printable ASCII of at most ${MAX_CREDENTIAL_BYTES} bytes`);
  }

  const ticket: PushTicket = {
    target: fields.url,
    ...(fields.auth ? { auth: fields.auth } : {}),
    ...(fields.token === undefined ? {} : { token: fields.token }),
    remote: call.remote,
    ...(site.taskId === undefined ? {} : { taskId: site.taskId }),
    ...(fields.id === undefined ? {} : { configId: fields.id }),
    callerGeneration: call.generation,
    remoteGeneration: rewriteEnv.remoteGeneration ?? call.generation,
    issuedAt: Math.floor(rewriteEnv.nowMs / 1000),
  };
  const sealed = sealTicket(push.keys, ticket, rewriteEnv.randomBytes ?? cryptoRandomBytes);
  const webhook = `${push.webhookBase}/${sealed}`;
  if (Buffer.byteLength(webhook, 'utf8') > push.maxWebhookUrlBytes) {
    return refuse('PUSH_CONFIG_TOO_LARGE', `the gateway webhook URL would be ${Buffer.byteLength(webhook, 'utf8')} bytes, more than ${push.maxWebhookUrlBytes}`);
  }
  const minted = mintCredential(push.keys.current, sealed);
  const config = writeConfig(
    {
      ...(fields.id === undefined ? {} : { id: fields.id }),
      ...(fields.taskId === undefined ? {} : { taskId: fields.taskId }),
      ...(fields.tenant === undefined ? {} : { tenant: fields.tenant }),
      url: webhook,
      token: minted,
      auth: { schemes: [MINTED_SCHEME], credentials: minted },
    },
    call.generation,
  );
  const params = site.write(config);
  const { rawJsonRpcBody: _changed, ...rest } = call;
  return { kind: 'rewritten', call: { ...rest, params, paramsJson: JSON.stringify(params) } };
}

function headerSafe(value: string, maxBytes: number): boolean {
  return value.length <= maxBytes && HEADER_VALUE.test(value);
}

/** Copies `obj` without either spelling of `camel`, then sets `camel`. */
function replaced(obj: JsonObject, camel: string, value: unknown): JsonObject {
  const snakeName = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) if (k !== camel && k !== snakeName) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  out[camel] = value;
  return out;
}

function siteOf(call: A2ACall): Site | undefined {
  const params = call.params as JsonObject;
  const name = call.operation.name;
  if (name === 'CreateTaskPushNotificationConfig') {
    if (call.generation === '1.0') {
      const taskId = optionalString(params, 'taskId', 'params');
      // The flat config is the whole request: rebuilt from the members the gateway knows.
      return { config: params, taskId, write: (config) => config };
    }
    const taskId = optionalString(params, 'taskId', 'params');
    const inner = member(params, 'pushNotificationConfig');
    if ('twice' in inner) throw new ShapeError('params.pushNotificationConfig is given twice (camelCase and snake_case)');
    return {
      config: inner.present ? inner.value : undefined,
      taskId,
      write: (config) => ({ ...(taskId === undefined ? {} : { taskId }), pushNotificationConfig: config }),
    };
  }
  if (name !== 'SendMessage' && name !== 'SendStreamingMessage') return undefined;
  const configuration = member(params, 'configuration');
  if ('twice' in configuration) throw new ShapeError('params.configuration is given twice');
  if (!configuration.present || configuration.value === null || configuration.value === undefined) return undefined;
  if (!isObject(configuration.value)) throw new ShapeError('params.configuration must be an object');
  const configurationObject = configuration.value;
  const memberName = call.generation === '1.0' ? 'taskPushNotificationConfig' : 'pushNotificationConfig';
  // The other generation's member is no push config of this call, but a lenient remote might read it as one:
  // refused rather than passed on with a caller's URL and credentials the allowlist never saw.
  const otherName = call.generation === '1.0' ? 'pushNotificationConfig' : 'taskPushNotificationConfig';
  const other = member(configurationObject, otherName);
  if ('twice' in other || (other.present && other.value !== null && other.value !== undefined)) {
    throw new ShapeError(`params.configuration.${otherName} is not an A2A ${call.generation} member (the push config is ${memberName})`);
  }
  const inner = member(configurationObject, memberName);
  if ('twice' in inner) throw new ShapeError(`params.configuration.${memberName} is given twice (camelCase and snake_case)`);
  if (!inner.present || inner.value === null || inner.value === undefined) return undefined;
  const message = member(params, 'message');
  const taskId = !('twice' in message) && message.present && isObject(message.value) ? optionalString(message.value, 'taskId', 'params.message') : undefined;
  return {
    config: inner.value,
    taskId,
    write: (config) => replaced(params, 'configuration', replaced(configurationObject, memberName, config)),
  };
}
