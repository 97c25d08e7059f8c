import { type Observable, Subject } from 'rxjs';
import { fromUnits } from '../../domain/market/decimal';
import {
  type MinuteCandle,
  RollingWindow,
  type TickerValues,
  tickerValues,
  type WindowStats,
} from '../../domain/market/rolling-window';
import { PriceCache } from './price-cache';
import { RecentTrades } from './recent-trades';
import type { MarketSourceName, PriceTick } from './ticks';

/** A symbol's 24h ticker (spec "Market records: Ticker") before formatting: values plus the time of the last tick. */
export interface Ticker extends TickerValues {
  symbol: string;
  /** Time (ms) of the newest tick in the window. */
  time: number;
  /** `window`: computed here from ticks over the last 24 h; `exchange`: Binance's own rolling 24h ticker. */
  basis: 'window' | 'exchange';
  source: MarketSourceName;
}

/**
 * The live market state every source feeds (ARCHITECTURE §7): the price cache, the rolling 24h windows, the
 * recent trades, and the tick stream. `ingest` updates all of them synchronously, then publishes the tick on
 * `ticks$` (rxjs), which the matching engine, the WebSocket ticker channels and the live candle recorder
 * subscribe to.
 */
export class MarketFeed {
  readonly prices = new PriceCache();
  readonly trades = new RecentTrades(500);
  private readonly windows = new Map<string, RollingWindow>();
  private readonly exchangeTickers = new Map<string, Ticker>();
  private readonly subject = new Subject<PriceTick>();
  /** Every live tick, in arrival order. Backfilled history is not replayed here. */
  readonly ticks$: Observable<PriceTick> = this.subject.asObservable();
  private lastTick = 0;
  private count = 0;
  /** {@link quoteVolume24h}'s texts by the window statistics they were made from. */
  private readonly quoteTexts = new WeakMap<WindowStats, string>();

  /** Records a live tick and publishes it. */
  ingest(tick: PriceTick): void {
    this.record(tick);
    this.lastTick = Date.now();
    this.count++;
    this.subject.next(tick);
  }

  /** Records a past tick (start-up backfill) without publishing it. */
  backfill(tick: PriceTick): void {
    this.record(tick);
  }

  /** Adds a past tick to the 24h window only (bulk backfill: units, no strings). */
  backfillWindow(
    symbol: string,
    time: number,
    priceUnits: number,
    quantityUnits: bigint,
    trade: boolean,
  ): void {
    this.window(symbol).add(time, priceUnits, quantityUnits, trade);
  }

  /** Adds a closed 1-minute candle to the 24h window (REST backfill); values in 1e-8 units. */
  backfillMinute(symbol: string, openTime: number, c: MinuteCandle): void {
    this.window(symbol).addCandle(openTime, c);
  }

  /**
   * Sets a symbol's 24h ticker as the exchange reports it (Binance mini-ticker: its own rolling window), used
   * instead of the locally computed window for that symbol.
   */
  setExchangeTicker(ticker: Ticker): void {
    this.exchangeTickers.set(ticker.symbol, ticker);
  }

  /** The 24h ticker of `symbol` at `now` (ms), or `undefined` when no tick fell in the last 24 hours. */
  ticker(symbol: string, now = Date.now()): Ticker | undefined {
    const exchange = this.exchangeTickers.get(symbol);
    if (exchange) return exchange;
    const stats = this.windows.get(symbol)?.stats(now);
    if (!stats) return undefined;
    const source = this.prices.get(symbol)?.source ?? 'files';
    return { symbol, ...tickerValues(stats), time: stats.lastTime, basis: 'window', source };
  }

  /**
   * The `quoteVolume` of {@link ticker} alone (the same text), without formatting the rest of the ticker: the
   * slippage model reads it on every market order (docs/benchmarks.md, "Trading", issue 23). The text is made
   * once per state of the window (its statistics object is cached until a tick or a new minute changes it).
   */
  quoteVolume24h(symbol: string, now = Date.now()): string | undefined {
    const exchange = this.exchangeTickers.get(symbol);
    if (exchange) return exchange.quoteVolume;
    const stats = this.windows.get(symbol)?.stats(now);
    if (!stats) return undefined;
    let text = this.quoteTexts.get(stats);
    if (text === undefined) {
      text = fromUnits(stats.quoteVolume);
      this.quoteTexts.set(stats, text);
    }
    return text;
  }

  /**
   * The ticks of `symbol` in `[openTime, openTime + intervalMs)` folded into one candle (values in 1e-8 units), as
   * far as the 24h window still holds them at `now`; `undefined` without a tick there. The WebSocket `candles`
   * channel's forming and closed candles (a span of at most a day, inside the window).
   */
  candle(symbol: string, openTime: number, intervalMs: number, now = Date.now()): WindowStats | undefined {
    return this.windows.get(symbol)?.between(openTime, openTime + intervalMs, now);
  }

  /** Symbols with a price. */
  symbols(): string[] {
    return [...this.prices.all()].map((p) => p.symbol);
  }

  /** Wall time (ms) of the last live tick, or 0. */
  get lastTickAt(): number {
    return this.lastTick;
  }

  /** Live ticks ingested since start. */
  get tickCount(): number {
    return this.count;
  }

  /** Ends the tick stream (shutdown). */
  complete(): void {
    this.subject.complete();
  }

  private window(symbol: string): RollingWindow {
    let w = this.windows.get(symbol);
    if (!w) {
      w = new RollingWindow();
      this.windows.set(symbol, w);
    }
    return w;
  }

  private record(tick: PriceTick): void {
    this.prices.update(tick);
    this.trades.add(tick);
    this.window(tick.symbol).add(tick.time, tick.priceUnits, tick.quantityUnits, tick.trade);
  }
}
