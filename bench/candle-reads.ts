/**
 * `/market/candles` range reads in process, without HTTP (issue 24; `docs/benchmarks.md`, "Market data at scale"):
 * the same reads as `bench/market-scale.ts`'s reads part — `--reads` × 1,000 1-minute candles from a random minute
 * of a random pair (seeded as there: the seed is the pair count) — made on a candle store directory (`--store`,
 * e.g. `/tmp/bigdata/store-100`, opened read-only) through the route's body writer, timed one by one (wall and
 * this thread's CPU), after `--warm` reads that are not counted. What a read costs the venue's request thread
 * apart from HTTP; run it with `node --cpu-prof` for where that goes:
 *
 *   npx tsx bench/candle-reads.ts --store /tmp/bigdata/store-100 --reads 2000
 *   node --cpu-prof --cpu-prof-dir /tmp/prof --import tsx bench/candle-reads.ts --store /tmp/bigdata/store-100
 */
import os from 'node:os';
import { Command } from 'commander';
import { mulberry32 } from '../domain/market/random';
import { candlesResponse } from '../src/contract/market';
import { MarketCandles } from '../src/market/candles';
import { candleOut } from '../src/market/present';
import { candlesBody } from '../src/market/store/candle-json';
import { ColumnStore } from '../src/market/store/column-store';
import { positiveInt } from './options';
import { round, summarize } from './stats';

const options = new Command()
  .requiredOption('--store <dir>', 'candle store directory (read only)')
  .option('--reads <n>', 'reads timed', positiveInt, 2000)
  .option('--warm <n>', 'reads before the timed ones (not counted)', positiveInt, 200)
  .option('--limit <n>', 'candles per read', positiveInt, 1000)
  .option('--from <date>', 'first day of the reads (UTC)', '2022-01-01')
  .option('--to <date>', 'end of the reads (UTC, exclusive)', '2023-01-01')
  .option(
    '--path <name>',
    "body: the route's writer; generic: candle objects through the schema and JSON.stringify",
    'body',
  )
  .option('--block-cache-mib <n>', "the store's block cache (MiB; default the store's 64)", positiveInt)
  .option('--json', 'print the result as JSON only')
  .parse()
  .opts<{
    path: string;
    store: string;
    reads: number;
    warm: number;
    limit: number;
    from: string;
    to: string;
    json?: boolean;
    blockCacheMib?: number;
  }>();

const MINUTE = 60_000;
const FROM = Date.parse(`${options.from}T00:00:00Z`);
const TO = Date.parse(`${options.to}T00:00:00Z`);

const candles = new MarketCandles(
  new ColumnStore(
    options.store,
    options.blockCacheMib ? { blockCacheBytes: options.blockCacheMib * 2 ** 20 } : {},
  ),
);
const symbols = candles.symbols();
const next = mulberry32(symbols.length);
const read = () => {
  const symbol = symbols[Math.floor(next() * symbols.length)]!;
  const start = FROM + Math.floor(next() * ((TO - FROM) / MINUTE)) * MINUTE;
  const range = { start, limit: options.limit };
  if (options.path === 'body') {
    const body = candlesBody(symbol, '1m', candles.queryRuns(symbol, '1m', range, { transient: true }));
    body.release();
    return body.bytes.length;
  }
  const list = candles.query(symbol, '1m', range).map(candleOut);
  return Buffer.from(
    JSON.stringify(candlesResponse.parse({ symbol, interval: '1m', candles: list, count: list.length })),
  ).length;
};

let bytes = 0;
for (let i = 0; i < options.warm; i++) bytes += read();
const wall: number[] = [];
const cpu: number[] = [];
const load = os.loadavg().map((l) => round(l, 2));
const t0 = performance.now();
const c0 = process.cpuUsage();
for (let i = 0; i < options.reads; i++) {
  const t = performance.now();
  const c = process.cpuUsage();
  bytes += read();
  const d = process.cpuUsage(c);
  cpu.push((d.user + d.system) / 1000);
  wall.push(performance.now() - t);
}
const total = process.cpuUsage(c0);
const result = {
  store: options.store,
  path: options.path,
  pairs: symbols.length,
  reads: options.reads,
  wall_ms: summarize(wall, 3),
  cpu_ms: summarize(cpu, 3),
  cpu_ms_per_read: round((total.user + total.system) / 1000 / options.reads, 3),
  wall_ms_per_read: round((performance.now() - t0) / options.reads, 3),
  mean_body_bytes: Math.round(bytes / (options.reads + options.warm)),
  load_average: load,
};
console.log(options.json ? JSON.stringify(result) : JSON.stringify(result, null, 2));
