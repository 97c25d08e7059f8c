import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { INTERVAL_MS } from '../../../domain/market/intervals';
import { createWorkerPool } from '../../workers/pool';
import {
  anchorCandles,
  type FilePlan,
  GENERATED_INTERVALS,
  type GeneratedInterval,
  planFiles,
  planPairs,
  readGeneratorSource,
} from './plan';
import type { GenerateTask } from './worker';

/**
 * `ptv generate-market-data` (issue 24 item 5): Binance-format kline files for tests and benchmarks, anchored on
 * the real hourly candles (see `plan.ts` and `bridge.ts`), deterministic per seed. Layout of `out`, as Binance's
 * data site (`data/spot/monthly/klines/...`) and as `import-market-data` reads it:
 *
 * ```
 * out/exchangeInfo.json, out/ticker_24hr.json       the real documents, cut to the generated pairs
 * out/klines/{SYMBOL}/{interval}/{SYMBOL}-{interval}-{YYYY-MM[-DD]}.zip (+ .zip.CHECKSUM)
 * out/GENERATED.json                                 the options, so a rerun can tell whose files these are
 * ```
 *
 * Files are rendered and zipped on worker threads (piscina). A rerun with the same options skips the files already
 * complete (a zip with its checksum), so an interrupted run resumes; a directory generated with other options is
 * refused rather than mixed.
 */
export interface GenerateOptions {
  pairs: number;
  /** Epoch ms, inclusive; aligned to the interval. */
  from: number;
  /** Epoch ms, exclusive. */
  to: number;
  interval: GeneratedInterval;
  out: string;
  seed: number;
  /** The real data set to anchor on (Binance layout with `klines/1h/*.csv`). */
  anchorDir: string;
  period: 'monthly' | 'daily';
  timeUnit: 'ms' | 'us';
  header: boolean;
  /** Worker threads (default: the number of CPUs). */
  threads?: number;
  /** Called after each file with running totals. */
  onProgress?: (progress: GenerateProgress) => void;
}

/** Running totals of a generation. */
export interface GenerateProgress {
  files: number;
  totalFiles: number;
  candles: number;
  totalCandles: number;
  bytes: number;
}

/** What a generation did. */
export interface GenerateResult extends GenerateProgress {
  symbols: string[];
  /** Files already complete from an earlier run (not rewritten). */
  existing: number;
  seconds: number;
}

const HOUR = 3_600_000;
const MANIFEST = 'GENERATED.json';

const iso = (ms: number) => new Date(ms).toISOString();

/** The zip path of one planned file under `out`. */
export const generatedFilePath = (out: string, file: FilePlan): string =>
  path.join(out, 'klines', file.symbol, file.interval, `${file.symbol}-${file.interval}-${file.label}.zip`);

/** Generates the files (see the module comment). Throws `RangeError` for options the data set cannot serve. */
export const generateMarketData = async (options: GenerateOptions): Promise<GenerateResult> => {
  const started = performance.now();
  if (!(GENERATED_INTERVALS as readonly string[]).includes(options.interval)) {
    throw new RangeError(`--interval must be one of ${GENERATED_INTERVALS.join(', ')}`);
  }
  const ms = INTERVAL_MS[options.interval];
  if (!(options.from < options.to)) throw new RangeError('--from must be before --to');
  if (options.from % ms !== 0 || options.to % ms !== 0) {
    throw new RangeError(`--from and --to must be whole ${options.interval} times`);
  }
  if (!Number.isSafeInteger(options.pairs) || options.pairs < 1) throw new RangeError('--pairs must be ≥ 1');
  const source = readGeneratorSource(options.anchorDir);
  if (options.from < source.earliest || options.to > source.latest) {
    throw new RangeError(
      `the anchor data covers ${iso(source.earliest)} – ${iso(source.latest)}; --from and --to must lie inside it`,
    );
  }
  const plans = planPairs(source, options.pairs);
  const symbols = plans.map((p) => p.symbol);

  fs.mkdirSync(options.out, { recursive: true });
  const manifest = {
    generator: 'ptv generate-market-data',
    format: 1,
    seed: options.seed,
    interval: options.interval,
    from: iso(options.from),
    to: iso(options.to),
    pairs: options.pairs,
    period: options.period,
    time_unit: options.timeUnit,
    header: options.header,
    symbols,
  };
  const manifestPath = path.join(options.out, MANIFEST);
  if (fs.existsSync(manifestPath)) {
    const before = fs.readFileSync(manifestPath, 'utf8');
    if (before !== `${JSON.stringify(manifest, null, 2)}\n`) {
      throw new RangeError(
        `${options.out} holds data generated with other options (${MANIFEST}); use another directory`,
      );
    }
  } else if (fs.readdirSync(options.out).length > 0) {
    throw new RangeError(`${options.out} is not empty and was not made by generate-market-data`);
  }
  fs.writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);

  const keep = new Set(symbols);
  const info = source.exchangeInfo as { symbols: { symbol: string }[] };
  fs.writeFileSync(
    path.join(options.out, 'exchangeInfo.json'),
    JSON.stringify({ ...info, symbols: info.symbols.filter((s) => keep.has(s.symbol)) }),
  );
  fs.writeFileSync(
    path.join(options.out, 'ticker_24hr.json'),
    JSON.stringify(source.tickerDoc.filter((t) => keep.has((t as { symbol?: string }).symbol ?? ''))),
  );

  const files = planFiles(plans, options.interval, options.from, options.to, options.period);
  const perHour = HOUR / ms;
  const bySymbol = new Map(plans.map((p) => [p.symbol, p]));
  const expected = (f: FilePlan) => {
    const hours = anchorCandles(bySymbol.get(f.symbol)!, Math.floor(f.from / HOUR) * HOUR, f.to).length;
    return Math.min(hours * perHour, (f.to - f.from) / ms);
  };
  const progress: GenerateProgress = {
    files: 0,
    totalFiles: files.length,
    candles: 0,
    totalCandles: files.reduce((n, f) => n + expected(f), 0),
    bytes: 0,
  };
  let existing = 0;
  const todo: FilePlan[] = [];
  for (const f of files) {
    const zipPath = generatedFilePath(options.out, f);
    if (fs.existsSync(`${zipPath}.CHECKSUM`) && fs.existsSync(zipPath)) {
      existing++;
      progress.files++;
      progress.candles += expected(f);
      progress.bytes += fs.statSync(zipPath).size;
    } else {
      todo.push(f);
    }
  }
  options.onProgress?.({ ...progress });

  if (todo.length) {
    const pool = createWorkerPool(new URL('./worker.ts', import.meta.url), {
      maxThreads: Math.max(1, Math.min(options.threads ?? os.availableParallelism(), todo.length)),
    });
    try {
      await Promise.all(
        todo.map(async (file) => {
          const task: GenerateTask = {
            anchorDir: options.anchorDir,
            pairs: options.pairs,
            file,
            render: { seed: options.seed, timeUnit: options.timeUnit, header: options.header },
            zipPath: generatedFilePath(options.out, file),
          };
          const done = (await pool.run(task)) as { candles: number; bytes: number };
          progress.files++;
          progress.candles += done.candles;
          progress.bytes += done.bytes;
          options.onProgress?.({ ...progress });
        }),
      );
    } finally {
      await pool.destroy();
    }
  }
  return { ...progress, symbols, existing, seconds: (performance.now() - started) / 1000 };
};
