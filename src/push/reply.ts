/**
 * The way back of ./outbound.ts: a remote's reply to create, get or list
 * push configs holds the gateway's webhook URL and the credential it
 * minted. The caller is shown its own again — its URL, token and
 * authentication, read from the ticket in the URL — never the gateway's.
 *
 * A config whose URL is not the gateway's (registered at the remote some
 * other way) is left as it is. One whose URL is the gateway's but whose
 * ticket does not open (sealed under a key the gateway no longer holds,
 * altered, or minted for another remote or task) cannot be shown: a
 * create or get is refused with PUSH_CONFIG_UNREADABLE, a list leaves it
 * out (counted in `dropped`). A reply that still holds a minted credential
 * anywhere after that (a remote echoing it in an id) is refused with
 * CREDENTIAL_ECHOED.
 *
 * Pure. The wiring calls `restorePushReply` on a result in the caller's
 * generation (after the version bridge back).
 */
import type { Operation, ProtocolGeneration } from '../a2a/operations.js';
import { gatewayErrorOutcome } from '../bindings/error-outcome.js';
import type { ErrorOutcome, ResultOutcome } from '../core/outcome.js';
import { isObject, member, writeConfig, type JsonObject } from './config-shapes.js';
import type { PushGateway } from './outbound.js';
import { mintCredential, openTicket } from './ticket.js';

export type PushReplyRestore =
  | { readonly kind: 'unchanged' }
  | { readonly kind: 'restored'; readonly outcome: ResultOutcome; readonly restored: number; readonly dropped: number }
  | { readonly kind: 'refused'; readonly error: ErrorOutcome };

const UNCHANGED: PushReplyRestore = Object.freeze({ kind: 'unchanged' });

type One = { readonly kind: 'foreign' } | { readonly kind: 'unreadable' } | { readonly kind: 'restored'; readonly value: JsonObject };

interface Restorer {
  readonly push: PushGateway;
  readonly remote: string;
  readonly generation: ProtocolGeneration;
  readonly credentials: string[];
}

export function restorePushReply(
  call: { readonly remote: string; readonly operation: Operation; readonly generation: ProtocolGeneration },
  outcome: ResultOutcome,
  push: PushGateway | undefined,
): PushReplyRestore {
  const name = call.operation.name;
  if (!push || (name !== 'CreateTaskPushNotificationConfig' && name !== 'GetTaskPushNotificationConfig' && name !== 'ListTaskPushNotificationConfigs')) return UNCHANGED;
  const r: Restorer = { push, remote: call.remote, generation: call.generation, credentials: [] };
  const unreadable = (): PushReplyRestore => ({
    kind: 'refused',
    error: gatewayErrorOutcome('PUSH_CONFIG_UNREADABLE', { remote: call.remote }),
  });

  let value: unknown;
  let restored = 0;
  let dropped = 0;
  if (name === 'ListTaskPushNotificationConfigs') {
    const list = listOf(outcome.value, call.generation);
    if (list === undefined) return UNCHANGED;
    const kept: unknown[] = [];
    for (const item of list.items) {
      const one = restoreEntry(item, r);
      if (one.kind === 'unreadable') dropped++;
      else if (one.kind === 'restored') {
        restored++;
        kept.push(one.value);
      } else kept.push(item);
    }
    value = list.rebuild(kept);
  } else {
    const one = restoreEntry(outcome.value, r);
    if (one.kind === 'unreadable') return unreadable();
    if (one.kind === 'foreign') return UNCHANGED;
    restored = 1;
    value = one.value;
  }
  if (restored === 0 && dropped === 0) return UNCHANGED;
  const json = JSON.stringify(value);
  if (r.credentials.some((c) => json.includes(c))) {
    return { kind: 'refused', error: gatewayErrorOutcome('CREDENTIAL_ECHOED', { remote: call.remote }, 'in a push notification config') };
  }
  return { kind: 'restored', outcome: { kind: 'result', json, value }, restored, dropped };
}

function listOf(value: unknown, generation: ProtocolGeneration): { items: readonly unknown[]; rebuild: (items: unknown[]) => unknown } | undefined {
  if (generation === '0.3') return Array.isArray(value) ? { items: value, rebuild: (items) => items } : undefined;
  if (!isObject(value)) return undefined;
  const configs = member(value, 'configs');
  if ('twice' in configs || !configs.present || !Array.isArray(configs.value)) return undefined;
  return { items: configs.value, rebuild: (items) => ({ ...withoutMember(value, 'configs'), configs: items }) };
}

/** One entry of a reply: a 1.0 flat config, or a 0.3 `{taskId, pushNotificationConfig}`. */
function restoreEntry(entry: unknown, r: Restorer): One {
  if (!isObject(entry)) return { kind: 'foreign' };
  if (r.generation === '1.0') {
    const taskId = stringMember(entry, 'taskId');
    return restoreConfig(entry, taskId, r);
  }
  const inner = member(entry, 'pushNotificationConfig');
  if ('twice' in inner || !inner.present || !isObject(inner.value)) return { kind: 'foreign' };
  const one = restoreConfig(inner.value, stringMember(entry, 'taskId'), r);
  if (one.kind !== 'restored') return one;
  return { ...one, value: { ...withoutMember(entry, 'pushNotificationConfig'), pushNotificationConfig: one.value } };
}

function restoreConfig(config: JsonObject, taskId: string | undefined, r: Restorer): One {
  const url = stringMember(config, 'url');
  const prefix = `${r.push.webhookBase}/`;
  if (url === undefined || !url.startsWith(prefix)) return { kind: 'foreign' };
  const text = url.slice(prefix.length);
  const opened = openTicket(r.push.keys, text);
  if (!opened.ok) return { kind: 'unreadable' };
  const { ticket } = opened;
  const id = stringMember(config, 'id');
  if (ticket.remote !== r.remote) return { kind: 'unreadable' };
  if (ticket.taskId !== undefined && taskId !== undefined && ticket.taskId !== taskId) return { kind: 'unreadable' };
  if (ticket.configId !== undefined && id !== undefined && ticket.configId !== id) return { kind: 'unreadable' };
  r.credentials.push(mintCredential(opened.key, text));
  // The remote's own members (id, taskId, tenant, anything else) stay; what the gateway put there goes back.
  let kept: JsonObject = config;
  for (const m of ['url', 'token', 'authentication']) kept = withoutMember(kept, m);
  const mine = writeConfig(
    {
      url: ticket.target,
      ...(ticket.token === undefined ? {} : { token: ticket.token }),
      ...(ticket.auth === undefined ? {} : { auth: ticket.auth }),
    },
    r.generation,
  );
  return { kind: 'restored', value: { ...kept, ...mine } };
}

function stringMember(obj: JsonObject, camel: string): string | undefined {
  const m = member(obj, camel);
  return !('twice' in m) && m.present && typeof m.value === 'string' && m.value !== '' ? m.value : undefined;
}

function withoutMember(obj: JsonObject, camel: string): JsonObject {
  const snakeName = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k !== camel && k !== snakeName) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
