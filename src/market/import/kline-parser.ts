import type { Candle } from '../../../domain/market/candle';
import { INTERVAL_MS, type Interval } from '../../../domain/market/intervals';
import { type KlineProblem, klineFromColumns } from '../../../domain/market/klines';
import type { CandleColumns } from '../store/block-codec';
import { assembleColumns } from '../store/columns';
import { pushCandleUnits } from '../store/convert';
import { DecimalColumnBuilder } from '../store/decimal-column';

/**
 * A streaming parser of Binance kline CSV text into candle columns (issue 24 item 1): bytes go in as they arrive
 * (from a zip entry or a file), rows come out as integers in typed arrays, never as one string per file or one
 * object per candle. The rules are those of `domain/market/klines.ts` exactly: a row the fast path reads and checks
 * in integers is taken as it is; any row it cannot (an unusual but valid spelling such as `+1.5` or `1e3` is
 * refused there, spaces, a bad value, a broken rule) goes through `klineFromColumns`, which takes or refuses it
 * with the same message as before. Files must be sorted by open time to take the fast path; duplicates are refused
 * with the line of the first.
 */
export interface ParsedColumns {
  columns: CandleColumns;
  problems: KlineProblem[];
  /** Lines that held a candle (a header excluded). */
  rows: number;
  headerLine: boolean;
  /** Line of each candle of `columns`, in the same order. */
  lines: Int32Array;
}

const COMMA = 44;
const NEWLINE = 10;
const CR = 13;
const DOT = 46;
const D0 = 48;
const D9 = 57;
const MICROS_THRESHOLD = 1e14;
const UNIT = 100_000_000;
const MAX = Number.MAX_SAFE_INTEGER;
const POW10 = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];
/** Integer parts above this overflow 2^53 once in units. */
const MAX_FAST_INT = Math.floor(MAX / UNIT);

export class KlineCsvParser {
  private readonly intervalMs: number;
  private readonly times: number[] = [];
  private readonly lineNumbers: number[] = [];
  private readonly builders = Array.from({ length: 7 }, () => new DecimalColumnBuilder(4096));
  private readonly problems: KlineProblem[] = [];
  private carry: Buffer | undefined;
  private line = 0;
  private rows = 0;
  private sawContent = false;
  private header = false;
  private sorted = true;
  /** Field boundaries of the current row: start and end byte of up to 13 fields. */
  private readonly starts = new Int32Array(13);
  private readonly ends = new Int32Array(13);
  /** Values of the current row's decimal fields (units), and whether each needed the slow path. */
  private readonly values = new Float64Array(12);

  constructor(private readonly interval: Interval) {
    this.intervalMs = INTERVAL_MS[interval];
  }

  /** Feeds the next bytes of the text. */
  push(chunk: Buffer): void {
    let data = chunk;
    if (this.carry) {
      data = Buffer.concat([this.carry, chunk]);
      this.carry = undefined;
    }
    let start = 0;
    for (;;) {
      const end = data.indexOf(NEWLINE, start);
      if (end < 0) break;
      this.row(data, start, end);
      start = end + 1;
    }
    if (start < data.length) this.carry = Buffer.from(data.subarray(start));
  }

  /** Ends the text and returns what was read (the parser is spent). */
  finish(): ParsedColumns {
    if (this.carry) {
      const last = this.carry;
      this.carry = undefined;
      this.row(last, 0, last.length);
    }
    let order: number[] | undefined;
    if (!this.sorted) order = this.sortAndFindDuplicates();
    let columns = assembleColumns(
      this.intervalMs,
      Float64Array.from(this.times),
      this.builders.map((b) => b.finish()),
    );
    let lines = Int32Array.from(this.lineNumbers);
    if (order) {
      columns = permute(columns, order);
      lines = Int32Array.from(order, (i) => this.lineNumbers[i]!);
    }
    this.problems.sort((a, b) => a.line - b.line);
    return { columns, problems: this.problems, rows: this.rows, headerLine: this.header, lines };
  }

  private row(data: Buffer, from: number, to: number): void {
    this.line++;
    let end = to;
    if (end > from && data[end - 1] === CR) end--;
    // Blank (or whitespace-only) lines are ignored.
    let blank = true;
    for (let i = from; i < end; i++) {
      const b = data[i]!;
      if (b !== 32 && b !== 9) {
        blank = false;
        break;
      }
    }
    if (blank) return;
    if (!this.sawContent) {
      this.sawContent = true;
      let i = from;
      while (i < end && (data[i] === 32 || data[i] === 9)) i++;
      if (!(i < end && data[i]! >= D0 && data[i]! <= D9)) {
        this.header = true;
        return;
      }
    }
    this.rows++;
    if (!this.fast(data, from, end)) this.slow(data.toString('latin1', from, end));
  }

  /** Parses and checks a row in integers; false when it must go the slow way. */
  private fast(data: Buffer, from: number, end: number): boolean {
    const starts = this.starts;
    const ends = this.ends;
    let fields = 0;
    let fieldStart = from;
    for (let i = from; i <= end; i++) {
      if (i === end || data[i] === COMMA) {
        if (fields === 13) return false;
        starts[fields] = fieldStart;
        ends[fields] = i;
        fields++;
        fieldStart = i + 1;
      }
    }
    if (fields < 6 || fields > 12) return false;
    const openTime = epoch(data, starts[0]!, ends[0]!);
    if (openTime < 0) return false;
    const values = this.values;
    for (let f = 1; f <= 5; f++) {
      const v = decimalUnits(data, starts[f]!, ends[f]!);
      if (v < 0) return false;
      values[f] = v;
    }
    const ms = this.intervalMs;
    if (openTime % ms !== 0) return false;
    if (fields >= 7) {
      const closeTime = epoch(data, starts[6]!, ends[6]!);
      if (closeTime !== openTime + ms - 1) return false;
    }
    const open = values[1]!;
    const high = values[2]!;
    const low = values[3]!;
    const close = values[4]!;
    if (open <= 0 || high <= 0 || low <= 0 || close <= 0) return false;
    if (high < low || open < low || open > high || close < low || close > high) return false;
    let quote = Number.NaN;
    if (fields >= 8) {
      quote = decimalUnits(data, starts[7]!, ends[7]!);
      if (quote < 0) return false;
    }
    let trades = Number.NaN;
    if (fields >= 9) {
      trades = integer(data, starts[8]!, ends[8]!);
      if (trades < 0) return false;
    }
    if (fields > 9 && decimalUnits(data, starts[9]!, ends[9]!) < 0) return false;
    if (fields > 10 && decimalUnits(data, starts[10]!, ends[10]!) < 0) return false;
    this.noteTime(openTime);
    const b = this.builders;
    b[0]!.push(open);
    b[1]!.push(high);
    b[2]!.push(low);
    b[3]!.push(close);
    b[4]!.push(values[5]!);
    b[5]!.push(quote);
    b[6]!.push(trades * UNIT);
    return true;
  }

  /** The reference parser's verdict on a row the fast path left: a candle taken, or its problem reported. */
  private slow(text: string): void {
    const parsed = klineFromColumns(text.split(','), this.interval);
    if (typeof parsed === 'string') {
      this.problems.push({ line: this.line, message: parsed });
      return;
    }
    this.acceptBig(parsed);
  }

  private noteTime(openTime: number): void {
    const previous = this.times[this.times.length - 1];
    if (previous !== undefined && openTime <= previous) this.sorted = false;
    this.times.push(openTime);
    this.lineNumbers.push(this.line);
  }

  private acceptBig(c: Candle): void {
    this.noteTime(c.openTime);
    pushCandleUnits(this.builders, c);
  }

  /**
   * Rows out of order: reports every repeated open time (at the later line, naming the first) and returns the
   * order of the remaining rows by open time. Repeated rows are dropped from the output (the file is rejected).
   */
  private sortAndFindDuplicates(): number[] {
    const first = new Map<number, number>();
    const keep: number[] = [];
    for (let i = 0; i < this.times.length; i++) {
      const t = this.times[i]!;
      const line = this.lineNumbers[i]!;
      const seen = first.get(t);
      if (seen !== undefined) {
        this.problems.push({
          line,
          message: `duplicate ${this.interval} candle for ${new Date(t).toISOString()} (first at ${seen})`,
        });
        continue;
      }
      first.set(t, line);
      keep.push(i);
    }
    return keep.sort((a, b) => this.times[a]! - this.times[b]!);
  }
}

/** Digits only → an epoch time in ms (microseconds recognized by magnitude); −1 otherwise. */
const epoch = (data: Buffer, from: number, to: number): number => {
  const v = integer(data, from, to, 16);
  if (v < 0 || v > MAX) return -1;
  return v >= MICROS_THRESHOLD ? Math.floor(v / 1000) : v;
};

/** Digits only (at most `maxDigits`) → the integer; −1 otherwise. */
const integer = (data: Buffer, from: number, to: number, maxDigits = 15): number => {
  if (to <= from || to - from > maxDigits) return -1;
  let v = 0;
  for (let i = from; i < to; i++) {
    const d = data[i]! - D0;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
};

/**
 * `digits[.digits]` → 1e-8 units as a safe integer; −1 for anything else (a sign, spaces, an exponent, digits
 * beyond the 8th place that are not zeros, a value past 2^53 units): those go the slow way.
 */
const decimalUnits = (data: Buffer, from: number, to: number): number => {
  let i = from;
  let int = 0;
  let intDigits = 0;
  while (i < to) {
    const d = data[i]! - D0;
    if (d < 0 || d > 9) break;
    int = int * 10 + d;
    intDigits++;
    i++;
  }
  if (intDigits === 0 || intDigits > 15) return -1;
  let frac = 0;
  let fracDigits = 0;
  if (i < to && data[i] === DOT) {
    i++;
    while (i < to) {
      const d = data[i]! - D0;
      if (d < 0 || d > 9) return -1;
      if (fracDigits < 8) {
        frac = frac * 10 + d;
        fracDigits++;
      } else if (d !== 0) return -1;
      i++;
    }
  }
  if (i !== to || int > MAX_FAST_INT) return -1;
  return int * UNIT + frac * POW10[8 - fracDigits]!;
};

/** Columns reordered (and filtered) by `order` (indices into `c`). */
const permute = (c: CandleColumns, order: readonly number[]): CandleColumns => {
  const cols = [c.open, c.high, c.low, c.close, c.volume, c.quote, c.trades].map((col) => {
    const b = new DecimalColumnBuilder(Math.max(1, order.length));
    const m = POW10[8 - col.scale]!;
    for (const i of order) {
      if (col.ints) {
        const v = col.ints[i]!;
        if (Number.isNaN(v)) b.push(Number.NaN);
        else if (v * m <= MAX) b.push(v * m);
        else b.pushBig(BigInt(v) * BigInt(m));
      } else b.pushBig(col.big[i]! < 0n ? -1n : col.big[i]! * BigInt(m));
    }
    return b.finish();
  });
  return assembleColumns(
    c.intervalMs,
    Float64Array.from(order, (i) => c.openTime[i]!),
    cols,
  );
};
