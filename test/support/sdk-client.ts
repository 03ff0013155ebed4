/**
 * Thin wrappers over the @a2a-js/sdk 1.3 client so tests read as what they
 * do: build a client from a base URL (card fetched, as a real caller would) or
 * straight from a JSON-RPC URL (no card), send text, stream, get, cancel,
 * resubscribe.
 *
 * Every client built here uses `loopbackOnlyFetch`: the SDK passes no
 * `redirect` option, so fetch would follow a remote's redirect anywhere; the
 * guard follows loopback redirects itself and refuses all others, so no test
 * can ever reach an address outside 127.0.0.0/8 or ::1.
 */
import { Role, type AgentCard, type Message, type SendMessageRequest, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  type RequestOptions,
} from '@a2a-js/sdk/client';
import { textOf, textPart } from './sdk-agent.js';

export { Client } from '@a2a-js/sdk/client';

export class NonLoopbackRedirectError extends Error {
  override name = 'NonLoopbackRedirectError';
  constructor(readonly location: string) {
    super(`refused to follow a redirect outside loopback: ${location}`);
  }
}

const LOOPBACK_HOST = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|localhost)$/;
const MAX_REDIRECTS = 5;

/** fetch that follows redirects only while they stay on loopback. */
export const loopbackOnlyFetch: typeof fetch = async (input, init) => {
  let target = new URL(input instanceof Request ? input.url : String(input));
  let request: RequestInit = { ...init, redirect: 'manual' };
  for (let hop = 0; ; hop++) {
    const response = await fetch(target, request);
    const location = response.headers.get('location');
    if (response.status < 300 || response.status > 399 || location === null) return response;
    const next = new URL(location, target);
    if (!LOOPBACK_HOST.test(next.hostname)) throw new NonLoopbackRedirectError(next.href);
    if (hop >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
    await response.body?.cancel();
    // As fetch does: 303, and 301/302 after POST, become a GET without a body.
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && request.method === 'POST')) {
      const { body: _dropped, ...rest } = request;
      request = { ...rest, method: 'GET' };
    }
    target = next;
  }
};

export interface SdkClientOptions {
  /** Return tasks as soon as they exist instead of blocking until they finish (SDK `polling`). */
  polling?: boolean;
  fetchImpl?: typeof fetch;
}

function factory(opts: SdkClientOptions): ClientFactory {
  const fetchImpl = opts.fetchImpl ?? loopbackOnlyFetch;
  return new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    clientConfig: { polling: opts.polling ?? false },
  });
}

/**
 * The way a real caller starts: fetch `.well-known/agent-card.json` relative
 * to `baseUrl` (give it with its trailing slash) and use the card's interface.
 */
export function clientFromBaseUrl(baseUrl: string, opts: SdkClientOptions = {}): Promise<Client> {
  return factory(opts).createFromUrl(baseUrl);
}

/** A minimal in-memory card whose only interface is `jsonRpcUrl`. */
export function cardFor(jsonRpcUrl: string, streaming = true): AgentCard {
  return {
    name: 'in-memory card',
    description: '',
    version: '0',
    supportedInterfaces: [{ url: jsonRpcUrl, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    capabilities: { streaming, pushNotifications: true, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  };
}

/** A client that talks to `jsonRpcUrl` directly, without fetching any card. */
export function clientForJsonRpcUrl(jsonRpcUrl: string, opts: SdkClientOptions & { streaming?: boolean } = {}): Promise<Client> {
  return factory(opts).createFromAgentCard(cardFor(jsonRpcUrl, opts.streaming ?? true));
}

export function userMessage(text: string, ids: { taskId?: string; contextId?: string } = {}): SendMessageRequest {
  const message: Message = {
    messageId: `user-${Math.random().toString(36).slice(2)}`,
    contextId: ids.contextId ?? '',
    taskId: ids.taskId ?? '',
    role: Role.ROLE_USER,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  return { tenant: '', message, configuration: undefined, metadata: undefined };
}

export function sendText(client: Client, text: string, options?: RequestOptions): Promise<Message | Task> {
  return client.sendMessage(userMessage(text), options);
}

export async function collect<T>(events: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of events) out.push(e);
  return out;
}

/** All events of one SendStreamingMessage call, in order. */
export function streamText(client: Client, text: string, options?: RequestOptions): Promise<StreamResponse[]> {
  return collect(client.sendMessageStream(userMessage(text), options));
}

export function getTask(client: Client, id: string, options?: RequestOptions): Promise<Task> {
  return client.getTask({ tenant: '', id }, options);
}

export function cancelTask(client: Client, id: string, options?: RequestOptions): Promise<Task> {
  return client.cancelTask({ tenant: '', id, metadata: undefined }, options);
}

export function resubscribe(client: Client, id: string, options?: RequestOptions): AsyncGenerator<StreamResponse, void, undefined> {
  return client.resubscribeTask({ tenant: '', id }, options);
}

/** 'task' | 'message' | 'statusUpdate' | 'artifactUpdate' for each event. */
export const eventKinds = (events: readonly StreamResponse[]): string[] => events.map((e) => e.payload?.$case ?? 'none');

export const isTask = (r: Message | Task): r is Task => 'status' in r && 'id' in r;

/** The text a reply carries: a Message's parts, or a Task's status message. */
export function replyText(reply: Message | Task): string {
  return isTask(reply) ? textOf(reply.status?.message) : textOf(reply);
}

/** The task id in a stream event, whatever its kind. */
export function taskIdOf(event: StreamResponse): string | undefined {
  const p = event.payload;
  if (p === undefined) return undefined;
  if (p.$case === 'task') return p.value.id;
  if (p.$case === 'message') return p.value.taskId || undefined;
  return p.value.taskId;
}
