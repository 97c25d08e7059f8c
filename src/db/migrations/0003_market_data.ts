import { type Kysely, sql } from 'kysely';
import { dropTables } from './drop-tables';

/**
 * Market data store (ARCHITECTURE §7): not ledger state, its own append-only tables.
 * - `market_imports`: one row per imported file (path, SHA-256, kind, rows), so re-importing the same file is a
 *   no-op.
 * - `market_candles`: one row per candle and interval, never updated (`on conflict do nothing`); values
 *   `numeric(38, 8)`, times epoch milliseconds (Binance's own unit).
 * - `market_pairs`: pair snapshots, one row per symbol and exchangeInfo server time; the newest snapshot of a
 *   source is the current pair list.
 * - `market_reference_tickers`: Binance `ticker/24hr` snapshots (reference 24h volumes).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table market_imports (
      id bigint generated always as identity primary key,
      path text not null,
      checksum text not null,
      kind text not null check (kind in ('klines', 'exchange_info', 'ticker_24hr')),
      symbol text,
      interval text,
      rows integer not null,
      imported_at timestamptz not null default now(),
      constraint market_imports_checksum unique (kind, checksum)
    )`.execute(db);
  await sql`
    create table market_candles (
      symbol text not null,
      interval text not null,
      open_time bigint not null,
      open numeric(38, 8) not null,
      high numeric(38, 8) not null,
      low numeric(38, 8) not null,
      close numeric(38, 8) not null,
      volume numeric(38, 8) not null,
      quote_volume numeric(38, 8),
      trade_count bigint,
      source text not null,
      import_id bigint references market_imports (id),
      recorded_at timestamptz not null default now(),
      primary key (symbol, interval, open_time)
    )`.execute(db);
  await sql`
    create table market_pairs (
      symbol text not null,
      as_of bigint not null,
      source text not null,
      base_asset text not null,
      quote_asset text not null,
      status text not null check (status in ('active', 'inactive')),
      min_qty numeric(38, 8) not null,
      step_size numeric(38, 8) not null,
      min_notional numeric(38, 8) not null,
      tick_size numeric(38, 8) not null,
      recorded_at timestamptz not null default now(),
      primary key (source, as_of, symbol)
    )`.execute(db);
  await sql`
    create table market_reference_tickers (
      symbol text not null,
      close_time bigint not null,
      open_time bigint not null,
      open numeric(38, 8) not null,
      high numeric(38, 8) not null,
      low numeric(38, 8) not null,
      last numeric(38, 8) not null,
      volume numeric(38, 8) not null,
      quote_volume numeric(38, 8) not null,
      trade_count bigint not null,
      recorded_at timestamptz not null default now(),
      primary key (symbol, close_time)
    )`.execute(db);
}

export const down = dropTables(
  'market_reference_tickers',
  'market_pairs',
  'market_candles',
  'market_imports',
);
