import { type Kysely, sql } from 'kysely';

/**
 * A migration's `down` that drops `tables` where they exist, in the order given (a table before those it
 * references).
 */
export const dropTables =
  (...tables: string[]) =>
  async (db: Kysely<any>): Promise<void> => {
    for (const table of tables) await sql`drop table if exists ${sql.table(table)}`.execute(db);
  };
