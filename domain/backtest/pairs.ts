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
 * normalised, deduplicated and sorted. Times are epoch ms. Every `BACKTEST_NO_DATA` says where the data is
 * (`details.earliest/latest`: of the pairs concerned, every pair with data when none was named; nulls when there is
 * none), so each door that resolves pairs (backtest create, a historical battle's configuration) answers it alike.
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
    const withData = catalog.symbolsWithData(interval);
    pairs = withData.filter(hasCandles);
    if (pairs.length === 0) {
      throw new DomainError(
        'BACKTEST_NO_DATA',
        `no pair has ${interval} candles between start_time and end_time`,
        { candle_interval: interval, ...spanDetails(dataSpan(catalog, interval, withData)) },
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
        throw new DomainError(
          'BACKTEST_NO_DATA',
          `no ${interval} candles of ${symbol} between start_time and end_time`,
          { symbol, candle_interval: interval, ...spanDetails(dataSpan(catalog, interval, [symbol])) },
        );
      }
    }
  }
  // Every pair here has candles in the window, so the span exists.
  const { earliest, latest } = dataSpan(catalog, interval, pairs)!;
  if (startTime < earliest || endTime > latest) {
    throw new DomainError(
      'BACKTEST_NO_DATA',
      `start_time and end_time must lie inside the data range ${iso(earliest)} – ${iso(latest)} of the pairs`,
      { ...spanDetails({ earliest, latest }), candle_interval: interval },
    );
  }
  return pairs;
};

/** The span of the stored `interval` candles of `symbols` (first open time to the end of the last candle, epoch
 * ms), or undefined when none of them has any. */
const dataSpan = (
  catalog: BacktestCatalog,
  interval: Interval,
  symbols: readonly string[],
): { earliest: number; latest: number } | undefined => {
  let earliest = Number.POSITIVE_INFINITY;
  let latest = Number.NEGATIVE_INFINITY;
  for (const symbol of symbols) {
    const range = catalog.range(symbol, interval);
    if (!range) continue;
    earliest = Math.min(earliest, range.earliest);
    latest = Math.max(latest, range.latest);
  }
  return Number.isFinite(earliest) ? { earliest, latest } : undefined;
};

/** `details.earliest/latest` of a span: ISO 8601 UTC, or nulls without data. */
const spanDetails = (span: { earliest: number; latest: number } | undefined) => ({
  earliest: span ? iso(span.earliest) : null,
  latest: span ? iso(span.latest) : null,
});
