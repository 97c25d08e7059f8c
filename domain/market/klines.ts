import { type Candle, candleProblem } from './candle';
import { normalizeDecimal } from './decimal';
import { INTERVAL_MS, type Interval } from './intervals';

/**
 * Parsers for Binance's kline formats (ARCHITECTURE §7), pure: text or parsed JSON in, candles and problems
 * out. Column layout (Binance spot klines, 1-based): 1 open time, 2 open, 3 high, 4 low, 5 close, 6 volume,
 * 7 close time, 8 quote volume, 9 number of trades, 10 taker buy base volume, 11 taker buy quote volume,
 * 12 ignore. Files may carry the first 6 to all 12 columns, with or without a header line. Times are epoch
 * milliseconds, or microseconds (Binance's spot files from 2025 on), recognized by their magnitude.
 */

/** A row that could not be used, with its 1-based line (CSV) or row (JSON array) number. */
export interface KlineProblem {
  line: number;
  message: string;
}

/** Result of parsing one file: candles sorted by open time, and every problem found. */
export interface ParsedKlines {
  candles: Candle[];
  problems: KlineProblem[];
  /** Lines or rows that held a candle (excluding a header). */
  rows: number;
  headerLine: boolean;
  /** Line (CSV) or row (JSON) of each candle, by open time: for reporting problems found later. */
  lineOf: ReadonlyMap<number, number>;
}

/** Epoch values at or above this are microseconds (year 5138 in ms; 1973 in µs). */
const MICROS_THRESHOLD = 1e14;

const INTEGER = /^\d+$/;
const PRICE_COLUMNS = ['open', 'high', 'low', 'close', 'volume'] as const;

const parseEpoch = (raw: string): number | undefined => {
  const text = INTEGER.test(raw) ? raw : raw.trim();
  if (text !== raw && !INTEGER.test(text)) return undefined;
  const n = Number(text);
  if (!Number.isSafeInteger(n)) return undefined;
  return n >= MICROS_THRESHOLD ? Math.floor(n / 1000) : n;
};

/**
 * Builds one candle from the raw column values of a row, or explains why it cannot. Checks every column
 * that is present (including 10 and 11, which are validated but not kept) and the close time against the
 * interval.
 */
export const klineFromColumns = (cols: readonly string[], interval: Interval): Candle | string => {
  if (cols.length < 6 || cols.length > 12) return `expected 6 to 12 columns, got ${cols.length}`;
  const openTime = parseEpoch(cols[0]!);
  if (openTime === undefined) return `open_time is not an integer epoch time: ${JSON.stringify(cols[0])}`;
  const values: string[] = [];
  for (let i = 0; i < PRICE_COLUMNS.length; i++) {
    const v = normalizeDecimal(cols[i + 1]!);
    if (v === undefined) return `${PRICE_COLUMNS[i]} is not a decimal: ${JSON.stringify(cols[i + 1])}`;
    values.push(v);
  }
  if (cols.length >= 7) {
    const closeTime = parseEpoch(cols[6]!);
    if (closeTime === undefined) return `close_time is not an integer epoch time: ${JSON.stringify(cols[6])}`;
    const expected = openTime + INTERVAL_MS[interval] - 1;
    if (closeTime !== expected) {
      return `close_time ${closeTime} does not match a ${interval} candle opening at ${openTime} (expected ${expected})`;
    }
  }
  let quoteVolume: string | null = null;
  if (cols.length >= 8) {
    const q = normalizeDecimal(cols[7]!);
    if (q === undefined) return `quote_volume is not a decimal: ${JSON.stringify(cols[7])}`;
    quoteVolume = q;
  }
  let tradeCount: number | null = null;
  if (cols.length >= 9) {
    const text = cols[8]!.trim();
    if (!INTEGER.test(text)) return `trade_count is not an integer: ${JSON.stringify(cols[8])}`;
    tradeCount = Number(text);
  }
  for (const i of [9, 10]) {
    if (cols.length > i && normalizeDecimal(cols[i]!) === undefined) {
      return `column ${i + 1} (taker buy volume) is not a decimal: ${JSON.stringify(cols[i])}`;
    }
  }
  const candle: Candle = {
    openTime,
    open: values[0]!,
    high: values[1]!,
    low: values[2]!,
    close: values[3]!,
    volume: values[4]!,
    quoteVolume,
    tradeCount,
  };
  return candleProblem(candle, interval) ?? candle;
};

/** Collects candles, flags duplicate open times, and sorts (files are sorted, but order is not required). */
const collect = (interval: Interval) => {
  const candles: Candle[] = [];
  const problems: KlineProblem[] = [];
  const seen = new Map<number, number>();
  return {
    candles,
    problems,
    add(line: number, parsed: Candle | string) {
      if (typeof parsed === 'string') {
        problems.push({ line, message: parsed });
        return;
      }
      const first = seen.get(parsed.openTime);
      if (first !== undefined) {
        problems.push({
          line,
          message: `duplicate ${interval} candle for ${new Date(parsed.openTime).toISOString()} (first at ${first})`,
        });
        return;
      }
      seen.set(parsed.openTime, line);
      candles.push(parsed);
    },
    finish(rows: number, headerLine: boolean): ParsedKlines {
      const lineOf: ReadonlyMap<number, number> = seen;
      let sorted = true;
      for (let i = 1; i < candles.length && sorted; i++) {
        if (candles[i]!.openTime < candles[i - 1]!.openTime) sorted = false;
      }
      if (!sorted) candles.sort((a, b) => a.openTime - b.openTime);
      return { candles, problems, rows, headerLine, lineOf };
    },
  };
};

/**
 * Parses a kline CSV (Binance's data-site files, or exports with a header). A first line whose first field
 * is not a number is a header; a non-numeric line anywhere else is a problem. Blank lines are ignored.
 */
export const parseKlineCsv = (text: string, interval: Interval): ParsedKlines => {
  const out = collect(interval);
  const lines = text.split('\n');
  let headerLine = false;
  let rows = 0;
  let firstContent = true;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (line.trim() === '') continue;
    const cols = line.split(',');
    if (firstContent) {
      firstContent = false;
      if (!/^\s*\d/.test(cols[0] ?? '')) {
        headerLine = true;
        continue;
      }
    }
    rows++;
    out.add(i + 1, klineFromColumns(cols, interval));
  }
  return out.finish(rows, headerLine);
};

/**
 * Parses a kline JSON document: the array of arrays that `GET /api/v3/klines` returns (numbers or strings
 * per element). Problem `line` numbers are 1-based row numbers in the array.
 */
export const parseKlineJson = (value: unknown, interval: Interval): ParsedKlines => {
  const out = collect(interval);
  if (!Array.isArray(value)) {
    out.problems.push({ line: 0, message: 'expected a JSON array of kline arrays' });
    return out.finish(0, false);
  }
  value.forEach((row, i) => {
    if (!Array.isArray(row)) {
      out.add(i + 1, 'expected an array of kline values');
      return;
    }
    const cols = row.map((v) => (typeof v === 'number' || typeof v === 'string' ? String(v) : '\u0000'));
    out.add(i + 1, klineFromColumns(cols, interval));
  });
  return out.finish(value.length, false);
};
