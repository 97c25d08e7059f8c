import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declareTables } from '../../projections/ddl';
import { lz4Available } from '../../projections/toast-compression';
import { createTestDatabase, type TestDatabase } from '../support/databases';

/**
 * Large values are compressed with lz4 where the server has it (migration 0012 for the log and the snapshots,
 * `projections/ddl.ts` for the read models' tables), and with the server's default (pglz) where it does not
 * (PGlite): the method each column is set to, and the method a stored 200 KB value was compressed with.
 */
describe('TOAST compression of large values', () => {
  let database: TestDatabase;
  let lz4: boolean;
  beforeAll(async () => {
    database = await createTestDatabase();
    lz4 = await lz4Available(database.db);
    if (!lz4) console.warn('toast-compression: this server has no lz4 (PGlite): the pglz default is checked');
  });
  afterAll(async () => {
    await database?.close();
  });

  /** `attcompression` of `table.column`: 'l' (lz4), 'p' (pglz) or '' (the server's default). */
  const methodOf = async (table: string, column: string): Promise<string> =>
    (
      await sql<{ m: string }>`
        select attcompression::text as m from pg_attribute
        where attrelid = ${table}::regclass and attname = ${column}`.execute(database.db)
    ).rows[0]!.m;

  /** A JSON text of ~200 KB (the shape of a batch's packed equity: numbers and runs). */
  const packed = JSON.stringify({
    equity_units: Array.from({ length: 30_000 }, (_, i) =>
      i % 7 === 0 ? '0*3' : String((i * 7919) % 100_003),
    ).join(','),
  });

  it('the log and the snapshots: lz4 where the server has it, else its default', async () => {
    for (const [table, column] of [
      ['events', 'data'],
      ['events', 'metadata'],
      ['snapshots', 'state'],
      ['snapshots', 'annex'],
      ['snapshot_history', 'state'],
    ] as const) {
      expect(await methodOf(table, column), `${table}.${column}`).toBe(lz4 ? 'l' : '');
    }
    await sql`
      insert into events (stream_id, revision, event_id, type, data, metadata)
      values ('toast-test', 0, gen_random_uuid(), 'Large', ${packed}::jsonb, '{}'::jsonb)`.execute(
      database.db,
    );
    // pg_column_compression: the method a value was stored with (null: stored uncompressed).
    const { rows } = await sql<{ method: string }>`
      select pg_column_compression(data) as method from events where stream_id = 'toast-test'`.execute(
      database.db,
    );
    expect(rows[0]!.method).toBe(lz4 ? 'lz4' : 'pglz');
  });

  it("a read model's text and JSON columns: lz4 where the server has it; other types untouched", async () => {
    await sql`create schema toast_test`.execute(database.db);
    const { createTables } = declareTables({
      large: {
        columns: { id: 'integer primary key', body: 'text not null', doc: 'jsonb', n: 'integer not null' },
      },
    });
    await createTables(database.db, 'toast_test');
    expect(await methodOf('toast_test.large', 'body')).toBe(lz4 ? 'l' : '');
    expect(await methodOf('toast_test.large', 'doc')).toBe(lz4 ? 'l' : '');
    expect(await methodOf('toast_test.large', 'n')).toBe('');
    await sql`insert into toast_test.large values (1, ${packed}, null, 1)`.execute(database.db);
    const { rows } = await sql<{ method: string }>`
      select pg_column_compression(body) as method from toast_test.large`.execute(database.db);
    expect(rows[0]!.method).toBe(lz4 ? 'lz4' : 'pglz');
  });
});
