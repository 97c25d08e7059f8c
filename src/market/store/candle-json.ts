import type { CandleColumns } from './block-codec';
import type { ColumnRun } from './columns';
import { textAt } from './decimal-column';

/**
 * The body of a `GET /market/candles` response written as UTF-8 bytes straight from the candle store's decoded
 * columns (spec "Market data": `time` ISO 8601 UTC with milliseconds, `open`…`volume` 8-decimal strings,
 * `trade_count` an integer, 0 where the source lacked it): byte for byte `JSON.stringify` of the route's response
 * schema output for the same candles as candle objects (`candleOut`; tested on real and generated data), without a
 * candle object, a string per value, a `Date` or the generic serializer. At 1,000 one-minute candles a read those
 * were most of its CPU (docs/benchmarks.md, "Market data at scale": ~4 ms a read through per-value strings).
 */

const DAY = 86_400_000;
const POW10 = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];
const MAX = Number.MAX_SAFE_INTEGER;
/** "00" … "99" as ASCII, two bytes each. */
const PAIRS = Uint8Array.from(
  { length: 200 },
  (_, i) => 48 + (i % 2 === 0 ? Math.floor(i / 20) : (i >> 1) % 10),
);

/** Constant ASCII text as little-endian 32-bit words (zero-padded) to store 4 bytes at a time. */
interface Constant {
  words: Uint32Array;
  length: number;
}

const constant = (s: string): Constant => {
  const words = new Uint32Array(Math.ceil(s.length / 4));
  for (let k = 0; k < s.length; k++) words[k >>> 2]! |= s.charCodeAt(k) << (8 * (k & 3));
  return { words, length: s.length };
};

// A candle's constant parts around its values (the value's quotes included).
const OPEN = constant('","open":"');
const HIGH = constant('","high":"');
const LOW = constant('","low":"');
const CLOSE = constant('","close":"');
const VOLUME = constant('","volume":"');
const TRADES = constant('","trade_count":');
/** Room for one candle whose columns are numbers (the longest: 16 integer digits per value, and the keys). */
const CANDLE_ROOM = 512;

/**
 * Bodies are written into buffers reused from one response to the next (a free list, {@link POOLED} kept): a fresh
 * ~160 KB buffer per read is memory outside V8's heap that it counts towards starting a full garbage collection of
 * the whole heap, every few hundred reads (docs/benchmarks.md, "Market data at scale"). The buffer in use is
 * {@link scratch} (one body at a time: the event loop's thread); the helpers below take it (bytes and a view of
 * them) and the write position and return the new position, so the position stays in a register of the writing
 * loop; they may write a few bytes of padding past the position they return (overwritten by what follows).
 */
const POOLED = 16;
const BUFFER_BYTES = 256 * 1024;
const free: Buffer[] = [];
let scratch: Buffer = Buffer.allocUnsafeSlow(BUFFER_BYTES);
let view = new DataView(scratch.buffer, scratch.byteOffset, scratch.length);

const use = (b: Buffer) => {
  scratch = b;
  view = new DataView(b.buffer, b.byteOffset, b.length);
};

/** Makes room for `n` more bytes after `at` in {@link scratch} (a bigger copy when needed). */
const room = (at: number, n: number): void => {
  if (at + n + 16 <= scratch.length) return;
  const next = Buffer.allocUnsafeSlow(Math.max(scratch.length * 2, at + n + 16));
  scratch.copy(next, 0, 0, at);
  use(next);
};

const putConstant = (v: DataView, at: number, c: Constant): number => {
  const words = c.words;
  for (let k = 0; k < words.length; k++) v.setUint32(at + 4 * k, words[k]!, true);
  return at + c.length;
};

/** Text (code units below 256; the caller made room for it). */
const putText = (b: Buffer, at: number, s: string): number => {
  for (let k = 0; k < s.length; k++) b[at + k] = s.charCodeAt(k);
  return at + s.length;
};

/** Decimal digits of a non-negative safe integer (1–16). */
const digitCount = (v: number): number => {
  if (v < 1e8) {
    if (v < 1e4) return v < 100 ? (v < 10 ? 1 : 2) : v < 1000 ? 3 : 4;
    return v < 1e6 ? (v < 1e5 ? 5 : 6) : v < 1e7 ? 7 : 8;
  }
  let digits = 9;
  for (let p = 1e9; p <= v && digits < 16; p *= 10) digits++;
  return digits;
};

/** The last `digits` digits of `value` (a non-negative safe integer), zero-padded, ending before `end`. */
const putDigits = (b: Buffer, end: number, value: number, digits: number): void => {
  let v = value;
  let i = end;
  const stop = end - digits;
  // Two digits at a time, in 32-bit integer arithmetic once the value fits it.
  while (v >= 2 ** 31 && i - stop >= 2) {
    const q = Math.floor(v / 100);
    const r = 2 * (v - q * 100);
    i -= 2;
    b[i] = PAIRS[r]!;
    b[i + 1] = PAIRS[r + 1]!;
    v = q;
  }
  let x = v | 0;
  while (i - stop >= 2) {
    const q = (x / 100) | 0;
    const r = (x - q * 100) << 1;
    i -= 2;
    b[i] = PAIRS[r]!;
    b[i + 1] = PAIRS[r + 1]!;
    x = q;
  }
  if (i > stop) b[stop] = 48 + (x % 10);
};

/** A non-negative safe integer in decimal. */
const putUint = (b: Buffer, at: number, value: number): number => {
  const end = at + digitCount(value);
  putDigits(b, end, value, end - at);
  return end;
};

/** `value × 10^-scale` (a non-negative safe integer, scale 0–8) as 8-decimal text. */
const putDecimal = (b: Buffer, v: DataView, at: number, value: number, scale: number): number => {
  const p = POW10[scale]!;
  const int = Math.floor(value / p);
  const point = putUint(b, at, int);
  b[point] = 46; // '.'
  putDigits(b, point + 1 + scale, value - int * p, scale);
  // The zeros after the scale's digits: 8 bytes of '0' from there, 8 − scale of them kept.
  v.setUint32(point + 1 + scale, 0x30303030, true);
  v.setUint32(point + 5 + scale, 0x30303030, true);
  return point + 9;
};

/** True when `ints[i]` is written by {@link putDecimal}: a number column's non-negative safe integer. */
const plain = (ints: Float64Array | undefined, i: number): boolean => {
  if (ints === undefined) return false;
  const v = ints[i]!;
  return v >= 0 && v <= MAX && Math.floor(v) === v;
};

/** `{"time":"YYYY-MM-DDT` of the last day written, and that day's start (ms). */
let dayStart = Number.NaN;
let dayHead = constant('');

/** `{"time":"` and `ms` as `Date.toISOString()` writes it (without the closing quote). */
const putTime = (b: Buffer, v: DataView, at: number, ms: number): number => {
  const start = Math.floor(ms / DAY) * DAY;
  if (start !== dayStart) {
    dayStart = start;
    dayHead = constant(`{"time":"${new Date(start).toISOString().slice(0, 11)}`);
  }
  const o = putConstant(v, at, dayHead);
  let rest = ms - start;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  rest -= s * 1000;
  b[o] = PAIRS[2 * h]!;
  b[o + 1] = PAIRS[2 * h + 1]!;
  b[o + 2] = 58; // ':'
  b[o + 3] = PAIRS[2 * m]!;
  b[o + 4] = PAIRS[2 * m + 1]!;
  b[o + 5] = 58;
  b[o + 6] = PAIRS[2 * s]!;
  b[o + 7] = PAIRS[2 * s + 1]!;
  b[o + 8] = 46; // '.'
  const hundreds = Math.floor(rest / 100);
  const r = 2 * (rest - hundreds * 100);
  b[o + 9] = 48 + hundreds;
  b[o + 10] = PAIRS[r]!;
  b[o + 11] = PAIRS[r + 1]!;
  b[o + 12] = 90; // 'Z'
  return o + 13;
};

/**
 * True when candle `i` takes the fast path: its prices and volume in number columns, non-negative integers, its
 * trade count too or null, and its year within 0000–9999 (`toISOString`'s four-digit form).
 */
const fast = (c: CandleColumns, i: number): boolean => {
  const t = c.openTime[i]!;
  const trades = c.trades.ints;
  return (
    t >= -62_167_219_200_000 &&
    t < 253_402_300_800_000 &&
    plain(c.open.ints, i) &&
    plain(c.high.ints, i) &&
    plain(c.low.ints, i) &&
    plain(c.close.ints, i) &&
    plain(c.volume.ints, i) &&
    trades !== undefined &&
    (plain(trades, i) || Number.isNaN(trades[i]!))
  );
};

/** One candle's object, from `{"time":` to its closing brace, on the fast path (the caller made room). */
const putCandle = (b: Buffer, v: DataView, at: number, c: CandleColumns, i: number): number => {
  let o = putTime(b, v, at, Math.floor(c.openTime[i]!));
  o = putConstant(v, o, OPEN);
  o = putDecimal(b, v, o, c.open.ints![i]!, c.open.scale);
  o = putConstant(v, o, HIGH);
  o = putDecimal(b, v, o, c.high.ints![i]!, c.high.scale);
  o = putConstant(v, o, LOW);
  o = putDecimal(b, v, o, c.low.ints![i]!, c.low.scale);
  o = putConstant(v, o, CLOSE);
  o = putDecimal(b, v, o, c.close.ints![i]!, c.close.scale);
  o = putConstant(v, o, VOLUME);
  o = putDecimal(b, v, o, c.volume.ints![i]!, c.volume.scale);
  o = putConstant(v, o, TRADES);
  const trades = c.trades.ints![i]!;
  o = Number.isNaN(trades) ? putUint(b, o, 0) : putUint(b, o, Math.floor(trades / POW10[c.trades.scale]!));
  b[o] = 125; // '}'
  return o + 1;
};

/** Candle `i` as its generic JSON (the values as text, `null` where missing): what the fast path cannot write. */
const candleText = (c: CandleColumns, i: number): string => {
  const trades = textAt(c.trades, i);
  return JSON.stringify({
    time: new Date(Math.floor(c.openTime[i]!)).toISOString(),
    open: textAt(c.open, i),
    high: textAt(c.high, i),
    low: textAt(c.low, i),
    close: textAt(c.close, i),
    volume: textAt(c.volume, i),
    trade_count: trades === null ? 0 : Number(trades.slice(0, -9)),
  });
};

/** A written body: its bytes (in a reused buffer) and the function that gives the buffer back once they are sent. */
export interface CandleBody {
  bytes: Buffer;
  /** Returns the buffer for reuse: call once, when the bytes are no longer needed (the response finished). */
  release(): void;
}

/**
 * The whole `/market/candles` body — `{"symbol":…,"interval":…,"candles":[…],"count":n}` — for the candles of
 * `runs` in order (oldest first).
 */
export const candlesBody = (symbol: string, interval: string, runs: readonly ColumnRun[]): CandleBody => {
  use(free.pop() ?? Buffer.allocUnsafeSlow(BUFFER_BYTES));
  const head = `{"symbol":${JSON.stringify(symbol)},"interval":${JSON.stringify(interval)},"candles":[`;
  room(0, Buffer.byteLength(head));
  let at = scratch.write(head, 0);
  let count = 0;
  for (const { columns, from, to } of runs) {
    for (let i = from; i < to; i++) {
      if (fast(columns, i)) {
        room(at, CANDLE_ROOM);
        if (count++ > 0) scratch[at++] = 44; // ','
        at = putCandle(scratch, view, at, columns, i);
      } else {
        const text = candleText(columns, i);
        room(at, text.length + 1);
        if (count++ > 0) scratch[at++] = 44;
        at = putText(scratch, at, text);
      }
    }
  }
  const tail = `],"count":${count}}`;
  room(at, tail.length);
  at = putText(scratch, at, tail);
  const buffer = scratch;
  let released = false;
  return {
    bytes: buffer.subarray(0, at),
    release: () => {
      if (released) return;
      released = true;
      if (free.length < POOLED) free.push(buffer);
    },
  };
};
