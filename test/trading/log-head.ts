import { type Kysely, sql } from 'kysely';
import { expect } from 'vitest';
import { type LogPosition, START } from '../../ports/event-store';
import type { Database } from '../../src/db/schema';
import type { TestApp } from '../accounts/support';

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

/**
 * Waits for the fills the matching engine started, then for the read models to include everything committed so
 * far (the trading and analytics tests read what the engine did through the API).
 */
export const settleTrading = async (t: TestApp): Promise<void> => {
  await t.app.services.trading!.engine!.idle();
  const head = await committedHead(t.database.all);
  expect(await t.runtime.services.projections.waitFor(head, 15_000)).toBe(true);
};
