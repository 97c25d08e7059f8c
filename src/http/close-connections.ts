import type { FastifyInstance } from 'fastify';

/**
 * Lets a graceful stop (`app.close()` on SIGTERM) end as soon as the requests in flight are answered.
 *
 * Node closes the keep-alive connections that are idle when the server closes, but a connection busy with a
 * request at that moment stays open after its answer until the client or `keepAliveTimeout` (fastify's default:
 * 72 s) ends it, and `close()` waits for it: a venue stopped in the middle of a burst of orders took 70 s to
 * exit, past the usual 30 s grace period of an orchestrator, which then kills it. Once closing, each answer
 * carries `Connection: close` (the client opens its next connection elsewhere) and, once it is sent, the
 * connections left idle are closed. Requests in flight still finish; new ones get fastify's 503.
 */
export const closeConnectionsWhenClosing = (app: FastifyInstance): void => {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (request, reply) => {
    if (closing && request.raw.httpVersionMajor === 1) reply.header('connection', 'close');
  });
  app.addHook('onResponse', async () => {
    // An answer whose headers left before closing began: its connection is idle only after 'finish' is handled.
    if (closing) setImmediate(() => app.server.closeIdleConnections());
  });
};
