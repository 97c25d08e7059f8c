import { type Kysely, sql } from 'kysely';
import type { Database } from '../../src/db/schema';
import { type LogPosition, START } from '../../src/eventstore/port';

/**
 * The position of the newest committed event of the PostgreSQL log, including events still above the
 * visibility horizon (`headPosition()` stops below it while any older transaction is open). Waiting for this
 * position means waiting for every event committed so far.
 */
export const committedHead = async (db: Kysely<Database>): Promise<LogPosition> => {
  const { rows } = await sql<{ transaction_id: string; global_position: string }>`
    select transaction_id::text as transaction_id, global_position::text as global_position from events
    order by transaction_id desc, global_position desc limit 1`.execute(db);
  const r = rows[0];
  return r ? { commit: BigInt(r.transaction_id), prepare: BigInt(r.global_position) } : START;
};
