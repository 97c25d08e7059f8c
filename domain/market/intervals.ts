import { DomainError } from '../shared/errors';
import { clipEcho } from '../shared/text';

/**
 * Candle intervals the venue stores and serves (spec "Market data endpoints": `intervals_available`).
 * Each interval divides the next coarser one, so a coarser candle is an exact aggregation of finer ones
 * (ARCHITECTURE §7). Bucket boundaries are UTC-aligned multiples of the interval since the Unix epoch, as on
 * Binance (4h candles open at 00:00, 04:00, ... UTC; 1d candles at 00:00 UTC).
 */
export const INTERVALS = ['1m', '5m', '15m', '1h', '4h', '1d'] as const;

/** One of {@link INTERVALS}. */
export type Interval = (typeof INTERVALS)[number];

/** Length of each interval in milliseconds. */
export const INTERVAL_MS: Readonly<Record<Interval, number>> = {
  '1m': 60_000,
  '5m': 300_000,
  '15m': 900_000,
  '1h': 3_600_000,
  '4h': 14_400_000,
  '1d': 86_400_000,
};

/** True when `value` names a supported interval (case-sensitive, like Binance: `1m` is not `1M`). */
export const isInterval = (value: unknown): value is Interval =>
  typeof value === 'string' && (INTERVALS as readonly string[]).includes(value);

/**
 * The intervals a request may name, as a refusal lists them: `1m, 5m, 15m, 1h, 4h, 1d (or seconds: 60 … 86400)`
 * (the doors taking an interval take it in seconds too: `src/contract/common.ts` `intervalText`).
 */
export const INTERVAL_CHOICES = `${INTERVALS.join(', ')} (or seconds: ${INTERVAL_MS['1m'] / 1000} … ${INTERVAL_MS['1d'] / 1000})`;

/**
 * The longest interval text a request gives (`GET /market/candles/{symbol}`'s `interval` query: `max(8)`,
 * `src/contract/common.ts` `intervalQuery`); {@link unsupportedInterval} echoes at most this many characters.
 */
export const MAX_INTERVAL_TEXT = 8;

/**
 * The refusal of a candle interval the venue does not serve, wherever one is asked for (`GET /market/candles/{symbol}`,
 * a backtest's candles, the WebSocket `candles` channel): `INVALID_SYMBOL` 400 (spec "Errors": "unsupported candle
 * interval" is `INVALID_SYMBOL`), message `unsupported candle interval <given>: use one of <INTERVAL_CHOICES>`, details
 * `{interval: <given>, supported: INTERVALS}`. `given` is echoed cut to {@link MAX_INTERVAL_TEXT} characters (and
 * `…`), so a client's long value is not sent back whole. Pure.
 */
export const unsupportedInterval = (given: string): DomainError => {
  const shown = clipEcho(given, MAX_INTERVAL_TEXT);
  return new DomainError(
    'INVALID_SYMBOL',
    `unsupported candle interval ${shown}: use one of ${INTERVAL_CHOICES}`,
    {
      interval: shown,
      supported: INTERVALS,
    },
  );
};
