import type { Subscription } from 'rxjs';
import { fromUnits } from '../../domain/market/decimal';
import { INTERVAL_MS, INTERVALS, type Interval, isInterval } from '../../domain/market/intervals';
import { addToKeyedSet, deleteFromKeyedSet, deleteIfCurrent } from '../core/keyed-sets';
import type { MarketServices, OrderBook } from '../market/services';
import type { PriceTick } from '../market/ticks';
import {
  aggTradeEvent,
  bookTickerEvent,
  depthUpdateEvent,
  klineEvent,
  miniTickerEvent,
  tickerEvent,
  tradeEvent,
} from './present';

/**
 * Binance's market streams (Spot "WebSocket Streams": `<symbol>@trade`, `@aggTrade`, `@kline_<interval>`,
 * `@ticker`, `@miniTicker`, `@bookTicker`, `@depth<levels>[@100ms]`, `@depth[@100ms]`, `!ticker@arr`,
 * `!miniTicker@arr`) fed by the venue's one market feed (`market.ticks$`, the tick stream the matching engine and
 * `/ws/v1`'s channels follow). Each event is built and serialized once for every socket that follows its stream.
 */

/** A stream a socket can follow, parsed from its Binance name. */
export type MarketStream =
  | { kind: 'trade' | 'aggTrade' | 'bookTicker' | 'ticker' | 'miniTicker'; symbol: string }
  | { kind: 'kline'; symbol: string; interval: Interval }
  /** `@depth<levels>`: the top `levels` of the book every `speedMs`. */
  | { kind: 'depth'; symbol: string; levels: 5 | 10 | 20; speedMs: 100 | 1000 }
  /** `@depth`: the levels that changed, every `speedMs`, with update ids (Binance's "Diff. Depth Stream"). */
  | { kind: 'diffDepth'; symbol: string; speedMs: 100 | 1000 }
  | { kind: 'allTicker' | 'allMiniTicker' };

/** A stream name that is not one of ours (the socket answers Binance's error code 2, "Invalid request"). */
export class StreamNameError extends Error {}

const SIMPLE = new Set(['trade', 'aggTrade', 'bookTicker', 'ticker', 'miniTicker']);

/**
 * Parses a Binance stream name (the symbol part in any case, the rest as Binance spells it); `requireSymbol`
 * resolves a symbol to an active pair or throws. Returns the canonical name (symbol lower-cased, as Binance
 * echoes it) and the stream. Throws {@link StreamNameError} for a name we do not serve.
 */
export const parseStreamName = (
  raw: string,
  requireSymbol: (symbol: string) => string,
): { name: string; stream: MarketStream } => {
  if (raw === '!ticker@arr') return { name: raw, stream: { kind: 'allTicker' } };
  if (raw === '!miniTicker@arr') return { name: raw, stream: { kind: 'allMiniTicker' } };
  const at = raw.indexOf('@');
  if (at <= 0) throw new StreamNameError(`unknown stream ${JSON.stringify(raw)}`);
  const rest = raw.slice(at + 1);
  let symbol: string;
  try {
    symbol = requireSymbol(raw.slice(0, at).toUpperCase());
  } catch {
    throw new StreamNameError(`unknown symbol in stream ${JSON.stringify(raw)}`);
  }
  const name = `${symbol.toLowerCase()}@${rest}`;
  if (SIMPLE.has(rest)) {
    return { name, stream: { kind: rest as 'trade', symbol } };
  }
  if (rest.startsWith('kline_')) {
    const interval = rest.slice('kline_'.length);
    if (!isInterval(interval)) {
      throw new StreamNameError(
        `unserved kline interval in ${JSON.stringify(raw)}: use ${INTERVALS.join(', ')}`,
      );
    }
    return { name, stream: { kind: 'kline', symbol, interval } };
  }
  const depth = /^depth(5|10|20)?(@100ms|@1000ms)?$/.exec(rest);
  if (depth) {
    const speedMs = depth[2] === '@100ms' ? 100 : 1000;
    return {
      name,
      stream: depth[1]
        ? { kind: 'depth', symbol, levels: Number(depth[1]) as 5 | 10 | 20, speedMs }
        : { kind: 'diffDepth', symbol, speedMs },
    };
  }
  throw new StreamNameError(`unknown stream ${JSON.stringify(raw)}`);
};

/** Receives one event of a stream: its canonical name and its payload, already serialized. */
export type StreamListener = (name: string, json: string) => void;

/** Binance's book depth of the diff stream: the synthetic book's 20 levels a side. */
const DIFF_LEVELS = 20;
/** Binance's update speed of the (mini) tickers and of klines (ms). */
const SLOW_MS = 1000;
const FAST_MS = 100;

interface Entry {
  readonly name: string;
  readonly stream: MarketStream;
  readonly listeners: Set<StreamListener>;
  /** A tick arrived since the last scheduled event (tickers, klines). */
  dirty: boolean;
  /** kline: open time of the candle forming. */
  forming?: number;
  /** diffDepth: the book as last seen, the last update id sent, and the levels changed since. */
  book?: { bids: Map<string, string>; asks: Map<string, string> };
  lastU?: number;
  pending?: { bids: Map<string, string>; asks: Map<string, string> };
}

const levelsOf = (side: [string, string][]) => new Map(side.map(([p, q]) => [p, q]));
const ZERO = '0.00000000';

/**
 * Fan-out of the market streams for one application instance. `listen(name, listener)` follows a stream (the
 * returned function stops); events go to every listener of the stream, serialized once.
 */
export class MarketStreamHub {
  private readonly entries = new Map<string, Entry>();
  private readonly bySymbol = new Map<string, Set<Entry>>();
  private readonly changed = new Set<string>();
  private readonly subscription: Subscription;
  private readonly fast: NodeJS.Timeout;
  private readonly slow: NodeJS.Timeout;

  constructor(private readonly market: MarketServices) {
    this.subscription = market.ticks$.subscribe((tick) => this.onTick(tick));
    this.fast = setInterval(() => this.flush(FAST_MS), FAST_MS);
    this.slow = setInterval(() => this.flush(SLOW_MS), SLOW_MS);
    this.fast.unref();
    this.slow.unref();
  }

  /** Parses a stream name against the venue's active pairs (see {@link parseStreamName}). */
  parse(raw: string): { name: string; stream: MarketStream } {
    return parseStreamName(raw, (s) => this.market.requirePair(s, { active: true }).symbol);
  }

  /**
   * Follows the stream `name` (canonical, from {@link parse}); returns the function that stops (and drops the
   * stream with its last listener). Calling that function again, even once the stream has been followed anew by
   * other listeners (or the same listener), changes nothing.
   */
  listen(name: string, stream: MarketStream, listener: StreamListener): () => void {
    let entry = this.entries.get(name);
    if (!entry) {
      entry = { name, stream, listeners: new Set(), dirty: true };
      this.entries.set(name, entry);
      if ('symbol' in stream) addToKeyedSet(this.bySymbol, stream.symbol, entry);
      if (stream.kind === 'diffDepth') {
        // The book as it is now is the base of the first update (U = its id + 1): a client's REST snapshot taken
        // after subscribing has an id at least this one, which Binance's "manage a local order book" steps need.
        const book = this.bookOf(stream.symbol);
        entry.book = { bids: levelsOf(book?.bids ?? []), asks: levelsOf(book?.asks ?? []) };
        entry.lastU = book?.updateId ?? 0;
        entry.pending = { bids: new Map(), asks: new Map() };
      }
    }
    // A new follower gets the next scheduled event even when nothing ticks meanwhile.
    entry.dirty = true;
    const e = entry;
    e.listeners.add(listener);
    return () => {
      e.listeners.delete(listener);
      if (e.listeners.size > 0 || !deleteIfCurrent(this.entries, name, e)) return;
      if ('symbol' in e.stream) deleteFromKeyedSet(this.bySymbol, e.stream.symbol, e);
    };
  }

  close(): void {
    this.subscription.unsubscribe();
    clearInterval(this.fast);
    clearInterval(this.slow);
  }

  private emit(entry: Entry, payload: unknown): void {
    const json = JSON.stringify(payload);
    for (const listener of entry.listeners) listener(entry.name, json);
  }

  private bookOf(symbol: string, depth = DIFF_LEVELS): OrderBook | undefined {
    try {
      return this.market.orderBook(symbol, depth);
    } catch {
      return undefined; // no price yet
    }
  }

  private onTick(tick: PriceTick): void {
    this.changed.add(tick.symbol);
    const entries = this.bySymbol.get(tick.symbol);
    if (!entries) return;
    const now = Date.now();
    for (const e of entries) {
      const s = e.stream;
      switch (s.kind) {
        case 'trade':
        case 'aggTrade': {
          if (!tick.trade) break;
          const t = {
            tradeId: tick.tradeId,
            price: tick.price,
            quantity: tick.quantity,
            time: tick.time,
            isBuyerMaker: tick.isBuyerMaker,
          };
          this.emit(e, s.kind === 'trade' ? tradeEvent(s.symbol, t, now) : aggTradeEvent(s.symbol, t, now));
          break;
        }
        case 'bookTicker': {
          const book = this.bookOf(s.symbol, 1);
          const bid = book?.bids[0];
          const ask = book?.asks[0];
          if (book && bid && ask) this.emit(e, bookTickerEvent(s.symbol, book.updateId, { bid, ask }));
          break;
        }
        case 'kline': {
          const openTime = Math.floor(tick.time / INTERVAL_MS[s.interval]) * INTERVAL_MS[s.interval];
          if (e.forming !== undefined && openTime < e.forming) break; // a late tick of a closed candle
          if (e.forming !== undefined && openTime > e.forming) this.closeKline(e, s, tick.time);
          e.forming = openTime;
          e.dirty = true;
          break;
        }
        case 'diffDepth':
          this.trackBook(e, s.symbol);
          e.dirty = true;
          break;
        default:
          e.dirty = true;
      }
    }
  }

  /**
   * Folds the book after a tick into the pending update: every level that changed since the last event, with
   * its newest quantity ('0' once gone). Done on every tick, not at the event, so that a level that came and went
   * in between is sent as removed: whatever tick a client's REST snapshot was taken at, the update brings it to
   * the book as it is.
   */
  private trackBook(e: Entry, symbol: string): void {
    const book = this.bookOf(symbol);
    if (!book || !e.book || !e.pending) return;
    for (const side of ['bids', 'asks'] as const) {
      const before = e.book[side];
      const after = levelsOf(book[side]);
      const pending = e.pending[side];
      for (const [price, qty] of after) if (before.get(price) !== qty) pending.set(price, qty);
      for (const price of before.keys()) if (!after.has(price)) pending.set(price, ZERO);
      e.book[side] = after;
    }
  }

  private closeKline(e: Entry, s: Extract<MarketStream, { kind: 'kline' }>, now: number): void {
    const openTime = e.forming!;
    e.forming = undefined;
    const candle = this.candle(s.symbol, s.interval, openTime, now);
    if (candle) this.emit(e, klineEvent(s.symbol, candle, s.interval, true, Date.now()));
  }

  private candle(symbol: string, interval: Interval, openTime: number, now: number) {
    const c = this.market.feed.candle(symbol, openTime, INTERVAL_MS[interval], now);
    if (!c) return undefined;
    return {
      openTime,
      open: fromUnits(c.open),
      high: fromUnits(c.high),
      low: fromUnits(c.low),
      close: fromUnits(c.close),
      volume: fromUnits(c.volume),
      quoteVolume: fromUnits(c.quoteVolume),
      tradeCount: c.tradeCount,
    };
  }

  private flush(period: number): void {
    const now = Date.now();
    for (const e of this.entries.values()) {
      const s = e.stream;
      switch (s.kind) {
        case 'depth': {
          if (s.speedMs !== period) break;
          const book = this.bookOf(s.symbol, s.levels);
          if (book) this.emit(e, { lastUpdateId: book.updateId, bids: book.bids, asks: book.asks });
          break;
        }
        case 'diffDepth': {
          if (s.speedMs !== period || !e.pending) break;
          const u = this.bookOf(s.symbol)?.updateId;
          if (u === undefined || u <= e.lastU! || (e.pending.bids.size === 0 && e.pending.asks.size === 0))
            break;
          this.emit(
            e,
            depthUpdateEvent(s.symbol, e.lastU! + 1, u, [...e.pending.bids], [...e.pending.asks], now),
          );
          e.lastU = u;
          e.pending = { bids: new Map(), asks: new Map() };
          break;
        }
        case 'ticker':
        case 'miniTicker': {
          if (period !== SLOW_MS || !e.dirty) break;
          e.dirty = false;
          const t = this.market.feed.ticker(s.symbol, now);
          if (!t) break;
          if (s.kind === 'miniTicker') this.emit(e, miniTickerEvent(t, now));
          else this.emit(e, tickerEvent(t, this.topOf(s.symbol), now));
          break;
        }
        case 'kline': {
          if (period !== SLOW_MS) break;
          const ms = INTERVAL_MS[s.interval];
          // A candle whose interval ended without a tick of the next one is closed by the clock.
          if (e.forming !== undefined && e.forming + ms <= now) {
            this.closeKline(e, s, now);
            break;
          }
          if (!e.dirty) break;
          e.dirty = false;
          const openTime = e.forming ?? Math.floor(now / ms) * ms;
          const candle = this.candle(s.symbol, s.interval, openTime, now);
          if (candle) this.emit(e, klineEvent(s.symbol, candle, s.interval, false, now));
          break;
        }
        case 'allTicker':
        case 'allMiniTicker': {
          if (period !== SLOW_MS || this.changed.size === 0) break;
          const out = [];
          for (const symbol of [...this.changed].sort()) {
            const t = this.market.feed.ticker(symbol, now);
            if (!t) continue;
            out.push(
              s.kind === 'allTicker' ? tickerEvent(t, this.topOf(symbol), now) : miniTickerEvent(t, now),
            );
          }
          if (out.length > 0) this.emit(e, out);
          break;
        }
        default:
          break;
      }
    }
    if (period === SLOW_MS) this.changed.clear();
  }

  private topOf(symbol: string) {
    const book = this.bookOf(symbol, 1);
    const bid = book?.bids[0];
    const ask = book?.asks[0];
    return bid && ask ? { bid, ask } : undefined;
  }
}
