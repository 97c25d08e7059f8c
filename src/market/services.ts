import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Observable } from 'rxjs';
import { type BookSnapshot, bookSnapshot } from '../../domain/fill-model/book';
import type { Candle } from '../../domain/market/candle';
import type { SharedGap } from '../../domain/market/gaps';
import { INTERVALS, type Interval } from '../../domain/market/intervals';
import { normalizeSymbol, type Pair } from '../../domain/market/pair';
import { replayTime } from '../../domain/market/replay-clock';
import { DomainError } from '../../domain/shared/errors';
import type { Config } from '../config';
import type { Database } from '../db/schema';
import type { HealthCheck } from '../services';
import { type MarketSettings, marketSettings } from './config';
import { MarketFeed, type Ticker } from './feed';
import { type ImportResult, importDirectory } from './importer';
import { moveLegacyCandles } from './legacy-candles';
import { MarketData } from './market-data';
import type { CachedPrice } from './price-cache';
import type { RecentTrade } from './recent-trades';
import { loadCandleSeries, loadLatestPairs, loadReferenceTickers } from './repository';
import { createBinanceSource } from './sources/binance';
import { createFilesSource } from './sources/files';
import type { MarketSource } from './sources/port';
import { createSyntheticSource } from './sources/synthetic';
import { type PriceStaleness, stalenessOf } from './staleness';
import { ColumnStore } from './store/column-store';
import type { ColumnRun } from './store/columns';
import type { MarketSourceName, PriceTick } from './ticks';

/** `/market/data-range` before formatting (spec "Market data endpoints"). */
export interface DataRange {
  /** Earliest candle open time and latest candle end (ms), or null without data. */
  earliest: number | null;
  latest: number | null;
  /** Pairs with stored candles. */
  totalPairs: number;
  intervalsAvailable: Interval[];
  gaps: SharedGap[];
  pairs: { symbol: string; earliest: number; latest: number; intervals: Interval[]; stored: Interval[] }[];
}

/** The order book of `/market/orderbook` before formatting. */
export interface OrderBook extends BookSnapshot {
  symbol: string;
  /** Time (ms) of the mid-price the book was built around. */
  time: number;
  mid: string;
  /** The price's update id (see `CachedPrice.updateId`): grows with every change of the book. */
  updateId: number;
}

declare module '../services' {
  interface Services {
    /** Market data: pairs, prices, tickers, candles, the tick stream (ARCHITECTURE §7; `src/market`). */
    market?: MarketServices;
  }
}

/**
 * Everything market data offers the rest of the venue (HTTP routes, WebSocket channels, and the later trading,
 * backtest and battle capabilities). Symbols may be given in any case. Errors are `DomainError`s with the
 * spec's codes: `INVALID_SYMBOL` (unknown pair), `PRICE_NOT_AVAILABLE` (no price yet).
 */
export interface MarketServices {
  /** The price source in use (`MARKET_SOURCE`). */
  readonly source: MarketSourceName;
  /** Pairs, reference tickers and the candle index. */
  readonly data: MarketData;
  /** Live state: price cache, 24h windows, recent trades. */
  readonly feed: MarketFeed;
  /**
   * Every live tick `{symbol, price, time, ...}` (rxjs; hot, no replay): the matching engine's input. `price`
   * is an 8-decimal string, `time` wall-clock ms.
   */
  readonly ticks$: Observable<PriceTick>;
  /** The start-up import's outcome (files given by MARKET_DATA_DIR), if any. */
  readonly lastImport: ImportResult | undefined;

  /** All pairs, optionally of one status, sorted by symbol. */
  pairs(status?: Pair['status']): readonly Pair[];
  /** One pair with its filters (`min_qty`, `step_size`, `min_notional`, `tick_size`, status); undefined if unknown. */
  pair(symbol: string): Pair | undefined;
  /** The pair, or `INVALID_SYMBOL`; with `active: true` also `INVALID_SYMBOL` for an inactive pair. */
  requirePair(symbol: string, options?: { active?: boolean }): Pair;
  /**
   * Current price `{symbol, price, time, source}` from the in-memory cache (never the database). Throws
   * `INVALID_SYMBOL` for an unknown or inactive pair and `PRICE_NOT_AVAILABLE` before the first price.
   */
  getPrice(symbol: string): CachedPrice;
  /** Every cached price. */
  prices(): CachedPrice[];
  /**
   * How stale the live feed's prices are now, or undefined when they are fresh (or the source is clocked by the
   * venue): see {@link stalenessOf}. Market orders and the matching engine refuse to fill while it is defined.
   */
  staleness(): PriceStaleness | undefined;
  /** Rolling 24h ticker; `INVALID_SYMBOL` / `PRICE_NOT_AVAILABLE` as {@link getPrice}. */
  ticker(symbol: string): Ticker;
  /**
   * 24h quote (USDT) volume of a pair, 8-decimal string: from the live window, else the reference snapshot;
   * undefined when neither exists. The slippage model's denominator (ARCHITECTURE §8).
   */
  quoteVolume24h(symbol: string): string | undefined;
  /** Recent public trades, newest first (`limit` ≤ 500); `INVALID_SYMBOL` for an unknown or inactive pair. */
  recentTrades(symbol: string, limit: number): RecentTrade[];
  /** Synthetic order book around the current price (`depth` levels per side); errors as {@link getPrice}. */
  orderBook(symbol: string, depth: number): OrderBook;
  /** Stored candles by inclusive open-time range, oldest first (see `CandleStore.query`). */
  candles(
    symbol: string,
    interval: Interval,
    range: { start?: number; end?: number; limit: number },
  ): Candle[];
  /**
   * {@link candles} as runs of columns (no candle objects, no copies: what `/market/candles` writes its body from;
   * see `MarketCandles.queryRuns`). Read only, and valid only until the next call (blocks that are not cached are
   * decoded in part into reused arrays): use them at once.
   */
  candleRuns(
    symbol: string,
    interval: Interval,
    range: { start?: number; end?: number; limit: number },
  ): ColumnRun[];
  /** Candles closed by `at` (ms) from `from`: what a backtest at virtual time `at` may see (ARCHITECTURE §9). */
  closedCandles(symbol: string, interval: Interval, from: number, at: number): Candle[];
  /** Close of the last candle closed by `at` (forward-filled across gaps), or undefined before the data. */
  priceAt(symbol: string, interval: Interval, at: number): string | undefined;
  dataRange(): DataRange;
  /**
   * With the `files` replay, the replayed time now (ms: the data's own dates, whose prices the live feed is
   * serving); undefined for the other sources, whose prices are from now.
   */
  replayedNow(): number | undefined;
  /** Imports a directory now (CLI and tests); the returned `persisted` resolves once it is in the database. */
  importDirectory(dir: string): Promise<ImportResult>;
  /** Resolves when the start-up import is in the database and every candle series is built. */
  persisted(): Promise<void>;
  /** Health for `/health` (`market_feed`). */
  readonly healthCheck: HealthCheck;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Dependencies of {@link createMarketServices}. */
export interface MarketDeps {
  db: Kysely<Database>;
  logger: Logger;
  /** Overrides (tests): wall clock, settings. */
  now?: () => number;
  settings?: Partial<MarketSettings>;
}

/** Builds the market services from the configuration (not started; see `start`). */
export const createMarketServices = (config: Config, deps: MarketDeps): MarketServices => {
  const settings: MarketSettings = { ...marketSettings(config), ...deps.settings };
  const { db, logger } = deps;
  const now = deps.now ?? Date.now;
  const data = new MarketData(new ColumnStore(settings.storeDir));
  const feed = new MarketFeed();
  let source: MarketSource | undefined;
  let filesSource: ReturnType<typeof createFilesSource> | undefined;
  let lastImport: ImportResult | undefined;
  let started = false;
  let sourceStartedAt: number | undefined;
  let storeWrites: 'none' | 'pending' | 'done' | 'failed' = 'none';
  const shutdown = new AbortController();

  /**
   * Live market data (price, ticker, trades, order book) exists only for active pairs: an inactive one is
   * `INVALID_SYMBOL` 400 (spec "Errors": pair unknown or inactive), not a `PRICE_NOT_AVAILABLE` 503 that tells
   * the client to retry. Stored candles of an inactive pair stay readable (history).
   */
  const LIVE = { active: true } as const;
  const requirePair = (raw: string, options: { active?: boolean } = {}): Pair => {
    const symbol = normalizeSymbol(raw);
    const pair = data.pair(symbol);
    if (!pair) throw new DomainError('INVALID_SYMBOL', `unknown symbol ${symbol}`, { symbol });
    if (options.active && pair.status !== 'active') {
      throw new DomainError('INVALID_SYMBOL', `pair ${symbol} is not active`, {
        symbol,
        status: pair.status,
      });
    }
    return pair;
  };

  const getPrice = (raw: string): CachedPrice => {
    const pair = requirePair(raw, LIVE);
    const price = feed.prices.get(pair.symbol);
    if (!price) {
      throw new DomainError('PRICE_NOT_AVAILABLE', `no price for ${pair.symbol} yet`, {
        symbol: pair.symbol,
      });
    }
    return price;
  };

  const quoteVolume24h = (raw: string): string | undefined => {
    const symbol = normalizeSymbol(raw);
    return feed.quoteVolume24h(symbol, now()) ?? data.referenceTicker(symbol)?.quoteVolume;
  };

  const runImport = (dir: string) => importDirectory(dir, { db, data, logger, signal: shutdown.signal });

  const services: MarketServices = {
    get source() {
      return settings.source;
    },
    data,
    feed,
    ticks$: feed.ticks$,
    get lastImport() {
      return lastImport;
    },
    pairs: (status) => (status ? data.pairs().filter((p) => p.status === status) : data.pairs()),
    pair: (symbol) => data.pair(normalizeSymbol(symbol)),
    requirePair,
    getPrice,
    prices: () => [...feed.prices.all()],
    staleness: () =>
      stalenessOf(settings.source, settings.maxPriceAgeMs, feed.lastTickAt, sourceStartedAt, now()),
    ticker(raw) {
      const pair = requirePair(raw, LIVE);
      const ticker = feed.ticker(pair.symbol, now());
      if (!ticker) {
        throw new DomainError('PRICE_NOT_AVAILABLE', `no 24h ticker for ${pair.symbol} yet`, {
          symbol: pair.symbol,
        });
      }
      return ticker;
    },
    quoteVolume24h,
    recentTrades(raw, limit) {
      const pair = requirePair(raw, LIVE);
      return feed.trades.latest(pair.symbol, limit);
    },
    orderBook(raw, depth) {
      const pair = requirePair(raw, LIVE);
      const price = getPrice(pair.symbol);
      // The fill model's book: what a taker order of this pair would walk now (docs/trading-rules.md).
      const sides = bookSnapshot(
        {
          mid: price.price,
          tickSize: pair.tickSize,
          stepSize: pair.stepSize,
          quoteVolume24h: quoteVolume24h(pair.symbol),
        },
        depth,
      );
      return { symbol: pair.symbol, time: price.time, mid: price.price, updateId: price.updateId, ...sides };
    },
    candles(raw, interval, range) {
      const pair = requirePair(raw);
      return data.candles.query(pair.symbol, interval, range);
    },
    candleRuns(raw, interval, range) {
      const pair = requirePair(raw);
      return data.candles.queryRuns(pair.symbol, interval, range, { transient: true });
    },
    closedCandles: (raw, interval, from, at) =>
      data.candles.closedCandles(normalizeSymbol(raw), interval, from, at),
    priceAt: (raw, interval, at) => data.candles.lastClosed(normalizeSymbol(raw), interval, at)?.close,
    replayedNow() {
      const replay = filesSource?.replay();
      return replay ? replayTime(replay.window, now()) : undefined;
    },
    dataRange() {
      const symbols = data.candles.symbols();
      const range = data.candles.range();
      const intervals = new Set<Interval>();
      const pairs = symbols.map((symbol) => {
        const r = data.candles.range(symbol)!;
        const available = data.candles.intervalsAvailable(symbol);
        for (const i of available) intervals.add(i);
        return {
          symbol,
          earliest: r.earliest,
          latest: r.latest,
          intervals: available,
          stored: data.candles.nativeIntervals(symbol),
        };
      });
      return {
        earliest: range?.earliest ?? null,
        latest: range?.latest ?? null,
        totalPairs: symbols.length,
        intervalsAvailable: INTERVALS.filter((i) => intervals.has(i)),
        gaps: data.candles.gaps(),
        pairs,
      };
    },
    importDirectory: runImport,
    persisted: async () => {
      await lastImport?.persisted;
    },
    healthCheck: {
      name: 'market_feed',
      async check() {
        const s = source?.status() ?? { ok: false, reason: 'not started' };
        return {
          ...s,
          source: settings.source,
          pairs: data.pairs().length,
          prices: feed.prices.size,
          candles: data.candles.size(),
          ticks: feed.tickCount,
          // The feed's lag, for an operator watching a stall build before prices turn stale.
          feed_lag_ms: feed.lastTickAt ? now() - feed.lastTickAt : null,
          max_price_age_ms: settings.source === 'binance' ? settings.maxPriceAgeMs : null,
          prices_stale: services.staleness() !== undefined,
          store_writes: storeWrites,
        };
      },
    },
    async start() {
      if (started) return;
      started = true;
      const t0 = performance.now();
      await moveLegacyCandles(db, data.candles.store, logger);
      for (const s of await loadCandleSeries(db, { except: 'files' })) {
        data.candles.merge(s.symbol, s.interval, s.candles);
      }
      const pairs = await loadLatestPairs(db, settings.source === 'files' ? 'files' : undefined);
      if (pairs) data.setPairs(pairs);
      data.setReferenceTickers(await loadReferenceTickers(db));
      const loadedMs = performance.now() - t0;
      if (settings.dataDir) {
        storeWrites = 'pending';
        try {
          lastImport = await runImport(settings.dataDir);
          storeWrites = 'done';
        } catch (error) {
          storeWrites = 'failed';
          throw error;
        }
      }
      const symbols = settings.symbols;
      filesSource =
        settings.source === 'files' ? createFilesSource({ feed, data, logger, symbols, now }) : undefined;
      source = filesSource
        ? filesSource
        : settings.source === 'binance'
          ? createBinanceSource({ feed, data, db, settings, logger, now })
          : createSyntheticSource({ feed, data, logger, symbols, now, seed: settings.seed });
      sourceStartedAt = now();
      await source.start();
      logger.info(
        {
          source: settings.source,
          pairs: data.pairs().length,
          candles: data.candles.size(),
          prices: feed.prices.size,
          load_ms: Math.round(loadedMs),
          start_ms: Math.round(performance.now() - t0),
        },
        'market data ready',
      );
    },
    async stop() {
      shutdown.abort();
      await source?.stop();
      await lastImport?.persisted.catch(() => {});
      feed.complete();
    },
  };
  return services;
};
