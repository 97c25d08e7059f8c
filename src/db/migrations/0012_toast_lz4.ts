import { type Kysely, sql } from 'kysely';
import { lz4Available } from '../../../projections/toast-compression';

/** The tables of the migrations' schema whose text or JSON columns hold large values, and those columns. */
const LARGE_VALUES: Readonly<Record<string, readonly string[]>> = {
  events: ['data', 'metadata'],
  snapshots: ['state', 'annex'],
  snapshot_history: ['state', 'annex'],
};

/**
 * Where the server has lz4 (`projections/toast-compression.ts`), the log's and the snapshots' large values are
 * compressed with it from now on instead of pglz: a backtest batch appends a ~1 MB `BacktestStepped`, whose pglz
 * compression was most of the database's CPU beside four whole-year backtests (docs/benchmarks.md, "Issue 24, the
 * database's share of four backtests: TOAST compression"). Values stored before keep their pglz form and read as
 * before; no table is rewritten. The read models' tables get the same as their generations are created
 * (`projections/ddl.ts`). PGlite (pglz only) is left as it is. Waits at most 10 s for each table's lock.
 *
 * `down` sets the columns back to the server's default method.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  if (!(await lz4Available(db))) return;
  await sql`set local lock_timeout = '10s'`.execute(db);
  for (const [table, columns] of Object.entries(LARGE_VALUES)) {
    const set = columns.map((c) => sql`alter column ${sql.ref(c)} set compression lz4`);
    await sql`alter table ${sql.table(table)} ${sql.join(set)}`.execute(db);
  }
};

export const down = async (db: Kysely<any>): Promise<void> => {
  if (!(await lz4Available(db))) return;
  for (const [table, columns] of Object.entries(LARGE_VALUES)) {
    const set = columns.map((c) => sql`alter column ${sql.ref(c)} set compression default`);
    await sql`alter table ${sql.table(table)} ${sql.join(set)}`.execute(db);
  }
};
