import { type Kysely, sql } from 'kysely';

/**
 * The snapshot's annex (issue 20; `commands/snapshots.ts`, `SnapshotAnnex`): what a fold of the recorded events
 * (metadata included) gives beside the decider's state at the snapshot's revision — for a wallet, the latest
 * business time folded and each symbol's last fill, so `GET /account/portfolio?as_of=` can start from the snapshot
 * instead of event 0. Null in the rows written before: a load ignores such a row and rewrites it.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await sql`alter table snapshots add column if not exists annex text`.execute(db);
};

export const down = async (db: Kysely<any>): Promise<void> => {
  await sql`alter table snapshots drop column if exists annex`.execute(db);
};
