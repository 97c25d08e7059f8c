/**
 * The statement every pooled PostgreSQL connection runs first: the session compresses large values (TOAST, above
 * ~2 KB) with lz4 where the server has it — PostgreSQL 14 or later built with lz4, as Debian's and the official
 * images are — and keeps the server's default (pglz) elsewhere, without an error (no row, nothing set). A backtest
 * batch appends a ~1 MB `BacktestStepped` and writes the same packed equity into its `backtest_equity` row; pglz
 * spent ~39 ms of the server's CPU per MB on them where lz4 spends ~2 ms, about half of PostgreSQL's CPU beside four
 * whole-year backtests (docs/benchmarks.md, "Issue 24, the database's share of four backtests"). A setting of the
 * session, not of the columns: no table is locked or rewritten, every table (the log, the snapshots, every
 * read-model generation, old or new) gets it, and values stored before keep their method and read as before.
 */
export const PREFER_LZ4 =
  "select set_config('default_toast_compression', 'lz4', false) from pg_settings " +
  "where name = 'default_toast_compression' and 'lz4' = any(enumvals)";
