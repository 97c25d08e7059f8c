import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { DatabaseHandle } from './database';

/**
 * Runs `fn` while no other process runs one under the same `name` (a PostgreSQL session advisory lock, held on a
 * connection of its own until `fn` settles; waits for it when another process holds it). For work whose side
 * effects span several streams, so the expected-revision check of one stream cannot serialise it (a live battle's
 * start resets every participant's wallet before it appends `BattleStarted`). PGlite serves one process, where the
 * callers' own in-process mutexes already serialise the work: `fn` just runs. Throws whatever `fn` throws.
 */
export const exclusively = async <T>(
  database: DatabaseHandle,
  name: string,
  fn: () => Promise<T>,
): Promise<T> => {
  if (database.kind === 'pglite') return fn();
  // The lock key: the first 64 bits of SHA-256 of the name, as the signed bigint PostgreSQL takes.
  const key = BigInt.asIntN(64, BigInt(`0x${createHash('sha256').update(name).digest('hex').slice(0, 16)}`));
  return database.db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${key})`.execute(conn);
    try {
      return await fn();
    } finally {
      await sql`select pg_advisory_unlock(${key})`.execute(conn).catch(() => {});
    }
  });
};
