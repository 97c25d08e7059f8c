import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { type ParsedKlines, parseKlineCsv, parseKlineJson } from '../../domain/market/klines';
import { parseExchangeInfo, parseTicker24hr } from '../../domain/market/pair';
import type { Database } from '../db/schema';
import { type FoundFile, readWithChecksum, scanDirectory } from './files';
import type { MarketData } from './market-data';
import {
  importedKeys,
  insertCandles,
  insertPairSnapshot,
  insertReferenceTickers,
  recordImport,
} from './repository';

/**
 * `import-market-data DIR` and the `files` source's start-up (issue item 1): loads a directory in Binance's
 * formats into the append-only store. Rules:
 * - A file already imported with the same SHA-256 is skipped (`unchanged`): re-importing is idempotent.
 * - A kline file with any bad row (unparseable value, wrong column count, `high < low`, open or close outside
 *   [low, high], misaligned or duplicate open time, close time not matching the interval) or with a candle
 *   that disagrees with one already stored is `rejected` as a whole: every problem is reported with the
 *   file and line, and none of its rows are used. Nothing is silently dropped or half-imported.
 * - Accepted files go into memory at once; their rows and import record are written in one transaction per
 *   file, awaited or in the background (`persisted`).
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
  problems: { line: number; message: string }[];
  reason?: string;
}

/** Outcome of {@link importDirectory}. */
export interface ImportResult {
  root: string;
  files: FileReport[];
  /** Files rejected for bad rows. */
  rejected: number;
  /** Resolves when every accepted file is in the database (rejects with the first write error). */
  persisted: Promise<void>;
}

/** `file:line: message` lines of every problem, for logs and the CLI. */
export const problemLines = (result: ImportResult): string[] =>
  result.files.flatMap((f) =>
    f.status === 'rejected'
      ? f.problems.map((p) => `${f.file}${p.line > 0 ? `:${p.line}` : ''}: ${p.message}`)
      : [],
  );

/** Imports `dir` into `data` (memory) and the database `db`. */
export const importDirectory = async (
  dir: string,
  deps: {
    db: Kysely<Database>;
    data: MarketData;
    logger?: Logger | undefined;
    /** Stops background writes between files (shutdown). */
    signal?: AbortSignal | undefined;
    /** Wait this long before writing (lets a starting server's own queries go first). */
    writeDelayMs?: number | undefined;
  },
): Promise<ImportResult> => {
  const { db, data, logger } = deps;
  const { root, files } = scanDirectory(dir);
  const known = await importedKeys(db);
  const reports: FileReport[] = [];
  const writes: (() => Promise<void>)[] = [];

  for (const found of files) {
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
    const { bytes, checksum } = readWithChecksum(found.file);
    const base = { file: found.relative, kind: found.kind, rows: 0, added: 0, problems: [] };
    const meta = found.kind === 'klines' ? { symbol: found.symbol, interval: found.interval } : {};
    if (known.has(`${found.kind}:${checksum}`)) {
      reports.push({ ...base, ...meta, status: 'unchanged' });
      continue;
    }
    const record = { path: found.relative, checksum, kind: found.kind, ...meta };
    if (found.kind !== 'klines') {
      let doc: unknown;
      try {
        doc = JSON.parse(bytes.toString('utf8'));
      } catch (error) {
        reports.push({
          ...base,
          status: 'rejected',
          problems: [{ line: 0, message: `not JSON: ${(error as Error).message}` }],
        });
        continue;
      }
      try {
        if (found.kind === 'exchange_info') {
          const snapshot = parseExchangeInfo(doc);
          data.setPairs(snapshot);
          reports.push({ ...base, status: 'imported', rows: snapshot.pairs.length });
          writes.push(() =>
            db.transaction().execute(async (trx) => {
              if (await recordImport(trx, { ...record, rows: snapshot.pairs.length })) {
                await insertPairSnapshot(trx, 'files', snapshot);
              }
            }),
          );
        } else {
          const { tickers } = parseTicker24hr(doc);
          data.setReferenceTickers(tickers);
          reports.push({ ...base, status: 'imported', rows: tickers.length });
          writes.push(() =>
            db.transaction().execute(async (trx) => {
              if (await recordImport(trx, { ...record, rows: tickers.length })) {
                await insertReferenceTickers(trx, tickers);
              }
            }),
          );
        }
      } catch (error) {
        reports.push({
          ...base,
          status: 'rejected',
          problems: [{ line: 0, message: (error as Error).message }],
        });
      }
      continue;
    }

    let parsed: ParsedKlines;
    if (found.format === 'json') {
      let doc: unknown;
      try {
        doc = JSON.parse(bytes.toString('utf8'));
      } catch (error) {
        reports.push({
          ...base,
          ...meta,
          status: 'rejected',
          problems: [{ line: 0, message: `not JSON: ${(error as Error).message}` }],
        });
        continue;
      }
      parsed = parseKlineJson(doc, found.interval);
    } else {
      parsed = parseKlineCsv(bytes.toString('utf8'), found.interval);
    }
    const problems = [...parsed.problems];
    if (problems.length === 0 && parsed.candles.length === 0) {
      problems.push({ line: 0, message: 'no candles in file' });
    }
    if (problems.length === 0) {
      for (const { index, stored } of data.candles.conflicts(found.symbol, found.interval, parsed.candles)) {
        const c = parsed.candles[index]!;
        problems.push({
          line: parsed.lineOf.get(c.openTime) ?? 0,
          message:
            `candle ${new Date(c.openTime).toISOString()} conflicts with the stored one ` +
            `(stored o/h/l/c/v ${stored.open}/${stored.high}/${stored.low}/${stored.close}/${stored.volume}, ` +
            `file ${c.open}/${c.high}/${c.low}/${c.close}/${c.volume})`,
        });
      }
    }
    if (problems.length) {
      problems.sort((a, b) => a.line - b.line);
      reports.push({ ...base, ...meta, status: 'rejected', rows: parsed.rows, problems });
      continue;
    }
    const added = data.candles.merge(found.symbol, found.interval, parsed.candles);
    reports.push({ ...base, ...meta, status: 'imported', rows: parsed.rows, added: added.length });
    const { symbol, interval } = found;
    // Candles first, in short statements (idempotent: `on conflict do nothing`), then the import record: an
    // interrupted write leaves no record, so the next start imports the file again and completes it.
    writes.push(async () => {
      await insertCandles(db, symbol, interval, parsed.candles, 'files', null, { yieldMs: 2 });
      await recordImport(db, { ...record, rows: parsed.rows });
    });
  }

  const persisted = (async () => {
    if (writes.length && deps.writeDelayMs) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deps.writeDelayMs);
        timer.unref();
        deps.signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    const started = performance.now();
    for (const write of writes) {
      if (deps.signal?.aborted) {
        logger?.info('market data write stopped (shutdown); the rest is imported at the next start');
        return;
      }
      await write();
    }
    if (writes.length) {
      logger?.info(
        { files: writes.length, ms: Math.round(performance.now() - started) },
        'market data files written to the store',
      );
    }
  })();
  persisted.catch(() => {}); // observed by callers; avoid an unhandled rejection when nobody awaits
  const result: ImportResult = {
    root,
    files: reports,
    rejected: reports.filter((r) => r.status === 'rejected').length,
    persisted,
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
      },
      'market data directory scanned',
    );
  }
  return result;
};
