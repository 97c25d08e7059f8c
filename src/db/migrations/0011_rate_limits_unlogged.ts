import { type Kysely, sql } from 'kysely';

/**
 * The shared rate-limit counters (`rate_limits`, migration 0005) become an unlogged table: their rows and their key
 * are no longer written to the WAL. With every request of the benchmark counted in a row of its own, that row and
 * its key were ~230 of the ~6,700 WAL bytes of a market order (docs/benchmarks.md, "Issue 23, rows, indexes, WAL
 * and statements per order"), and the counts need no durability: they are already committed without waiting for
 * the flush (`src/rate-limits/pg-counters.ts`), and a count forgotten can only allow a caller more requests in the
 * current window, never refuse one. What changes: after a crash of the database server (not a clean restart) the
 * table starts empty, so every caller's window starts afresh, and a standby (streaming replica) has no rows, so a
 * failover does the same. Rewrites the table once (it holds at most an hour of windows: `PURGE_AFTER_MS`).
 *
 * A table in a publication (logical replication or change-data capture, `FOR ALL TABLES` included) cannot be made
 * unlogged: PostgreSQL refuses, and the venue would not start. Such a database keeps the table logged, as before
 * this migration (docs/operations.md). The change waits at most 10 s for the table's lock (it takes an ACCESS
 * EXCLUSIVE one while it rewrites the table), so a venue started beside a busy one fails clearly rather than
 * hanging; starting again retries it.
 *
 * Forward-only: `down` leaves the table as it is (a logged table with the same rows would change nothing that a
 * reader sees).
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await sql`set local lock_timeout = '10s'`.execute(db);
  await sql`
    do $$
    begin
      if not exists (
        select 1 from pg_publication_tables
        where schemaname = current_schema() and tablename = 'rate_limits'
      ) then
        alter table rate_limits set unlogged;
      end if;
    end
    $$`.execute(db);
};

export const down = async (): Promise<void> => {};
