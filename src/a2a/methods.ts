/**
 * The A2A method names of both live protocol generations (0.3 and 1.0) and
 * what the gateway needs to know about each: does it stream, is it safe to
 * retry. Method names are also the only method label values metrics use.
 */

export type ProtocolGeneration = '0.3' | '1.0';

export interface MethodInfo {
  readonly generation: ProtocolGeneration;
  /** Answered with an SSE stream instead of one JSON-RPC response. */
  readonly streaming: boolean;
  /** Has no side effects on the remote: a transport failure before any byte was sent may be retried. */
  readonly readOnly: boolean;
  /** Returns an agent card inside its result. */
  readonly returnsCard: boolean;
}

const m = (generation: ProtocolGeneration, flags: Partial<Omit<MethodInfo, 'generation'>> = {}): MethodInfo => ({
  generation,
  streaming: flags.streaming ?? false,
  readOnly: flags.readOnly ?? false,
  returnsCard: flags.returnsCard ?? false,
});

export const A2A_METHODS: ReadonlyMap<string, MethodInfo> = new Map([
  // 0.3
  ['message/send', m('0.3')],
  ['message/stream', m('0.3', { streaming: true })],
  ['tasks/get', m('0.3', { readOnly: true })],
  ['tasks/cancel', m('0.3')],
  ['tasks/resubscribe', m('0.3', { streaming: true })],
  ['tasks/pushNotificationConfig/set', m('0.3')],
  ['tasks/pushNotificationConfig/get', m('0.3', { readOnly: true })],
  ['tasks/pushNotificationConfig/list', m('0.3', { readOnly: true })],
  ['tasks/pushNotificationConfig/delete', m('0.3')],
  ['agent/getAuthenticatedExtendedCard', m('0.3', { readOnly: true, returnsCard: true })],
  // 1.0
  ['SendMessage', m('1.0')],
  ['SendStreamingMessage', m('1.0', { streaming: true })],
  ['GetTask', m('1.0', { readOnly: true })],
  ['ListTasks', m('1.0', { readOnly: true })],
  ['CancelTask', m('1.0')],
  ['SubscribeToTask', m('1.0', { streaming: true })],
  ['CreateTaskPushNotificationConfig', m('1.0')],
  ['GetTaskPushNotificationConfig', m('1.0', { readOnly: true })],
  ['ListTaskPushNotificationConfigs', m('1.0', { readOnly: true })],
  ['DeleteTaskPushNotificationConfig', m('1.0')],
  ['GetExtendedAgentCard', m('1.0', { readOnly: true, returnsCard: true })],
]);

export function methodInfo(method: string): MethodInfo | undefined {
  return A2A_METHODS.get(method);
}

/** A bounded label for metrics and logs: the method name if A2A knows it, else "other". */
export function methodLabel(method: string | undefined): string {
  return method !== undefined && A2A_METHODS.has(method) ? method : 'other';
}
