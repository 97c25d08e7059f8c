import fs from 'node:fs';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import yauzl from 'yauzl';
import type { Gap } from '../../domain/market/gaps';
import { INTERVAL_MS, type Interval } from '../../domain/market/intervals';
import { type KlineProblem, parseKlineJson } from '../../domain/market/klines';
import { parseExchangeInfo, parseTicker24hr } from '../../domain/market/pair';
import type { Database } from '../db/schema';
import { type FoundFile, publishedChecksum, readWithChecksum, scanDirectory, sha256OfFile } from './files';
import { KlineCsvParser, type ParsedColumns } from './import/kline-parser';
import type { MarketData } from './market-data';
import { importedKeys, insertPairSnapshot, insertReferenceTickers, recordImport } from './repository';
import type { ColumnStore } from './store/column-store';
import { candleAt, columnsFromCandles } from './store/convert';

/**
 * `import-market-data DIR` and the `files` source's start-up (issue 24 item 1): loads a directory in Binance's
 * formats — kline `.csv`, `.json` and `.zip` files as Binance publishes them (monthly or daily, with or without a
 * header, millisecond or microsecond times) — into the candle store (`store/column-store.ts`), and the pair and
 * ticker snapshots into the database. Rules:
 * - **Verified**: a `.zip` with a `.CHECKSUM` beside it must match its published SHA-256, or it is rejected.
 * - **Streamed**: a CSV is read as it is unzipped or read from disk, into integer columns (`kline-parser.ts`); no
 *   file is ever whole in memory as text. A file's candles are held in columns (about 70 bytes each) until the file
 *   is accepted: a month of minutes is 3 MB.
 * - **Idempotent**: a file whose SHA-256 was imported is `unchanged` (a file seen before with the same path, size
 *   and modification time is not even hashed again). A file whose candles are all stored already adds nothing.
 * - **Whole files or nothing**: any bad row (see `domain/market/klines.ts`) or a candle that disagrees with a
 *   stored one rejects the file, every problem reported with its line; none of its rows are used.
 * - **Resumable**: each accepted file is written to the store (month files, then the manifest at least every two
 *   seconds and at the end). An interrupted import leaves whole files written; the next run skips what it recorded
 *   and finds the rest already stored (an overlap, nothing changes).
 * - **Gaps and overlaps** are reported per pair: the candles a pair's files added, those already stored, and the
 *   gaps of its series after the import (what `/market/data-range` lists in `data_gaps`).
 */
export interface FileReport {
  /** Path relative to the data root. */
  file: string;
  kind: FoundFile['kind'];
  symbol?: string;
  interval?: string;
  status: 'imported' | 'unchanged' | 'rejected' | 'skipped';
  /** Rows (candles, pairs, tickers) in the file. */
  rows: number;
  /** Candles new to the store. */
  added: number;
  /** Candles of the file already stored with the same values. */
  overlapping?: number;
  /** For a zip: whether a published checksum was verified. */
  checksum?: 'verified' | 'none';
  problems: KlineProblem[];
  reason?: string;
}

/** One pair's series after an import. */
export interface PairReport {
  symbol: string;
  interval: Interval;
  files: number;
  added: number;
  overlapping: number;
  /** Gaps of the pair's stored series at this interval (all of it, not only the imported part). */
  gaps: Gap[];
}

/** Outcome of {@link importDirectory}. */
export interface ImportResult {
  root: string;
  files: FileReport[];
  /** Files rejected. */
  rejected: number;
  pairs: PairReport[];
  /** Candles added to the store. */
  added: number;
  seconds: number;
  /** Resolves when everything is written (kept for callers of the earlier background writes; already settled). */
  persisted: Promise<void>;
}

/** Running totals of an import (for a progress bar). */
export interface ImportProgress {
  files: number;
  totalFiles: number;
  /** Bytes of kline files processed and to process (rate and ETA). */
  bytes: number;
  totalBytes: number;
  /** Candles read so far. */
  candles: number;
}

/** `file:line: message` lines of every problem, for logs and the CLI. */
export const problemLines = (result: ImportResult): string[] =>
  result.files.flatMap((f) =>
    f.status === 'rejected'
      ? f.problems.map((p) => `${f.file}${p.line > 0 ? `:${p.line}` : ''}: ${p.message}`)
      : [],
  );

const FLUSH_MS = 2000;

/** Imports `dir` into the candle store of `data` and the database `db`. */
export const importDirectory = async (
  dir: string,
  deps: {
    db: Kysely<Database>;
    data: MarketData;
    logger?: Logger | undefined;
    /** Stops between files (shutdown); what was imported stays. */
    signal?: AbortSignal | undefined;
    onProgress?: (progress: ImportProgress) => void;
    /** How often the store's manifest is written while files are imported (ms; default 2,000). */
    flushMs?: number;
  },
): Promise<ImportResult> => {
  const started = performance.now();
  const { db, data, logger } = deps;
  const store = data.candles.store;
  const { root, files } = scanDirectory(dir);
  const known = await importedKeys(db);
  const reports: FileReport[] = [];
  const klineFiles = files.filter((f) => f.kind === 'klines');
  const progress: ImportProgress = {
    files: 0,
    totalFiles: klineFiles.length,
    bytes: 0,
    totalBytes: klineFiles.reduce((n, f) => n + fs.statSync(f.file).size, 0),
    candles: 0,
  };
  const pairs = new Map<string, PairReport>();
  let unlock: (() => void) | undefined;
  let flushedAt = performance.now();
  let dirty = false;

  try {
    for (const found of files) {
      if (deps.signal?.aborted) break;
      if (found.kind === 'skipped') {
        reports.push({
          file: found.relative,
          kind: found.kind,
          status: 'skipped',
          rows: 0,
          added: 0,
          problems: [],
          reason: found.reason,
        });
        continue;
      }
      if (found.kind !== 'klines') {
        reports.push(await importSnapshot(db, data, found, known));
        continue;
      }
      unlock ??= store.lock();
      const report = await importKlines(store, found, progress);
      reports.push(report);
      progress.files++;
      progress.bytes += fs.statSync(found.file).size;
      deps.onProgress?.({ ...progress });
      if (report.status === 'imported') {
        dirty = true;
        const key = `${found.symbol}|${found.interval}`;
        const pair = pairs.get(key) ?? {
          symbol: found.symbol,
          interval: found.interval,
          files: 0,
          added: 0,
          overlapping: 0,
          gaps: [],
        };
        pair.files++;
        pair.added += report.added;
        pair.overlapping += report.overlapping ?? 0;
        pairs.set(key, pair);
      }
      if (dirty && performance.now() - flushedAt > (deps.flushMs ?? FLUSH_MS)) {
        await store.flush();
        flushedAt = performance.now();
        dirty = false;
      }
    }
    if (dirty || unlock) await store.flush();
  } finally {
    unlock?.();
  }
  for (const p of pairs.values()) p.gaps = store.seriesGaps(p.symbol, p.interval);

  const result: ImportResult = {
    root,
    files: reports,
    rejected: reports.filter((r) => r.status === 'rejected').length,
    pairs: [...pairs.values()].sort((a, b) => (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0)),
    added: reports.reduce((n, r) => n + (r.kind === 'klines' ? r.added : 0), 0),
    seconds: (performance.now() - started) / 1000,
    persisted: Promise.resolve(),
  };
  if (logger) {
    for (const line of problemLines(result).slice(0, 50)) logger.warn(line);
    logger.info(
      {
        root,
        imported: reports.filter((r) => r.status === 'imported').length,
        unchanged: reports.filter((r) => r.status === 'unchanged').length,
        rejected: result.rejected,
        skipped: reports.filter((r) => r.status === 'skipped').length,
        candles_added: result.added,
        seconds: Math.round(result.seconds * 10) / 10,
      },
      'market data directory imported',
    );
  }
  return result;
};

/** exchangeInfo.json or ticker_24hr.json: parsed, used at once, recorded in the database. */
const importSnapshot = async (
  db: Kysely<Database>,
  data: MarketData,
  found: Extract<FoundFile, { kind: 'exchange_info' | 'ticker_24hr' }>,
  known: Set<string>,
): Promise<FileReport> => {
  const { bytes, checksum } = readWithChecksum(found.file);
  const base = { file: found.relative, kind: found.kind, rows: 0, added: 0, problems: [] };
  const record = { path: found.relative, checksum, kind: found.kind };
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    return {
      ...base,
      status: 'rejected',
      problems: [{ line: 0, message: `not JSON: ${(error as Error).message}` }],
    };
  }
  try {
    if (found.kind === 'exchange_info') {
      const snapshot = parseExchangeInfo(doc);
      data.setPairs(snapshot);
      if (known.has(`${found.kind}:${checksum}`)) return { ...base, status: 'unchanged' };
      await db.transaction().execute(async (trx) => {
        if (await recordImport(trx, { ...record, rows: snapshot.pairs.length })) {
          await insertPairSnapshot(trx, 'files', snapshot);
        }
      });
      return { ...base, status: 'imported', rows: snapshot.pairs.length };
    }
    const { tickers } = parseTicker24hr(doc);
    data.setReferenceTickers(tickers);
    if (known.has(`${found.kind}:${checksum}`)) return { ...base, status: 'unchanged' };
    await db.transaction().execute(async (trx) => {
      if (await recordImport(trx, { ...record, rows: tickers.length }))
        await insertReferenceTickers(trx, tickers);
    });
    return { ...base, status: 'imported', rows: tickers.length };
  } catch (error) {
    return { ...base, status: 'rejected', problems: [{ line: 0, message: (error as Error).message }] };
  }
};

/** One kline file into the store. */
const importKlines = async (
  store: ColumnStore,
  found: Extract<FoundFile, { kind: 'klines' }>,
  progress: ImportProgress,
): Promise<FileReport> => {
  const { symbol, interval } = found;
  const base = { file: found.relative, kind: found.kind, symbol, interval, rows: 0, added: 0 };
  const reject = (problems: KlineProblem[], extra: Partial<FileReport> = {}): FileReport => ({
    ...base,
    ...extra,
    status: 'rejected',
    problems: problems.sort((a, b) => a.line - b.line),
  });
  const stat = fs.statSync(found.file);
  const sha256 = store.seenFile(found.file, stat.size, stat.mtimeMs) ?? (await sha256OfFile(found.file));
  const seen = { relative: found.file, size: stat.size, mtimeMs: stat.mtimeMs };
  // The published checksum first: a zip whose bytes are stored already is still refused beside a .CHECKSUM that
  // does not match it (docs/market-data.md, "Validation and import"), rather than reported `unchanged`.
  let checksum: FileReport['checksum'];
  if (found.format === 'zip') {
    const published = publishedChecksum(found.file);
    if (published === null) return reject([{ line: 0, message: 'its .CHECKSUM file holds no SHA-256' }]);
    if (published !== undefined && published !== sha256) {
      return reject([
        { line: 0, message: `checksum mismatch: .CHECKSUM says ${published}, the file is ${sha256}` },
      ]);
    }
    checksum = published === undefined ? 'none' : 'verified';
  }
  const previous = store.imported(sha256);
  if (previous) {
    store.noteSeen(found.file, stat.size, stat.mtimeMs, sha256);
    return { ...base, status: 'unchanged', rows: previous.rows, problems: [] };
  }

  let parsed: ParsedColumns;
  try {
    parsed = await parseKlineFile(found);
  } catch (error) {
    return reject([{ line: 0, message: (error as Error).message }], checksum ? { checksum } : {});
  }
  progress.candles += parsed.columns.length;
  const extra = { rows: parsed.rows, ...(checksum ? { checksum } : {}) };
  if (parsed.problems.length) return reject([...parsed.problems], extra);
  if (parsed.columns.length === 0) return reject([{ line: 0, message: 'no candles in file' }], extra);

  const prepared = store.prepare(symbol, interval, parsed.columns);
  if (prepared.conflicts.length) {
    return reject(
      prepared.conflicts.map((c) => {
        const stored = candleAt(store.storedCandle(symbol, interval, c.month, c.storedIndex), 0);
        const mine = candleAt(parsed.columns, c.incomingIndex);
        return {
          line: parsed.lines[c.incomingIndex] ?? 0,
          message:
            `candle ${new Date(c.openTime).toISOString()} conflicts with the stored one ` +
            `(stored o/h/l/c/v ${stored.open}/${stored.high}/${stored.low}/${stored.close}/${stored.volume}, ` +
            `file ${mine.open}/${mine.high}/${mine.low}/${mine.close}/${mine.volume})`,
        };
      }),
      extra,
    );
  }
  store.commit(prepared);
  store.recordImport(
    sha256,
    {
      path: found.relative,
      symbol,
      interval,
      rows: parsed.rows,
      added: prepared.added,
      overlapping: prepared.overlapping,
      importedAt: new Date().toISOString(),
    },
    seen,
  );
  return {
    ...base,
    ...extra,
    status: 'imported',
    added: prepared.added,
    overlapping: prepared.overlapping,
    problems: [],
  };
};

/** Reads a kline file (streaming for CSV and zip) into columns. Throws for an unreadable file. */
export const parseKlineFile = async (
  found: Extract<FoundFile, { kind: 'klines' }>,
): Promise<ParsedColumns> => {
  if (found.format === 'json') {
    let doc: unknown;
    try {
      doc = JSON.parse(fs.readFileSync(found.file, 'utf8'));
    } catch (error) {
      throw new Error(`not JSON: ${(error as Error).message}`);
    }
    const parsed = parseKlineJson(doc, found.interval);
    const lines = Int32Array.from(parsed.candles, (c) => parsed.lineOf.get(c.openTime) ?? 0);
    return {
      columns: columnsFromCandles(parsed.candles, INTERVAL_MS[found.interval]),
      problems: parsed.problems,
      rows: parsed.rows,
      headerLine: false,
      lines,
    };
  }
  const parser = new KlineCsvParser(found.interval);
  if (found.format === 'csv') {
    for await (const chunk of fs.createReadStream(found.file, { highWaterMark: 1 << 20 })) {
      parser.push(chunk as Buffer);
    }
    return parser.finish();
  }
  let archive: yauzl.ZipFile;
  try {
    archive = await yauzl.openPromise(found.file, { lazyEntries: true });
  } catch (error) {
    throw new Error(`not a readable zip archive: ${(error as Error).message}`);
  }
  let csvEntries = 0;
  try {
    for (;;) {
      const entry = await new Promise<yauzl.Entry | undefined>((resolve, reject) => {
        const onEntry = (e: yauzl.Entry) => {
          archive.off('end', onEnd);
          archive.off('error', onError);
          resolve(e);
        };
        const onEnd = () => {
          archive.off('entry', onEntry);
          archive.off('error', onError);
          resolve(undefined);
        };
        const onError = (error: Error) => {
          archive.off('entry', onEntry);
          archive.off('end', onEnd);
          reject(error);
        };
        archive.once('entry', onEntry);
        archive.once('end', onEnd);
        archive.once('error', onError);
        archive.readEntry();
      });
      if (!entry) break;
      if (!/\.csv$/i.test(entry.fileName)) continue;
      csvEntries++;
      const stream = await archive.openReadStreamPromise(entry);
      for await (const chunk of stream) parser.push(chunk as Buffer);
    }
  } catch (error) {
    throw new Error(`not a readable zip archive: ${(error as Error).message}`);
  } finally {
    archive.close();
  }
  if (csvEntries === 0) throw new Error('the zip archive holds no .csv file');
  return parser.finish();
};
