/**
 * A well-behaved A2A 0.3-only remote: the server side of @a2a-js/sdk 0.3.14
 * (installed under the alias `a2a-sdk-03`), on 127.0.0.1:0. It speaks only
 * 0.3 (`message/send`, `kind`-discriminated objects) and serves a 0.3 card:
 *   POST PATH/                               JSON-RPC endpoint
 *   GET  PATH/.well-known/agent-card.json    the card (also at the origin root)
 * Its agent does what ./sdk-agent.ts's does, written in 0.3 shapes:
 *   (anything else)  one agent message "echo: <text>"
 *   task ...         task submitted → working → artifact → working → completed
 *   wait ...         task submitted → working, then waits for tasks/cancel
 *   fail ...         task submitted, then the executor throws
 */
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { RequestListener } from 'node:http';
import type { AgentCard, Message, Part, TaskState, TaskStatus } from 'a2a-sdk-03';
import {
  DefaultExecutionEventBusManager,
  DefaultPushNotificationSender,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from 'a2a-sdk-03/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from 'a2a-sdk-03/server/express';
import { ARTIFACT_TEXT, modeOf } from './sdk-agent.js';
import { closeServer, delay, listenOnLoopback, trackConnections, type RecordedRequest } from './servers.js';

interface ExpressApp extends RequestListener {
  use(path: string | RequestListener | ((req: unknown, res: unknown, next: () => void) => void), ...handlers: unknown[]): void;
  disable(setting: string): void;
}
const express = createRequire(import.meta.url)('express') as () => ExpressApp;

export interface Sdk03Upstream {
  /** `${origin}${path}/`: the JSON-RPC URL and a client's base URL. */
  readonly url: string;
  readonly port: number;
  readonly card: AgentCard;
  /** Every request received (method, url, headers; bodies not kept: the SDK parses them). */
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

const text03 = (text: string): Part => ({ kind: 'text', text });

export function textOf03(message: Message | undefined): string {
  return (message?.parts ?? []).map((p) => (p.kind === 'text' ? p.text : '')).join('');
}

function agentMessage(text: string, contextId: string, taskId?: string): Message {
  return { kind: 'message', messageId: `agent-${Math.random().toString(36).slice(2)}`, role: 'agent', parts: [text03(text)], contextId, ...(taskId ? { taskId } : {}) };
}

const statusOf = (state: TaskState, text: string, contextId: string, taskId: string): TaskStatus => ({
  state,
  message: agentMessage(text, contextId, taskId),
  timestamp: new Date().toISOString(),
});

class Agent03 implements AgentExecutor {
  private readonly waiting = new Map<string, { contextId: string; release: () => void }>();

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const text = textOf03(ctx.userMessage);
    const mode = modeOf(text);
    const { taskId, contextId } = ctx;
    if (mode === 'echo') {
      bus.publish(agentMessage(`echo: ${text}`, contextId));
      bus.finished();
      return;
    }
    bus.publish({ kind: 'task', id: taskId, contextId, status: statusOf('submitted', 'submitted', contextId, taskId), history: [ctx.userMessage], artifacts: [] });
    if (mode === 'fail') throw new Error('the 0.3 test agent failed on purpose');
    const update = (state: TaskState, note: string, final = false): void =>
      bus.publish({ kind: 'status-update', taskId, contextId, status: statusOf(state, note, contextId, taskId), final });
    update('working', 'working');
    if (mode === 'wait') {
      await new Promise<void>((release) => this.waiting.set(taskId, { contextId, release }));
      return;
    }
    await delay(0);
    bus.publish({ kind: 'artifact-update', taskId, contextId, artifact: { artifactId: 'result', name: 'result', parts: [text03(ARTIFACT_TEXT)] }, append: false, lastChunk: true });
    update('working', 'almost done');
    update('completed', `done: ${text}`, true);
    bus.finished();
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const waiting = this.waiting.get(taskId);
    this.waiting.delete(taskId);
    const contextId = waiting?.contextId ?? '';
    bus.publish({ kind: 'status-update', taskId, contextId, status: statusOf('canceled', 'canceled', contextId, taskId), final: true });
    bus.finished();
    waiting?.release();
  };

  releaseAll(): void {
    for (const w of this.waiting.values()) w.release();
    this.waiting.clear();
  }
}

export async function startSdk03Upstream(opts: { extendedCard?: boolean } = {}): Promise<Sdk03Upstream> {
  const path = '/a2a';
  const server = createServer();
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  const url = `http://127.0.0.1:${port}${path}/`;
  const card: AgentCard = {
    name: 'SDK 0.3 test agent',
    description: 'A well-behaved A2A 0.3-only agent built on @a2a-js/sdk 0.3.14.',
    version: '0.3.0',
    protocolVersion: '0.3.0',
    url,
    preferredTransport: 'JSONRPC',
    capabilities: { streaming: true, pushNotifications: true, stateTransitionHistory: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Echoes; "task", "wait", "fail" start a task.', tags: ['test'], examples: ['hello'] }],
    supportsAuthenticatedExtendedCard: opts.extendedCard ?? false,
  };
  const agent = new Agent03();
  const pushStore = new InMemoryPushNotificationStore();
  const handler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    agent,
    new DefaultExecutionEventBusManager(),
    pushStore,
    new DefaultPushNotificationSender(pushStore, { timeout: 500 }),
    opts.extendedCard ? { ...card, description: 'extended 0.3 card' } : undefined,
  );
  const requests: RecordedRequest[] = [];
  const app = express();
  app.disable('x-powered-by');
  app.use(((req: { method?: string; url?: string; headers: Record<string, string | string[] | undefined> }, _res: unknown, next: () => void) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers }, body: '' });
    next();
  }) as never);
  const cardRoute = agentCardHandler({ agentCardProvider: handler });
  app.use(`${path}/.well-known/agent-card.json`, cardRoute);
  app.use('/.well-known/agent-card.json', cardRoute);
  app.use(path, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  server.on('request', app);
  return {
    url,
    port,
    card,
    requests,
    close: async () => {
      agent.releaseAll();
      await closeServer(server, tracker);
    },
  };
}
