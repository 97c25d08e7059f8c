import { SingleBar } from 'cli-progress';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { openDatabase } from '../db/database';
import { migrateToLatest } from '../db/migrate';
import { marketSettings } from '../market/config';
import { type FileReport, importDirectory, type PairReport, problemLines } from '../market/importer';
import { moveLegacyCandles } from '../market/legacy-candles';
import { MarketData } from '../market/market-data';
import { ColumnStore } from '../market/store/column-store';

/** Files listed one by one up to this many; past it, the pairs are listed instead. */
const LIST_FILES = 50;

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/**
 * `import-market-data DIR` (ARCHITECTURE §14, issue 24 item 1): imports a directory in Binance's formats into the
 * candle store (`MARKET_STORE_DIR`, default `DATA_DIR/market`) with a progress bar (files, MB, rate, ETA), then
 * prints each file (or, for many, each pair) with what it added, what was already stored (overlaps) and the gaps
 * of the pair's series, and every problem as `file:line: message`. Idempotent and resumable (see `importer.ts`).
 * Resolves to the exit code: 0 when nothing was rejected, 1 otherwise.
 */
export const importMarketData = async (config: Config, logger: Logger, dir: string): Promise<number> => {
  const database = await openDatabase(config);
  const store = new ColumnStore(marketSettings(config).storeDir);
  try {
    await migrateToLatest(database.db);
    await moveLegacyCandles(database.all, store, logger);
    const data = new MarketData(store);
    const bar = new SingleBar({
      format:
        'importing [{bar}] {percentage}% | {files} files | {mb} MB | {candles} candles | ETA {eta_formatted}',
      hideCursor: true,
      noTTYOutput: true,
      notTTYSchedule: 5000,
      etaBuffer: 30,
    });
    let started = false;
    const result = await importDirectory(dir, {
      db: database.all,
      data,
      onProgress: (p) => {
        const payload = {
          files: `${p.files}/${p.totalFiles}`,
          mb: `${(p.bytes / 1e6).toFixed(0)}/${(p.totalBytes / 1e6).toFixed(0)}`,
          candles: p.candles.toLocaleString('en'),
        };
        if (!started) {
          bar.start(Math.max(1, p.totalBytes), p.bytes, payload);
          started = true;
        } else bar.update(p.bytes, payload);
      },
    });
    if (started) bar.stop();
    console.log(`market data from ${result.root} into ${store.root}`);
    const klines = result.files.filter((f) => f.kind === 'klines');
    const listed =
      result.files.length <= LIST_FILES
        ? result.files
        : result.files.filter((f) => f.status !== 'imported' && f.status !== 'unchanged');
    for (const f of listed) console.log(describe(f));
    if (result.files.length > LIST_FILES) {
      console.log(
        `  (${klines.length} kline files: ${count(result.files, 'imported')} imported, ${count(result.files, 'unchanged')} unchanged)`,
      );
    }
    if (result.pairs.length) {
      console.log('\npairs imported (gaps are of the whole stored series):');
      for (const p of result.pairs) console.log(describePair(p));
    }
    const lines = problemLines(result);
    if (lines.length) {
      console.log(`\n${lines.length} problem(s):`);
      for (const line of lines) console.log(`  ${line}`);
    }
    const seconds = result.seconds;
    console.log(
      `\n${count(result.files, 'imported')} imported, ${count(result.files, 'unchanged')} unchanged, ` +
        `${count(result.files, 'rejected')} rejected, ${count(result.files, 'skipped')} skipped in ${seconds.toFixed(1)} s; ` +
        `${result.added.toLocaleString('en')} candles added (${Math.round(result.added / Math.max(seconds, 0.001)).toLocaleString('en')}/s); ` +
        `${store.size().toLocaleString('en')} candles stored in ${(store.bytesOnDisk() / 1024 ** 2).toFixed(1)} MiB`,
    );
    logger.flush();
    return result.rejected > 0 ? 1 : 0;
  } finally {
    store.close();
    await database.close();
  }
};

const count = (files: FileReport[], status: FileReport['status']) =>
  files.filter((f) => f.status === status).length;

const describe = (f: FileReport): string => {
  const what = f.kind === 'klines' ? `${f.symbol} ${f.interval}` : f.kind;
  const detail =
    f.status === 'imported'
      ? `${f.rows} rows${f.kind === 'klines' ? `, ${f.added} new candles, ${f.overlapping ?? 0} already stored` : ''}${
          f.checksum === 'verified' ? ', checksum verified' : ''
        }`
      : f.status === 'rejected'
        ? `${f.problems.length} problem(s)`
        : f.status === 'skipped'
          ? (f.reason ?? '')
          : 'already imported';
  return `  ${f.status.padEnd(9)} ${f.file} (${what}): ${detail}`;
};

const describePair = (p: PairReport): string => {
  const gaps =
    p.gaps.length === 0
      ? 'no gaps'
      : `${p.gaps.length} gap(s): ${p.gaps
          .slice(0, 5)
          .map((g) => `${iso(g.start)} – ${iso(g.end)} (${g.missingCandles})`)
          .join(', ')}${p.gaps.length > 5 ? ', …' : ''}`;
  return `  ${p.symbol} ${p.interval}: ${p.files} file(s), ${p.added} new, ${p.overlapping} overlapping; ${gaps}`;
};
