/**
 * A well-behaved A2A 1.0 remote built from @a2a-js/sdk 1.3's own server side
 * (DefaultRequestHandler + the express integration) on 127.0.0.1:0.
 *
 * Layout (PATH defaults to /a2a):
 *   POST PATH/                                 JSON-RPC endpoint (also answers POST PATH)
 *   GET  PATH/.well-known/agent-card.json      the card, beside the endpoint
 *   GET  /.well-known/agent-card.json          the same card at the origin root
 * The card's only interface is { url: `${origin}PATH/`, JSONRPC, 1.0 }, so
 * `url` below is both the JSON-RPC URL and the base URL an SDK client
 * resolves the card against (it has the trailing slash that needs).
 * What the agent does per message is in ./sdk-agent.ts.
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
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { createLegacyAwarePushNotificationSender } from '@a2a-js/sdk/compat/v0_3/server';
import { TestAgentExecutor } from './sdk-agent.js';
import { closeServer, listenOnLoopback, trackConnections, type RecordedRequest } from './servers.js';

export type { RecordedRequest } from './servers.js';

// express 5 ships no types and @types/express is not installed: describe the little used here.
type Next = (err?: unknown) => void;
type Middleware = (req: IncomingMessage, res: ServerResponse, next: Next) => void;
type ErrorMiddleware = (err: unknown, req: IncomingMessage, res: ServerResponse, next: Next) => void;
interface ExpressApp extends RequestListener {
  use(...handlers: Array<string | Middleware | ErrorMiddleware | Array<Middleware | ErrorMiddleware>>): void;
  disable(setting: string): void;
}
interface Express {
  (): ExpressApp;
  json(opts: { limit?: string; verify?: (req: IncomingMessage, res: ServerResponse, buf: Buffer) => void }): Middleware;
}
const express = createRequire(import.meta.url)('express') as Express;

export interface SdkUpstreamOptions {
  /** Mount path of the JSON-RPC endpoint; default '/a2a'. */
  path?: string;
  /** Card `capabilities.streaming`; default true. With false the SDK client falls back to SendMessage. */
  streaming?: boolean;
  /** Card `capabilities.pushNotifications` and the push config store; default true. */
  pushNotifications?: boolean;
  /** Pause between a `task` run's events; default 0. */
  stepDelayMs?: number;
  /**
   * Also speak A2A 0.3 (SDK `legacyCompat`): a request with `A2A-Version: 0.3`
   * or none at all is served as 0.3 (`message/send`, ...), and the card gains
   * a second, 0.3 JSONRPC interface at the same URL. Default false: such
   * requests get -32009 VersionNotSupported. Push configs registered over
   * 0.3 then get 0.3 payloads (the SDK's legacy-aware push sender).
   */
  legacyCompat?: boolean;
  /** Last word on the card (e.g. add a gRPC interface, long descriptions, signatures). */
  editCard?: (card: AgentCard) => void;
  /** Serve GetExtendedAgentCard with this card (built from the public one); sets `capabilities.extendedAgentCard`. */
  extendedCard?: (card: AgentCard) => AgentCard;
}

export interface SdkUpstream {
  /** `${origin}${path}/`: the JSON-RPC URL and the SDK client's base URL. */
  readonly url: string;
  /** `${url}.well-known/agent-card.json` */
  readonly cardUrl: string;
  /** `${origin}/.well-known/agent-card.json` */
  readonly rootCardUrl: string;
  readonly origin: string;
  readonly port: number;
  readonly card: AgentCard;
  /** Every request received (JSON bodies as the raw text sent). */
  readonly requests: RecordedRequest[];
  openConnections(): number;
  close(): Promise<void>;
}

export function sdkAgentCard(interfaceUrl: string, streaming: boolean, pushNotifications: boolean): AgentCard {
  return {
    name: 'SDK test agent',
    description: 'A well-behaved A2A 1.0 agent built on @a2a-js/sdk, used as a real upstream in tests.',
    version: '1.0.0',
    supportedInterfaces: [{ url: interfaceUrl, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: { organization: 'a2a-egress tests', url: 'https://example.com/a2a-egress' },
    capabilities: { streaming, pushNotifications, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'echo',
        name: 'Echo',
        description: 'Echoes a message; "task", "wait" and "fail" as first word start a task instead.',
        tags: ['test'],
        examples: ['hello', 'task build it'],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

/** Keeps each request's raw body for the log while leaving parsing to the SDK. */
function recorder(requests: RecordedRequest[]): Array<Middleware | ErrorMiddleware> {
  const raw = new WeakMap<IncomingMessage, string>();
  const record = (req: IncomingMessage): void => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers }, body: raw.get(req) ?? '' });
  };
  return [
    express.json({ limit: '64mb', verify: (req, _res, buf) => void raw.set(req, buf.toString('utf8')) }),
    ((req, _res, next) => {
      record(req);
      next();
    }) satisfies Middleware,
    // Our parser runs before the SDK's, so it must give the SDK's answer to a bad body (-32700, HTTP 200).
    ((err, req, res, next) => {
      if (!(err instanceof SyntaxError)) return next(err);
      record(req);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Invalid JSON payload.' } }));
    }) satisfies ErrorMiddleware,
  ];
}

export async function startSdkUpstream(opts: SdkUpstreamOptions = {}): Promise<SdkUpstream> {
  const path = `/${(opts.path ?? '/a2a').replace(/^\/+|\/+$/g, '')}`;
  const streaming = opts.streaming ?? true;
  const pushNotifications = opts.pushNotifications ?? true;

  // Listen first: the card must carry the real port.
  const server = createServer();
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  const origin = `http://127.0.0.1:${port}`;
  const url = `${origin}${path}/`;

  const card = sdkAgentCard(url, streaming, pushNotifications);
  const legacyCompat = { enabled: opts.legacyCompat ?? false };
  if (legacyCompat.enabled) card.supportedInterfaces.push({ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' });
  if (opts.extendedCard && card.capabilities) card.capabilities.extendedAgentCard = true;
  opts.editCard?.(card);
  const extendedCard = opts.extendedCard?.(structuredClone(card));
  const executor = new TestAgentExecutor(opts.stepDelayMs ?? 0);
  const pushStore = pushNotifications ? new InMemoryPushNotificationStore() : undefined;
  const handler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    executor,
    new DefaultExecutionEventBusManager(),
    pushStore,
    // With 0.3 served too, a config registered over 0.3 gets 0.3 payloads (as the SDK's compat layer intends).
    pushStore
      ? legacyCompat.enabled
        ? createLegacyAwarePushNotificationSender(pushStore, { timeout: 1000 })
        : new DefaultPushNotificationSender(pushStore, { timeout: 1000 })
      : undefined,
    // A function: the SDK hands a plain card only to authenticated users, and these tests have none.
    extendedCard ? async () => extendedCard : undefined,
  );

  const requests: RecordedRequest[] = [];
  const app = express();
  app.disable('x-powered-by');
  app.use(recorder(requests));
  const cardRoute = agentCardHandler({ agentCardProvider: handler, cache: { maxAge: 0 }, legacyCompat });
  // The card routes come first: the JSON-RPC router refuses anything that is not a JSON POST.
  app.use(`${path}/.well-known/agent-card.json`, cardRoute);
  app.use('/.well-known/agent-card.json', cardRoute);
  app.use(path, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat }));
  server.on('request', app);

  return {
    url,
    cardUrl: `${url}.well-known/agent-card.json`,
    rootCardUrl: `${origin}/.well-known/agent-card.json`,
    origin,
    port,
    card,
    requests,
    openConnections: tracker.open,
    close: async () => {
      executor.releaseAll();
      await closeServer(server, tracker);
    },
  };
}
