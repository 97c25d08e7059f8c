import { INTERVAL_MS, type Interval } from '../../../domain/market/intervals';
import type { CandleColumns } from './block-codec';
import {
  bigUnitsAt,
  concatColumns,
  type DecimalColumn,
  DecimalColumnBuilder,
  isNull,
  sliceColumn,
  unitsAt,
} from './decimal-column';

/**
 * Operations on candle columns (`block-codec.ts`): slicing, joining, searching by time, merging an import into
 * stored candles, and aggregating finer candles into coarser ones — the columnar counterparts of
 * `domain/market/aggregate.ts` and `candle.ts`, with the same rules, so the store never builds candle objects for
 * millions of minutes.
 */

const DECIMALS = ['open', 'high', 'low', 'close', 'volume', 'quote', 'trades'] as const;
const MAX = Number.MAX_SAFE_INTEGER;

/** Candle columns from times and the seven decimal columns in their order (open … trades). */
export const assembleColumns = (
  intervalMs: number,
  openTime: Float64Array,
  decimals: readonly DecimalColumn[],
): CandleColumns => {
  const [open, high, low, close, volume, quote, trades] = decimals;
  return {
    intervalMs,
    length: openTime.length,
    openTime,
    open: open!,
    high: high!,
    low: low!,
    close: close!,
    volume: volume!,
    quote: quote!,
    trades: trades!,
  };
};

/** No candles. */
export const emptyColumns = (intervalMs: number): CandleColumns => {
  const empty = (): DecimalColumn => ({ scale: 0, ints: new Float64Array(0) });
  return {
    intervalMs,
    length: 0,
    openTime: new Float64Array(0),
    open: empty(),
    high: empty(),
    low: empty(),
    close: empty(),
    volume: empty(),
    quote: empty(),
    trades: empty(),
  };
};

/** Candles `from` (inclusive) to `to` (exclusive). */
export const sliceColumns = (c: CandleColumns, from: number, to: number): CandleColumns => {
  const a = Math.max(0, from);
  const b = Math.min(c.length, to);
  if (a === 0 && b === c.length) return c;
  const out = { intervalMs: c.intervalMs, length: Math.max(0, b - a), openTime: c.openTime.slice(a, b) };
  for (const k of DECIMALS) (out as Record<string, unknown>)[k] = sliceColumn(c[k], a, b);
  return out as CandleColumns;
};

/** Parts joined in order (each sorted, each after the previous). */
export const joinColumns = (parts: readonly CandleColumns[], intervalMs: number): CandleColumns => {
  const useful = parts.filter((p) => p.length > 0);
  if (useful.length === 0) return emptyColumns(intervalMs);
  if (useful.length === 1) return useful[0]!;
  const length = useful.reduce((n, p) => n + p.length, 0);
  const openTime = new Float64Array(length);
  let at = 0;
  for (const p of useful) {
    openTime.set(p.openTime, at);
    at += p.length;
  }
  const out = { intervalMs, length, openTime };
  for (const k of DECIMALS) (out as Record<string, unknown>)[k] = concatColumns(useful.map((p) => p[k]));
  return out as CandleColumns;
};

/**
 * Candles `from` (inclusive) to `to` (exclusive) of decoded columns, without copying them: what a range read of the
 * store gives (`ColumnStore.readRuns`), the columns shared with its block cache, so read only.
 */
export interface ColumnRun {
  columns: CandleColumns;
  from: number;
  to: number;
}

/** The candles of `runs` in order as one set of columns (copied unless a single run is a whole block). */
export const runsColumns = (runs: readonly ColumnRun[], intervalMs: number): CandleColumns =>
  joinColumns(
    runs.map((r) => sliceColumns(r.columns, r.from, r.to)),
    intervalMs,
  );

/** Index of the first candle with open time ≥ `time`. */
export const lowerBoundTime = (times: Float64Array, time: number, from = 0, to = times.length): number => {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (times[mid]! < time) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

const sameValue = (a: DecimalColumn, i: number, b: DecimalColumn, j: number, nullMatches: boolean) => {
  const an = isNull(a, i);
  const bn = isNull(b, j);
  if (an || bn) return nullMatches || an === bn;
  if (a.ints && b.ints && a.scale === b.scale) return a.ints[i] === b.ints[j];
  return bigUnitsAt(a, i) === bigUnitsAt(b, j);
};

/**
 * True when candle `i` of `a` and `j` of `b` carry the same values (`sameCandle` of `domain/market/candle.ts`: a
 * quote volume or trade count missing on either side matches).
 */
export const sameCandleAt = (a: CandleColumns, i: number, b: CandleColumns, j: number): boolean =>
  a.openTime[i] === b.openTime[j] &&
  sameValue(a.open, i, b.open, j, false) &&
  sameValue(a.high, i, b.high, j, false) &&
  sameValue(a.low, i, b.low, j, false) &&
  sameValue(a.close, i, b.close, j, false) &&
  sameValue(a.volume, i, b.volume, j, false) &&
  sameValue(a.quote, i, b.quote, j, true) &&
  sameValue(a.trades, i, b.trades, j, true);

/** What merging incoming candles into stored ones found. */
export interface MergeResult {
  merged: CandleColumns;
  /** Incoming candles not stored before. */
  added: number;
  /** Incoming candles already stored with the same values (an overlap). */
  overlapping: number;
  /** Incoming candles (indices) whose open time is stored with other values, with the stored index. */
  conflicts: { incoming: number; stored: number }[];
}

/**
 * Merges `incoming` into `stored` (both sorted, unique): append-only — a stored candle is never changed; an
 * incoming one at a stored time is an overlap when equal, a conflict otherwise (the caller rejects the file).
 */
export const mergeColumns = (stored: CandleColumns, incoming: CandleColumns): MergeResult => {
  const conflicts: MergeResult['conflicts'] = [];
  let overlapping = 0;
  const takeIncoming: number[] = [];
  let j = 0;
  for (let i = 0; i < incoming.length; i++) {
    const t = incoming.openTime[i]!;
    j = lowerBoundTime(stored.openTime, t, j);
    if (j < stored.length && stored.openTime[j] === t) {
      if (sameCandleAt(stored, j, incoming, i)) overlapping++;
      else conflicts.push({ incoming: i, stored: j });
    } else takeIncoming.push(i);
  }
  if (takeIncoming.length === 0 || conflicts.length > 0) {
    return { merged: stored, added: 0, overlapping, conflicts };
  }
  if (stored.length === 0 && takeIncoming.length === incoming.length) {
    return { merged: incoming, added: incoming.length, overlapping, conflicts };
  }
  // Interleave by time.
  const order: { from: 'stored' | 'incoming'; index: number }[] = [];
  let a = 0;
  let b = 0;
  while (a < stored.length || b < takeIncoming.length) {
    const ta = a < stored.length ? stored.openTime[a]! : Number.POSITIVE_INFINITY;
    const tb = b < takeIncoming.length ? incoming.openTime[takeIncoming[b]!]! : Number.POSITIVE_INFINITY;
    if (ta < tb) order.push({ from: 'stored', index: a++ });
    else order.push({ from: 'incoming', index: takeIncoming[b++]! });
  }
  return { merged: pick(stored, incoming, order), added: takeIncoming.length, overlapping, conflicts };
};

const pick = (
  stored: CandleColumns,
  incoming: CandleColumns,
  order: readonly { from: 'stored' | 'incoming'; index: number }[],
): CandleColumns => {
  const n = order.length;
  const openTime = new Float64Array(n);
  order.forEach((o, k) => {
    openTime[k] = (o.from === 'stored' ? stored : incoming).openTime[o.index]!;
  });
  const out = { intervalMs: stored.intervalMs, length: n, openTime };
  for (const key of DECIMALS) {
    const b = new DecimalColumnBuilder(Math.max(1, n));
    for (const o of order) {
      const col = (o.from === 'stored' ? stored : incoming)[key];
      pushUnits(b, col, o.index);
    }
    (out as Record<string, unknown>)[key] = b.finish();
  }
  return out as CandleColumns;
};

/** Appends value `i` of `col` to a builder (exactly, whatever its size). */
const pushUnits = (b: DecimalColumnBuilder, col: DecimalColumn, i: number) => {
  if (col.ints) {
    const u = unitsAt(col, i);
    if (Number.isNaN(u) || u <= MAX) b.push(u);
    else b.pushBig(bigUnitsAt(col, i));
  } else b.pushBig(bigUnitsAt(col, i));
};

/** Coarser candles made from finer ones, with how many finer candles went into each. */
export interface Aggregated {
  columns: CandleColumns;
  parts: Int32Array;
}

/**
 * Aggregates `c` (candles of a finer interval) into `to` buckets (UTC-aligned multiples of the interval): first
 * open, last close, highest high, lowest low, exact sums of volume, quote volume and trades (null when any part
 * lacks them) — `aggregateCandles` of `domain/market/aggregate.ts` in columns.
 */
export const aggregateColumns = (c: CandleColumns, to: Interval): Aggregated => {
  const size = INTERVAL_MS[to];
  if (c.intervalMs >= size || size % c.intervalMs !== 0) {
    throw new RangeError(`cannot aggregate ${c.intervalMs} ms candles into ${to}`);
  }
  const times: number[] = [];
  const parts: number[] = [];
  const b = Array.from({ length: 7 }, () => new DecimalColumnBuilder(Math.max(1, Math.ceil(c.length / 4))));
  let i = 0;
  while (i < c.length) {
    const bucket = Math.floor(c.openTime[i]! / size) * size;
    const end = bucket + size;
    const first = i;
    let high = unitsAt(c.high, i);
    let low = unitsAt(c.low, i);
    while (i < c.length && c.openTime[i]! < end) {
      const h = unitsAt(c.high, i);
      const l = unitsAt(c.low, i);
      if (h > high) high = h;
      if (l < low) low = l;
      i++;
    }
    times.push(bucket);
    parts.push(i - first);
    b[0]!.push(unitsAt(c.open, first));
    b[1]!.push(high);
    b[2]!.push(low);
    b[3]!.push(unitsAt(c.close, i - 1));
    pushSum(b[4]!, c.volume, first, i);
    pushSum(b[5]!, c.quote, first, i);
    pushSum(b[6]!, c.trades, first, i);
  }
  return {
    columns: assembleColumns(
      size,
      Float64Array.from(times),
      b.map((x) => x.finish()),
    ),
    parts: Int32Array.from(parts),
  };
};

/** Pushes the exact sum of values [from, to) of `col` (null if any is null). */
const pushSum = (b: DecimalColumnBuilder, col: DecimalColumn, from: number, to: number) => {
  if (col.ints) {
    let sum = 0;
    for (let k = from; k < to; k++) sum += col.ints[k]!;
    if (Number.isNaN(sum)) {
      b.push(Number.NaN);
      return;
    }
    const units = sum * 10 ** (8 - col.scale);
    if (sum <= MAX && units <= MAX) {
      b.push(units);
      return;
    }
  }
  let total = 0n;
  for (let k = from; k < to; k++) {
    if (isNull(col, k)) {
      b.push(Number.NaN);
      return;
    }
    total += bigUnitsAt(col, k);
  }
  b.pushBig(total);
};

/** A source of {@link combineColumns}: candles of one native interval. */
export interface ColumnSource {
  interval: Interval;
  columns: CandleColumns;
}

/**
 * The `target` series from every native source of a pair (`combineSources` of `domain/market/aggregate.ts`):
 * native `target` candles as they are, finer sources aggregated; per bucket the source covering the most time wins,
 * on a tie the exchange's own `target` candle, then the coarser source. Sources coarser than `target` are ignored.
 */
export const combineColumns = (sources: readonly ColumnSource[], target: Interval): CandleColumns => {
  const targetMs = INTERVAL_MS[target];
  const usable = sources
    .filter((s) => INTERVAL_MS[s.interval] <= targetMs && s.columns.length > 0)
    .sort((a, b) => INTERVAL_MS[b.interval] - INTERVAL_MS[a.interval]);
  if (usable.length === 0) return emptyColumns(targetMs);
  const built = usable.map((s) =>
    s.interval === target
      ? { columns: s.columns, coverage: (_: number) => targetMs }
      : (() => {
          const a = aggregateColumns(s.columns, target);
          const ms = INTERVAL_MS[s.interval];
          return { columns: a.columns, coverage: (k: number) => a.parts[k]! * ms };
        })(),
  );
  if (built.length === 1) return built[0]!.columns;
  const chosen = new Map<number, { source: number; index: number; coverage: number }>();
  built.forEach((s, source) => {
    for (let k = 0; k < s.columns.length; k++) {
      const t = s.columns.openTime[k]!;
      const coverage = s.coverage(k);
      const existing = chosen.get(t);
      if (!existing || coverage > existing.coverage) chosen.set(t, { source, index: k, coverage });
    }
  });
  const entries = [...chosen.entries()].sort((x, y) => x[0] - y[0]);
  const n = entries.length;
  const out = { intervalMs: targetMs, length: n, openTime: Float64Array.from(entries, (e) => e[0]) };
  for (const key of DECIMALS) {
    const b = new DecimalColumnBuilder(Math.max(1, n));
    for (const [, e] of entries) pushUnits(b, built[e.source]!.columns[key], e.index);
    (out as Record<string, unknown>)[key] = b.finish();
  }
  return out as CandleColumns;
};
