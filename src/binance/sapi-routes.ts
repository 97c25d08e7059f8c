import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/shared/errors';
import { assetBalances } from '../application/account';
import { venueHealth } from '../http/health';
import { publicEndpoint, signedEndpoint } from './door';
import { invalidParam } from './errors';
import { type BinanceParams, intParam, optional, timeWindowParams } from './params';
import { ZERO8 } from './present';
import { feeRates, listedSymbol } from './trade-routes';

/**
 * The parameters of Binance's deposit and withdrawal history (`coin`, `status`, `offset`, `limit` ≤ 1,000,
 * `startTime` ≤ `endTime`), read as Binance reads them so a malformed one is its error (-1100, -1130), never a 500.
 * `status` is an INT filter whose values Binance lists (deposits 0, 1, 6, 7, 8; withdrawals 0 to 6) without a
 * range it refuses: any integer is taken (and matches nothing here), only a non-integer is -1100.
 */
const historyParams = (p: BinanceParams): void => {
  intParam(p, 'status', { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }, undefined);
  intParam(p, 'offset', { min: 0, max: Number.MAX_SAFE_INTEGER }, undefined);
  intParam(p, 'limit', { min: 1, max: 1000 }, undefined);
  const { start, end } = timeWindowParams(p);
  if (start !== undefined && end !== undefined && start > end) {
    throw invalidParam('startTime', 'must not be after endTime');
  }
};

/**
 * The one network entry of `coin` in `/capital/config/getall`'s `networkList`: a nominal network named as the coin
 * (a paper venue has no chain), the default, closed both ways (`depositEnable`/`withdrawEnable` false), with the
 * ledger's grid (`withdrawIntegerMultiple` `0.00000001`, 8 places: every asset amount of the wallet, domain
 * `decimal.ts`) and zero fee and limits. ccxt's `parseCurrency` (js/src/binance.js) takes a currency's `deposit`,
 * `withdraw`, `precision`, `fee` and `limits` only from this list, so without it `currencyToPrecision` does not round
 * and `currency.limits` is undefined; with it ccxt reads deposit/withdraw false, precision 1e-8, fee 0 and limits
 * `{deposit: {min: 0}, withdraw: {min: 0, max: 0}}`. Fields as Binance's entry (its docs, "All Coins' Information").
 */
const nominalNetwork = (coin: string) => ({
  network: coin,
  coin,
  name: coin,
  isDefault: true,
  depositEnable: false,
  withdrawEnable: false,
  depositDesc: 'a paper venue takes no deposits',
  withdrawDesc: 'a paper venue makes no withdrawals',
  specialTips: '',
  specialWithdrawTips: '',
  withdrawIntegerMultiple: '0.00000001',
  withdrawFee: '0',
  withdrawMin: '0',
  withdrawMax: '0',
  depositDust: '0',
  minConfirm: 0,
  unLockConfirm: 0,
  resetAddressStatus: false,
  addressRegex: '',
  addressRule: '',
  memoRegex: '',
  sameAddress: false,
  estimatedArrivalTime: 0,
  busy: false,
});

/**
 * The endpoints of Binance's wallet API (`/sapi/v1`) that ccxt's spot calls need, served under
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
 * - `GET /capital/config/getall` (`SIGNED`, `general`; ccxt's `fetchCurrencies`, which `loadMarkets` calls): every
 *   asset the venue lists with the caller's `free`/`locked` ({@link assetBalances}: USDT and the listed pairs'
 *   base assets), `trading` whether an active pair trades it; deposits and withdrawals disabled, on one nominal
 *   network named as the coin ({@link nominalNetwork}: a paper venue has no chain), `name` the asset's code (the
 *   venue knows no other name).
 * - `GET /capital/deposit/hisrec`, `GET /capital/withdraw/history` (`SIGNED`, `general`; ccxt's `fetchDeposits`,
 *   `fetchWithdrawals`): `[]`. Nothing is ever deposited to or withdrawn from a paper wallet: a wallet's starting
 *   balance (`SessionStarted`, registration or reset) opens a session rather than moving funds in, and a reset
 *   replaces the wallet rather than adding to it (docs/binance-compatibility.md, "Deposits and withdrawals").
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
    '/capital/config/getall',
    signedEndpoint('general', 'read', async ({ call }) =>
      (await assetBalances(call)).map((a) => ({
        coin: a.asset,
        depositAllEnable: false,
        withdrawAllEnable: false,
        name: a.asset,
        free: a.available,
        locked: a.locked,
        freeze: ZERO8,
        withdrawing: ZERO8,
        ipoing: ZERO8,
        ipoable: ZERO8,
        storage: ZERO8,
        isLegalMoney: false,
        trading: a.trading,
        networkList: [nominalNetwork(a.asset)],
      })),
    ),
  );

  for (const path of ['/capital/deposit/hisrec', '/capital/withdraw/history']) {
    app.get(
      path,
      signedEndpoint('general', 'read', ({ params }) => {
        historyParams(params);
        return [];
      }),
    );
  }

  app.get(
    '/system/status',
    publicEndpoint('market', async ({ request }) =>
      (await venueHealth(request.server.services)).status === 'ok'
        ? { status: 0, msg: 'normal' }
        : { status: 1, msg: 'system_maintenance' },
    ),
  );
};
