import type { FastifyPluginAsync } from 'fastify';
import { prepareScope } from './door';
import { marketRoutes } from './market-routes';
import { sapiRoutes } from './sapi-routes';
import { tradeRoutes } from './trade-routes';
import { userDataRoutes } from './user-data-routes';
import { streamRoutes } from './ws';

/**
 * The Binance-compatible door (issue 19; docs/binance-compatibility.md): Binance Spot API v3 under
 * `/binance/api/v3/`, so `new ccxt.binance()` with `urls.api.public` and `urls.api.private` pointed there trades
 * on the venue unchanged. A thin adapter: market data from the market capability, every account and trading call
 * through the use cases of `src/application/` (the same as the REST and MCP doors: one ledger, one risk chain, one
 * rate limiter), presented in Binance's shapes and errors; the trade fees, system status, currencies and (empty)
 * deposit and withdrawal histories of Binance's wallet API under `/binance/sapi/v1/` (`./sapi-routes`); and
 * Binance's WebSocket market streams (`./ws`) from the venue's one market feed.
 */
export const binanceRoutes: FastifyPluginAsync = async (app) => {
  await app.register(
    async (v3) => {
      prepareScope(v3);
      await marketRoutes(v3);
      await tradeRoutes(v3);
      await userDataRoutes(v3);
    },
    { prefix: '/binance/api/v3' },
  );
  // Of Binance's wallet API, what ccxt's spot calls read: trade fees, system status, currencies, deposit and
  // withdrawal history (`./sapi-routes`).
  await app.register(
    async (sapi) => {
      prepareScope(sapi);
      await sapiRoutes(sapi);
    },
    { prefix: '/binance/sapi/v1' },
  );
  // Binance's other APIs (the rest of `/sapi/v1`, `/fapi/v1`, `/api/v1`, …) under `/binance/`: nothing is served
  // there, but a client pointed at the venue for every URL (docs/binance-compatibility.md) gets Binance's -1020
  // "not supported" from them, as from an unserved `/api/v3` endpoint, instead of the venue's own 404 envelope.
  await app.register(async (other) => prepareScope(other), { prefix: '/binance' });
  await streamRoutes(app);
};
