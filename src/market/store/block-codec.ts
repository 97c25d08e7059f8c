import { BitReader, BitWriter, bigBitWidth, bitWidth } from './bits';
import { type DecimalColumn, isNull } from './decimal-column';

/**
 * Candles of one series in columns — the candle store's unit of storage, reading and decoding. Times are epoch ms
 * on the interval's grid, sorted, unique; decimal columns are exact (`decimal-column.ts`).
 */
export interface CandleColumns {
  /** Interval length (ms). */
  intervalMs: number;
  length: number;
  openTime: Float64Array;
  open: DecimalColumn;
  high: DecimalColumn;
  low: DecimalColumn;
  close: DecimalColumn;
  volume: DecimalColumn;
  /** Quote volume (Binance column 8); null where the source lacked it. */
  quote: DecimalColumn;
  /** Trade count (column 9) at scale 0; null where the source lacked it. */
  trades: DecimalColumn;
}

/**
 * The encoded form of a block of candles (ours, version 1). Times are a first open time and a presence bitmap over
 * the grid (absent when no slot is empty), so a full day of minutes spends no bits on time. Prices share one scale
 * and are stored as movements, zigzag-encoded and bit-packed at the block's widest value: the open against the
 * previous close (the first against the block's base price), the close against the open, the high above
 * max(open, close), the low below min(open, close) — a minute's movements are a few hundred ticks, so a price costs
 * 8–16 bits instead of 64. Volume, quote volume and trades are bit-packed as they are (widths chosen per block),
 * with a null bitmap when only some are null. Little-endian throughout.
 *
 * ```
 * u8 version=1 | u8 flags (1: presence bitmap) | f64 first open time | f64 interval ms | u32 slots | u32 count
 * [bitmap ⌈slots/8⌉ bytes] | u8 price scale | f64 base price | u8 widths ×4 (open, close, high, low)
 * ×3 (volume, quote, trades): u8 scale | u8 kind (0 numbers, 1 bigints, 2 all null) | u8 nulls (0 none, 1 bitmap)
 *     [bitmap ⌈count/8⌉] | u8 width
 * then the bit-packed values: open, close, high, low movements, volume, quote, trades (count each)
 * ```
 */
const VERSION = 1;
const POW10 = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];

const zigzag = (d: number): number => (d >= 0 ? 2 * d : -2 * d - 1);
const unzigzag = (z: number): number => {
  // Without `%`: a floating-point remainder is a library call in optimized code, on every price of every read.
  const half = Math.floor(z / 2);
  return z === 2 * half ? half : -half - 1;
};

/** Price columns at one common scale, as integer numbers (prices always fit). */
const pricesAtScale = (c: CandleColumns): { scale: number; cols: Float64Array[] } => {
  const cols = [c.open, c.high, c.low, c.close];
  const scale = Math.max(...cols.map((x) => x.scale));
  return {
    scale,
    cols: cols.map((x) => {
      const m = POW10[scale - x.scale]!;
      if (x.ints) return m === 1 ? x.ints : x.ints.map((v) => v * m);
      return Float64Array.from(x.big, (v) => Number(v) * m);
    }),
  };
};

/** The largest value, nulls (NaN) ignored. */
const largest = (values: Float64Array): number => {
  let max = 0;
  for (const v of values) if (v > max) max = v;
  return max;
};

const largestBig = (values: readonly bigint[]): bigint => {
  let max = 0n;
  for (const v of values) if (v > max) max = v;
  return max;
};

const writeBitmap = (w: BitWriter, bits: (i: number) => boolean, n: number) => {
  const bytes = new Uint8Array(Math.ceil(n / 8));
  for (let i = 0; i < n; i++) if (bits(i)) bytes[i >>> 3]! |= 1 << (i & 7);
  w.raw(bytes);
};

const header = (size: number) => {
  const bytes = new Uint8Array(size);
  return { bytes, view: new DataView(bytes.buffer) };
};

/** Encodes `c` (≥ 1 candle). */
export const encodeBlock = (c: CandleColumns): Uint8Array => {
  const n = c.length;
  if (n < 1) throw new RangeError('a block holds at least one candle');
  const first = c.openTime[0]!;
  const slots = Math.round((c.openTime[n - 1]! - first) / c.intervalMs) + 1;
  const w = new BitWriter();
  const h = header(26);
  h.view.setUint8(0, VERSION);
  h.view.setUint8(1, slots === n ? 0 : 1);
  h.view.setFloat64(2, first, true);
  h.view.setFloat64(10, c.intervalMs, true);
  h.view.setUint32(18, slots, true);
  h.view.setUint32(22, n, true);
  w.raw(h.bytes);
  if (slots !== n) {
    const present = new Uint8Array(Math.ceil(slots / 8));
    for (let i = 0; i < n; i++) {
      const slot = Math.round((c.openTime[i]! - first) / c.intervalMs);
      present[slot >>> 3]! |= 1 << (slot & 7);
    }
    w.raw(present);
  }

  const { scale, cols } = pricesAtScale(c);
  const [open, high, low, close] = cols as [Float64Array, Float64Array, Float64Array, Float64Array];
  const moves = [new Float64Array(n), new Float64Array(n), new Float64Array(n), new Float64Array(n)];
  let previousClose = open[0]!;
  for (let i = 0; i < n; i++) {
    const o = open[i]!;
    const cl = close[i]!;
    moves[0]![i] = zigzag(o - previousClose);
    moves[1]![i] = zigzag(cl - o);
    moves[2]![i] = high[i]! - Math.max(o, cl);
    moves[3]![i] = Math.min(o, cl) - low[i]!;
    previousClose = cl;
  }
  const widths = moves.map((m) => bitWidth(largest(m)));
  const p = header(13);
  p.view.setUint8(0, scale);
  p.view.setFloat64(1, open[0]!, true);
  widths.forEach((width, i) => {
    p.view.setUint8(9 + i, width);
  });
  w.raw(p.bytes);

  const others = [c.volume, c.quote, c.trades];
  const plans = others.map((col) => {
    let nullCount = 0;
    for (let i = 0; i < n; i++) if (isNull(col, i)) nullCount++;
    const kind = nullCount === n ? 2 : col.big ? 1 : 0;
    const width = kind === 2 ? 0 : col.big ? bigBitWidth(largestBig(col.big)) : bitWidth(largest(col.ints!));
    const m = header(3);
    m.view.setUint8(0, col.scale);
    m.view.setUint8(1, kind);
    m.view.setUint8(2, nullCount > 0 && nullCount < n ? 1 : 0);
    w.raw(m.bytes);
    if (nullCount > 0 && nullCount < n) writeBitmap(w, (i) => isNull(col, i), n);
    w.raw(Uint8Array.of(width));
    return { col, kind, width };
  });

  widths.forEach((width, k) => {
    w.writeMany(moves[k]!, width, n);
  });
  for (const { col, kind, width } of plans) {
    if (kind === 2) continue;
    if (col.big) for (let i = 0; i < n; i++) w.writeBig(col.big[i]! < 0n ? 0n : col.big[i]!, width);
    else w.writeMany(col.ints!, width, n);
  }
  return w.finish();
};

/** The fixed head of an encoded block ({@link encodeBlock}'s layout): where the presence bitmap or prices start. */
interface BlockHead {
  view: DataView;
  /** Bit 1: a presence bitmap of `slots` bits follows the head. */
  flags: number;
  /** Open time of the first slot (epoch ms) and the grid's step (ms). */
  first: number;
  intervalMs: number;
  slots: number;
  /** Candles in the block. */
  n: number;
  /** Byte offset after the head (the bitmap, else the price header). */
  at: number;
}

/** Reads the head of an encoded block; throws on an unknown version. */
const readHead = (bytes: Uint8Array): BlockHead => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint8(0) !== VERSION) throw new Error(`unknown candle block version ${view.getUint8(0)}`);
  return {
    view,
    flags: view.getUint8(1),
    first: view.getFloat64(2, true),
    intervalMs: view.getFloat64(10, true),
    slots: view.getUint32(18, true),
    n: view.getUint32(22, true),
    at: 26,
  };
};

/** How one of the volume, quote volume and trades columns is stored. */
interface ColumnMeta {
  scale: number;
  /** 0 numbers, 1 bigints, 2 all null. */
  kind: number;
  /** The null bitmap (a bit per candle) when only some are null. */
  nulls: Uint8Array | undefined;
  /** Bits per value. */
  width: number;
}

/**
 * Reads the three column headers (volume, quote volume, trades) of a block of `n` candles starting at byte `at`;
 * answers them and the byte offset after them (where the bit-packed values begin).
 */
const readColumnMetas = (
  bytes: Uint8Array,
  view: DataView,
  at: number,
  n: number,
): { metas: [ColumnMeta, ColumnMeta, ColumnMeta]; at: number } => {
  const metas: ColumnMeta[] = [];
  for (let k = 0; k < 3; k++) {
    const scale = view.getUint8(at);
    const kind = view.getUint8(at + 1);
    const hasNulls = view.getUint8(at + 2) === 1;
    at += 3;
    let nulls: Uint8Array | undefined;
    if (hasNulls) {
      nulls = bytes.subarray(at, at + Math.ceil(n / 8));
      at += Math.ceil(n / 8);
    }
    metas.push({ scale, kind, nulls, width: view.getUint8(at) });
    at += 1;
  }
  return { metas: metas as [ColumnMeta, ColumnMeta, ColumnMeta], at };
};

/** Decodes a block written by {@link encodeBlock}. */
export const decodeBlock = (bytes: Uint8Array): CandleColumns => {
  const head = readHead(bytes);
  const { view, flags, first, intervalMs, slots, n } = head;
  let at = head.at;
  const openTime = new Float64Array(n);
  if (flags & 1) {
    let i = 0;
    for (let slot = 0; slot < slots; slot++) {
      if (bytes[at + (slot >>> 3)]! & (1 << (slot & 7))) openTime[i++] = first + slot * intervalMs;
    }
    at += Math.ceil(slots / 8);
  } else {
    for (let i = 0; i < n; i++) openTime[i] = first + i * intervalMs;
  }
  const scale = view.getUint8(at);
  const base = view.getFloat64(at + 1, true);
  const widths = [0, 1, 2, 3].map((k) => view.getUint8(at + 9 + k));
  at += 13;
  const columns = readColumnMetas(bytes, view, at, n);
  const metas = columns.metas;
  at = columns.at;

  const reader = new BitReader(bytes, at);
  const moves = widths.map((width) => {
    const m = new Float64Array(n);
    reader.readMany(width, n, m);
    return m;
  });
  const open = new Float64Array(n);
  const close = new Float64Array(n);
  const high = new Float64Array(n);
  const low = new Float64Array(n);
  let previousClose = base;
  for (let i = 0; i < n; i++) {
    const o = previousClose + unzigzag(moves[0]![i]!);
    const cl = o + unzigzag(moves[1]![i]!);
    open[i] = o;
    close[i] = cl;
    high[i] = Math.max(o, cl) + moves[2]![i]!;
    low[i] = Math.min(o, cl) - moves[3]![i]!;
    previousClose = cl;
  }
  const [volume, quote, trades] = metas.map((meta): DecimalColumn => {
    const isNullAt = (i: number) =>
      meta.kind === 2 || (meta.nulls !== undefined && (meta.nulls[i >>> 3]! & (1 << (i & 7))) !== 0);
    if (meta.kind === 1) {
      const big: bigint[] = new Array(n);
      for (let i = 0; i < n; i++) {
        const v = reader.readBig(meta.width);
        big[i] = isNullAt(i) ? -1n : v;
      }
      return { scale: meta.scale, big };
    }
    const ints = new Float64Array(n);
    if (meta.kind === 2) ints.fill(Number.NaN);
    else {
      reader.readMany(meta.width, n, ints);
      if (meta.nulls) for (let i = 0; i < n; i++) if (isNullAt(i)) ints[i] = Number.NaN;
    }
    return { scale: meta.scale, ints };
  }) as [DecimalColumn, DecimalColumn, DecimalColumn];
  return {
    intervalMs,
    length: n,
    openTime,
    open: { scale, ints: open },
    high: { scale, ints: high },
    low: { scale, ints: low },
    close: { scale, ints: close },
    volume,
    quote,
    trades,
  };
};

/**
 * Reused arrays a window decode writes into ({@link decodeBlockWindow}): one set per block a read uses at a time,
 * grown as needed, never shrunk. Columns decoded into them are valid until the set is used again.
 */
export class WindowArrays {
  private arrays: Float64Array[] = [];

  /** Eight arrays of at least `n` values (open time, open, high, low, close, volume, quote, trades). */
  take(n: number): Float64Array[] {
    if (this.arrays.length === 0 || this.arrays[0]!.length < n) {
      const size = Math.max(n, 2 * (this.arrays[0]?.length ?? 0), 1024);
      this.arrays = Array.from({ length: 8 }, () => new Float64Array(size));
    }
    return this.arrays;
  }
}

/** Price movements of the open and close up to a window's end (scratch of {@link decodeBlockWindow}). */
let moveScratch = new Float64Array(2 * 1440);

/**
 * The candles of an encoded block with open time in [start, end) — the first `room` of them, or the last `room`
 * with `fromEnd` — decoded into `into` (reused: the columns are valid until `into` is used again), without storing
 * the block's other candles: times and the volume columns are read only for the window, prices from the block's
 * start to the window's end (each open is a movement from the previous close). For a range read that needs part of a
 * block it does not keep: no column allocated, and about half the work of {@link decodeBlock} for 1,000 of a day's
 * 1,440 minutes. Undefined when a column holds bigints (rare: the caller decodes the block whole).
 */
export const decodeBlockWindow = (
  bytes: Uint8Array,
  start: number,
  end: number,
  room: number,
  into: WindowArrays,
  fromEnd = false,
): CandleColumns | undefined => {
  const head = readHead(bytes);
  const { view, flags, first, intervalMs, slots, n } = head;
  let at = head.at;
  // The window [from, to) by index, and its open times.
  let from: number;
  let to: number;
  let bitmapAt = -1;
  if (flags & 1) {
    bitmapAt = at;
    at += Math.ceil(slots / 8);
    from = 0;
    to = 0;
    for (let slot = 0; slot < slots; slot++) {
      if (!(bytes[bitmapAt + (slot >>> 3)]! & (1 << (slot & 7)))) continue;
      const t = first + slot * intervalMs;
      if (t < start) from++;
      if (t < end) to++;
      else break;
    }
  } else {
    from = Math.min(n, Math.max(0, Math.ceil((start - first) / intervalMs)));
    to =
      end === Number.POSITIVE_INFINITY ? n : Math.min(n, Math.max(0, Math.ceil((end - first) / intervalMs)));
  }
  if (to - from > room) {
    if (fromEnd) from = to - room;
    else to = from + room;
  }
  const count = Math.max(0, to - from);
  const [openTime, open, high, low, close, volume, quote, trades] = into.take(count) as [
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
  ];
  if (bitmapAt >= 0) {
    let i = 0;
    for (let slot = 0; slot < slots && i < to; slot++) {
      if (!(bytes[bitmapAt + (slot >>> 3)]! & (1 << (slot & 7)))) continue;
      if (i >= from) openTime[i - from] = first + slot * intervalMs;
      i++;
    }
  } else {
    for (let i = from; i < to; i++) openTime[i - from] = first + i * intervalMs;
  }

  const scale = view.getUint8(at);
  const base = view.getFloat64(at + 1, true);
  const w0 = view.getUint8(at + 9);
  const w1 = view.getUint8(at + 10);
  const w2 = view.getUint8(at + 11);
  const w3 = view.getUint8(at + 12);
  at += 13;
  const columns = readColumnMetas(bytes, view, at, n);
  const metas = columns.metas;
  at = columns.at;
  if (metas.some((m) => m.kind === 1)) return undefined;

  const reader = new BitReader(bytes, at);
  const bit0 = reader.bitPosition;
  if (moveScratch.length < 2 * to) moveScratch = new Float64Array(2 * to);
  const moves = moveScratch;
  reader.readMany(w0, to, moves, 0);
  reader.seek(bit0 + n * w0);
  reader.readMany(w1, to, moves, to);
  let previousClose = base;
  for (let i = 0; i < to; i++) {
    const o = previousClose + unzigzag(moves[i]!);
    const cl = o + unzigzag(moves[to + i]!);
    if (i >= from) {
      open[i - from] = o;
      close[i - from] = cl;
    }
    previousClose = cl;
  }
  const highAt = bit0 + n * (w0 + w1);
  const lowAt = highAt + n * w2;
  reader.seek(highAt + from * w2);
  reader.readMany(w2, count, high, 0);
  reader.seek(lowAt + from * w3);
  reader.readMany(w3, count, low, 0);
  for (let k = 0; k < count; k++) {
    const o = open[k]!;
    const cl = close[k]!;
    high[k] = Math.max(o, cl) + high[k]!;
    low[k] = Math.min(o, cl) - low[k]!;
  }
  let columnAt = lowAt + n * w3;
  const others = [volume, quote, trades].map((out, k): DecimalColumn => {
    const meta = metas[k]!;
    if (meta.kind === 2) out.fill(Number.NaN, 0, count);
    else {
      reader.seek(columnAt + from * meta.width);
      reader.readMany(meta.width, count, out, 0);
      columnAt += n * meta.width;
      const nulls = meta.nulls;
      if (nulls) {
        for (let i = from; i < to; i++) if (nulls[i >>> 3]! & (1 << (i & 7))) out[i - from] = Number.NaN;
      }
    }
    return { scale: meta.scale, ints: out.subarray(0, count) };
  });
  return {
    intervalMs,
    length: count,
    openTime: openTime.subarray(0, count),
    open: { scale, ints: open.subarray(0, count) },
    high: { scale, ints: high.subarray(0, count) },
    low: { scale, ints: low.subarray(0, count) },
    close: { scale, ints: close.subarray(0, count) },
    volume: others[0]!,
    quote: others[1]!,
    trades: others[2]!,
  };
};
