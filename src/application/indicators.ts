import type { Candle } from '../../domain/market/candle';
import {
  INTERVAL_CHOICES,
  INTERVAL_MS,
  INTERVALS,
  type Interval,
  isInterval,
} from '../../domain/market/intervals';
import { DomainError } from '../../domain/shared/errors';
import {
  computeIndicators,
  DEFAULT_INDICATORS,
  INDICATORS,
  type IndicatorValue,
  parseIndicators,
  requiredCandles,
} from '../market/indicators';
import type { MarketServices } from '../market/services';
import type { PublicCall } from './call';

/**
 * Technical indicators over the venue's own candles (issue 17, item 10; docs/market-data.md "Indicators"): the
 * live ones here, the backtest sandbox's in `backtest/sandbox.ts` (both through {@link indicatorsOver}). Only
 * closed candles are used, so a value never changes once its candle has closed.
 */

/** What a client asks: indicator names (`rsi,sma_20,…`), the interval (a name), how many candles. */
export interface IndicatorsRequest {
  indicators?: string | undefined;
  interval?: string | undefined;
  limit: number;
}

/** The interval of a request, or `VALIDATION_ERROR` naming `interval`. */
export const indicatorInterval = (value: string): Interval => {
  if (!isInterval(value)) {
    throw new DomainError('VALIDATION_ERROR', `interval must be one of ${INTERVAL_CHOICES}`, {
      field: 'interval',
    });
  }
  return value;
};

/** The answer's body for `candles` (oldest first, all closed) of `symbol`. */
export const indicatorsOver = (
  symbol: string,
  interval: Interval,
  candles: readonly Candle[],
  names: string | undefined,
) => {
  const requests = parseIndicators(names);
  const values: Record<string, IndicatorValue> = computeIndicators(candles, requests);
  const lastCandle = candles[candles.length - 1];
  return {
    symbol,
    interval,
    indicators: values,
    candles_used: candles.length,
    last_candle_time: lastCandle ? new Date(lastCandle.openTime).toISOString() : null,
  };
};

const marketOf = (call: PublicCall): MarketServices => {
  const market = call.services.market;
  if (!market) throw new DomainError('SERVICE_UNAVAILABLE', 'market data is not running');
  return market;
};

/**
 * The indicators of `symbol` now: over the newest `limit` candles closed by now (with the `files` replay, by the
 * replayed time the live price is at). `INVALID_SYMBOL` for an unknown pair, `VALIDATION_ERROR` for a bad name
 * or interval.
 */
export const marketIndicators = (call: PublicCall, rawSymbol: string, q: IndicatorsRequest) => {
  const market = marketOf(call);
  const pair = market.requirePair(rawSymbol);
  const interval = indicatorInterval(q.interval ?? '1h');
  parseIndicators(q.indicators); // refuse a bad name before reading candles
  const step = INTERVAL_MS[interval];
  const now = market.replayedNow() ?? Date.now();
  // Open time of the newest candle closed by now (a forming candle would move the values until it closes).
  const lastOpen = Math.floor(now / step) * step - step;
  const candles = market.candles(pair.symbol, interval, { end: lastOpen, limit: q.limit });
  return indicatorsOver(pair.symbol, interval, candles, q.indicators);
};

/** `GET /market/indicators/available`: the names, their periods and outputs. */
export const availableIndicators = () => ({
  indicators: INDICATORS.map((i) => ({
    name: i.name,
    description: i.description,
    default_period: i.default_period,
    takes_period: i.takes_period,
    required_candles: requiredCandles(i.name, i.default_period),
    output: i.output,
  })),
  default: [...DEFAULT_INDICATORS],
  intervals: [...INTERVALS],
  max_limit: 1000,
});
