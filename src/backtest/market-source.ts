import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { BacktestMarketSource } from '../../commands/backtest';
import type { SessionMarket } from '../../domain/backtest/market';
import type { Candle } from '../../domain/market/candle';
import type { Gap } from '../../domain/market/gaps';
import { INTERVAL_MS, type Interval } from '../../domain/market/intervals';
import { normalizeSymbol } from '../../domain/market/pair';
import type { MarketServices } from '../market/services';
import { candlesFromColumns } from '../market/store/convert';
import { unitsAt } from '../market/store/decimal-column';
import { readPairChunk } from './chunk-read';
import { type ChunkedPair, chunkedMarket } from './chunked-market';
import type { SharedSeriesColumns } from './shared-series';
import { registerMarketTransfer } from './stepper';

/** Candles per pair a session chunk holds ahead of its start, by default (`BACKTEST_CHUNK_CANDLES`). */
export const DEFAULT_CHUNK_CANDLES = 10_000;

/** Candles a load scans at once (counting, finding gaps): bounded memory whatever the window. */
const SCAN_CANDLES = 100_000;

/** Options of {@link backtestMarketSource}. */
export interface BacktestMarketSourceOptions {
  /** Candles of the chunks kept for sharing between sessions and threads, all pairs together (default 2 M). */
  sharedCandles?: number;
  /** Candles per pair a chunk holds ahead of the virtual clock (default {@link DEFAULT_CHUNK_CANDLES}). */
  chunkCandles?: number;
}

/** What a pair's window holds before `endExclusive` (ms), and whether its prices fit exact arithmetic. */
type DescribePair = (
  store: MarketServices['data']['candles'],
  symbol: string,
  interval: Interval,
  endExclusive: number,
) => { pair: Omit<ChunkedPair, 'filters'>; safe: boolean };

/**
 * What the fingerprint and the start response say of a pair's window (every candle with open time before
 * `endExclusive`), without reading its candles when the store's manifest knows it (issue 24): the count from the
 * month statistics and the boundary block's index, the first open time from the manifest, the last from the
 * manifest too when the window reaches past the series' end (else from the block index: a block decoded only when
 * it has a gap), and the gaps the import recorded. Where the manifest cannot say (an interval aggregated from a
 * finer one, live candles) the window is scanned ({@link scanPair}). `safe` is then not checked here: a chunk whose prices do not fit exact arithmetic
 * fails when it is read.
 */
export const describePair: DescribePair = (store, symbol, interval, endExclusive) => {
  const recorded = store.servedGaps(symbol, interval);
  if (!recorded) return scanPair(store, symbol, interval, endExclusive);
  const range = store.seriesRange(symbol, interval);
  const empty = {
    pair: { length: 0, firstOpenTime: undefined, lastOpenTime: undefined, gaps: [] },
    safe: true,
  };
  if (!range || range.first >= endExclusive) return empty;
  // A window past the series' end ends at its last candle (the manifest's); else the block index says.
  const last =
    range.last < endExclusive ? range.last : store.lastOpenTime(symbol, interval, endExclusive - 1);
  if (last === undefined) return empty;
  return {
    pair: {
      length: store.count(symbol, interval, range.first, endExclusive),
      firstOpenTime: range.first,
      lastOpenTime: last,
      // Gaps between two candles of the window: the next candle (the gap's end) at or before the last.
      gaps: recorded.filter((g) => g.end <= last),
    },
    safe: true,
  };
};

/** The scan of a pair's window, a bounded piece at a time: {@link describePair} where the manifest cannot say. */
export const scanPair: DescribePair = (store, symbol, interval, endExclusive) => {
  const ms = INTERVAL_MS[interval];
  const range = store.seriesRange(symbol, interval);
  let length = 0;
  let first: number | undefined;
  let last: number | undefined;
  let safe = true;
  const gaps: Gap[] = [];
  for (let from = range?.first ?? endExclusive; from < endExclusive; ) {
    const to = Math.min(endExclusive, from + SCAN_CANDLES * ms);
    const c = store.columns(symbol, interval, from, to);
    for (let i = 0; i < c.length; i++) {
      const t = c.openTime[i]!;
      // The gaps `findGapsInTimes` finds over the whole series, found a scan at a time.
      if (last !== undefined && t - last > ms) {
        gaps.push({ interval, start: last + ms, end: t, missingCandles: Math.round((t - last) / ms) - 1 });
      }
      first ??= t;
      last = t;
      // The high bounds the candle's other prices: when it fits exact arithmetic they all do.
      if (safe && !Number.isSafeInteger(unitsAt(c.high, i))) safe = false;
    }
    length += c.length;
    from = to;
  }
  return { pair: { length, firstOpenTime: first, lastOpenTime: last, gaps }, safe };
};

/**
 * Backtests' view of market data (ARCHITECTURE §7, §9): the pairs and their candle ranges for validating a new
 * session, and the session's candles read from the candle store in chunks ahead of the virtual clock (issue 24
 * item 3; `docs/architecture.md`, "Backtests"). At load a session's window — every candle of its interval closed by
 * its end, the history before its start included, so indicators can warm up — is scanned once a bounded piece at a
 * time (count, first and last open time, gaps); its candles are then read a chunk at a time as the clock reaches
 * them (`chunked-market.ts`), each chunk as columns in shared memory that worker threads read without a copy. The
 * fingerprint is SHA-256 over each pair's symbol, candle count and first and last open time: as the candle store
 * is append-only and never changes a stored candle, this is enough to tell whether a session continued after a
 * restart still sees exactly the candles it started with; it also names a pair's chunks, so sessions (and
 * threads) over the same pair's candles share them read-only. Sessions started on the same candles (pairs,
 * interval, end, data and pair list unchanged) share one market object.
 */
export const backtestMarketSource = (
  market: MarketServices,
  options: BacktestMarketSourceOptions = {},
): BacktestMarketSource & {
  /** Candles held by the chunks kept for sharing (memory: 64 bytes each), for tests and observation. */
  residentCandles(): number;
} => {
  const store = market.data.candles;
  const chunkCandles = options.chunkCandles ?? DEFAULT_CHUNK_CANDLES;
  // Chunks by pair window and number, bounded by candles held (default 2 M): sessions over the same pair share one.
  const chunks = new LRUCache<string, SharedSeriesColumns>({
    maxSize: options.sharedCandles ?? 2_000_000,
    sizeCalculation: (c) => Math.max(1, c.openTime.length),
  });
  // Markets hold no candles (their chunks are in `chunks`): a market is its pairs' scan and a current chunk.
  const markets = new LRUCache<string, { market: SessionMarket; fingerprint: string }>({ max: 256 });

  const readChunk = (symbol: string, name: string, interval: Interval, end: number, c: number) => {
    const key = `${name}|${c}`;
    const known = chunks.get(key);
    if (known) return known;
    const shared = readPairChunk(store, symbol, interval, end, chunkCandles, c);
    chunks.set(key, shared);
    return shared;
  };

  return {
    residentCandles: () => chunks.calculatedSize,
    catalog: () => ({
      pair: (symbol) => market.pair(symbol),
      range(symbol, interval) {
        const r = store.seriesRange(normalizeSymbol(symbol), interval);
        return r ? { earliest: r.first, latest: r.last + INTERVAL_MS[interval] } : undefined;
      },
      symbolsWithData: (interval: Interval) =>
        store.symbols().filter((s) => store.seriesRange(s, interval) !== undefined),
      candleCount: (symbol, interval, start, end) =>
        store.count(normalizeSymbol(symbol), interval, start, end),
    }),
    load(pairs, interval, end) {
      const key = `${store.version}|${market.data.pairsAsOf}|${interval}|${end}|${pairs.join(',')}`;
      const known = markets.get(key);
      if (known) return known;
      const endExclusive = end - INTERVAL_MS[interval] + 1;
      const scanned: (ChunkedPair & { name: string })[] = [];
      for (const symbol of pairs) {
        const filters = market.pair(symbol);
        if (!filters) return { error: `pair ${symbol} is no longer known to the market data` };
        const { pair, safe } = describePair(store, symbol, interval, endExclusive);
        if (pair.length === 0) return { error: `no ${interval} candles of ${symbol} are loaded` };
        if (!safe) return { error: `a ${symbol} price is too large for exact backtest arithmetic` };
        const name = `${interval}|${end}|${chunkCandles}|${symbol}:${pair.length}:${pair.firstOpenTime}:${pair.lastOpenTime}`;
        scanned.push({ filters, ...pair, name });
      }
      const hash = createHash('sha256');
      for (const p of scanned) {
        hash.update(`${p.filters.symbol}:${p.length}:${p.firstOpenTime}:${p.lastOpenTime}\n`);
      }
      const fingerprint = hash.digest('hex');
      // Processed in symbol order within a step (as `buildSessionMarket` sorts them).
      const sorted = [...scanned].sort((a, b) =>
        a.filters.symbol < b.filters.symbol ? -1 : a.filters.symbol > b.filters.symbol ? 1 : 0,
      );
      // Last candles a stepping thread read at the end of a batch (`seed`), by symbol and the open time they are
      // the last at or before: the step response's point reads of them (`lastClosed`) at that time need no read.
      const points = new LRUCache<string, { candle: Candle | null }>({
        max: 4 * Math.max(256, sorted.length),
      });
      const readPair = (c: number, i: number) => {
        const p = sorted[i]!;
        return readChunk(p.filters.symbol, p.name, interval, end, c);
      };
      const built = chunkedMarket(interval, sorted, chunkCandles, {
        chunk: readPair,
        held: (c, i) => chunks.has(`${sorted[i]!.name}|${c}`),
        // The key `history` looks a seeded point up by (`lastClosed` reads up to `at − interval`).
        pointAtHand: (at, i) =>
          points.has(
            `${sorted[i]!.filters.symbol}|${Math.min(at - INTERVAL_MS[interval], endExclusive - 1)}`,
          ),
        history(symbol, from, to, page) {
          // Closed by the virtual time (`to`) and inside the window (open + interval ≤ end).
          const last = Math.min(to, endExclusive - 1);
          if (last < from) return [];
          if (page?.newest === true && page.limit === 1) {
            const seeded = points.get(`${symbol}|${last}`);
            if (seeded) return seeded.candle && seeded.candle.openTime >= from ? [seeded.candle] : [];
          }
          const columns =
            page?.newest === true
              ? store.queryColumns(symbol, interval, { end: last, limit: page.limit })
              : store.queryColumns(symbol, interval, {
                  start: from,
                  end: last,
                  limit: page?.limit ?? Number.MAX_SAFE_INTEGER,
                });
          return candlesFromColumns(columns).filter((c) => c.openTime >= from);
        },
      });
      // Worker threads read the chunks they step through from the same candle store themselves (the request
      // thread only for a pair with live minutes, which are in its memory), and share a market between sessions
      // over the same candles (same pairs, interval, end and fingerprint).
      registerMarketTransfer(
        built,
        `${interval}|${end}|${pairs.join(',')}|${fingerprint}|${chunkCandles}`,
        {
          interval,
          chunked: {
            spanCandles: chunkCandles,
            pairs: sorted.map(({ name: _, ...p }) => p),
            store: { root: store.store.root, end },
          },
        },
        {
          pairs: sorted.length,
          read: readPair,
          // A pair with live minutes in memory is read here (merged with the store); any other the thread reads.
          local: (i) => !store.live.has(sorted[i]!.filters.symbol),
          seed({ at, candles }) {
            const last = Math.min(at - INTERVAL_MS[interval], endExclusive - 1);
            candles.forEach((c, i) => {
              // A pair with live minutes since the batch was sent is read here, merged with them.
              if (c !== undefined && !store.live.has(sorted[i]!.filters.symbol)) {
                points.set(`${sorted[i]!.filters.symbol}|${last}`, { candle: c });
              }
            });
          },
        },
      );
      const result = { market: built, fingerprint };
      markets.set(key, result);
      return result;
    },
  };
};
