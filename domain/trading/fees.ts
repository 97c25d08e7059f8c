import { type Dec, dec, roundDown8, SCALE } from './decimal';
import { decOfUnits, lastExactOf, pow10, unitsOf } from './units';

/**
 * Fee rate per fill when none is configured: 0.1% of notional (ARCHITECTURE §8, §14b). It is also the default of
 * both the maker and the taker rate: Binance's public spot fee schedule charges a regular (VIP 0) user 0.1000 %
 * maker and 0.1000 % taker (https://www.binance.com/en/fee/schedule, without the BNB discount).
 */
export const DEFAULT_FEE_RATE = '0.001';

/**
 * The fee of a fill, in USDT: `notional × feeRate`, rounded down to 8 decimal places (ARCHITECTURE §2.3:
 * fees round down). Charged on both sides: a buy pays `notional + fee`, a sell receives `notional − fee`.
 */
export const feeFor = (notional: Dec, feeRate: Dec): Dec => {
  const units = unitsOf(notional);
  if (units === undefined || units < 0n) return roundDown8(notional.times(feeRate));
  const rate = rateOf(feeRate);
  if (rate === undefined) return roundDown8(notional.times(feeRate));
  // Exact in integers: a product is exact, and rounding a non-negative value down is the integer quotient.
  return decOfUnits((units * rate.int) / pow10(rate.scale));
};

/** The last fee rate's integer form (a venue has one or two rates: the same decimal on every fill). */
const feeRateExact = lastExactOf();

/** A non-negative finite fee rate as `int × 10^−scale`, else undefined (the decimal formula then). */
const rateOf = (feeRate: Dec): { int: bigint; scale: number } | undefined => {
  const exact = feeRateExact(feeRate);
  return exact === undefined || exact.int < 0n ? undefined : exact;
};

/** The fee rates in effect: `maker` for resting limit fills, `taker` for fills that take liquidity (and locks). */
export interface FeeRates {
  maker: Dec;
  taker: Dec;
}

/**
 * The fee rates of the settings (docs/trading-rules.md, "Fees by liquidity"): the taker rate is `TAKER_FEE_RATE`,
 * else `FEE_RATE` (the one rate of earlier versions), else {@link DEFAULT_FEE_RATE}; the maker rate is
 * `MAKER_FEE_RATE`, else the taker rate (so a venue that sets only `FEE_RATE` charges it on every fill, as before).
 * Each is checked by {@link parseFeeRate} (throws `RangeError`).
 */
export const feeRatesOf = (settings: {
  FEE_RATE?: string | undefined;
  MAKER_FEE_RATE?: string | undefined;
  TAKER_FEE_RATE?: string | undefined;
}): FeeRates => {
  const taker = settings.TAKER_FEE_RATE
    ? parseFeeRate(settings.TAKER_FEE_RATE, 'TAKER_FEE_RATE')
    : parseFeeRate(settings.FEE_RATE ?? DEFAULT_FEE_RATE, 'FEE_RATE');
  return {
    taker,
    maker: settings.MAKER_FEE_RATE ? parseFeeRate(settings.MAKER_FEE_RATE, 'MAKER_FEE_RATE') : taker,
  };
};

/**
 * Checks a configured fee rate (`setting` names it in the error): a decimal from 0 to 0.1 (10%) with at most 8
 * places, as every rate the venue shows (`/account/info`'s `fee_rate`, the Binance door's commission rates are
 * 8-place strings, `fmt`). Throws `RangeError` otherwise. `loadConfig` refuses such a setting first (src/config.ts).
 */
export const parseFeeRate = (value: string, setting = 'fee rate'): Dec => {
  const rate = dec(value);
  if (!rate.isFinite() || rate.isNegative() || rate.gt('0.1') || (rate.decimalPlaces() ?? 0) > SCALE) {
    throw new RangeError(
      `${setting} must be a decimal from 0 to 0.1 with at most ${SCALE} places, got ${value}`,
    );
  }
  return rate;
};
