import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { formatPosition, type LogPosition } from '../../ports/event-store';
import { ownerIdOf, type Principal } from '../auth/principal';
import type { Services } from '../services';
import { addServerTiming } from './server-timing';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Whether an authenticated request first waits for the read models to include the caller's earlier
     * `/trade` writes that answered without waiting for them (default `true`; see {@link ownWritesPlugin}).
     * The `/trade` commands set `false`: they decide from the wallet's stream, not from read models.
     */
    awaitOwnWrites?: boolean;
  }
}

/**
 * Read your writes (ARCHITECTURE §2.5): before a command's response is sent, wait until the projections have
 * folded the command's last event, at most `READ_MODEL_WAIT_MS` (default 2,000 ms). The response always
 * carries `X-Log-Position` (`commit/prepare` of the last event). When the wait times out the response is still
 * sent — its body comes from the decider's events, not from read models — with `X-Read-Model-Stale: true`,
 * telling the client that an immediate read may not include the change yet. The wait's length is reported as
 * `Server-Timing: read-models;dur=<ms>`.
 */
export const awaitReadModels = async (
  services: Pick<Services, 'projections' | 'config'>,
  reply: FastifyReply,
  position: LogPosition | undefined,
): Promise<boolean> => {
  if (!position) return true;
  reply.header('x-log-position', formatPosition(position));
  const started = performance.now();
  const caughtUp = await services.projections.waitFor(position, services.config.READ_MODEL_WAIT_MS);
  addServerTiming(reply, 'read-models', performance.now() - started);
  if (!caughtUp) reply.header('x-read-model-stale', 'true');
  return caughtUp;
};

/** The owners whose reads a write of `principal`'s wallet concerns: the wallet's owner and its account. */
const ownersOf = (principal: Principal): string[] =>
  principal.agentId ? [principal.agentId, principal.accountId] : [principal.accountId];

/**
 * Read your writes for a `/trade` command (place, cancel, cancel all), as `READ_YOUR_WRITES` says
 * (docs/architecture.md, "Read your writes"). `on-response`: as {@link awaitReadModels}. `on-read` (default):
 * the response goes out once the events are durable (`X-Log-Position` set, no wait) and the position is
 * recorded as the owner's and its account's watermark, which their next request waits for
 * ({@link ownWritesPlugin}). The body never depends on it: it is built from the decider's events.
 */
export const acknowledgeTradeWrite = async (
  services: Services,
  reply: FastifyReply,
  principal: Principal,
  position: LogPosition | undefined,
): Promise<void> => {
  if (services.config.READ_YOUR_WRITES === 'on-response' || !services.trading) {
    await awaitReadModels(services, reply, position);
    return;
  }
  if (!position) return;
  reply.header('x-log-position', formatPosition(position));
  services.trading.ownWrites.record(ownersOf(principal), position);
};

/**
 * Before an authenticated request of the `/api/v1` scope reads anything, waits until the read models include
 * the caller's earlier writes that answered without waiting for them (`READ_YOUR_WRITES=on-read`), at most
 * `READ_MODEL_WAIT_MS`: an agent waits for its own orders, an account (or a JWT without `X-Agent-Id`) for its
 * own and its agents'. Costs a map look-up when nothing is owed. On a timeout the request goes on and its
 * response carries `X-Read-Model-Stale: true`; the wait is reported as `Server-Timing: own-writes;dur=<ms>`.
 * Registered with skip-override right after the auth hook, so it covers every route plugin after it.
 */
export const ownWritesPlugin: FastifyPluginAsync = async (app) => {
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const principal = request.principal;
    const ownWrites = app.services.trading?.ownWrites;
    if (!principal || !ownWrites || request.routeOptions.config?.awaitOwnWrites === false) return;
    const owner = ownerIdOf(principal);
    if (!ownWrites.owes(owner)) return;
    const started = performance.now();
    const caughtUp = await ownWrites.settle(owner);
    addServerTiming(reply, 'own-writes', performance.now() - started);
    if (!caughtUp) reply.header('x-read-model-stale', 'true');
  });
};
Object.assign(ownWritesPlugin, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'own-writes',
});
