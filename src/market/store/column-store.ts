import fs from 'node:fs';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import { type Gap, groupGaps, type SharedGap } from '../../../domain/market/gaps';
import { INTERVAL_MS, INTERVALS, type Interval } from '../../../domain/market/intervals';
import { type CandleColumns, decodeBlockWindow, WindowArrays } from './block-codec';
import {
  type ColumnRun,
  type ColumnSource,
  combineColumns,
  emptyColumns,
  lowerBoundTime,
  type MergeResult,
  mergeColumns,
  runsColumns,
  sliceColumns,
} from './columns';
import {
  type BlockEntry,
  type MonthDirectory,
  monthBounds,
  monthOf,
  readBlock,
  readBlockBytes,
  readDirectory,
  type Section,
  type SectionData,
  sectionOf,
  writeMonthFile,
} from './month-file';

/**
 * The candle store (issue 24 item 2; `docs/market-data.md`, "The candle store"): a directory of month files
 * (`month-file.ts`), one per pair and calendar month, and `manifest.json`, the index of what they hold — per pair
 * and interval, each month's first and last open time, count and gaps — and the record of every imported file.
 *
 * - **Native** series are the candles as imported; **served** series are what `/market/candles` and backtests
 *   read: the native series where a pair has one interval, and for coarser intervals the aggregation of the finer
 *   native candles (`combineColumns`: the source covering most time wins per bucket). They are made when a month is
 *   written, so a read never aggregates.
 * - **Range reads** open only the months of the window and decode only its blocks (a day of 1m candles each). Open
 *   files and decoded blocks are kept in bounded LRU caches shared by every reader of the process: many sessions
 *   reading the same pair and window decode it once.
 * - **Writes** (`prepare` → `commit` → `flush`): a month file is rewritten whole under a temporary name and renamed;
 *   the manifest last, the same way. A crash between the two leaves months written that the manifest does not know
 *   of; the import that wrote them is not recorded either, so its rerun finds the candles already there (an
 *   overlap, nothing changes) and records it. One writer at a time (`lock`). Readers in other processes notice a new
 *   manifest (checked at most once a second) and drop their caches.
 */
export interface MonthStat {
  first: number;
  last: number;
  count: number;
}

interface NativeMonth extends MonthStat {
  /** Missing candles inside the month: [start, end) pairs (ms). */
  gaps: [number, number][];
}

/** A served month: where its candles are (a served section, or the native section of the same interval). */
interface ServedMonth extends MonthStat {
  from: 'native' | 'served';
}

/** One imported file, by its SHA-256. */
export interface ImportRecord {
  path: string;
  symbol: string;
  interval: Interval;
  rows: number;
  added: number;
  overlapping: number;
  importedAt: string;
}

interface Manifest {
  format: 1;
  /** Increases with every flush. */
  generation: number;
  native: Record<string, Partial<Record<Interval, Record<string, NativeMonth>>>>;
  served: Record<string, Partial<Record<Interval, Record<string, ServedMonth>>>>;
  imports: Record<string, ImportRecord>;
  /** Size and modification time of files already imported, by path: a rerun skips them without hashing. */
  seen: Record<string, { size: number; mtimeMs: number; sha256: string }>;
}

const emptyManifest = (): Manifest => ({
  format: 1,
  generation: 0,
  native: {},
  served: {},
  imports: {},
  seen: {},
});

/** One section of one month's file: a symbol's native or served candles at one interval. */
interface SectionKey {
  symbol: string;
  month: string;
  interval: Interval;
  kind: 'native' | 'served';
}

/** The key of block `index` of a section in the block cache and the recently-read set. */
const blockKey = (s: SectionKey, index: number): string =>
  `${s.symbol}/${s.month}/${s.interval}/${s.kind}/${index}`;

const MANIFEST = 'manifest.json';
const FILE_EXTENSION = '.ptvc';

/** A prepared write: the months an import changes, merged and checked, not yet written. */
export interface PreparedWrite {
  symbol: string;
  interval: Interval;
  months: { month: string; merge: MergeResult; sections: Map<Interval, CandleColumns> }[];
  added: number;
  overlapping: number;
  /** Incoming candles that disagree with stored ones: (incoming open time, stored candle index in its month). */
  conflicts: { openTime: number; month: string; storedIndex: number; incomingIndex: number }[];
}

export class ColumnStore {
  private manifest: Manifest = emptyManifest();
  private manifestMtime = 0;
  private checkedAt = 0;
  private readonly files: LRUCache<string, { fd: number; directory: MonthDirectory }>;
  /**
   * Directories of month files read before, by path, with the file's identity when read: a file opened again (the
   * open files are fewer than a year of 100 pairs' months) skips reading and parsing its directory (~9 KB of JSON)
   * when it is still the same file.
   */
  private readonly directories = new LRUCache<string, { id: string; directory: MonthDirectory }>({
    max: 2048,
  });
  private readonly blocks: LRUCache<string, CandleColumns>;
  /** Keys of blocks a transient read decoded in part, recently: a block read again is decoded whole and cached. */
  private readonly partlyRead = new LRUCache<string, true>({ max: 4096 });
  /** Arrays of the blocks a transient read decodes in part (one set per block of the read, reused by the next). */
  private readonly windowArrays: WindowArrays[] = [];
  private gapCache: SharedGap[] | undefined;
  private changes = 0;
  /** Month files written since the last flush, not yet known to be on disk. */
  private readonly unsynced = new Set<string>();

  /**
   * @param root the store's directory (created on the first write)
   * @param options `blockCacheBytes`: decoded blocks kept (default 64 MiB); `openFiles`: month files kept open (256)
   */
  constructor(
    readonly root: string,
    options: { blockCacheBytes?: number; openFiles?: number } = {},
  ) {
    this.files = new LRUCache({
      max: options.openFiles ?? 256,
      dispose: (value) => {
        try {
          fs.closeSync(value.fd);
        } catch {
          // already closed
        }
      },
    });
    this.blocks = new LRUCache({
      maxSize: options.blockCacheBytes ?? 64 * 1024 * 1024,
      sizeCalculation: (c) => Math.max(1, c.length * 72),
    });
    this.reload();
  }

  /** Increases whenever the stored candles change (response caches key on it). */
  get version(): number {
    this.refresh();
    return this.changes;
  }

  /** Re-reads the manifest if another process wrote a newer one (at most once a second). */
  refresh(): void {
    const now = Date.now();
    if (now - this.checkedAt < 1000) return;
    this.checkedAt = now;
    const stat = fs.statSync(path.join(this.root, MANIFEST), { throwIfNoEntry: false });
    if (stat && stat.mtimeMs !== this.manifestMtime) this.reload();
  }

  private reload(): void {
    const file = path.join(this.root, MANIFEST);
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat) return;
    const read = JSON.parse(fs.readFileSync(file, 'utf8')) as Manifest;
    if (read.format !== 1) throw new Error(`unknown candle store manifest format ${read.format} in ${file}`);
    this.manifest = read;
    this.manifestMtime = stat.mtimeMs;
    this.files.clear();
    this.directories.clear();
    this.blocks.clear();
    this.partlyRead.clear();
    this.gapCache = undefined;
    this.changes++;
  }

  // -------------------------------------------------------------------------------------------------------------
  // What is stored
  // -------------------------------------------------------------------------------------------------------------

  /** Pairs with candles, sorted. */
  symbols(): string[] {
    this.refresh();
    return Object.keys(this.manifest.native).sort();
  }

  /** Intervals stored natively for `symbol` (finest first). */
  nativeIntervals(symbol: string): Interval[] {
    this.refresh();
    const n = this.manifest.native[symbol];
    return n ? INTERVALS.filter((i) => Object.keys(n[i] ?? {}).length > 0) : [];
  }

  /** Intervals `symbol` is served in (finest first). */
  servedIntervals(symbol: string): Interval[] {
    this.refresh();
    const s = this.manifest.served[symbol];
    return s ? INTERVALS.filter((i) => Object.keys(s[i] ?? {}).length > 0) : [];
  }

  private servedMonths(symbol: string, interval: Interval): [string, ServedMonth][] {
    return byMonth(this.manifest.served[symbol]?.[interval]);
  }

  private nativeMonths(symbol: string, interval: Interval): [string, NativeMonth][] {
    return byMonth(this.manifest.native[symbol]?.[interval]);
  }

  /** First open time, last open time and count of a served series; undefined without candles. */
  seriesRange(symbol: string, interval: Interval): MonthStat | undefined {
    this.refresh();
    return seriesStat(this.servedMonths(symbol, interval));
  }

  /** First open time, last open time and count of a native series; undefined without candles. */
  nativeRange(symbol: string, interval: Interval): MonthStat | undefined {
    this.refresh();
    return seriesStat(this.nativeMonths(symbol, interval));
  }

  /** First open time and end of the last candle over the native series of `symbol` (or of every pair). */
  range(symbol?: string): { earliest: number; latest: number } | undefined {
    this.refresh();
    let earliest = Number.POSITIVE_INFINITY;
    let latest = Number.NEGATIVE_INFINITY;
    for (const s of symbol ? [symbol] : Object.keys(this.manifest.native)) {
      for (const interval of this.nativeIntervals(s)) {
        const months = this.nativeMonths(s, interval);
        earliest = Math.min(earliest, months[0]![1].first);
        latest = Math.max(latest, months[months.length - 1]![1].last + INTERVAL_MS[interval]);
      }
    }
    return Number.isFinite(earliest) ? { earliest, latest } : undefined;
  }

  /** Native candles stored. */
  size(): number {
    this.refresh();
    let n = 0;
    for (const byInterval of Object.values(this.manifest.native)) {
      for (const months of Object.values(byInterval))
        for (const m of Object.values(months ?? {})) n += m.count;
    }
    return n;
  }

  /** Bytes of the month files on disk. */
  bytesOnDisk(): number {
    let total = 0;
    for (const symbol of this.symbols()) {
      const dir = path.join(this.root, symbol);
      for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
        if (f.endsWith(FILE_EXTENSION)) total += fs.statSync(path.join(dir, f)).size;
      }
    }
    return total;
  }

  /** Gaps of every native series, shared gaps merged across pairs (see `groupGaps`). */
  gaps(): SharedGap[] {
    this.refresh();
    if (!this.gapCache) {
      const perSymbol = new Map<string, Gap[]>();
      for (const symbol of Object.keys(this.manifest.native)) {
        const all: Gap[] = [];
        for (const interval of this.nativeIntervals(symbol)) all.push(...this.seriesGaps(symbol, interval));
        if (all.length) perSymbol.set(symbol, all);
      }
      this.gapCache = groupGaps(perSymbol);
    }
    return this.gapCache;
  }

  /**
   * Gaps of one served series from the manifest, without reading a candle: those of the native series when every
   * served month of `interval` is the native one (what the import recorded); undefined when a month is aggregated
   * from a finer interval (its gaps at `interval` are known only by reading it).
   */
  servedGaps(symbol: string, interval: Interval): Gap[] | undefined {
    this.refresh();
    const months = this.servedMonths(symbol, interval);
    if (months.length === 0 || months.some(([, m]) => m.from !== 'native')) return undefined;
    return this.seriesGaps(symbol, interval);
  }

  /**
   * Holes between the months of the series `symbol` is served in at `interval`: the stretch from the end of a
   * month's last candle to the next month's first, when candles are missing there. A served series can join two
   * sources — BTCUSDT at 1h is its 2020 minutes (aggregated) and then its own hourly candles from 2021 — and the
   * hole between them is in neither native series ({@link seriesGaps}), yet a backtest at that interval steps
   * through it without a candle (docs/backtesting.md, `data_gaps`). Holes inside a month are not read here.
   */
  servedHoles(symbol: string, interval: Interval): Gap[] {
    this.refresh();
    const ms = INTERVAL_MS[interval];
    const holes: Gap[] = [];
    let previousLast: number | undefined;
    for (const [, m] of this.servedMonths(symbol, interval)) {
      if (previousLast !== undefined && m.first - previousLast > ms) {
        holes.push(gap(interval, previousLast + ms, m.first));
      }
      previousLast = m.last;
    }
    return holes;
  }

  /** Gaps of one native series: inside its months and between them. */
  seriesGaps(symbol: string, interval: Interval): Gap[] {
    const ms = INTERVAL_MS[interval];
    const gaps: Gap[] = [];
    let previousLast: number | undefined;
    for (const [, m] of this.nativeMonths(symbol, interval)) {
      if (previousLast !== undefined && m.first - previousLast > ms) {
        gaps.push(gap(interval, previousLast + ms, m.first));
      }
      for (const [start, end] of m.gaps) gaps.push(gap(interval, start, end));
      previousLast = m.last;
    }
    return gaps;
  }

  /** The import record of a file's SHA-256, if it was imported. */
  imported(sha256: string): ImportRecord | undefined {
    return this.manifest.imports[sha256];
  }

  /** The SHA-256 of a file imported before with the same path, size and modification time. */
  seenFile(relative: string, size: number, mtimeMs: number): string | undefined {
    const s = this.manifest.seen[relative];
    return s && s.size === size && s.mtimeMs === mtimeMs ? s.sha256 : undefined;
  }

  // -------------------------------------------------------------------------------------------------------------
  // Range reads
  // -------------------------------------------------------------------------------------------------------------

  private fileOf(symbol: string, month: string): string {
    return path.join(this.root, symbol, `${month}${FILE_EXTENSION}`);
  }

  private open(symbol: string, month: string): { fd: number; directory: MonthDirectory } | undefined {
    const file = this.fileOf(symbol, month);
    let entry = this.files.get(file);
    if (!entry) {
      let fd: number;
      try {
        fd = fs.openSync(file, 'r');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      entry = { fd, directory: this.directoryOf(file, fd) };
      this.files.set(file, entry);
    }
    return entry;
  }

  /** The directory of the month file `file` open as `fd`: the one read before if the file is the same, else read. */
  private directoryOf(file: string, fd: number): MonthDirectory {
    const stat = fs.fstatSync(fd);
    const id = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    const known = this.directories.get(file);
    if (known?.id === id) return known.directory;
    const directory = readDirectory(fd);
    this.directories.set(file, { id, directory });
    return directory;
  }

  /**
   * Runs of one section of one month with open time in [start, end), appended to `out`, at most `room` candles from
   * the oldest; resolves to how many. Decodes only the blocks of the window (kept in the block cache).
   */
  private sectionRuns(
    section: SectionKey,
    start: number,
    end: number,
    out: ColumnRun[],
    room = Number.POSITIVE_INFINITY,
    transient?: { used: number },
  ): number {
    const blocks = this.sectionsOf(section);
    let n = 0;
    for (let index = 0; index < blocks.length && n < room; index++) {
      const block = blocks[index]!;
      if (block.last < start || block.first >= end) continue;
      const part = transient && this.partOf(section, index, start, end, room - n, false, transient);
      if (part) {
        if (part.length > 0) out.push({ columns: part, from: 0, to: part.length });
        n += part.length;
        continue;
      }
      const columns = this.block(section, index);
      const from = block.first >= start ? 0 : lowerBoundTime(columns.openTime, start);
      const to = Math.min(
        block.last < end ? columns.length : lowerBoundTime(columns.openTime, end),
        from + room - n,
      );
      if (to > from) {
        out.push({ columns, from, to });
        n += to - from;
      }
    }
    return n;
  }

  /**
   * For a transient read: the candles of block `index` in [start, end) (the first `room`, or the last with
   * `fromEnd`) decoded into reused arrays, when the block is neither cached nor read recently; undefined otherwise
   * (the caller takes the block whole from the cache). A random range over a year of 100 pairs' minutes misses the
   * cache nearly always: decoding only the window and keeping nothing spares decoding the rest of the day and ~100 KB
   * of new arrays per block (docs/benchmarks.md, "Candle range reads").
   */
  private partOf(
    section: SectionKey,
    index: number,
    start: number,
    end: number,
    room: number,
    fromEnd: boolean,
    transient: { used: number },
  ): CandleColumns | undefined {
    const key = blockKey(section, index);
    if (this.blocks.has(key) || this.partlyRead.has(key)) return undefined;
    this.partlyRead.set(key, true);
    const { file, block } = this.located(section, index);
    if (this.windowArrays.length <= transient.used) this.windowArrays.push(new WindowArrays());
    const arrays = this.windowArrays[transient.used]!;
    const part = decodeBlockWindow(
      readBlockBytes(file.fd, file.directory, block),
      start,
      end,
      room,
      arrays,
      fromEnd,
    );
    if (part) transient.used++;
    return part;
  }

  /** The open month file of a section and the directory entry of its block `index` (both known to exist). */
  private located(section: SectionKey, index: number) {
    const file = this.open(section.symbol, section.month)!;
    return { file, block: sectionOf(file.directory, section.interval, section.kind)!.blocks[index]! };
  }

  /** Block `index` of a section, decoded (from the block cache, or read and decoded into it). */
  private block(section: SectionKey, index: number): CandleColumns {
    const key = blockKey(section, index);
    let columns = this.blocks.get(key);
    if (!columns) {
      const { file, block } = this.located(section, index);
      columns = readBlock(file.fd, file.directory, block);
      this.blocks.set(key, columns);
    }
    return columns;
  }

  /** Candles of one section of one month with open time in [start, end). */
  private readSection(section: SectionKey, start: number, end: number): CandleColumns {
    const runs: ColumnRun[] = [];
    this.sectionRuns(section, start, end, runs);
    return runsColumns(runs, INTERVAL_MS[section.interval]);
  }

  /**
   * Served candles of `symbol` at `interval` with open time in [start, end), oldest first. Reads only the months
   * and blocks of the window.
   */
  read(symbol: string, interval: Interval, start: number, end: number): CandleColumns {
    return runsColumns(this.readRuns(symbol, interval, start, end), INTERVAL_MS[interval]);
  }

  /**
   * {@link read} without copying, and at most the first `limit` candles: runs of the decoded blocks (shared with
   * the block cache; read only). What `/market/candles` writes its body from. `transient`: blocks neither cached
   * nor read recently are decoded only for the window into arrays the next transient read reuses (see
   * {@link partOf}), so the runs are valid only until then: for a caller that uses them at once and keeps nothing.
   */
  readRuns(
    symbol: string,
    interval: Interval,
    start: number,
    end: number,
    limit = Number.POSITIVE_INFINITY,
    options: { transient?: boolean } = {},
  ): ColumnRun[] {
    this.refresh();
    const runs: ColumnRun[] = [];
    const transient = options.transient ? { used: 0 } : undefined;
    let have = 0;
    for (const [month, m] of this.servedMonths(symbol, interval)) {
      if (have >= limit) break;
      if (m.last < start || m.first >= end) continue;
      have += this.sectionRuns(
        { symbol, month, interval, kind: m.from },
        start,
        end,
        runs,
        limit - have,
        transient,
      );
    }
    return runs;
  }

  /** Native candles of `symbol` at `interval` with open time in [start, end). */
  readNative(symbol: string, interval: Interval, start: number, end: number): CandleColumns {
    this.refresh();
    const runs: ColumnRun[] = [];
    for (const [month, m] of this.nativeMonths(symbol, interval)) {
      if (m.last < start || m.first >= end) continue;
      this.sectionRuns({ symbol, month, interval, kind: 'native' }, start, end, runs);
    }
    return runsColumns(runs, INTERVAL_MS[interval]);
  }

  /** Served candles in [start, end): how many, from the manifest and the boundary months' block index. */
  count(symbol: string, interval: Interval, start: number, end: number): number {
    this.refresh();
    let n = 0;
    for (const [month, m] of this.servedMonths(symbol, interval)) {
      if (m.last < start || m.first >= end) continue;
      if (m.first >= start && m.last < end) {
        n += m.count;
        continue;
      }
      const file = this.open(symbol, month);
      const section = file && sectionOf(file.directory, interval, m.from);
      for (const block of section?.blocks ?? []) {
        if (block.last < start || block.first >= end) continue;
        if (block.first >= start && block.last < end) n += block.count;
        else if (gapFree(block, interval)) n += gridCount(block, interval, start, end);
        else
          n += this.readSection(
            { symbol, month, interval, kind: m.from },
            Math.max(start, block.first),
            Math.min(end, block.last + 1),
          ).length;
      }
    }
    return n;
  }

  /**
   * The open time of the last served candle with open time ≤ `at` (ms), or undefined when there is none: from the
   * block index alone when that candle's block has no gap (issue 24: a backtest's `start` asks it of every pair, and
   * decoding a block per pair held the request thread ~1 ms per pair), else from the block decoded.
   */
  lastOpenTime(symbol: string, interval: Interval, at: number): number | undefined {
    this.refresh();
    const months = this.servedMonths(symbol, interval);
    for (let k = months.length - 1; k >= 0; k--) {
      const [month, m] = months[k]!;
      if (m.first > at) continue;
      const key: SectionKey = { symbol, month, interval, kind: m.from };
      const section = this.sectionsOf(key);
      for (let b = section.length - 1; b >= 0; b--) {
        const block = section[b]!;
        if (block.first > at) continue;
        if (block.last <= at) return block.last;
        if (gapFree(block, interval))
          return block.first + Math.floor((at - block.first) / INTERVAL_MS[interval]) * INTERVAL_MS[interval];
        const columns = this.block(key, b);
        return columns.openTime[lowerBoundTime(columns.openTime, at + 1) - 1];
      }
    }
    return undefined;
  }

  /**
   * The last `limit` served candles with open time ≤ `end` (every candle when `end` is undefined), oldest first:
   * reads months backwards from `end` until it has enough.
   */
  newest(
    symbol: string,
    interval: Interval,
    end: number | undefined,
    limit: number,
    series: 'served' | 'native' = 'served',
  ): CandleColumns {
    return runsColumns(this.newestRuns(symbol, interval, end, limit, series), INTERVAL_MS[interval]);
  }

  /** {@link newest} as runs of the decoded blocks, without copying (read only; `transient` as in {@link readRuns}). */
  newestRuns(
    symbol: string,
    interval: Interval,
    end: number | undefined,
    limit: number,
    series: 'served' | 'native' = 'served',
    options: { transient?: boolean } = {},
  ): ColumnRun[] {
    this.refresh();
    const stop = end === undefined ? Number.POSITIVE_INFINITY : end + 1;
    const runs: ColumnRun[] = [];
    const transient = options.transient ? { used: 0 } : undefined;
    let have = 0;
    const months: [string, { first: number; from: 'native' | 'served' }][] =
      series === 'served'
        ? this.servedMonths(symbol, interval)
        : this.nativeMonths(symbol, interval).map(([month, m]) => [
            month,
            { first: m.first, from: 'native' },
          ]);
    for (let k = months.length - 1; k >= 0 && have < limit; k--) {
      const [month, m] = months[k]!;
      if (m.first >= stop) continue;
      const key: SectionKey = { symbol, month, interval, kind: m.from };
      const section = this.sectionsOf(key);
      for (let b = section.length - 1; b >= 0 && have < limit; b--) {
        const block = section[b]!;
        if (block.first >= stop) continue;
        const part =
          transient && this.partOf(key, b, Number.NEGATIVE_INFINITY, stop, limit - have, true, transient);
        if (part) {
          if (part.length > 0) runs.unshift({ columns: part, from: 0, to: part.length });
          have += part.length;
          continue;
        }
        const columns = this.block(key, b);
        const to = block.last < stop ? columns.length : lowerBoundTime(columns.openTime, stop);
        const from = Math.max(0, to - (limit - have));
        if (to > from) {
          runs.unshift({ columns, from, to });
          have += to - from;
        }
      }
    }
    return runs;
  }

  /** The block index of a section (none when its month's file or the section does not exist). */
  private sectionsOf({ symbol, month, interval, kind }: SectionKey): Section['blocks'] {
    const file = this.open(symbol, month);
    return (file && sectionOf(file.directory, interval, kind)?.blocks) ?? [];
  }

  // -------------------------------------------------------------------------------------------------------------
  // Writes
  // -------------------------------------------------------------------------------------------------------------

  /** Every native section of one month, decoded. */
  private nativeSections(symbol: string, month: string): Map<Interval, CandleColumns> {
    const out = new Map<Interval, CandleColumns>();
    const [from, to] = monthBounds(month);
    const file = this.open(symbol, month);
    for (const s of file?.directory.sections ?? []) {
      if (s.kind === 'native')
        out.set(
          s.interval,
          this.readSection({ symbol, month, interval: s.interval, kind: 'native' }, from, to),
        );
    }
    return out;
  }

  /**
   * Merges `incoming` (native candles of `symbol` at `interval`, sorted, unique) into the stored ones, month by month,
   * without writing: what would be added, what overlaps, what conflicts.
   */
  prepare(symbol: string, interval: Interval, incoming: CandleColumns): PreparedWrite {
    this.refresh();
    const prepared: PreparedWrite = { symbol, interval, months: [], added: 0, overlapping: 0, conflicts: [] };
    let from = 0;
    while (from < incoming.length) {
      const month = monthOf(incoming.openTime[from]!);
      const [, monthEnd] = monthBounds(month);
      const to = lowerBoundTime(incoming.openTime, monthEnd, from);
      const part = sliceColumns(incoming, from, to);
      const sections = this.nativeSections(symbol, month);
      const merge = mergeColumns(sections.get(interval) ?? emptyColumns(INTERVAL_MS[interval]), part);
      prepared.added += merge.added;
      prepared.overlapping += merge.overlapping;
      for (const c of merge.conflicts) {
        prepared.conflicts.push({
          openTime: part.openTime[c.incoming]!,
          month,
          storedIndex: c.stored,
          incomingIndex: from + c.incoming,
        });
      }
      // A month is (re)written when candles are added, and also when the manifest does not know what its file
      // holds: a run that died after writing the file and before writing the manifest.
      const known = this.manifest.native[symbol]?.[interval]?.[month]?.count;
      if (merge.added > 0 || (merge.conflicts.length === 0 && known !== merge.merged.length)) {
        sections.set(interval, merge.merged);
        prepared.months.push({ month, merge, sections });
      }
      from = to;
    }
    return prepared;
  }

  /** The stored native candle a conflict names. */
  storedCandle(symbol: string, interval: Interval, month: string, index: number): CandleColumns {
    const [from, to] = monthBounds(month);
    const section: SectionKey = { symbol, month, interval, kind: 'native' };
    return sliceColumns(this.readSection(section, from, to), index, index + 1);
  }

  /** Writes the months of a prepared write (no conflicts) and updates the manifest in memory (see `flush`). */
  commit(prepared: PreparedWrite): void {
    if (prepared.conflicts.length) throw new Error('a write with conflicts cannot be committed');
    const { symbol } = prepared;
    for (const { month, sections } of prepared.months) {
      const natives: ColumnSource[] = [...sections.entries()].map(([interval, columns]) => ({
        interval,
        columns,
      }));
      const finest = Math.min(...natives.map((s) => INTERVAL_MS[s.interval]));
      const data: SectionData[] = natives.map((s) => ({
        interval: s.interval,
        kind: 'native',
        columns: s.columns,
      }));
      const served = new Map<Interval, { columns: CandleColumns; from: 'native' | 'served' }>();
      for (const interval of INTERVALS) {
        if (INTERVAL_MS[interval] < finest) continue;
        const own = sections.get(interval);
        const finer = natives.some((s) => INTERVAL_MS[s.interval] < INTERVAL_MS[interval]);
        if (own && !finer) {
          served.set(interval, { columns: own, from: 'native' });
          continue;
        }
        const columns = combineColumns(natives, interval);
        data.push({ interval, kind: 'served', columns });
        served.set(interval, { columns, from: 'served' });
      }
      const file = this.fileOf(symbol, month);
      this.files.delete(file);
      this.directories.delete(file);
      for (const key of this.blocks.keys())
        if (key.startsWith(`${symbol}/${month}/`)) this.blocks.delete(key);
      writeMonthFile(file, symbol, month, data);
      this.unsynced.add(file);

      this.manifest.native[symbol] ??= {};
      const native = this.manifest.native[symbol];
      for (const s of natives) {
        const c = s.columns;
        native[s.interval] ??= {};
        native[s.interval]![month] = {
          first: c.openTime[0]!,
          last: c.openTime[c.length - 1]!,
          count: c.length,
          gaps: internalGaps(c),
        };
      }
      this.manifest.served[symbol] ??= {};
      const servedEntry = this.manifest.served[symbol];
      for (const [interval, s] of served) {
        if (s.columns.length === 0) continue;
        servedEntry[interval] ??= {};
        servedEntry[interval]![month] = {
          first: s.columns.openTime[0]!,
          last: s.columns.openTime[s.columns.length - 1]!,
          count: s.columns.length,
          from: s.from,
        };
      }
    }
    if (prepared.months.length) {
      this.gapCache = undefined;
      this.changes++;
    }
  }

  /** Records an imported file (written to disk by the next `flush`). */
  recordImport(
    sha256: string,
    record: ImportRecord,
    seen?: { relative: string; size: number; mtimeMs: number },
  ): void {
    this.manifest.imports[sha256] = record;
    if (seen) this.manifest.seen[seen.relative] = { size: seen.size, mtimeMs: seen.mtimeMs, sha256 };
  }

  /** Notes a file's identity (path, size, time) → SHA-256 without an import record (a rejected or empty file). */
  noteSeen(relative: string, size: number, mtimeMs: number, sha256: string): void {
    this.manifest.seen[relative] = { size, mtimeMs, sha256 };
  }

  /**
   * Makes what was committed durable: flushes every month file written since the last flush to disk (in parallel),
   * then writes the manifest that names them, flushed too, under a temporary name, and renames it (atomically).
   * A crash before the rename leaves the old manifest, which never names a month file that is not on disk.
   */
  async flush(): Promise<void> {
    const files = [...this.unsynced];
    this.unsynced.clear();
    await Promise.all(
      files.map(async (f) => {
        const handle = await fs.promises.open(f, 'r');
        try {
          await handle.sync();
        } finally {
          await handle.close();
        }
      }),
    );
    this.manifest.generation++;
    fs.mkdirSync(this.root, { recursive: true });
    const file = path.join(this.root, MANIFEST);
    const temporary = `${file}.${process.pid}.partial`;
    const handle = await fs.promises.open(temporary, 'w');
    try {
      await handle.writeFile(JSON.stringify(this.manifest));
      await handle.sync();
    } finally {
      await handle.close();
    }
    fs.renameSync(temporary, file);
    this.manifestMtime = fs.statSync(file).mtimeMs;
  }

  /**
   * Takes the store's write lock (a lock file holding this process's id; a lock left by a process that no longer
   * runs is taken over). Returns the function that releases it. Throws when another live process holds it.
   */
  lock(): () => void {
    fs.mkdirSync(this.root, { recursive: true });
    const file = path.join(this.root, 'write.lock');
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
        return () => fs.rmSync(file, { force: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const holder = Number(fs.readFileSync(file, 'utf8'));
        if (holder === process.pid)
          throw new Error(`the candle store ${this.root} is already being written by this process`);
        if (Number.isSafeInteger(holder) && holder > 0 && alive(holder)) {
          throw new Error(`the candle store ${this.root} is being written by process ${holder}`);
        }
        fs.rmSync(file, { force: true });
      }
    }
    throw new Error(`could not lock the candle store ${this.root}`);
  }

  /** Closes every open file and forgets every block read. */
  close(): void {
    this.files.clear();
    this.directories.clear();
    this.blocks.clear();
    this.partlyRead.clear();
  }
}

/** A series' months of the manifest (month → its figures), oldest first; none when the series has none. */
const byMonth = <M>(months: Record<string, M> | undefined): [string, M][] =>
  months ? Object.entries(months).sort((a, b) => (a[0] < b[0] ? -1 : 1)) : [];

/** First open time, last open time and count of a series from its months, oldest first; undefined without any. */
const seriesStat = (months: [string, MonthStat][]): MonthStat | undefined =>
  months.length === 0
    ? undefined
    : {
        first: months[0]![1].first,
        last: months[months.length - 1]![1].last,
        count: months.reduce((n, [, m]) => n + m.count, 0),
      };

const gap = (interval: Interval, start: number, end: number): Gap => ({
  interval,
  start,
  end,
  missingCandles: Math.round((end - start) / INTERVAL_MS[interval]),
});

/** Runs of missing open times inside a sorted series. */
const internalGaps = (c: CandleColumns): [number, number][] => {
  const out: [number, number][] = [];
  for (let i = 1; i < c.length; i++) {
    if (c.openTime[i]! - c.openTime[i - 1]! > c.intervalMs)
      out.push([c.openTime[i - 1]! + c.intervalMs, c.openTime[i]!]);
  }
  return out;
};

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Whether a block's candles are every `interval` step from its first open time to its last: stored open times are
 * sorted, unique and aligned to the interval (`candleProblem`), so `count` candles spanning `(count − 1)` steps can
 * only be that grid, and positions in the block follow from times without decoding it.
 */
const gapFree = (block: BlockEntry, interval: Interval): boolean =>
  block.last - block.first === (block.count - 1) * INTERVAL_MS[interval];

/** Candles of a {@link gapFree} block with open time in [start, end) (ms), by arithmetic on its grid. */
const gridCount = (block: BlockEntry, interval: Interval, start: number, end: number): number => {
  const ms = INTERVAL_MS[interval];
  const from = Math.max(0, Math.ceil((start - block.first) / ms));
  const to = Math.min(block.count, Math.ceil((end - block.first) / ms));
  return Math.max(0, to - from);
};
