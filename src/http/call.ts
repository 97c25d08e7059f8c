import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { formatPosition } from '../../ports/event-store';
import { type Call, newCall, newPublicCall, type PublicCall } from '../application/call';
import { principalOf } from '../auth/plugin';
import { addServerTiming } from './server-timing';

declare module 'fastify' {
  interface FastifyRequest {
    /** The use-case call this request made ({@link callOf}); its receipt becomes response headers. */
    call?: PublicCall;
  }
}

/**
 * The use-case call of an authenticated request (`src/application/`): the request's principal and id. Its receipt
 * is written into the response headers when the response goes out ({@link writeReceipts}), error responses too.
 */
export const callOf = (request: FastifyRequest): Call => {
  const call = newCall(request.server.services, principalOf(request), request.id);
  request.call = call;
  return call;
};

/** The use-case call of a public request (registration, login): no caller. */
export const publicCallOf = (request: FastifyRequest): PublicCall => {
  const call = newPublicCall(request.server.services, request.id);
  request.call = call;
  return call;
};

/**
 * Presents a call's receipt on the response: `X-Log-Position` (the position of the call's last write),
 * `X-Read-Model-Stale: true` when a wait for the read models ran out, `Idempotent-Replayed: true` on the answer to a
 * retry under an idempotency key, and each timing in `Server-Timing`
 * (`own-writes`, `command`, `read-models`; docs/architecture.md, "Read your writes").
 */
const presentReceipt = (reply: FastifyReply, call: PublicCall): void => {
  const { position, stale, timings, replayed } = call.receipt;
  if (replayed) reply.header('idempotent-replayed', 'true');
  if (position) reply.header('x-log-position', formatPosition(position));
  if (stale) reply.header('x-read-model-stale', 'true');
  for (const t of timings) addServerTiming(reply, t.name, t.ms);
};

/** Registers the `onSend` hook that presents every request's call receipt (once, at the root). */
export const writeReceipts = (app: FastifyInstance): void => {
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.call) presentReceipt(reply, request.call);
    return payload;
  });
};
