import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { COPY_TEXT, copyTextOf } from '../../projections/copy-text';
import { inlineParameters } from '../../src/db/copy-text';
import type { TestDatabase } from '../support/databases';
import { eachTestDatabase } from '../support/stores';

/**
 * Issue 24: a statement marked `COPY_TEXT` answers its rows as bytes — on a server as `COPY … TO STDOUT`'s text
 * received as the protocol's `CopyData` (no string of them in the process), on PGlite as its rows written as the
 * same text — inside the caller's transaction, so it sees rows the transaction wrote and has not committed (the
 * `backtests` projection reads a session's equity rows so at its end, in the fold's transaction).
 */
describe.each(await eachTestDatabase())('copy-text statements on %s', (name, open, skip) => {
  const withDb = async (body: (db: TestDatabase) => Promise<void>) => {
    const db = await open();
    try {
      await body(db);
    } finally {
      await db.close();
    }
  };

  it.skipIf(skip)(
    "answer the transaction's rows as COPY text, escaped as COPY escapes them",
    () =>
      withDb(async (db) => {
        const long = '1,'.repeat(1_000_000).slice(0, -1);
        const { text, raw } = await db.db.transaction().execute(async (trx) => {
          await sql`create temporary table h_copy (n integer, s text) on commit drop`.execute(trx);
          await sql`insert into h_copy values (1, ${'a\tb\\c\nd\re\bf\fg\vh'}), (2, null), (-3, ${"O'Brien"}),
            (4, ${long}), (5, 'x')`.execute(trx);
          const { rows } = await sql<Record<string, unknown>>`${sql.raw(COPY_TEXT)}
            select n, s from h_copy where n <> ${5} and s is distinct from ${'nothing'} order by n`.execute(
            trx,
          );
          return {
            text: copyTextOf(rows)
              .map((part) => new TextDecoder().decode(part))
              .join(''),
            raw: rows,
          };
        });
        expect(text).toBe(`-3\tO'Brien\n1\ta\\tb\\\\c\\nd\\re\\bf\\fg\\vh\n2\t\\N\n4\t${long}\n`);
        if (name === 'PostgreSQL') {
          // The server's own COPY bytes, a part per row, each an array that owns its buffer (transferable whole).
          expect(raw.length).toBe(1);
          const parts = (raw[0] as { copy_text: Uint8Array[] }).copy_text;
          expect(parts.length).toBe(4);
          for (const part of parts) {
            expect(part).toBeInstanceOf(Uint8Array);
            expect(part.byteOffset).toBe(0);
            expect(part.buffer.byteLength).toBe(part.byteLength);
          }
        } else expect(raw.length).toBe(4);
      }),
    60_000,
  );

  it.skipIf(skip)(
    'fail mid-stream with the server error on one connection, which then answers the next statement',
    () =>
      withDb(async (db) => {
        await db.db.connection().execute(async (conn) => {
          // Division by zero at row 50,000: after the server has sent rows of the COPY.
          await expect(
            sql`${sql.raw(COPY_TEXT)} select 1 / (n - ${50_000}) from generate_series(1, 100000) n`.execute(
              conn,
            ),
          ).rejects.toThrow(/division by zero/);
          const { rows } = await sql<{ n: number }>`select 1 as n`.execute(conn);
          expect(rows).toEqual([{ n: 1 }]);
          // A negative value after a minus, and a last line that is a comment: the wrapping survives both.
          const answer = await sql<
            Record<string, unknown>
          >`${sql.raw(COPY_TEXT)} select 10 - ${-3} as n -- last line`.execute(conn);
          expect(new TextDecoder().decode(Buffer.concat(copyTextOf(answer.rows)))).toBe('13\n');
        });
      }),
    60_000,
  );

  it.skipIf(skip)(
    'reject with the server error, the connection usable after',
    () =>
      withDb(async (db) => {
        await expect(
          sql`${sql.raw(COPY_TEXT)} select nothing from h_no_such_table where x = ${1}`.execute(db.db),
        ).rejects.toThrow(/h_no_such_table/);
        const { rows } = await sql<{ n: number }>`select 1 as n`.execute(db.db);
        expect(rows).toEqual([{ n: 1 }]);
        const empty = await sql<Record<string, unknown>>`${sql.raw(COPY_TEXT)} select 1 where false`.execute(
          db.db,
        );
        expect(copyTextOf(empty.rows).flatMap((part) => [...part])).toEqual([]);
      }),
    60_000,
  );
});

describe('inlineParameters', () => {
  it('writes strings as quoted literals, numbers and null as they are, and refuses the rest', () => {
    expect(
      inlineParameters('select $1, $2, $3, $10', ["it's", 2.5, null, 'a', 'b', 'c', 'd', 'e', 'f', 'j']),
    ).toBe("select 'it''s', (2.5), NULL, 'j'");
    expect(inlineParameters('select 10-$1', [-3])).toBe('select 10-(-3)');
    expect(inlineParameters('select $1', ['back\\slash'])).toBe("select  E'back\\\\slash'");
    expect(() => inlineParameters('select $2', ['x'])).toThrow('no value for $2');
    expect(() => inlineParameters('select $1', [true])).toThrow(TypeError);
    expect(() => inlineParameters('select $1', [Number.NaN])).toThrow(TypeError);
  });
});
