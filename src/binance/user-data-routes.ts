import type { FastifyInstance } from 'fastify';
import {
  closeUserDataStream,
  keepAliveUserDataStream,
  openUserDataStream,
} from '../application/user-data-streams';
import { apiKeyEndpoint, apiKeyOf } from './door';
import { required } from './params';

/**
 * Binance's listen-key endpoints (Spot "User Data Stream", security `USER_STREAM`: the API key alone) over the user
 * data stream use cases: `POST` opens the caller's stream (`{listenKey}`; the open one again, kept alive), `PUT`
 * keeps it alive for 60 minutes, `DELETE` closes it (its sockets end); an unknown, expired or another owner's key
 * is -1125. The stream itself is read at `/binance/ws/<listenKey>` (`./ws`).
 */
export const userDataRoutes = async (app: FastifyInstance): Promise<void> => {
  app.post(
    '/userDataStream',
    // The key lasts as long as the API key it was opened with (a regenerated key ends it).
    apiKeyEndpoint('general', ({ call, request }) => ({
      listenKey: openUserDataStream(call, Date.now(), { apiKey: apiKeyOf(request)?.trim() }).listenKey,
    })),
  );
  app.put(
    '/userDataStream',
    apiKeyEndpoint('general', ({ call, params }) => {
      keepAliveUserDataStream(call, required(params, 'listenKey'));
      return {};
    }),
  );
  app.delete(
    '/userDataStream',
    apiKeyEndpoint('general', ({ call, params }) => {
      closeUserDataStream(call, required(params, 'listenKey'));
      return {};
    }),
  );
};
