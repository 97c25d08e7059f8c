import { type Kysely, sql } from 'kysely';
import type { Candle } from '../../domain/market/candle';
import { type Interval, isInterval } from '../../domain/market/intervals';
import type { Pair, PairSnapshot, ReferenceTicker } from '../../domain/market/pair';
import { asText } from '../../projections/columns';
import type { Database } from '../db/schema';

/**
 * SQL access to the market-data tables (STYLE: plain functions taking `db` first, so they run unchanged inside
 * a transaction). Numeric and bigint columns are read as `::text`: `pg` and PGlite then agree exactly.
 */

/** What an import record describes. */
export type ImportKind = 'klines' | 'exchange_info' | 'ticker_24hr';

/** A file already imported: `kind:checksum`. */
export const importedKeys = async (db: Kysely<Database>): Promise<Set<string>> => {
  const rows = await db.selectFrom('market_imports').select(['kind', 'checksum']).execute();
  return new Set(rows.map((r) => `${r.kind}:${r.checksum}`));
};

/** Import record fields. */
export interface ImportRecord {
  path: string;
  checksum: string;
  kind: ImportKind;
  symbol?: string | undefined;
  interval?: Interval | undefined;
  rows: number;
}

/**
 * Records an import; resolves to its id, or `undefined` when a file with the same kind and checksum was
 * imported before (by this process or another one).
 */
export const recordImport = async (
  db: Kysely<Database>,
  record: ImportRecord,
): Promise<string | undefined> => {
  const row = await db
    .insertInto('market_imports')
    .values({
      path: record.path,
      checksum: record.checksum,
      kind: record.kind,
      symbol: record.symbol ?? null,
      interval: record.interval ?? null,
      rows: record.rows,
    })
    .onConflict((oc) => oc.columns(['kind', 'checksum']).doNothing())
    .returning(sql<string>`id::text`.as('id'))
    .executeTakeFirst();
  return row?.id;
};

const CHUNK = 1000;

/**
 * Appends candles (append-only: an existing `(symbol, interval, open_time)` is left as it is). Inserts in
 * chunks of 1,000 rows through `unnest`, one round trip each (`yieldMs`: pause between chunks). Resolves to the
 * number of rows inserted.
 */
export const insertCandles = async (
  db: Kysely<Database>,
  symbol: string,
  interval: Interval,
  candles: readonly Candle[],
  source: string,
  importId: string | null = null,
  options: { yieldMs?: number } = {},
): Promise<number> => {
  let inserted = 0;
  for (let i = 0; i < candles.length; i += CHUNK) {
    // Embedded PGlite runs on this thread: pausing between chunks lets requests and other queries through.
    if (i > 0 && options.yieldMs !== undefined) await new Promise((r) => setTimeout(r, options.yieldMs));
    const chunk = candles.slice(i, i + CHUNK);
    const col = <T>(f: (c: Candle) => T) => chunk.map(f);
    const result = await sql`
      insert into market_candles
        (symbol, interval, open_time, open, high, low, close, volume, quote_volume, trade_count, source, import_id)
      select ${symbol}, ${interval}, t.*, ${source}, ${importId}::bigint
      from unnest(
        ${col((c) => String(c.openTime))}::bigint[], ${col((c) => c.open)}::numeric[],
        ${col((c) => c.high)}::numeric[], ${col((c) => c.low)}::numeric[], ${col((c) => c.close)}::numeric[],
        ${col((c) => c.volume)}::numeric[], ${col((c) => c.quoteVolume)}::numeric[],
        ${col((c) => (c.tradeCount === null ? null : String(c.tradeCount)))}::bigint[]
      ) as t
      on conflict (symbol, interval, open_time) do nothing`.execute(db);
    inserted += Number(result.numAffectedRows ?? 0n);
  }
  return inserted;
};

/** One stored series. */
export interface StoredSeries {
  symbol: string;
  interval: Interval;
  candles: Candle[];
}

/**
 * Loads stored candles (of one source, or all but one), one series per symbol and interval, sorted by open time. Each series comes back
 * as one aggregated text value (far faster than row by row on PGlite).
 */
export const loadCandleSeries = async (
  db: Kysely<Database>,
  sources: { only?: string; except?: string } = {},
): Promise<StoredSeries[]> => {
  const where =
    sources.only !== undefined
      ? sql`where source = ${sources.only}`
      : sources.except !== undefined
        ? sql`where source <> ${sources.except}`
        : sql``;
  const result = await sql<{ symbol: string; interval: string; body: string }>`
    select symbol, interval,
      string_agg(concat_ws(',', open_time::text, open::text, high::text, low::text, close::text, volume::text,
        coalesce(quote_volume::text, ''), coalesce(trade_count::text, '')), E'\n' order by open_time) as body
    from market_candles ${where} group by symbol, interval order by symbol, interval`.execute(db);
  const out: StoredSeries[] = [];
  for (const row of result.rows) {
    if (!isInterval(row.interval)) continue;
    const candles: Candle[] = [];
    for (const line of row.body.split('\n')) {
      const f = line.split(',');
      candles.push({
        openTime: Number(f[0]),
        open: f[1]!,
        high: f[2]!,
        low: f[3]!,
        close: f[4]!,
        volume: f[5]!,
        quoteVolume: f[6] ? f[6] : null,
        tradeCount: f[7] ? Number(f[7]) : null,
      });
    }
    out.push({ symbol: row.symbol, interval: row.interval, candles });
  }
  return out;
};

/** Appends a pair snapshot (rows already present for the same source and time are kept). */
export const insertPairSnapshot = async (
  db: Kysely<Database>,
  source: string,
  snapshot: PairSnapshot,
): Promise<void> => {
  for (let i = 0; i < snapshot.pairs.length; i += CHUNK) {
    const chunk = snapshot.pairs.slice(i, i + CHUNK);
    await db
      .insertInto('market_pairs')
      .values(
        chunk.map((p) => ({
          symbol: p.symbol,
          as_of: snapshot.asOf,
          source,
          base_asset: p.baseAsset,
          quote_asset: p.quoteAsset,
          status: p.status,
          min_qty: p.minQty,
          step_size: p.stepSize,
          min_notional: p.minNotional,
          tick_size: p.tickSize,
        })),
      )
      .onConflict((oc) => oc.columns(['source', 'as_of', 'symbol']).doNothing())
      .execute();
  }
};

/** The newest pair snapshot of `source` (or of any source), or `undefined` when none is stored. */
export const loadLatestPairs = async (
  db: Kysely<Database>,
  source?: string,
): Promise<PairSnapshot | undefined> => {
  let latest = db.selectFrom('market_pairs').select(sql<string>`max(as_of)::text`.as('as_of'));
  if (source) latest = latest.where('source', '=', source);
  const head = await latest.executeTakeFirst();
  if (!head?.as_of) return undefined;
  let query = db
    .selectFrom('market_pairs')
    .select([
      'symbol',
      'base_asset',
      'status',
      ...asText('min_qty', 'step_size', 'min_notional', 'tick_size'),
    ])
    .where('as_of', '=', head.as_of)
    .orderBy('symbol');
  if (source) query = query.where('source', '=', source);
  const rows = await query.execute();
  const seen = new Set<string>();
  const pairs: Pair[] = [];
  for (const r of rows) {
    if (seen.has(r.symbol)) continue;
    seen.add(r.symbol);
    pairs.push({
      symbol: r.symbol,
      baseAsset: r.base_asset,
      quoteAsset: 'USDT',
      status: r.status,
      minQty: r.min_qty,
      stepSize: r.step_size,
      minNotional: r.min_notional,
      tickSize: r.tick_size,
    });
  }
  return { asOf: Number(head.as_of), pairs, skipped: [] };
};

/** Appends reference 24h tickers. */
export const insertReferenceTickers = async (
  db: Kysely<Database>,
  tickers: readonly ReferenceTicker[],
): Promise<void> => {
  for (let i = 0; i < tickers.length; i += CHUNK) {
    const chunk = tickers.slice(i, i + CHUNK);
    await db
      .insertInto('market_reference_tickers')
      .values(
        chunk.map((t) => ({
          symbol: t.symbol,
          close_time: t.closeTime,
          open_time: t.openTime,
          open: t.open,
          high: t.high,
          low: t.low,
          last: t.last,
          volume: t.volume,
          quote_volume: t.quoteVolume,
          trade_count: t.tradeCount,
        })),
      )
      .onConflict((oc) => oc.columns(['symbol', 'close_time']).doNothing())
      .execute();
  }
};

/** The newest reference ticker of each symbol. */
export const loadReferenceTickers = async (db: Kysely<Database>): Promise<ReferenceTicker[]> => {
  const result = await sql<Record<string, string>>`
    select distinct on (symbol) symbol, close_time::text as close_time, open_time::text as open_time,
      open::text as open, high::text as high, low::text as low, last::text as last, volume::text as volume,
      quote_volume::text as quote_volume, trade_count::text as trade_count
    from market_reference_tickers order by symbol, close_time desc`.execute(db);
  return result.rows.map((r) => ({
    symbol: r['symbol']!,
    open: r['open']!,
    high: r['high']!,
    low: r['low']!,
    last: r['last']!,
    volume: r['volume']!,
    quoteVolume: r['quote_volume']!,
    tradeCount: Number(r['trade_count']),
    openTime: Number(r['open_time']),
    closeTime: Number(r['close_time']),
  }));
};
