import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { type Candle, lowerBound } from '../../domain/market/candle';
import { INTERVAL_MS, type Interval } from '../../domain/market/intervals';
import { mulberry32 } from '../../domain/market/random';
import { candlesResponse } from '../../src/contract/market';
import { MarketCandles } from '../../src/market/candles';
import { KlineCsvParser } from '../../src/market/import/kline-parser';
import { candleOut } from '../../src/market/present';
import { candlesBody } from '../../src/market/store/candle-json';
import { ColumnStore } from '../../src/market/store/column-store';
import type { ColumnRun } from '../../src/market/store/columns';
import { candlesFromColumns, columnsFromCandles } from '../../src/market/store/convert';
import { BINANCE, tempDir } from './support';

/**
 * `/market/candles`' body writer (`candlesBody`, from the store's decoded blocks) against the generic path it
 * replaced: candle objects, `candleOut`, the route's response schema and `JSON.stringify` — what
 * fastify-type-provider-zod's serializer sends for the same candles. Byte for byte, on arbitrary candles, on
 * generated minutes with gaps read across block and month boundaries, and on the real data set.
 */

const generic = (symbol: string, interval: string, candles: readonly Candle[]): string =>
  JSON.stringify(
    candlesResponse.parse({ symbol, interval, candles: candles.map(candleOut), count: candles.length }),
  );

const body = (symbol: string, interval: string, runs: readonly ColumnRun[]): string => {
  const written = candlesBody(symbol, interval, runs);
  const text = written.bytes.toString('utf8');
  written.release();
  return text;
};

/** A decimal of at most 8 places as the venue writes it. */
const decimal = (max: bigint) =>
  fc.bigInt({ min: 0n, max }).map((u) => {
    const s = u.toString().padStart(9, '0');
    return `${s.slice(0, -8)}.${s.slice(-8)}`;
  });

const candle = fc.record({
  // Years 0000 → 9999 and beyond it (written by Date with a sign and six digits), any millisecond.
  openTime: fc.oneof(
    fc.integer({ min: 0, max: Date.UTC(2200, 0, 1) }),
    fc.integer({ min: -62_167_219_200_000 - 10 * 86_400_000, max: 253_402_300_800_000 + 10 * 86_400_000 }),
  ),
  open: decimal(10n ** 14n),
  high: fc.oneof(decimal(10n ** 8n), decimal(10n ** 17n)),
  low: decimal(10n ** 14n),
  close: decimal(10n ** 14n),
  // Volumes beyond 2^53 units: the store keeps those columns as bigints.
  volume: fc.oneof(decimal(10n ** 10n), decimal(10n ** 24n)),
  quoteVolume: fc.option(decimal(10n ** 24n), { nil: null }),
  tradeCount: fc.option(fc.oneof(fc.integer({ min: 0, max: 10_000_000 }), fc.maxSafeNat()), { nil: null }),
}) satisfies fc.Arbitrary<Candle>;

describe('the candle body written from columns', () => {
  it('is byte for byte the generic serializer’s, for any candles cut into any runs', () => {
    fc.assert(
      fc.property(
        fc.array(candle, { maxLength: 40 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.constantFrom('BTCUSDT', '1000SHIBUSDT'),
        (candles, cuts, symbol) => {
          candles.sort((a, b) => a.openTime - b.openTime);
          const columns = columnsFromCandles(candles, 60_000);
          // The same candles split into runs at arbitrary points (as the store's blocks split a read).
          const points = [...new Set([0, ...cuts.map((c) => c % (candles.length + 1)), candles.length])].sort(
            (a, b) => a - b,
          );
          const runs = points.slice(1).map((to, k) => ({ columns, from: points[k]!, to }));
          expect(body(symbol, '1m', runs)).toBe(generic(symbol, '1m', candlesFromColumns(columns)));
          // A window of them.
          const from = Math.floor(candles.length / 3);
          const to = Math.ceil((2 * candles.length) / 3);
          expect(body(symbol, '1h', [{ columns, from, to }])).toBe(
            generic(symbol, '1h', candlesFromColumns(columns).slice(from, to)),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('writes times across days and years, a missing trade count as 0, and no candles as an empty list', () => {
    const start = Date.UTC(2022, 11, 31, 23, 58);
    const candles: Candle[] = Array.from({ length: 4 }, (_, i) => ({
      openTime: start + i * 60_000,
      open: '1.50000000',
      high: '2.00000000',
      low: '1.00000000',
      close: '1.75000000',
      volume: '10.00000000',
      quoteVolume: null,
      tradeCount: i === 0 ? null : i,
    }));
    const columns = columnsFromCandles(candles, 60_000);
    const json = JSON.parse(body('BTCUSDT', '1m', [{ columns, from: 0, to: 4 }]));
    expect(json.candles.map((c: { time: string }) => c.time)).toEqual([
      '2022-12-31T23:58:00.000Z',
      '2022-12-31T23:59:00.000Z',
      '2023-01-01T00:00:00.000Z',
      '2023-01-01T00:01:00.000Z',
    ]);
    expect(json.candles[0]).toEqual({
      time: '2022-12-31T23:58:00.000Z',
      open: '1.50000000',
      high: '2.00000000',
      low: '1.00000000',
      close: '1.75000000',
      volume: '10.00000000',
      trade_count: 0,
    });
    expect(json.candles.map((c: { trade_count: number }) => c.trade_count)).toEqual([0, 1, 2, 3]);
    expect(body('BTCUSDT', '1m', [])).toBe('{"symbol":"BTCUSDT","interval":"1m","candles":[],"count":0}');
    expect(body('BTCUSDT', '1m', [])).toBe(generic('BTCUSDT', '1m', []));
  });

  it('keeps a body’s bytes until it is released, then reuses its buffer', () => {
    const candles = (open: string): Candle[] => [
      {
        openTime: 0,
        open,
        high: open,
        low: open,
        close: open,
        volume: '1.00000000',
        quoteVolume: null,
        tradeCount: 1,
      },
    ];
    const a = columnsFromCandles(candles('1.00000000'), 60_000);
    const b = columnsFromCandles(candles('2.00000000'), 60_000);
    const first = candlesBody('BTCUSDT', '1m', [{ columns: a, from: 0, to: 1 }]);
    const expected = generic('BTCUSDT', '1m', candlesFromColumns(a));
    const second = candlesBody('BTCUSDT', '1m', [{ columns: b, from: 0, to: 1 }]);
    expect(first.bytes.toString()).toBe(expected);
    expect(second.bytes.toString()).toBe(generic('BTCUSDT', '1m', candlesFromColumns(b)));
    first.release();
    first.release();
    const third = candlesBody('BTCUSDT', '1m', [{ columns: b, from: 0, to: 1 }]);
    expect(third.bytes.buffer).toBe(first.bytes.buffer);
    expect(second.bytes.toString()).toBe(generic('BTCUSDT', '1m', candlesFromColumns(b)));
    second.release();
    third.release();
  });
});

const units = (u: bigint) => {
  const s = u.toString().padStart(9, '0');
  return `${s.slice(0, -8)}.${s.slice(-8)}`;
};

/**
 * Minutes of `symbol` from `from` to `to` with gaps: whole missing days, hours across a day boundary, single
 * minutes; prices at `tick` units (so the store's columns get different scales), volumes at 1e-8 with some beyond
 * 2^53 units, trade counts and quote volumes missing on some days.
 */
const minutes = (from: number, to: number, tick: bigint, random: () => number): Candle[] => {
  const out: Candle[] = [];
  let price = 4_000_000n;
  const MINUTE = 60_000;
  const DAY = 86_400_000;
  for (let t = from; t < to; t += MINUTE) {
    const day = Math.floor((t - from) / DAY);
    if (day % 9 === 4) continue; // a whole day missing
    const minuteOfDay = (t % DAY) / MINUTE;
    if (day % 7 === 2 && (minuteOfDay >= 1380 || minuteOfDay < 95)) continue; // across midnight
    if (random() < 0.01) continue;
    price += BigInt(Math.floor((random() - 0.5) * 40));
    if (price < 1000n) price = 1000n;
    const open = price * tick;
    const close = (price + BigInt(Math.floor((random() - 0.5) * 10))) * tick;
    const high = (open > close ? open : close) + BigInt(Math.floor(random() * 5)) * tick;
    const low = (open < close ? open : close) - BigInt(Math.floor(random() * 5)) * tick;
    const huge = day % 5 === 1 && random() < 0.3;
    const volume = huge
      ? 10n ** 17n + BigInt(Math.floor(random() * 1e9))
      : BigInt(Math.floor(random() * 1e12));
    out.push({
      openTime: t,
      open: units(open),
      high: units(high),
      low: units(low < 0n ? 0n : low),
      close: units(close),
      volume: units(volume),
      quoteVolume: day % 6 === 3 ? null : units(volume * 3n),
      tradeCount: day % 6 === 3 ? null : Math.floor(random() * 5000),
    });
  }
  return out;
};

const store = async (dir: string, series: { symbol: string; interval: Interval; candles: Candle[] }[]) => {
  const s = new ColumnStore(dir);
  for (const { symbol, interval, candles } of series) {
    const prepared = s.prepare(symbol, interval, columnsFromCandles(candles, INTERVAL_MS[interval]));
    s.commit(prepared);
  }
  await s.flush();
  return new MarketCandles(new ColumnStore(dir));
};

/**
 * Compares, for each query, `/market/candles`' body from the store's runs with the generic serializer over the
 * same query answered from the whole series as candle objects (the spec's rule applied by hand: open times within
 * the inclusive bounds, the first `limit` from `start` or the last `limit` up to `end`).
 */
const compareQueries = (
  candles: MarketCandles,
  symbol: string,
  interval: Interval,
  queries: { start?: number; end?: number; limit: number }[],
) => {
  // A second reader of the store, its caches emptied before each query: its transient reads decode every block in
  // part.
  const fresh = new MarketCandles(new ColumnStore(candles.store.root));
  const range = candles.seriesRange(symbol, interval)!;
  const all = candlesFromColumns(candles.columns(symbol, interval, range.first, range.last + 1));
  expect(all.length).toBe(range.count);
  for (const q of queries) {
    const inRange = all.slice(
      q.start === undefined ? 0 : lowerBound(all, q.start),
      q.end === undefined ? all.length : lowerBound(all, q.end + 1),
    );
    const expected =
      q.start === undefined
        ? inRange.slice(Math.max(0, inRange.length - q.limit))
        : inRange.slice(0, q.limit);
    const want = generic(symbol, interval, expected);
    // Runs of cached blocks; transient runs of a store that has read other blocks (some cached, some read in part
    // before, so now decoded whole); transient runs of a fresh store (every block decoded in part).
    for (const [path, runs] of [
      ['cached', () => candles.queryRuns(symbol, interval, q)],
      ['transient', () => candles.queryRuns(symbol, interval, q, { transient: true })],
      [
        'transient, fresh',
        () => {
          fresh.store.close();
          return fresh.queryRuns(symbol, interval, q, { transient: true });
        },
      ],
    ] as const) {
      const got = body(symbol, interval, runs());
      if (got !== want) expect({ path, query: q, body: got }).toEqual({ path, query: q, body: want });
    }
  }
  return all;
};

/** Queries at and around every boundary a read can cross, and random ones. */
const queriesOf = (first: number, last: number, step: number, random: () => number) => {
  const DAY = 86_400_000;
  const points = new Set<number>([
    first - 7 * DAY,
    first - step,
    first,
    first + step,
    last - step,
    last,
    last + step,
  ]);
  // Day (block) boundaries: every one in the first weeks, then one in five.
  for (let t = Math.ceil(first / DAY) * DAY, k = 0; t <= last; t += DAY, k++) {
    if (k > 14 && k % 5 !== 0) continue;
    for (const d of [-step, 0, step]) points.add(t + d);
  }
  for (let k = 0; k < 20; k++) points.add(first + Math.floor(random() * ((last - first) / step)) * step);
  const queries: { start?: number; end?: number; limit: number }[] = [];
  for (const p of points) {
    const limit = [1, 7, 1000][Math.floor(random() * 3)]!;
    queries.push({ start: p, limit }, { end: p, limit: 1000 - limit + 1 });
    queries.push({ start: p + 1, end: p + Math.floor(random() * 3000) * step, limit: 1000 });
  }
  queries.push({ limit: 1 }, { limit: 1000 });
  return queries;
};

// Each query is compared three ways (cached, transient, transient on emptied caches): minutes at a load of 20.
describe('/market/candles bodies read from the candle store', () => {
  const dirs: (() => void)[] = [];
  afterAll(() => {
    for (const remove of dirs) remove();
  });

  it('equal the generic serializer’s on generated minutes with gaps, across blocks, months and limits', async () => {
    const { dir, remove } = tempDir('ptv-candle-body-');
    dirs.push(remove);
    const random = mulberry32(7);
    const from = Date.UTC(2022, 0, 24);
    const to = Date.UTC(2022, 1, 8);
    const btc = minutes(from, to, 1n, random); // 1e-8 steps: scale 8
    const shib = minutes(from + 3 * 60_000, to, 1_000_000n, random); // 0.01 steps: scale 2
    const candles = await store(dir, [
      { symbol: 'BTCUSDT', interval: '1m', candles: btc },
      { symbol: 'SHIBUSDT', interval: '1m', candles: shib },
    ]);
    // The 1m series is the generated one, as stored.
    const stored = compareQueries(candles, 'BTCUSDT', '1m', queriesOf(from, to, 60_000, random));
    expect(stored).toEqual(btc);
    compareQueries(candles, 'SHIBUSDT', '1m', queriesOf(from, to, 60_000, random));
    for (const interval of ['5m', '15m', '1h', '4h', '1d'] as const) {
      compareQueries(candles, 'SHIBUSDT', interval, queriesOf(from, to, INTERVAL_MS[interval], random));
    }
  }, 180_000);

  it('equal the generic serializer’s on the real data set (1m and 1h of BTCUSDT, 1h of DOGEUSDT)', async () => {
    const { dir, remove } = tempDir('ptv-candle-body-real-');
    dirs.push(remove);
    const read = (relative: string, interval: Interval) => {
      const parser = new KlineCsvParser(interval);
      parser.push(fs.readFileSync(path.join(BINANCE, 'klines', relative)));
      return candlesFromColumns(parser.finish().columns);
    };
    const minutesOfBtc = ['01', '02', '03'].flatMap((d) => read(`1m/BTCUSDT-1m-2020-01-${d}.csv`, '1m'));
    const candles = await store(dir, [
      { symbol: 'BTCUSDT', interval: '1m', candles: minutesOfBtc },
      { symbol: 'BTCUSDT', interval: '1h', candles: read('1h/BTCUSDT-1h.csv', '1h') },
      { symbol: 'DOGEUSDT', interval: '1h', candles: read('1h/DOGEUSDT-1h.csv', '1h') },
    ]);
    const random = mulberry32(11);
    for (const [symbol, interval] of [
      ['BTCUSDT', '1m'],
      ['BTCUSDT', '1h'],
      ['BTCUSDT', '1d'],
      ['DOGEUSDT', '1h'],
      ['DOGEUSDT', '4h'],
    ] as const) {
      const r = candles.seriesRange(symbol, interval)!;
      const all = compareQueries(
        candles,
        symbol,
        interval,
        queriesOf(r.first, r.last, INTERVAL_MS[interval], random).filter((_, k) => k % 3 === 0),
      );
      expect(all.length).toBeGreaterThan(60);
    }
  }, 180_000);
});
