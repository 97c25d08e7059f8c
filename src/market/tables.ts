import type { ColumnType, Generated } from 'kysely';

/**
 * Kysely types of the market-data tables (migration `0003_market_data`). `numeric` and `bigint` columns are
 * read as text (`::text` in the queries) so that `pg` and PGlite return the same exact strings.
 */
export interface MarketImportsTable {
  id: Generated<string>;
  path: string;
  checksum: string;
  kind: 'klines' | 'exchange_info' | 'ticker_24hr';
  symbol: string | null;
  interval: string | null;
  rows: number;
  imported_at: Generated<Date>;
}

export interface MarketCandlesTable {
  symbol: string;
  interval: string;
  open_time: ColumnType<string, string | number, never>;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
  quote_volume: string | null;
  trade_count: ColumnType<string | null, string | number | null, never>;
  source: string;
  import_id: string | null;
  recorded_at: Generated<Date>;
}

export interface MarketPairsTable {
  symbol: string;
  as_of: ColumnType<string, string | number, never>;
  source: string;
  base_asset: string;
  quote_asset: string;
  status: 'active' | 'inactive';
  min_qty: string;
  step_size: string;
  min_notional: string;
  tick_size: string;
  recorded_at: Generated<Date>;
}

export interface MarketReferenceTickersTable {
  symbol: string;
  close_time: ColumnType<string, string | number, never>;
  open_time: ColumnType<string, string | number, never>;
  open: string;
  high: string;
  low: string;
  last: string;
  volume: string;
  quote_volume: string;
  trade_count: ColumnType<string, string | number, never>;
  recorded_at: Generated<Date>;
}

/** The market-data tables, joined into the application's `Database`. */
export interface MarketTables {
  market_imports: MarketImportsTable;
  market_candles: MarketCandlesTable;
  market_pairs: MarketPairsTable;
  market_reference_tickers: MarketReferenceTickersTable;
}
