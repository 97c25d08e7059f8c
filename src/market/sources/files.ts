import type { Candle } from '../../../domain/market/candle';
import { fromUnits, toUnitsNumber } from '../../../domain/market/decimal';
import { INTERVAL_MS, INTERVALS, type Interval } from '../../../domain/market/intervals';
import { type ReplayWindow, replayTime, replayWindow } from '../../../domain/market/replay-clock';
import { type CandlePath, candlePath } from '../../../domain/market/tick-path';
import type { MarketData } from '../market-data';
import type { CandleColumns } from '../store/block-codec';
import { lowerBoundTime } from '../store/columns';
import { candleAt } from '../store/convert';
import { unitsAt } from '../store/decimal-column';
import type { PriceTick } from '../ticks';
import type { LocalSourceOptions, MarketSource } from './port';
import { everySecond, tickingStatus } from './second-timer';

/**
 * The `files` source (ARCHITECTURE §7, issue item 3): replays the stored candles as a live feed. The replay
 * interval is the native interval stored for the most symbols (the finer one on a tie); its data window is
 * replayed at real speed, time-shifted to now by a whole number of days (`replay-clock.ts`). Every second each
 * symbol with data gets one tick on its candle's deterministic path (`tick-path.ts`), so prices pass through
 * each real candle's open, high, low and close. Inside a data gap (or after a symbol's last candle) the last
 * close is forward-filled as a price-only tick; before a symbol's first candle it has no price. At start the
 * previous 24 hours of replayed ticks are backfilled so the 24h ticker, recent trades and price exist at once.
 */
export type FilesSourceOptions = LocalSourceOptions;

/**
 * One replayed pair: a day of its candles around the replayed time (read from the candle store as the replay moves,
 * so a pair with years of minutes costs a day of them in memory), and the last candle before that day for the
 * forward-filled price across a gap. The day stays in the store's columns (typed arrays, ~60 bytes a candle): as
 * candle objects of 8-decimal strings a day of minutes cost ~0.5 KB a candle on the request thread's heap, ~150 MB
 * for 100 pairs, which every major collection of that heap marked again (docs/benchmarks.md, issue 24, "The
 * replayed day in columns"). A candle object is made only for the candle being replayed, once per candle.
 */
interface Replayed {
  symbol: string;
  candles: CandleColumns | undefined;
  /** [start, end) of the open times `candles` covers, and the last candle before `start`. */
  windowStart: number;
  windowEnd: number;
  before: Candle | undefined;
  tickUnits: number;
  path: CandlePath | undefined;
  cursor: number;
}

const WINDOW_MS = 86_400_000;

const SECOND = 1000;
const BACKFILL_SECONDS = 86_400;
/** After a stall longer than this, skipped seconds are not replayed one by one. */
const MAX_CATCH_UP_SECONDS = 120;

/** Picks the replay interval: stored natively for the most symbols, finer on a tie. */
export const replayInterval = (data: MarketData, symbols?: readonly string[]): Interval | undefined => {
  let best: { interval: Interval; count: number } | undefined;
  for (const interval of INTERVALS) {
    const count = (symbols ?? data.candles.symbols()).filter((s) =>
      data.candles.nativeIntervals(s).includes(interval),
    ).length;
    if (count > 0 && (!best || count > best.count)) best = { interval, count };
  }
  return best?.interval;
};

/** Creates the `files` source. */
export const createFilesSource = (
  options: FilesSourceOptions,
): MarketSource & {
  /** The replay window and interval (for `/health` and tests). */
  replay(): { interval: Interval; window: ReplayWindow } | undefined;
  /** The tick of `symbol` at wall time `wallMs` (a whole second), as the live feed would emit it. */
  tickAt(symbol: string, wallMs: number): PriceTick | undefined;
} => {
  const { feed, data, logger } = options;
  const now = options.now ?? Date.now;
  let interval: Interval | undefined;
  let window: ReplayWindow | undefined;
  let series = new Map<string, Replayed>();
  let timer: { stop(): void } | undefined;
  let lastSecond = 0;
  let started = false;

  const setup = () => {
    interval = replayInterval(data, options.symbols);
    series = new Map();
    if (!interval) return;
    const ms = INTERVAL_MS[interval];
    let first = Number.POSITIVE_INFINITY;
    let last = Number.NEGATIVE_INFINITY;
    for (const symbol of options.symbols ?? data.candles.symbols()) {
      const range = data.candles.nativeRange(symbol, interval);
      if (!range) continue;
      const tickSize = data.pair(symbol)?.tickSize;
      series.set(symbol, {
        symbol,
        candles: undefined,
        windowStart: 0,
        windowEnd: 0,
        before: undefined,
        tickUnits: tickSize ? Math.max(1, toUnitsNumber(tickSize)) : 1,
        path: undefined,
        cursor: 0,
      });
      first = Math.min(first, range.first);
      last = Math.max(last, range.last + ms);
    }
    window = series.size ? replayWindow(first, last) : undefined;
  };

  /** Makes `r`'s window cover replayed time `t`: the UTC day of `t` (the candle covering `t` opens in it). */
  const cover = (r: Replayed, t: number, ms: number) => {
    const opening = t - ms + 1; // the earliest open time of a candle covering t
    if (opening >= r.windowStart && t < r.windowEnd) return;
    const start = Math.floor(opening / WINDOW_MS) * WINDOW_MS;
    const end = Math.max(start + WINDOW_MS, Math.floor(t / WINDOW_MS) * WINDOW_MS + WINDOW_MS);
    r.candles = data.candles.nativeColumns(r.symbol, interval!, start, end);
    r.before = data.candles.nativeBefore(r.symbol, interval!, start);
    r.windowStart = start;
    r.windowEnd = end;
    r.cursor = 0;
    r.path = undefined;
  };

  /** Index of the candle covering replayed time `t`, or -(index of the next candle) - 1 when `t` is not covered. */
  const locate = (r: Replayed, t: number, ms: number): number => {
    cover(r, t, ms);
    const times = r.candles!.openTime;
    const c = times[r.cursor];
    if (c !== undefined && c <= t && t < c + ms) return r.cursor;
    const next = times[r.cursor + 1];
    if (next !== undefined && next <= t && t < next + ms) {
      r.cursor++;
      return r.cursor;
    }
    const at = lowerBoundTime(times, t + 1) - 1; // last candle opening at or before t
    if (at >= 0 && t < times[at]! + ms) {
      r.cursor = at;
      return at;
    }
    return -(at + 1) - 1;
  };

  /** Price, quantity and maker flag of `symbol` at replayed time `t`, in units; undefined before its data. */
  const sample = (r: Replayed, t: number) => {
    const ms = INTERVAL_MS[interval!];
    const at = locate(r, t, ms);
    const candles = r.candles!;
    if (at >= 0) {
      const openTime = candles.openTime[at]!;
      if (!r.path || r.path.openTime !== openTime) {
        r.path = candlePath(candleAt(candles, at), {
          symbol: r.symbol,
          intervalMs: ms,
          tickUnits: r.tickUnits,
        });
      }
      const k = Math.min(r.path.prices.length - 1, Math.floor((t - openTime) / r.path.stepMs));
      return {
        price: r.path.prices[k]!,
        quantity: r.path.quantities[k]!,
        buyerMaker: r.path.buyerMaker[k] === 1,
        trade: true,
      };
    }
    const previous = -(at + 1) - 1; // index of the last candle before t, or -1
    const last =
      previous >= 0 ? unitsAt(candles.close, previous) : r.before ? toUnitsNumber(r.before.close) : undefined;
    if (last === undefined) return undefined;
    return {
      price: last,
      quantity: 0n,
      buyerMaker: false,
      trade: false,
    };
  };

  const tickAt = (symbol: string, wallMs: number): PriceTick | undefined => {
    const r = series.get(symbol);
    if (!r || !window) return undefined;
    const t = replayTime(window, wallMs);
    const s = sample(r, t);
    if (!s) return undefined;
    return {
      symbol,
      price: fromUnits(s.price),
      priceUnits: s.price,
      quantity: fromUnits(s.quantity),
      quantityUnits: s.quantity,
      time: wallMs,
      tradeId: Math.floor(t / SECOND),
      isBuyerMaker: s.buyerMaker,
      trade: s.trade,
      source: 'files',
    };
  };

  const backfill = (nowSecond: number) => {
    const detailed = 500; // the last seconds also go to recent trades and the price cache
    for (const r of series.values()) {
      for (let s = nowSecond - BACKFILL_SECONDS + 1; s <= nowSecond; s++) {
        const wall = s * SECOND;
        if (s > nowSecond - detailed) {
          const tick = tickAt(r.symbol, wall);
          if (tick) feed.backfill(tick);
        } else {
          const x = sample(r, replayTime(window!, wall));
          if (x) feed.backfillWindow(r.symbol, wall, x.price, x.quantity, x.trade);
        }
      }
    }
  };

  const pump = () => {
    const target = Math.floor(now() / SECOND);
    if (target <= lastSecond) return;
    const from = Math.max(lastSecond + 1, target - MAX_CATCH_UP_SECONDS);
    for (let s = from; s <= target; s++) {
      for (const symbol of series.keys()) {
        const tick = tickAt(symbol, s * SECOND);
        if (tick) feed.ingest(tick);
      }
    }
    lastSecond = target;
  };

  return {
    name: 'files',
    async start() {
      if (started) return;
      started = true;
      setup();
      if (!window) {
        logger?.warn('files market source: no candles to replay (import a directory with klines)');
        return;
      }
      const startedAt = performance.now();
      const nowSecond = Math.floor(now() / SECOND);
      backfill(nowSecond);
      lastSecond = nowSecond;
      logger?.info(
        {
          symbols: series.size,
          interval,
          window_start: new Date(window.start).toISOString(),
          window_days: window.length / 86_400_000,
          replayed_now: new Date(replayTime(window, now())).toISOString(),
          backfill_ms: Math.round(performance.now() - startedAt),
        },
        'files market source replaying',
      );
      timer = everySecond(pump, options.timerMs);
    },
    async stop() {
      timer?.stop();
      timer = undefined;
    },
    status: () =>
      tickingStatus(series.size, timer !== undefined, feed.lastTickAt, {
        replay_interval: interval ?? null,
        replayed_time: window ? new Date(replayTime(window, now())).toISOString() : null,
      }),
    replay: () => (interval && window ? { interval, window } : undefined),
    tickAt,
  };
};
