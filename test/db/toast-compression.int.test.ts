import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PREFER_LZ4 } from '../../src/db/toast-compression';
import { createTestDatabase, type TestDatabase } from '../support/databases';

/**
 * Large values are compressed with lz4 where the server has it (every pooled connection runs `PREFER_LZ4` first,
 * src/db/database.ts), on every table, without touching any table's definition; where the server has no lz4
 * (PGlite) the statement sets nothing and fails nothing.
 */
describe('TOAST compression of large values', () => {
  let database: TestDatabase;
  let lz4: boolean;
  beforeAll(async () => {
    database = await createTestDatabase();
    const { rows } = await sql<{ lz4: boolean }>`
      select 'lz4' = any(enumvals) as lz4 from pg_settings where name = 'default_toast_compression'`.execute(
      database.db,
    );
    lz4 = rows[0]?.lz4 === true;
  });
  afterAll(async () => {
    await database?.close();
  });

  /** A JSON text of ~200 KB (the shape of a batch's packed equity: numbers and runs). */
  const packed = JSON.stringify({
    equity_units: Array.from({ length: 30_000 }, (_, i) =>
      i % 7 === 0 ? '0*3' : String((i * 7919) % 100_003),
    ).join(','),
  });

  /** The method a value was stored with (`pg_column_compression`; null: stored uncompressed). */
  const storedWith = async (table: string, column: string, where: string) =>
    (
      await sql<{ method: string | null }>`
        select pg_column_compression(${sql.ref(column)}) as method from ${sql.table(table)}
        where ${sql.raw(where)}`.execute(database.db)
    ).rows[0]?.method;

  it('where the server has lz4, the log and any other table store large values with it', async (ctx) => {
    if (!lz4) {
      console.warn(
        'toast-compression: skipped, this server has no lz4 (PGlite, or PostgreSQL before 14 or built without it)',
      );
      ctx.skip();
    }
    const { rows } = await sql<{
      method: string;
    }>`select current_setting('default_toast_compression') as method`.execute(database.db);
    expect(rows[0]!.method).toBe('lz4');
    await sql`
      insert into events (stream_id, revision, event_id, type, data, metadata)
      values ('toast-test', 0, gen_random_uuid(), 'Large', ${packed}::jsonb, '{}'::jsonb)`.execute(
      database.db,
    );
    expect(await storedWith('events', 'data', "stream_id = 'toast-test'")).toBe('lz4');
    await sql`create table toast_test (id integer primary key, body text not null)`.execute(database.db);
    await sql`insert into toast_test values (1, ${packed})`.execute(database.db);
    expect(await storedWith('toast_test', 'body', 'id = 1')).toBe('lz4');
  });

  it('where the server has no lz4, the statement sets nothing and fails nothing', async () => {
    const { rows } = await sql.raw(PREFER_LZ4).execute(database.db);
    expect(rows.length).toBe(lz4 ? 1 : 0);
    const shown = await sql<{
      method: string;
    }>`select current_setting('default_toast_compression') as method`.execute(database.db);
    expect(shown.rows[0]!.method).toBe(lz4 ? 'lz4' : 'pglz');
  });
});
