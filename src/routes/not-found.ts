/**
 * Anything no route serves gets a small JSON problem, never Fastify's default
 * page; the common mistake of a base URL without its trailing slash gets a hint.
 */
import type { FastifyInstance } from 'fastify';

const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

export interface NotFoundOptions {
  /** The /remotes/... hints of the shared listener (off on a remote's own listener, which has no /remotes/). */
  readonly sharedHints?: boolean;
}

export async function notFoundRoutes(app: FastifyInstance, opts: NotFoundOptions = {}): Promise<void> {
  const sharedHints = opts.sharedHints ?? true;
  // An A2A client given `http://gw/remotes/weather` (no slash) resolves its card to /remotes/.well-known/...
  const slashHint = async (_req: unknown, reply: import('fastify').FastifyReply) =>
    reply.code(404).type(PROBLEM_TYPE).send({
      type: 'about:blank',
      title: 'Not Found',
      status: 404,
      reason: 'UNKNOWN_REMOTE',
      detail: 'use the remote base URL with its trailing slash, e.g. http://<gateway>/remotes/<name>/ so the card resolves to /remotes/<name>/.well-known/agent-card.json',
    });
  if (sharedHints) {
    app.get('/remotes/.well-known/agent-card.json', slashHint);
    app.get('/remotes/.well-known/agent.json', slashHint);
  }

  app.setNotFoundHandler((request, reply) =>
    reply.code(404).type(PROBLEM_TYPE).send({
      type: 'about:blank',
      title: 'Not Found',
      status: 404,
      reason: 'NOT_FOUND',
      detail: sharedHints && request.method === 'GET' && request.url.startsWith('/remotes/')
        ? 'A2A calls are POST /remotes/<name>/; the card is GET /remotes/<name>/.well-known/agent-card.json'
        : 'no such route on this gateway',
    }),
  );
}
