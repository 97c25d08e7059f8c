import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate';
import { createRateLimiter } from '../../src/rate-limits/limiter';
import { PgRequestCounters } from '../../src/rate-limits/pg-counters';
import { createTestDatabase, type TestDatabase } from '../support/databases';

/**
 * The shared rate-limit counters (src/rate-limits/pg-counters.ts), on the database of the pass (PGlite, or a fresh
 * database on the PostgreSQL server): requests counted in one statement get the counts they would have had one
 * statement each, several limiters on one table (several processes) share the budget, a window ends; the table
 * is unlogged (migration 0011: its rows write no WAL), also on a database migrated before it.
 */
describe('rate-limit counters in the shared table', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.close();
  });

  it('counts requests that arrive together 1, 2, 3… per key, in submission order', async () => {
    const counters = new PgRequestCounters(database.db, 60_000);
    const keys = Array.from({ length: 300 }, (_, i) => `t1:${['a', 'b', 'c'][i % 3]}`);
    const counted = await Promise.all(keys.map((k) => counters.count(k)));
    for (const key of ['t1:a', 't1:b', 't1:c']) {
      const points = counted.filter((_, i) => keys[i] === key).map((c) => c.points);
      expect(points).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    }
    const expire = new Set(counted.map((c) => c.expire));
    expect(expire.size).toBeLessThanOrEqual(3);
    for (const e of expire) expect(e).toBeGreaterThan(Date.now() + 50_000);
    expect(await counters.used('t1:a')).toMatchObject({ points: 100 });
    expect(await counters.used('t1:none')).toBeUndefined();
  });

  it('shares one budget between limiters on the same table: the 101st order in a window is refused', async () => {
    const one = createRateLimiter({ store: 'postgres', db: database.db });
    const two = createRateLimiter({ store: 'postgres', db: database.db });
    expect(one.store).toBe('postgres');
    const decisions = await Promise.all(
      Array.from({ length: 101 }, (_, i) => (i % 2 ? one : two).consume('owner:t2', 'orders')),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(100);
    const remaining = decisions
      .filter((d) => d.allowed)
      .map((d) => d.remaining)
      .sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 100 }, (_, i) => i));
    const refused = decisions.find((d) => !d.allowed)!;
    expect(refused).toMatchObject({ remaining: 0, limit: 100 });
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(await two.usage('owner:t2', 'orders')).toEqual({ group: 'orders', used: 100, limit: 100 });
    // Other groups and other callers have budgets of their own.
    expect((await one.consume('owner:t2', 'general')).remaining).toBe(599);
    expect((await one.consume('owner:t2b', 'orders')).remaining).toBe(99);
  });

  it('starts a new window once the last one has ended', async () => {
    // A window of 1.5 s: two counts on a loaded machine (a PGlite statement can take hundreds of ms) still fall in it.
    const counters = new PgRequestCounters(database.db, 1_500);
    const first = await counters.count('t3:a');
    expect(first.points).toBe(1);
    expect((await counters.count('t3:a')).points).toBe(2);
    await new Promise((r) => setTimeout(r, Math.max(0, first.expire - Date.now()) + 50));
    expect(await counters.used('t3:a')).toBeUndefined();
    expect((await counters.count('t3:a')).points).toBe(1);
  });

  it('is an unlogged table, also once a database counting before migration 0011 is migrated', async () => {
    const persistence = async () =>
      (
        await sql<{
          p: string;
        }>`select relpersistence as p from pg_class where relname = 'rate_limits'`.execute(database.db)
      ).rows[0]?.p;
    expect(await persistence()).toBe('u');
    // The database as the code before 0011 left it: a logged table with a window open, 0011 not applied.
    await sql`alter table rate_limits set logged`.execute(database.db);
    await sql`delete from kysely_migration where name = '0011_rate_limits_unlogged'`.execute(database.db);
    expect(await persistence()).toBe('p');
    const counters = new PgRequestCounters(database.db, 60_000);
    expect((await counters.count('t4:a')).points).toBe(1);
    const applied = await migrateToLatest(database.db);
    expect(applied.map((m) => m.migrationName)).toEqual(['0011_rate_limits_unlogged']);
    expect(await persistence()).toBe('u');
    expect(await counters.used('t4:a')).toMatchObject({ points: 1 });
    expect((await counters.count('t4:a')).points).toBe(2);
  });

  it('stays logged, and the migration passes, where the table is in a publication (which refuses unlogged)', async () => {
    await sql`alter table rate_limits set logged`.execute(database.db);
    await sql`delete from kysely_migration where name = '0011_rate_limits_unlogged'`.execute(database.db);
    await sql`create publication rate_limits_cdc for table rate_limits`.execute(database.db);
    try {
      await expect(sql`alter table rate_limits set unlogged`.execute(database.db)).rejects.toThrow(
        /publication/,
      );
      const applied = await migrateToLatest(database.db);
      expect(applied.map((m) => m.migrationName)).toEqual(['0011_rate_limits_unlogged']);
      const counters = new PgRequestCounters(database.db, 60_000);
      expect((await counters.count('t5:a')).points).toBe(1);
    } finally {
      await sql`drop publication rate_limits_cdc`.execute(database.db);
    }
  });
});
