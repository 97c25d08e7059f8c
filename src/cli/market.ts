import type { Logger } from 'pino';
import type { Config } from '../config';
import { openDatabase } from '../db/database';
import { migrateToLatest } from '../db/migrate';
import { type FileReport, importDirectory, problemLines } from '../market/importer';
import { MarketData } from '../market/market-data';
import { loadCandleSeries } from '../market/repository';

/**
 * `import-market-data DIR` (ARCHITECTURE §14, issue item 1): imports a directory in Binance's formats into
 * the append-only market store and prints one line per file. Idempotent: files imported before (same SHA-256)
 * are `unchanged`. A file with bad rows is rejected whole and each problem is printed as `file:line: message`.
 * Resolves to the exit code: 0 when nothing was rejected, 1 otherwise.
 */
export const importMarketData = async (config: Config, logger: Logger, dir: string): Promise<number> => {
  const database = await openDatabase(config);
  try {
    await migrateToLatest(database.db);
    const data = new MarketData();
    for (const s of await loadCandleSeries(database.all)) data.candles.merge(s.symbol, s.interval, s.candles);
    const started = performance.now();
    const result = await importDirectory(dir, { db: database.all, data });
    await result.persisted;
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`market data from ${result.root}`);
    for (const f of result.files) console.log(describe(f));
    const lines = problemLines(result);
    if (lines.length) {
      console.log(`\n${lines.length} problem(s):`);
      for (const line of lines) console.log(`  ${line}`);
    }
    const count = (status: FileReport['status']) => result.files.filter((f) => f.status === status).length;
    console.log(
      `\n${count('imported')} imported, ${count('unchanged')} unchanged, ${count('rejected')} rejected, ` +
        `${count('skipped')} skipped in ${seconds} s; ${data.candles.size()} candles stored`,
    );
    logger.flush();
    return result.rejected > 0 ? 1 : 0;
  } finally {
    await database.close();
  }
};

const describe = (f: FileReport): string => {
  const what = f.kind === 'klines' ? `${f.symbol} ${f.interval}` : f.kind;
  const detail =
    f.status === 'imported'
      ? `${f.rows} rows${f.kind === 'klines' ? `, ${f.added} new candles` : ''}`
      : f.status === 'rejected'
        ? `${f.problems.length} problem(s)`
        : f.status === 'skipped'
          ? (f.reason ?? '')
          : 'already imported';
  return `  ${f.status.padEnd(9)} ${f.file} (${what}): ${detail}`;
};
