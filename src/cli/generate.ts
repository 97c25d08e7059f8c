import fs from 'node:fs';
import path from 'node:path';
import { SingleBar } from 'cli-progress';
import { parseIsoTime } from '../../domain/market/time';
import { dataRoot } from '../market/files';
import { generateMarketData } from '../market/generator/generate';
import { GENERATED_INTERVALS, type GeneratedInterval } from '../market/generator/plan';
import { siblingMarketDataDir } from '../market/sibling-data';
import { usageError } from './errors';

/** The options of `generate-market-data` as commander hands them over (strings). */
export interface GenerateCliOptions {
  pairs: string;
  from: string;
  to: string;
  interval: string;
  out: string;
  seed: string;
  anchors?: string;
  daily?: boolean;
  timeUnit: string;
  header?: boolean;
  threads?: string;
}

const integer = (name: string, raw: string, min: number): number => {
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min)
    throw usageError(`--${name} must be an integer ≥ ${min}, got "${raw}"`);
  return n;
};

const time = (name: string, raw: string): number => {
  const t = parseIsoTime(raw);
  if (t === undefined) throw usageError(`--${name} must be an ISO 8601 date or time (UTC), got "${raw}"`);
  return t;
};

const millions = (n: number) => `${(n / 1e6).toFixed(2)} M`;

/**
 * `generate-market-data` (issue 24 item 5; `docs/market-data.md`, "Generated data"): writes Binance-format kline
 * zips anchored on the real hourly candles, with a progress bar (files, candles, rate, ETA). Resolves to the exit
 * code. Bad options are usage errors (exit 2).
 */
export const generateMarketDataCli = async (options: GenerateCliOptions): Promise<number> => {
  if (!(GENERATED_INTERVALS as readonly string[]).includes(options.interval)) {
    throw usageError(
      `--interval must be one of ${GENERATED_INTERVALS.join(', ')}, got "${options.interval}"`,
    );
  }
  if (options.timeUnit !== 'ms' && options.timeUnit !== 'us') {
    throw usageError(`--time-unit must be ms or us, got "${options.timeUnit}"`);
  }
  const anchorDir = options.anchors ?? siblingMarketDataDir();
  if (!anchorDir)
    throw usageError('no real data set to anchor on: pass --anchors DIR (e.g. ../shared/market-data)');
  // A bad option, not a failure of the run: one line and exit code 2, before anything is written.
  if (!fs.existsSync(path.join(dataRoot(anchorDir), 'exchangeInfo.json')))
    throw usageError(`--anchors ${anchorDir}: no Binance data set there (no exchangeInfo.json)`);
  const bar = new SingleBar({
    format:
      'generating [{bar}] {percentage}% | {files} files | {value}/{total} candles | {rate}/s | ETA {eta_formatted}',
    hideCursor: true,
    noTTYOutput: true,
    notTTYSchedule: 5000,
    etaBuffer: 50,
  });
  let started = false;
  let lastCandles = 0;
  const startedAt = performance.now();
  try {
    const result = await generateMarketData({
      pairs: integer('pairs', options.pairs, 1),
      from: time('from', options.from),
      to: time('to', options.to),
      interval: options.interval as GeneratedInterval,
      out: path.resolve(options.out),
      seed: integer('seed', options.seed, 0),
      anchorDir,
      period: options.daily ? 'daily' : 'monthly',
      timeUnit: options.timeUnit,
      header: options.header ?? false,
      ...(options.threads ? { threads: integer('threads', options.threads, 1) } : {}),
      onProgress: (p) => {
        const rate = Math.round(p.candles / Math.max(0.001, (performance.now() - startedAt) / 1000));
        const payload = { files: `${p.files}/${p.totalFiles}`, rate: rate.toLocaleString('en') };
        if (!started) {
          bar.start(p.totalCandles, p.candles, payload);
          started = true;
        } else bar.update(p.candles, payload);
        lastCandles = p.candles;
      },
    });
    bar.update(lastCandles);
    bar.stop();
    console.log(
      `${result.files} files (${result.existing} already there), ${millions(result.candles)} candles of ` +
        `${result.symbols.length} pairs, ${(result.bytes / 1024 ** 2).toFixed(1)} MiB zipped, in ` +
        `${result.seconds.toFixed(1)} s (${Math.round(result.candles / Math.max(result.seconds, 0.001)).toLocaleString('en')} candles/s) → ${path.resolve(options.out)}`,
    );
    return 0;
  } catch (error) {
    if (started) bar.stop();
    if (error instanceof RangeError) throw usageError(error.message);
    throw error;
  }
};
