import { fromUnits } from './decimal';

/**
 * Rolling 24-hour statistics from a stream of ticks (ARCHITECTURE §7 and §16: "a real 24-hour window, not a
 * counter that never resets"). Ticks are kept in one-minute buckets; the window is the current minute and the
 * 1,439 before it, so it always spans 24 hours to the minute, like Binance's own rolling ticker. Old buckets
 * fall out as time passes, whether or not new ticks arrive. Pure: time is passed in.
 */
export interface WindowStats {
  /** First price in the window (1e-8 units). */
  open: number;
  high: number;
  low: number;
  /** Last price in the window. */
  close: number;
  /** Base volume (1e-8 units). */
  volume: bigint;
  /** Quote (USDT) volume: Σ quantity × price (1e-8 units). */
  quoteVolume: bigint;
  /** Number of trades. */
  tradeCount: number;
  /** Time (ms) of the first and last tick in the window. */
  firstTime: number;
  lastTime: number;
}

/** A closed 1-minute candle as the window takes it (REST backfill): prices and volumes in 1e-8 units, `count` trades. */
export type MinuteCandle = Pick<WindowStats, 'open' | 'high' | 'low' | 'close' | 'volume' | 'quoteVolume'> & {
  count: number;
};

const MINUTE = 60_000;
/** Minutes in the window. */
export const WINDOW_MINUTES = 1440;
const SLOTS = WINDOW_MINUTES + 1;
const UNIT = 100_000_000n;

/** One symbol's minute buckets. */
export class RollingWindow {
  private readonly minute = new Float64Array(SLOTS).fill(-1);
  private readonly open = new Float64Array(SLOTS);
  private readonly high = new Float64Array(SLOTS);
  private readonly low = new Float64Array(SLOTS);
  private readonly close = new Float64Array(SLOTS);
  private readonly first = new Float64Array(SLOTS);
  private readonly last = new Float64Array(SLOTS);
  private readonly count = new Uint32Array(SLOTS);
  private readonly volume: bigint[] = new Array<bigint>(SLOTS).fill(0n);
  private readonly quote: bigint[] = new Array<bigint>(SLOTS).fill(0n);
  private cached: { minute: number; version: number; stats: WindowStats | undefined } | undefined;
  private version = 0;

  /**
   * Adds a tick at `timeMs` (ms) with `price` and `quantity` in 1e-8 units. `trade: false` marks a price-only
   * update (a forward-filled price across a data gap, a mini-ticker quote): it moves prices, not volume or
   * count. Ticks older than the window are ignored.
   */
  add(timeMs: number, price: number, quantity: bigint, trade = true): void {
    const m = Math.floor(timeMs / MINUTE);
    const slot = m % SLOTS;
    if (this.minute[slot] !== m) {
      if (this.minute[slot]! > m) return; // older than the window
      this.minute[slot] = m;
      this.open[slot] = price;
      this.high[slot] = price;
      this.low[slot] = price;
      this.close[slot] = price;
      this.first[slot] = timeMs;
      this.last[slot] = timeMs;
      this.count[slot] = 0;
      this.volume[slot] = 0n;
      this.quote[slot] = 0n;
    } else {
      if (price > this.high[slot]!) this.high[slot] = price;
      if (price < this.low[slot]!) this.low[slot] = price;
      if (timeMs >= this.last[slot]!) {
        this.close[slot] = price;
        this.last[slot] = timeMs;
      }
      if (timeMs < this.first[slot]!) {
        this.open[slot] = price;
        this.first[slot] = timeMs;
      }
    }
    if (trade) {
      this.count[slot] = this.count[slot]! + 1;
      this.volume[slot] = this.volume[slot]! + quantity;
      this.quote[slot] = this.quote[slot]! + (quantity * BigInt(price)) / UNIT;
    }
    this.version++;
  }

  /**
   * Fills the bucket of a whole 1-minute candle (REST backfill): `openTime` (ms, minute-aligned), prices and
   * volumes in 1e-8 units, `count` trades. A bucket that already holds ticks is left as it is (live ticks win).
   */
  addCandle(openTime: number, c: MinuteCandle): void {
    const m = Math.floor(openTime / MINUTE);
    const slot = m % SLOTS;
    if (this.minute[slot]! >= m) return;
    this.minute[slot] = m;
    this.open[slot] = c.open;
    this.high[slot] = c.high;
    this.low[slot] = c.low;
    this.close[slot] = c.close;
    this.first[slot] = openTime;
    this.last[slot] = openTime + MINUTE - 1;
    this.count[slot] = c.count;
    this.volume[slot] = c.volume;
    this.quote[slot] = c.quoteVolume;
    this.version++;
  }

  /** Statistics of the 24 hours ending in the minute of `nowMs`; `undefined` when the window holds no tick. */
  stats(nowMs: number): WindowStats | undefined {
    const current = Math.floor(nowMs / MINUTE);
    if (this.cached && this.cached.minute === current && this.cached.version === this.version) {
      return this.cached.stats;
    }
    const stats = this.span(current - WINDOW_MINUTES + 1, current);
    this.cached = { minute: current, version: this.version, stats };
    return stats;
  }

  /**
   * Statistics of the ticks in `[startMs, endMs)` (minute-aligned bounds: a candle's span, e.g. the forming hour
   * of the WebSocket `candles` channel), as far as the window ending in the minute of `nowMs` still holds them;
   * `undefined` when it holds no tick there.
   */
  between(startMs: number, endMs: number, nowMs: number): WindowStats | undefined {
    const current = Math.floor(nowMs / MINUTE);
    const first = Math.max(Math.floor(startMs / MINUTE), current - WINDOW_MINUTES + 1);
    const last = Math.min(Math.ceil(endMs / MINUTE) - 1, current);
    return first <= last ? this.span(first, last) : undefined;
  }

  /** Folds the buckets of minutes `first` to `last` (inclusive, inside the window). */
  private span(first: number, last: number): WindowStats | undefined {
    let stats: WindowStats | undefined;
    for (let m = first; m <= last; m++) {
      const slot = m % SLOTS;
      if (this.minute[slot] !== m) continue;
      if (!stats) {
        stats = {
          open: this.open[slot]!,
          high: this.high[slot]!,
          low: this.low[slot]!,
          close: this.close[slot]!,
          volume: 0n,
          quoteVolume: 0n,
          tradeCount: 0,
          firstTime: this.first[slot]!,
          lastTime: this.last[slot]!,
        };
      }
      if (this.high[slot]! > stats.high) stats.high = this.high[slot]!;
      if (this.low[slot]! < stats.low) stats.low = this.low[slot]!;
      stats.close = this.close[slot]!;
      stats.lastTime = this.last[slot]!;
      stats.volume += this.volume[slot]!;
      stats.quoteVolume += this.quote[slot]!;
      stats.tradeCount += this.count[slot]!;
    }
    return stats;
  }
}

/** The spec's Ticker values (decimal strings) derived from {@link WindowStats}. */
export interface TickerValues {
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
  quoteVolume: string;
  change: string;
  /** (close − open) / open × 100, 8 decimals, rounded half away from zero. */
  changePct: string;
  tradeCount: number;
}

/** Formats window statistics as the Ticker's decimal strings (spec "Market records: Ticker"). */
export const tickerValues = (s: WindowStats): TickerValues => {
  const change = s.close - s.open;
  // change_pct in 1e-8 units: change / open × 100 × 1e8, rounded half away from zero (exact bigint math).
  const num = BigInt(change) * 100n * UNIT;
  const den = BigInt(s.open);
  let pct = 0n;
  if (den !== 0n) {
    const q = num / den;
    const r = num % den;
    pct = 2n * (r < 0n ? -r : r) >= den ? q + (num < 0n ? -1n : 1n) : q;
  }
  return {
    open: fromUnits(s.open),
    high: fromUnits(s.high),
    low: fromUnits(s.low),
    close: fromUnits(s.close),
    volume: fromUnits(s.volume),
    quoteVolume: fromUnits(s.quoteVolume),
    change: fromUnits(change),
    changePct: fromUnits(pct),
    tradeCount: s.tradeCount,
  };
};
