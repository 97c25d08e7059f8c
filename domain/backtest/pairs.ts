import type { Interval } from '../market/intervals';
import { normalizeSymbol } from '../market/pair';
import { DomainError } from '../shared/errors';
import type { BacktestCatalog } from './commands';

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The pairs of a virtual-clock session (a backtest, a historical battle; ARCHITECTURE §9), resolved against the
 * market data: `requested` null means every pair with `interval` candles overlapping [start, end) (none:
 * `BACKTEST_NO_DATA`); a list must be non-empty (`VALIDATION_ERROR`), each a known pair (`INVALID_SYMBOL`) with
 * candles opening inside [start, end) (`BACKTEST_NO_DATA`; a window inside a hole of the data has none). The range must lie inside the pairs' data range (earliest open time
 * to the end of the last candle; `BACKTEST_NO_DATA` with `details.earliest/latest`). Returns the symbols
 * normalised, deduplicated and sorted. Times are epoch ms.
 */
export const resolveSessionPairs = (
  catalog: BacktestCatalog,
  interval: Interval,
  startTime: number,
  endTime: number,
  requested: readonly string[] | null,
): string[] => {
  // Candles inside the window, not only a data range around it: the range can span a hole in the data.
  const hasCandles = (symbol: string) => catalog.candleCount(symbol, interval, startTime, endTime) > 0;

  let pairs: string[];
  if (requested === null) {
    pairs = catalog.symbolsWithData(interval).filter(hasCandles);
    if (pairs.length === 0) {
      throw new DomainError(
        'BACKTEST_NO_DATA',
        `no pair has ${interval} candles between start_time and end_time`,
        { candle_interval: interval },
      );
    }
  } else {
    if (requested.length === 0) {
      throw new DomainError(
        'VALIDATION_ERROR',
        'pairs must name at least one symbol (or be null for all pairs)',
        { field: 'pairs' },
      );
    }
    pairs = [...new Set(requested.map(normalizeSymbol))].sort();
    for (const symbol of pairs) {
      if (!catalog.pair(symbol))
        throw new DomainError('INVALID_SYMBOL', `unknown symbol ${symbol}`, { symbol });
      if (!hasCandles(symbol)) {
        const range = catalog.range(symbol, interval);
        throw new DomainError(
          'BACKTEST_NO_DATA',
          `no ${interval} candles of ${symbol} between start_time and end_time`,
          {
            symbol,
            candle_interval: interval,
            earliest: range ? iso(range.earliest) : null,
            latest: range ? iso(range.latest) : null,
          },
        );
      }
    }
  }
  let earliest = Number.POSITIVE_INFINITY;
  let latest = Number.NEGATIVE_INFINITY;
  for (const symbol of pairs) {
    const range = catalog.range(symbol, interval)!;
    earliest = Math.min(earliest, range.earliest);
    latest = Math.max(latest, range.latest);
  }
  if (startTime < earliest || endTime > latest) {
    throw new DomainError(
      'BACKTEST_NO_DATA',
      `start_time and end_time must lie inside the data range ${iso(earliest)} – ${iso(latest)} of the pairs`,
      { earliest: iso(earliest), latest: iso(latest), candle_interval: interval },
    );
  }
  return pairs;
};
