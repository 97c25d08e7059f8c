import type { CandleColumns } from './block-codec';
import { textAt } from './decimal-column';

/**
 * The JSON of candles written straight from the store's columns, for `GET /market/candles` (spec
 * "Market data": `time` ISO 8601 UTC with milliseconds, `open`…`volume` 8-decimal strings, `trade_count` an
 * integer, 0 where the source lacked it). Byte for byte what `JSON.stringify(candleOut(candle))` gives for each
 * candle (tested), without a candle object, a `Date` or the generic serializer per candle: at 1,000 one-minute
 * candles per request those were most of a range read's time (docs/benchmarks.md, "Market data at scale").
 */

const DAY = 86_400_000;
const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/** `ms` as `toISOString()` writes it; `day` caches the `YYYY-MM-DDT` of the last day formatted. */
const isoWith = (ms: number, day: { start: number; prefix: string }): string => {
  const start = Math.floor(ms / DAY) * DAY;
  if (start !== day.start) {
    const iso = new Date(start).toISOString();
    // Years outside 0000–9999 are written with a sign and six digits: leave those to Date.
    if (iso.length !== 24) return new Date(ms).toISOString();
    day.start = start;
    day.prefix = iso.slice(0, 11);
  }
  let rest = ms - start;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  return `${day.prefix}${pad2(h)}:${pad2(m)}:${pad2(s)}.${pad3(rest - s * 1000)}Z`;
};

/**
 * Candles `from` (inclusive) to `to` (exclusive, default all) of `c` as the comma-separated JSON objects of a
 * `/market/candles` response's `candles` array (no brackets), oldest first.
 */
export const candlesJson = (c: CandleColumns, from = 0, to = c.length): string => {
  const day = { start: Number.NaN, prefix: '' };
  const out: string[] = new Array(Math.max(0, to - from));
  for (let i = from; i < to; i++) {
    const trades = textAt(c.trades, i);
    out[i - from] =
      `{"time":"${isoWith(Math.floor(c.openTime[i]!), day)}","open":"${textAt(c.open, i)}","high":"${textAt(c.high, i)}",` +
      `"low":"${textAt(c.low, i)}","close":"${textAt(c.close, i)}","volume":"${textAt(c.volume, i)}",` +
      `"trade_count":${trades === null ? 0 : trades.slice(0, -9)}}`;
  }
  return out.join(',');
};
