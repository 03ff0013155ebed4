/**
 * A well-behaved A2A 1.0 remote that speaks HTTP+JSON: @a2a-js/sdk 1.3's
 * own server side (DefaultRequestHandler + the express `restHandler`) on
 * 127.0.0.1:0, with the same agent as ./sdk-upstream.ts (./sdk-agent.ts).
 *
 *   PATH/message:send, PATH/tasks/{id}, ...     the REST routes (and their /{tenant} forms)
 *   GET PATH/.well-known/agent-card.json        the card: one HTTP+JSON interface at `${origin}PATH`
 *
 * PATH defaults to /rest. Used by the HTTP+JSON codec's tests to capture the
 * SDK server's real bytes for every operation and error. One addition to the
 * agent: a streamed message whose text starts with "explode" yields the
 * stream's first event and then fails with TaskNotFoundError, so the SDK
 * server writes its real `event: error`.
 */
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AgentCard } from '@a2a-js/sdk';
import {
  DefaultExecutionEventBusManager,
  DefaultPushNotificationSender,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
} from '@a2a-js/sdk/server';
import { agentCardHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { TestAgentExecutor, textOf } from './sdk-agent.js';
import { sdkAgentCard } from './sdk-upstream.js';
import { closeServer, listenOnLoopback, trackConnections } from './servers.js';

type Next = (err?: unknown) => void;
type Middleware = (req: IncomingMessage, res: ServerResponse, next: Next) => void;
interface ExpressApp extends RequestListener {
  use(...handlers: Array<string | Middleware>): void;
  disable(setting: string): void;
}
const express = createRequire(import.meta.url)('express') as () => ExpressApp;

export interface SdkRestUpstreamOptions {
  /** Mount path of the REST routes; default '/rest'. */
  path?: string;
  /** Card `capabilities.pushNotifications`; default true. */
  pushNotifications?: boolean;
  /** Card `capabilities.streaming`; default true. */
  streaming?: boolean;
  /** Serve GetExtendedAgentCard (a copy of the card named "<name> (extended)"); sets `capabilities.extendedAgentCard`. */
  extendedCard?: boolean;
}

export interface SdkRestUpstream {
  /** `${origin}${path}`: the HTTP+JSON interface URL (no trailing slash, as the SDK client strips it). */
  readonly url: string;
  readonly origin: string;
  readonly card: AgentCard;
  close(): Promise<void>;
}

export async function startSdkRestUpstream(opts: SdkRestUpstreamOptions = {}): Promise<SdkRestUpstream> {
  const path = `/${(opts.path ?? '/rest').replace(/^\/+|\/+$/g, '')}`;
  const server = createServer();
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  const origin = `http://127.0.0.1:${port}`;
  const url = `${origin}${path}`;

  const card = sdkAgentCard(url, opts.streaming ?? true, opts.pushNotifications ?? true);
  card.supportedInterfaces = [{ url, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' }];
  if (opts.extendedCard && card.capabilities) card.capabilities.extendedAgentCard = true;
  const extended = opts.extendedCard ? { ...structuredClone(card), name: `${card.name} (extended)` } : undefined;
  const executor = new TestAgentExecutor(0);
  const pushStore = (opts.pushNotifications ?? true) ? new InMemoryPushNotificationStore() : undefined;
  const handler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    executor,
    new DefaultExecutionEventBusManager(),
    pushStore,
    pushStore ? new DefaultPushNotificationSender(pushStore, { timeout: 1000 }) : undefined,
    // A function: the SDK hands a plain card only to authenticated users, and these tests have none.
    extended ? async () => extended : undefined,
  );

  // The SDK's own stream, cut after its first event by an A2A error (what `sendStreamResponse` turns into `event: error`).
  const realStream = handler.sendMessageStream.bind(handler);
  handler.sendMessageStream = async function* (params, context) {
    const stream = realStream(params, context);
    if (!textOf(params.message).startsWith('explode')) return yield* stream;
    for await (const event of stream) {
      yield event;
      throw new TaskNotFoundError({ message: 'the task vanished mid-stream', metadata: { taskId: 'gone' } });
    }
  };

  const app = express();
  app.disable('x-powered-by');
  app.use(`${path}/.well-known/agent-card.json`, agentCardHandler({ agentCardProvider: handler, cache: { maxAge: 0 } }) as unknown as Middleware);
  app.use(path, restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }) as unknown as Middleware);
  server.on('request', app);

  return {
    url,
    origin,
    card,
    close: async () => {
      executor.releaseAll();
      await closeServer(server, tracker);
    },
  };
}
