import type { Candle } from './candle';
import { fromUnits, maxNormalized, minNormalized, toUnits } from './decimal';
import { INTERVAL_MS, type Interval } from './intervals';

/**
 * Aggregation of finer candles into coarser ones (ARCHITECTURE §7: "candles aggregated from finer intervals
 * (1m -> 5m/15m/1h/4h/1d)"). A coarse candle takes the open of its first constituent, the close of its last,
 * the highest high, the lowest low, and the exact sums of volumes and trade counts. A bucket with missing
 * constituents (an exchange outage, the edge of the data) is still produced from what exists, and reports its
 * coverage so callers can prefer a better-covered source.
 */
export interface AggregatedCandle extends Candle {
  /** How many `from`-interval candles went into this one. */
  parts: number;
}

/**
 * Aggregates `candles` (sorted by open time, all of interval `from`) into `to` buckets, oldest first.
 * `from` must be finer than `to`. Sums are exact (bigint units); `quoteVolume` / `tradeCount` are `null` when
 * any constituent lacks them (a partial sum would understate).
 */
export const aggregateCandles = (
  candles: readonly Candle[],
  from: Interval,
  to: Interval,
): AggregatedCandle[] => {
  const size = INTERVAL_MS[to];
  if (INTERVAL_MS[from] >= size || size % INTERVAL_MS[from] !== 0) {
    throw new RangeError(`cannot aggregate ${from} candles into ${to}`);
  }
  const out: AggregatedCandle[] = [];
  let i = 0;
  while (i < candles.length) {
    const first = candles[i]!;
    const bucket = Math.floor(first.openTime / size) * size;
    const end = bucket + size;
    let high = first.high;
    let low = first.low;
    let close = first.close;
    let volume = 0n;
    let quote: bigint | null = 0n;
    let count: number | null = 0;
    let parts = 0;
    while (i < candles.length && candles[i]!.openTime < end) {
      const c = candles[i]!;
      high = maxNormalized(high, c.high);
      low = minNormalized(low, c.low);
      close = c.close;
      volume += toUnits(c.volume);
      quote = quote === null || c.quoteVolume === null ? null : quote + toUnits(c.quoteVolume);
      count = count === null || c.tradeCount === null ? null : count + c.tradeCount;
      parts++;
      i++;
    }
    out.push({
      openTime: bucket,
      open: first.open,
      high,
      low,
      close,
      volume: fromUnits(volume),
      quoteVolume: quote === null ? null : fromUnits(quote),
      tradeCount: count,
      parts,
    });
  }
  return out;
};

/** A source series for {@link combineSources}: native candles of one interval. */
export interface SourceSeries {
  interval: Interval;
  candles: readonly Candle[];
}

/**
 * The `target`-interval series of one symbol from every stored source (issue: "coarser intervals aggregated
 * from the finest available"). Native `target` candles are used as they are; finer sources are aggregated.
 * Per bucket the source covering the most time wins; on equal coverage the exchange's own `target` candle
 * wins, then the source with the fewest constituents per candle. Sources coarser than `target` are ignored (finer candles cannot be made from
 * coarser ones). Returns candles sorted by open time.
 */
export const combineSources = (sources: readonly SourceSeries[], target: Interval): Candle[] => {
  const targetMs = INTERVAL_MS[target];
  const usable = sources
    .filter((s) => INTERVAL_MS[s.interval] <= targetMs && s.candles.length > 0)
    .sort((a, b) => INTERVAL_MS[b.interval] - INTERVAL_MS[a.interval]); // native first, then finer
  if (usable.length === 0) return [];
  const only = usable[0]!;
  if (usable.length === 1 && only.interval === target) return [...only.candles];
  const chosen = new Map<number, { candle: Candle; coverage: number }>();
  for (const source of usable) {
    const list =
      source.interval === target
        ? source.candles.map((c) => ({ candle: c, coverage: targetMs }))
        : aggregateCandles(source.candles, source.interval, target).map(({ parts, ...candle }) => ({
            candle,
            coverage: parts * INTERVAL_MS[source.interval],
          }));
    for (const entry of list) {
      const existing = chosen.get(entry.candle.openTime);
      if (!existing || entry.coverage > existing.coverage) chosen.set(entry.candle.openTime, entry);
    }
  }
  return [...chosen.values()].map((e) => e.candle).sort((a, b) => a.openTime - b.openTime);
};
