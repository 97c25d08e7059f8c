import { toUnits, toUnitsNumber } from '../../../domain/market/decimal';
import { INTERVAL_MS } from '../../../domain/market/intervals';
import { hash32, mulberry32 } from '../../../domain/market/random';
import { bridgeCandle, gaussian } from './bridge';
import { anchorCandles, type FilePlan, type PairPlan } from './plan';

/**
 * The CSV of one generated file in Binance's kline layout (12 columns: open time, open, high, low, close, volume,
 * close time, quote volume, trades, taker buy base volume, taker buy quote volume, ignore), one line per candle.
 * Each anchor hour is bridged with a generator seeded by (seed, symbol, hour), so every file is the same whatever
 * else is generated alongside it, and a missing anchor hour (a real outage) is missing in every finer interval too.
 */
export interface RenderOptions {
  seed: number;
  /** Binance's spot files are in milliseconds until 2024 and in microseconds from 2025 on. */
  timeUnit: 'ms' | 'us';
  /** A header line (Binance's own files have none; exports often do). */
  header: boolean;
}

/** The rendered text and how many candles it holds. */
export interface RenderedFile {
  /** ASCII text. */
  csv: Buffer;
  candles: number;
}

const HOUR = 3_600_000;
const UNIT = 100_000_000;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const DOT = 46;
const COMMA = 44;
const ZERO = 48;

/**
 * ASCII text written straight into a growing buffer: a month of 1-minute lines is 44,640 × 12 numbers, and
 * building them as strings spent more time in the garbage collector than in generating them.
 */
class AsciiWriter {
  private buffer = Buffer.allocUnsafe(1 << 20);
  private length = 0;

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + bytes));
    this.buffer.copy(next, 0, 0, this.length);
    this.buffer = next;
  }

  byte(code: number): void {
    this.reserve(1);
    this.buffer[this.length++] = code;
  }

  text(value: string): void {
    this.reserve(value.length);
    this.length += this.buffer.write(value, this.length, 'latin1');
  }

  /** A non-negative safe integer. */
  integer(value: number): void {
    this.reserve(16);
    let digits = 1;
    for (let v = value; v >= 10; v = Math.floor(v / 10)) digits++;
    let v = value;
    for (let i = this.length + digits - 1; i >= this.length; i--) {
      const q = Math.floor(v / 10);
      this.buffer[i] = ZERO + (v - q * 10);
      v = q;
    }
    this.length += digits;
  }

  /** `units` 1e-8 units (a non-negative safe integer) as a decimal with 8 places. */
  units(units: number): void {
    const int = Math.floor(units / UNIT);
    this.integer(int);
    this.reserve(9);
    this.buffer[this.length++] = DOT;
    let frac = units - int * UNIT;
    for (let i = this.length + 7; i >= this.length; i--) {
      const q = Math.floor(frac / 10);
      this.buffer[i] = ZERO + (frac - q * 10);
      frac = q;
    }
    this.length += 8;
  }

  /** `count` grid units of `unit` (1e-8 units each), exact for any size. */
  grid(count: number, unit: number): void {
    const u = count * unit;
    if (u <= MAX_SAFE) this.units(u);
    else this.text(scaledText(count, unit));
  }

  /** A non-negative amount (a float) to as many of its 8 places as a safe integer holds. */
  amount(value: number): void {
    const u = Math.round(value * UNIT);
    if (u <= MAX_SAFE) {
      this.units(u);
      return;
    }
    let places = 8;
    while (places > 0 && value * 10 ** places > MAX_SAFE) places--;
    this.text(scaledText(Math.round(value * 10 ** places), 10 ** (8 - places)));
  }

  toString(): string {
    return this.buffer.toString('latin1', 0, this.length);
  }

  toBuffer(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

/** 8-decimal text of `count` × `unit` units of 1e-8, exact for any size when `unit` is a power of ten. */
const scaledText = (count: number, unit: number): string => {
  const p = Math.round(Math.log10(unit));
  const digits =
    10 ** p === unit
      ? (count === 0 ? '0' : String(count) + '0'.repeat(p)).padStart(9, '0')
      : (BigInt(count) * BigInt(unit)).toString().padStart(9, '0');
  return `${digits.slice(0, -8)}.${digits.slice(-8)}`;
};

/** The largest power of ten ≤ `unit` dividing every value (an anchor value off the pair's current grid). */
const gridOf = (unit: number, values: readonly bigint[]): number => {
  let g = unit;
  while (g > 1 && values.some((v) => v % BigInt(g) !== 0n)) g /= 10;
  return Math.max(1, Math.round(g));
};

/** Renders one file of `plan`. */
export const renderFile = (plan: PairPlan, file: FilePlan, options: RenderOptions): RenderedFile => {
  const ms = INTERVAL_MS[file.interval];
  const n = HOUR / ms;
  const scale = options.timeUnit === 'us' ? 1000 : 1;
  const out = new AsciiWriter();
  if (options.header) {
    out.text(
      'open_time,open,high,low,close,volume,close_time,quote_volume,count,taker_buy_volume,taker_buy_quote_volume,ignore\n',
    );
  }
  let candles = 0;
  // Anchor hours overlapping the file (a file edge inside an hour keeps only that hour's sub-candles inside it).
  for (const hour of anchorCandles(plan, Math.floor(file.from / HOUR) * HOUR, file.to)) {
    const prices = [hour.open, hour.high, hour.low, hour.close].map(toUnitsNumber) as [
      number,
      number,
      number,
      number,
    ];
    const volumeUnits = toUnits(hour.volume);
    let tick: number;
    let step: number;
    let ticks: number[];
    let steps: number;
    if (plan.own) {
      tick = gridOf(plan.tickUnits, prices.map(BigInt));
      step = gridOf(plan.stepUnits, [volumeUnits]);
      ticks = prices.map((p) => p / tick);
      steps = Number(volumeUnits / BigInt(step));
    } else {
      tick = plan.tickUnits;
      step = plan.stepUnits;
      ticks = prices.map((p) => Math.max(1, Math.round((p * plan.priceScale) / tick)));
      steps = Math.round((Number(volumeUnits) * plan.volumeScale) / step);
    }
    const rng = mulberry32(hash32(plan.symbol, options.seed, hour.openTime));
    const sub = bridgeCandle(
      { open: ticks[0]!, high: ticks[1]!, low: ticks[2]!, close: ticks[3]!, volume: steps },
      n,
      rng,
    );
    for (let k = 0; k < n; k++) {
      const openTime = hour.openTime + k * ms;
      if (openTime < file.from || openTime >= file.to) continue;
      const vwap = ((sub.open[k]! + sub.high[k]! + sub.low[k]! + sub.close[k]!) / 4) * (tick / UNIT);
      const volume = sub.volume[k]! * (step / UNIT);
      const quote = volume * vwap;
      const takerSteps = Math.floor(sub.volume[k]! * (0.35 + 0.3 * rng()));
      const takerQuote = takerSteps * (step / UNIT) * vwap;
      const trades =
        sub.volume[k] === 0
          ? 0
          : Math.max(1, Math.round((quote / plan.tradeQuote) * Math.exp(0.3 * gaussian(rng))));
      const t = openTime * scale;
      out.integer(t);
      out.byte(COMMA);
      out.grid(sub.open[k]!, tick);
      out.byte(COMMA);
      out.grid(sub.high[k]!, tick);
      out.byte(COMMA);
      out.grid(sub.low[k]!, tick);
      out.byte(COMMA);
      out.grid(sub.close[k]!, tick);
      out.byte(COMMA);
      out.grid(sub.volume[k]!, step);
      out.byte(COMMA);
      out.integer(t + ms * scale - 1);
      out.byte(COMMA);
      out.amount(quote);
      out.byte(COMMA);
      out.integer(trades);
      out.byte(COMMA);
      out.grid(takerSteps, step);
      out.byte(COMMA);
      out.amount(takerQuote);
      out.text(',0\n');
      candles++;
    }
  }
  return { csv: out.toBuffer(), candles };
};
