import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { KeyedMutex } from '../../commands/keyed-mutex';
import type { DatabaseHandle } from './database';

/** Sections of this process, per lock name: waiters of this process queue here, not on database connections. */
const local = new KeyedMutex();

/** The advisory lock key of a name: the first 64 bits of its SHA-256, as the signed bigint PostgreSQL takes. */
const advisoryKey = (name: string): bigint =>
  BigInt.asIntN(64, BigInt(`0x${createHash('sha256').update(name).digest('hex').slice(0, 16)}`));

/**
 * Runs `fn` while no other section of this or another process holds any of `names`. For work whose side effects
 * span several streams, so the expected-revision check of one stream cannot serialise it: a live battle's start
 * resets every participant's wallet before it appends `BattleStarted`, and an agent's deletion must not slip
 * between the two.
 *
 * The names are taken in sorted order (so two sections wanting overlapping sets cannot deadlock), each first in
 * this process (a FIFO per name), then — on PostgreSQL — as a session advisory lock held on a connection of its
 * own until `fn` settles. PGlite serves one process, where the in-process locks are all there is to take. A
 * section must not ask for another one inside it. Throws whatever `fn` throws; the locks are released either way.
 */
export const exclusively = async <T>(
  database: DatabaseHandle,
  names: string | readonly string[],
  fn: () => Promise<T>,
): Promise<T> => {
  const sorted = [...new Set(typeof names === 'string' ? [names] : names)].sort();
  const inDatabase = (): Promise<T> => {
    if (database.kind === 'pglite') return fn();
    return database.db.connection().execute(async (conn) => {
      const taken: bigint[] = [];
      try {
        for (const name of sorted) {
          const key = advisoryKey(name);
          await sql`select pg_advisory_lock(${key})`.execute(conn);
          taken.push(key);
        }
        return await fn();
      } finally {
        for (const key of taken.reverse())
          await sql`select pg_advisory_unlock(${key})`.execute(conn).catch(() => {});
      }
    });
  };
  const nest = (i: number): Promise<T> =>
    i === sorted.length ? inDatabase() : local.run(sorted[i]!, () => nest(i + 1));
  return nest(0);
};
