import type { FastifyReply } from 'fastify';
import { formatPosition, type LogPosition } from '../eventstore/port';
import type { Services } from '../services';
import { addServerTiming } from './server-timing';

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
