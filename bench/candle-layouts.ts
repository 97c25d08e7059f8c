/**
 * Candle store layouts compared (issue 24 item 2: "measure before choosing"). The same generated 1-minute candles
 * (`generate-market-data`'s paths, rendered in process) are written into each candidate and read back by range:
 *
 * - `pg-rows-numeric`: one row per candle, the `market_candles` layout of migration 0003 (numeric(38,8) values,
 *   text symbol and interval, source, import id, time recorded; primary key (symbol, interval, open_time)).
 * - `pg-rows-bigint`: one row per candle, narrowed: a smallint pair id, the interval as a smallint, bigint
 *   values in 1e-8 units, integer trades; primary key (pair, interval, open_time).
 * - `pg-day-blocks`: one row per pair and UTC day, the day's candles as one `bytea` in the column store's block
 *   encoding (`src/market/store/block-codec.ts`); primary key (pair, interval, day).
 * - `files`: the column store itself (`src/market/store/column-store.ts`): a file per pair and month of day blocks.
 *
 * For each: bytes per candle on disk (PostgreSQL: `pg_total_relation_size`, table + indexes + TOAST; files: the
 * month files, 1m only so every layout holds the same candles), write rate, and the latency of range reads of
 * 1,000 consecutive minutes at random places, each decoded to the candle objects `/market/candles` answers with
 * (p50, p99, 200 reads after 20 warm-up reads). PostgreSQL layouts run on the server (`--url`, default
 * `DATABASE_URL`, else the local one), in a scratch database of a unique name (`--db-prefix`, default
 * `ptv_bench_layouts_`, and a random tail) created for the run and dropped at its end, and on embedded PGlite.
 *
 *   npx tsx bench/candle-layouts.ts [--pairs 4] [--months 3] [--pglite-months 1] [--json out.json]
 *     [--url postgres://…] [--db-prefix ptv_bench_layouts_]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Command } from 'commander';
import pg from 'pg';
import type { Candle } from '../domain/market/candle';
import { planFiles, planPairs, readGeneratorSource } from '../src/market/generator/plan';
import { renderFile } from '../src/market/generator/render';
import { KlineCsvParser } from '../src/market/import/kline-parser';
import { siblingMarketDataDir } from '../src/market/sibling-data';
import { type CandleColumns, decodeBlock, encodeBlock } from '../src/market/store/block-codec';
import { ColumnStore } from '../src/market/store/column-store';
import { sliceColumns } from '../src/market/store/columns';
import { candlesFromColumns } from '../src/market/store/convert';
import { bigUnitsAt } from '../src/market/store/decimal-column';
import { withScratchDatabase } from './options';
import { createScratchDatabase, percentile } from './stats';

const program = withScratchDatabase(new Command(), 'ptv_bench_layouts_')
  .option('--pairs <n>', 'pairs', '4')
  .option('--months <n>', 'months of 1m candles per pair (PostgreSQL server and files)', '3')
  .option('--pglite-months <n>', 'months per pair on PGlite (slower to fill)', '1')
  .option('--json <file>', 'write the results as JSON')
  .parse();
const opts = program.opts<{
  pairs: string;
  months: string;
  pgliteMonths: string;
  url: string;
  dbPrefix: string;
  json?: string;
}>();

const DAY = 86_400_000;
const READS = 200;
const WARMUP = 20;
const SPAN = 1000;

interface Series {
  symbol: string;
  id: number;
  columns: CandleColumns;
}

/** Generated 1m candles of `pairs` pairs over `months` months from 2022-01. */
const generate = (pairs: number, months: number): Series[] => {
  const source = readGeneratorSource(siblingMarketDataDir() ?? '../shared/market-data');
  const plans = planPairs(source, pairs);
  const from = Date.UTC(2022, 0, 1);
  const to = Date.UTC(2022, months, 1);
  return plans.map((plan, id) => {
    const parser = new KlineCsvParser('1m');
    for (const file of planFiles([plan], '1m', from, to, 'monthly')) {
      parser.push(renderFile(plan, file, { seed: 42, timeUnit: 'ms', header: false }).csv);
    }
    return { symbol: plan.symbol, id, columns: parser.finish().columns };
  });
};

/** Random 1,000-minute windows inside the data. */
const windows = (series: Series[], count: number) => {
  let seed = 12345;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  return Array.from({ length: count }, () => {
    const s = series[Math.floor(rnd() * series.length)]!;
    const first = s.columns.openTime[0]!;
    const last = s.columns.openTime[s.columns.length - 1]!;
    const start = first + Math.floor(rnd() * ((last - first) / 60_000 - SPAN)) * 60_000;
    return { series: s, start, end: start + SPAN * 60_000 };
  });
};

const timeReads = async (
  series: Series[],
  read: (s: Series, start: number, end: number) => Promise<Candle[]>,
) => {
  const ws = windows(series, READS + WARMUP);
  const ms: number[] = [];
  for (const [k, w] of ws.entries()) {
    const t = performance.now();
    const candles = await read(w.series, w.start, w.end);
    const took = performance.now() - t;
    if (candles.length !== SPAN) throw new Error(`read ${candles.length} candles, expected ${SPAN}`);
    if (k >= WARMUP) ms.push(took);
  }
  return { p50_ms: percentile(ms, 50), p99_ms: percentile(ms, 99) };
};

interface Sql {
  query(text: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  exec(text: string): Promise<unknown>;
}

const units = (
  c: CandleColumns,
  key: 'open' | 'high' | 'low' | 'close' | 'volume' | 'quote' | 'trades',
  i: number,
) => {
  const v = bigUnitsAt(c[key], i);
  return v < 0n ? null : (key === 'trades' ? v / 100_000_000n : v).toString();
};

const decimal8 = (v: string) => {
  const d = v.padStart(9, '0');
  return `${d.slice(0, -8)}.${d.slice(-8)}`;
};

/** The three PostgreSQL layouts on one connection. */
const pgLayouts = async (db: Sql, series: Series[], label: string) => {
  const results: Record<string, unknown>[] = [];
  const total = series.reduce((n, s) => n + s.columns.length, 0);
  const size = async (table: string) =>
    Number((await db.query(`select pg_total_relation_size('${table}')::text as n`)).rows[0]!.n);

  /**
   * One layout: its table (`columns`) created, every series written by `write` (timed), vacuumed, sized, read
   * back by `read` (timed), dropped.
   */
  const layout = async (
    name: string,
    table: string,
    columns: string,
    write: (s: Series) => Promise<void>,
    read: (s: Series, start: number, end: number) => Promise<Candle[]>,
  ) => {
    await db.exec(`drop table if exists ${table}; create table ${table} (${columns})`);
    const t = performance.now();
    for (const s of series) await write(s);
    const writeS = (performance.now() - t) / 1000;
    await db.exec(`vacuum analyze ${table}`);
    results.push({
      layout: name,
      on: label,
      candles: total,
      bytes_per_candle: (await size(table)) / total,
      write_candles_per_s: Math.round(total / writeS),
      ...(await timeReads(series, read)),
    });
    await db.exec(`drop table ${table}`);
  };

  await layout(
    'pg-rows-numeric',
    'bench_rows_numeric',
    `symbol text not null, interval text not null, open_time bigint not null,
      open numeric(38,8) not null, high numeric(38,8) not null, low numeric(38,8) not null, close numeric(38,8) not null,
      volume numeric(38,8) not null, quote_volume numeric(38,8), trade_count bigint, source text not null,
      import_id bigint, recorded_at timestamptz not null default now(), primary key (symbol, interval, open_time)`,
    async (s) => {
      for (let from = 0; from < s.columns.length; from += 5000) {
        const part = candlesFromColumns(sliceColumns(s.columns, from, from + 5000));
        await db.query(
          `insert into bench_rows_numeric (symbol, interval, open_time, open, high, low, close, volume, quote_volume, trade_count, source)
         select $1, '1m', t.* , 'files' from unnest($2::bigint[], $3::numeric[], $4::numeric[], $5::numeric[], $6::numeric[],
           $7::numeric[], $8::numeric[], $9::bigint[]) as t`,
          [
            s.symbol,
            part.map((c) => c.openTime),
            part.map((c) => c.open),
            part.map((c) => c.high),
            part.map((c) => c.low),
            part.map((c) => c.close),
            part.map((c) => c.volume),
            part.map((c) => c.quoteVolume),
            part.map((c) => c.tradeCount),
          ],
        );
      }
    },
    async (s, start, end) => {
      const r = await db.query(
        `select open_time::text, open::text, high::text, low::text, close::text, volume::text, quote_volume::text,
           trade_count::text from bench_rows_numeric where symbol = $1 and interval = '1m' and open_time >= $2
           and open_time < $3 order by open_time`,
        [s.symbol, start, end],
      );
      return r.rows.map((x) => ({
        openTime: Number(x.open_time),
        open: x.open as string,
        high: x.high as string,
        low: x.low as string,
        close: x.close as string,
        volume: x.volume as string,
        quoteVolume: (x.quote_volume as string | null) ?? null,
        tradeCount: x.trade_count === null ? null : Number(x.trade_count),
      }));
    },
  );

  await layout(
    'pg-rows-bigint',
    'bench_rows_bigint',
    `pair smallint not null, interval smallint not null, open_time bigint not null,
      open bigint not null, high bigint not null, low bigint not null, close bigint not null, volume bigint not null,
      quote_volume bigint, trade_count integer, primary key (pair, interval, open_time)`,
    async (s) => {
      for (let from = 0; from < s.columns.length; from += 5000) {
        const c = sliceColumns(s.columns, from, from + 5000);
        const col = (k: 'open' | 'high' | 'low' | 'close' | 'volume' | 'quote' | 'trades') =>
          Array.from({ length: c.length }, (_, i) => units(c, k, i));
        await db.query(
          `insert into bench_rows_bigint select $1, 1, t.* from unnest($2::bigint[], $3::bigint[], $4::bigint[],
          $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::integer[]) as t`,
          [
            s.id,
            Array.from(c.openTime),
            col('open'),
            col('high'),
            col('low'),
            col('close'),
            col('volume'),
            col('quote'),
            col('trades'),
          ],
        );
      }
    },
    async (s, start, end) => {
      const r = await db.query(
        `select open_time::text, open::text, high::text, low::text, close::text, volume::text, quote_volume::text,
           trade_count::text from bench_rows_bigint where pair = $1 and interval = 1 and open_time >= $2 and open_time < $3
           order by open_time`,
        [s.id, start, end],
      );
      return r.rows.map((x) => ({
        openTime: Number(x.open_time),
        open: decimal8(x.open as string),
        high: decimal8(x.high as string),
        low: decimal8(x.low as string),
        close: decimal8(x.close as string),
        volume: decimal8(x.volume as string),
        quoteVolume: x.quote_volume === null ? null : decimal8(x.quote_volume as string),
        tradeCount: x.trade_count === null ? null : Number(x.trade_count),
      }));
    },
  );

  await layout(
    'pg-day-blocks',
    'bench_day_blocks',
    `pair smallint not null, interval smallint not null, day bigint not null,
      block bytea not null, primary key (pair, interval, day)`,
    async (s) => {
      let from = 0;
      while (from < s.columns.length) {
        const day = Math.floor(s.columns.openTime[from]! / DAY) * DAY;
        let to = from;
        while (to < s.columns.length && s.columns.openTime[to]! < day + DAY) to++;
        await db.query('insert into bench_day_blocks values ($1, 1, $2, $3)', [
          s.id,
          day,
          Buffer.from(encodeBlock(sliceColumns(s.columns, from, to))),
        ]);
        from = to;
      }
    },
    async (s, start, end) => {
      const r = await db.query(
        'select block from bench_day_blocks where pair = $1 and interval = 1 and day >= $2 and day < $3 order by day',
        [s.id, Math.floor(start / DAY) * DAY, end],
      );
      const out: Candle[] = [];
      for (const row of r.rows) {
        const c = decodeBlock(row.block as Uint8Array);
        for (const candle of candlesFromColumns(c))
          if (candle.openTime >= start && candle.openTime < end) out.push(candle);
      }
      return out;
    },
  );
  return results;
};

const filesLayout = async (series: Series[]) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-layouts-'));
  try {
    const store = new ColumnStore(dir);
    const total = series.reduce((n, s) => n + s.columns.length, 0);
    const t = performance.now();
    for (const s of series) store.commit(store.prepare(s.symbol, '1m', s.columns));
    await store.flush();
    const writeS = (performance.now() - t) / 1000;
    // The store also writes the served 5m…1d series; count the 1m sections only, as the other layouts hold 1m.
    let nativeBytes = 0;
    let allBytes = 0;
    for (const s of series) {
      for (const f of fs.readdirSync(path.join(dir, s.symbol))) {
        const file = path.join(dir, s.symbol, f);
        allBytes += fs.statSync(file).size;
        const fd = fs.openSync(file, 'r');
        const { readDirectory } = await import('../src/market/store/month-file');
        const d = readDirectory(fd);
        fs.closeSync(fd);
        for (const section of d.sections) {
          if (section.interval === '1m') nativeBytes += section.blocks.reduce((n, b) => n + b.length, 0);
        }
      }
    }
    const cold = new ColumnStore(dir, { blockCacheBytes: 1 });
    return [
      {
        layout: 'files',
        on: 'disk',
        candles: total,
        bytes_per_candle: nativeBytes / total,
        bytes_per_candle_with_served_intervals: allBytes / total,
        write_candles_per_s_with_served_intervals: Math.round(total / writeS),
        ...(await timeReads(series, async (s, start, end) =>
          candlesFromColumns(cold.read(s.symbol, '1m', start, end)),
        )),
      },
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

const main = async () => {
  const pairs = Number(opts.pairs);
  const series = generate(pairs, Number(opts.months));
  const results: Record<string, unknown>[] = [];
  results.push(...(await filesLayout(series)));

  const scratch = await createScratchDatabase(opts.url, opts.dbPrefix);
  const client = new pg.Client({ connectionString: scratch.url });
  try {
    await client.connect();
    results.push(
      ...(await pgLayouts(
        {
          query: (text, params) => client.query(text, params as unknown[]),
          exec: (text) => client.query(text),
        },
        series,
        'postgresql',
      )),
    );
  } finally {
    await client.end().catch(() => {});
    await scratch.drop();
  }

  const pgliteDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-layouts-pglite-'));
  const lite = await PGlite.create(pgliteDir);
  try {
    const small = generate(pairs, Number(opts.pgliteMonths));
    results.push(
      ...(await pgLayouts(
        {
          query: async (text, params) => ({
            rows: (await lite.query(text, params as unknown[])).rows as Record<string, unknown>[],
          }),
          exec: (text) => lite.exec(text),
        },
        small,
        'pglite',
      )),
    );
  } finally {
    await lite.close();
    fs.rmSync(pgliteDir, { recursive: true, force: true });
  }

  const load = os.loadavg()[0]!.toFixed(1);
  console.table(
    results.map((r) => ({
      ...r,
      bytes_per_candle: Number(r.bytes_per_candle).toFixed(1),
      p50_ms: Number(r.p50_ms).toFixed(2),
      p99_ms: Number(r.p99_ms).toFixed(2),
    })),
  );
  console.log(`load average at the end: ${load}`);
  if (opts.json)
    fs.writeFileSync(opts.json, JSON.stringify({ at: new Date().toISOString(), load, results }, null, 2));
};

await main();
