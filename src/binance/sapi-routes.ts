import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/shared/errors';
import { venueHealth } from '../http/health';
import { publicEndpoint, signedEndpoint } from './door';
import { optional } from './params';
import { feeRates, listedSymbol } from './trade-routes';

/**
 * The two endpoints of Binance's wallet API (`/sapi/v1`) that ccxt's spot calls need, served under
 * `/binance/sapi/v1` from the venue's own sources (docs/binance-compatibility.md); every other `/sapi` path stays
 * Binance's -1020 "not supported" (src/binance/plugin.ts):
 * - `GET /asset/tradeFee` (`SIGNED`, counted in `general` against the key's wallet owner, as the door's other
 *   signed reads; ccxt's `fetchTradingFees`/`fetchTradingFee`): `[{symbol, makerCommission, takerCommission}]`,
 *   the rates the key's account or agent pays (the use case `GET /account`'s `commissionRates` and
 *   `GET /api/v1/account/info` read, {@link feeRates}) as 8-place decimal fractions of notional, for every listed
 *   pair in the market's order, or for the one `symbol` named (a pair that is not listed: -1121).
 * - `GET /system/status` (`NONE`, counted per client IP in `market`; ccxt's `fetchStatus`): `{status: 0, msg:
 *   "normal"}` while `/health` answers `ok` (the database answers and every capability's check passes,
 *   {@link venueHealth}), else `{status: 1, msg: "system_maintenance"}` (Binance's two values).
 */
export const sapiRoutes = async (app: FastifyInstance): Promise<void> => {
  app.get(
    '/asset/tradeFee',
    signedEndpoint('general', 'read', ({ call, params }) => {
      const market = call.services.market;
      if (!market) throw new DomainError('SERVICE_UNAVAILABLE', 'market data is not running');
      const symbols =
        optional(params, 'symbol') !== undefined
          ? [listedSymbol(call, params)]
          : market.pairs().map((p) => p.symbol);
      const { maker, taker } = feeRates(call);
      return symbols.map((symbol) => ({ symbol, makerCommission: maker, takerCommission: taker }));
    }),
  );

  app.get(
    '/system/status',
    publicEndpoint('market', async ({ request }) =>
      (await venueHealth(request.server.services)).status === 'ok'
        ? { status: 0, msg: 'normal' }
        : { status: 1, msg: 'system_maintenance' },
    ),
  );
};
