import { packUnits } from '../domain/metrics/equity-points';
import {
  computePerformance,
  type PackedEquity,
  type Performance,
  type PerformanceInput,
} from '../domain/metrics/performance';

/**
 * A backtest's equity rows (`backtest_equity` ordered by `from_step`, issue 24) as PostgreSQL's `COPY … TO STDOUT`
 * text writes them: per row the ASCII line `from_step` TAB `points` TAB `packed` LF, `packed` a `packUnits` text.
 * Point `j` of a row is step `from_step + j`, at `start + (from_step + j) × stepMs` (ms). No rows (or no points):
 * the starting balance at `start`. Bytes, not strings, so the thread that reads them from the database (the
 * request thread, inside the projection's transaction) holds no string of them and hands them to the metrics
 * thread by transfer; {@link packedEquityOfRows} reads them there.
 */
export interface EquityRowsText {
  /** ms: the time of step 0. */
  start: number;
  /** ms between steps (the session's candle interval). */
  stepMs: number;
  /** The rows' COPY text (ASCII) in parts, read in order as one text (a server's `CopyData` messages: a row each). */
  rows: readonly Uint8Array[];
}

/** Digits, `-`, `,`, `*`: the characters of a `packUnits` text. */
const isPackedByte = (c: number): boolean => (c >= 48 && c <= 57) || c === 45 || c === 44 || c === 42;

/**
 * The {@link PackedEquity} of {@link EquityRowsText}: each point's time `start + (from_step + j) × stepMs` (the
 * same double the projection computed before, so the same figures), each row's packed text a chunk; no points:
 * `startingBalance` (decimal string) at `start`. Throws `RangeError` naming the byte offset when `rows` is not
 * such text (a line without its two tab-separated integers of at most 15 digits, a byte outside `packUnits`'
 * alphabet, a last line without its LF); the offset counts from the start of the first part.
 */
export const packedEquityOfRows = (
  { start, stepMs, rows: parts }: EquityRowsText,
  startingBalance: string,
): PackedEquity => {
  let rows = parts[0] ?? new Uint8Array();
  if (parts.length > 1) {
    rows = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      rows.set(p, at);
      at += p.length;
    }
  }
  const n = rows.length;
  const bad = (at: number) => new RangeError(`not equity rows as COPY text at byte ${at}`);
  let i = 0;
  const integer = (): number => {
    const from = i;
    let v = 0;
    for (let c = rows[i]!; i < n && c >= 48 && c <= 57; c = rows[++i]!) v = v * 10 + c - 48;
    if (i === from || i - from > 15 || rows[i] !== 9) throw bad(i);
    i++;
    return v;
  };
  /** Per row: from_step, points, and where its packed text starts and ends. */
  const runs: number[] = [];
  let total = 0;
  while (i < n) {
    const fromStep = integer();
    const points = integer();
    const at = i;
    while (i < n && rows[i] !== 10) {
      if (!isPackedByte(rows[i]!)) throw bad(i);
      i++;
    }
    if (i === n) throw bad(i);
    runs.push(fromStep, points, at, i);
    total += points;
    i++;
  }
  if (total === 0) return { times: new Float64Array([start]), chunks: [packUnits([startingBalance])] };
  const times = new Float64Array(total);
  const chunks: string[] = [];
  const ascii = new TextDecoder('latin1');
  let k = 0;
  for (let r = 0; r < runs.length; r += 4) {
    const fromStep = runs[r]!;
    const points = runs[r + 1]!;
    for (let j = 0; j < points; j++) times[k++] = start + (fromStep + j) * stepMs;
    chunks.push(ascii.decode(rows.subarray(runs[r + 2], runs[r + 3])));
  }
  return { times, chunks };
};

/**
 * What a backtest's results are computed from (`PerformanceComputer`): a {@link PerformanceInput} whose equity may
 * also be the session's rows as COPY text ({@link EquityRowsText}, read with `startingBalance` as
 * {@link packedEquityOfRows} reads them). The domain knows only points and packed curves; the rows' wire format
 * stays here, beside the projection that reads it.
 */
export type SessionPerformanceInput = Omit<PerformanceInput, 'equity'> & {
  equity: PerformanceInput['equity'] | EquityRowsText;
};

/** `computePerformance` of a {@link SessionPerformanceInput}: its rows read as a packed curve first. */
export const sessionPerformance = (input: SessionPerformanceInput): Performance => {
  const { equity } = input;
  return computePerformance({
    ...input,
    equity: 'rows' in equity ? packedEquityOfRows(equity, input.startingBalance) : equity,
  });
};
