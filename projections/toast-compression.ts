import { type Kysely, sql } from 'kysely';

/**
 * Whether the database server compresses out-of-line (TOAST) values with lz4: PostgreSQL 14 or later built with
 * it (Debian's and the official images are), not PGlite (pglz only). A value above ~2 KB is compressed as it is
 * stored — a backtest batch's `BacktestStepped` (~1 MB of packed equity), its `backtest_equity` row, a session's
 * results, a wallet's snapshot — and pglz spends ~39 ms of the server's CPU per MB on it where lz4 spends ~2 ms,
 * and lz4 reads back in ~2 ms per MB where pglz takes ~5 ms (docs/benchmarks.md, "Issue 24, the database's share of
 * four backtests: TOAST compression"). Resolves to false where the server does not say (no `pg_settings` row).
 */
export const lz4Available = async (db: Kysely<any>): Promise<boolean> => {
  const { rows } = await sql<{ lz4: boolean }>`
    select 'lz4' = any(enumvals) as lz4 from pg_settings where name = 'default_toast_compression'`.execute(
    db,
  );
  return rows[0]?.lz4 === true;
};

/** The SQL types whose large values PostgreSQL moves out of line and compresses. */
const TOASTED = /^(text|jsonb|json|bytea)$/i;

/**
 * `type` with lz4 compression (`text compression lz4`) when the server has it and the type is one whose large
 * values are compressed; otherwise `type` as it is. Pure.
 */
export const withCompression = (type: string, lz4: boolean): string =>
  lz4 && TOASTED.test(type) ? `${type} compression lz4` : type;
