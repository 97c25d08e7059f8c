import { ATR, BollingerBands, EMA, MACD, RSI, SMA, VWAP } from 'trading-signals';
import type { Candle } from '../../domain/market/candle';
import { DomainError } from '../../domain/shared/errors';

/**
 * Technical indicators over candles (issue 17, item 10; docs/market-data.md "Indicators"), computed with the
 * `trading-signals` library (maintained, typed, no dependencies; the choice is explained in docs/compatibility.md).
 * This module names the indicators a client may ask for, parses their names and runs the library; which candles
 * they see (closed ones only, before a backtest's virtual clock) is the use case's rule
 * (`src/application/indicators.ts`).
 */

/** One indicator a client may ask for: its name form, default period and what it returns. */
export interface IndicatorInfo {
  /** The name to send, e.g. `rsi`; `period` forms are `<name>_<period>`, e.g. `sma_20`. */
  name: string;
  description: string;
  /** The period used when the name carries none; null for `vwap` and `macd` (fixed parameters). */
  default_period: number | null;
  /** Whether `<name>_<period>` is accepted. */
  takes_period: boolean;
  /** `value`: one decimal string; otherwise the names of the decimal fields of an object. */
  output: 'value' | string[];
}

/** Periods accepted in `<name>_<period>`. */
export const MAX_PERIOD = 500;

/** The indicators of `/market/indicators/available`. */
export const INDICATORS: readonly IndicatorInfo[] = [
  {
    name: 'rsi',
    description: "Relative Strength Index (Wilder's smoothing) of the closes, 0–100",
    default_period: 14,
    takes_period: true,
    output: 'value',
  },
  {
    name: 'macd',
    description:
      'MACD of the closes: EMA 12 − EMA 26, its EMA 9 signal line and the histogram (macd − signal)',
    default_period: null,
    takes_period: false,
    output: ['macd', 'signal', 'histogram'],
  },
  {
    name: 'sma',
    description: 'Simple moving average of the closes',
    default_period: 20,
    takes_period: true,
    output: 'value',
  },
  {
    name: 'ema',
    description: 'Exponential moving average of the closes (smoothing 2 / (period + 1))',
    default_period: 20,
    takes_period: true,
    output: 'value',
  },
  {
    name: 'bbands',
    description: 'Bollinger Bands of the closes: SMA ± 2 standard deviations (population)',
    default_period: 20,
    takes_period: true,
    output: ['upper', 'middle', 'lower'],
  },
  {
    name: 'atr',
    description: "Average True Range (Wilder's smoothing), in quote currency",
    default_period: 14,
    takes_period: true,
    output: 'value',
  },
  {
    name: 'vwap',
    description:
      'Volume-weighted average of the typical price (high + low + close) / 3 over the candles used',
    default_period: null,
    takes_period: false,
    output: 'value',
  },
];

/** What a request without `indicators` gets (the original product's set). */
export const DEFAULT_INDICATORS = ['rsi', 'macd', 'sma_20', 'ema_50', 'bbands', 'atr', 'vwap'] as const;

/** A parsed indicator request: the name as asked (the key of the answer), the kind and its period. */
export interface IndicatorRequest {
  key: string;
  kind: string;
  period: number | null;
}

/** An indicator's value at the last candle: a decimal string, an object of them, or null without enough data. */
export type IndicatorValue = string | Record<string, string> | null;

const BY_NAME = new Map(INDICATORS.map((i) => [i.name, i]));

/**
 * Parses `rsi,macd,sma_20,…` (case-insensitive, spaces and duplicates ignored): `VALIDATION_ERROR` naming
 * `indicators` for an unknown name, a period on one that takes none, or a period outside 1–{@link MAX_PERIOD}.
 */
export const parseIndicators = (list: string | undefined): IndicatorRequest[] => {
  const names = (list ?? DEFAULT_INDICATORS.join(','))
    .split(',')
    .map((n) => n.trim().toLowerCase())
    .filter((n) => n !== '');
  if (names.length === 0) return parseIndicators(undefined);
  const out = new Map<string, IndicatorRequest>();
  for (const key of names) {
    const match = /^([a-z]+)(?:_(\d{1,4}))?$/.exec(key);
    const info = match ? BY_NAME.get(match[1]!) : undefined;
    if (!match || !info) {
      throw new DomainError(
        'VALIDATION_ERROR',
        `indicators: unknown indicator ${JSON.stringify(key)}; see GET /market/indicators/available`,
        { field: 'indicators', available: INDICATORS.map((i) => i.name) },
      );
    }
    let period = info.default_period;
    if (match[2] !== undefined) {
      period = Number(match[2]);
      if (!info.takes_period || period < 1 || period > MAX_PERIOD) {
        throw new DomainError(
          'VALIDATION_ERROR',
          info.takes_period
            ? `indicators: the period of ${key} must be 1 to ${MAX_PERIOD}`
            : `indicators: ${info.name} takes no period`,
          { field: 'indicators' },
        );
      }
    }
    out.set(key, { key, kind: info.name, period });
  }
  return [...out.values()];
};

const decimal = (v: number | null | undefined): string | null =>
  v === null || v === undefined || !Number.isFinite(v) ? null : v.toFixed(8);

/** What the library's indicators have in common, as used here. */
interface Running<I, R> {
  add(input: I): R | null;
  getResult(): R | null;
  getRequiredInputs(): number;
  readonly isStable: boolean;
}
type Hlcv = { high: number; low: number; close: number; volume: number };

/** A fresh library indicator of `kind` at `period`, fed closes or candles, and its result as the wire value. */
const make = (
  kind: string,
  period: number,
): { run: Running<any, any>; input: 'close' | 'candle'; out: (r: any) => IndicatorValue } => {
  const value = (r: number) => decimal(r);
  const object = (names: string[]) => (r: Record<string, number>) => {
    const o: Record<string, string> = {};
    for (const n of names) {
      const d = decimal(r[n]);
      if (d === null) return null;
      o[n] = d;
    }
    return o;
  };
  switch (kind) {
    case 'rsi':
      return { run: new RSI(period), input: 'close', out: value };
    case 'sma':
      return { run: new SMA(period), input: 'close', out: value };
    case 'ema':
      return { run: new EMA(period), input: 'close', out: value };
    case 'macd':
      return {
        run: new MACD(new EMA(12), new EMA(26), new EMA(9)),
        input: 'close',
        out: object(['macd', 'signal', 'histogram']),
      };
    case 'bbands':
      return {
        run: new BollingerBands(period, 2),
        input: 'close',
        out: object(['upper', 'middle', 'lower']),
      };
    case 'atr':
      return { run: new ATR(period), input: 'candle', out: value };
    case 'vwap':
      return { run: new VWAP(), input: 'candle', out: value };
    default:
      throw new Error(`no indicator ${kind}`);
  }
};

/** Candles an indicator needs before its first value (the library's count), at a period. */
export const requiredCandles = (kind: string, period: number | null): number =>
  make(kind, period ?? 0).run.getRequiredInputs();

/**
 * The value of each requested indicator at the last of `candles` (oldest first), computed over all of them;
 * null until the library calls the indicator stable (enough candles for its period). Prices enter as numbers
 * (the library's precision); values leave as 8-decimal strings.
 */
export const computeIndicators = (
  candles: readonly Candle[],
  requests: readonly IndicatorRequest[],
): Record<string, IndicatorValue> => {
  const closes = candles.map((c) => Number(c.close));
  const bars: Hlcv[] = candles.map((c) => ({
    high: Number(c.high),
    low: Number(c.low),
    close: Number(c.close),
    volume: Number(c.volume),
  }));
  const out: Record<string, IndicatorValue> = {};
  for (const r of requests) {
    const { run, input, out: wire } = make(r.kind, r.period ?? 0);
    for (const x of input === 'close' ? closes : bars) run.add(x);
    const result = run.isStable ? run.getResult() : null;
    out[r.key] = result === null ? null : wire(result);
  }
  return out;
};
