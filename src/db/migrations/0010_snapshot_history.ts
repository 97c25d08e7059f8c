import { type Kysely, sql } from 'kysely';
import { dropTables } from './drop-tables';

/**
 * The sparse history of older snapshots (issue 20; `ports/snapshot-store.ts`, `SnapshotHistoryEntry`): beside the
 * newest snapshot of a stream (`snapshots`), the first one written in each bucket of 10 × `SNAPSHOT_EVERY`
 * events is kept for good, so `GET /account/portfolio?as_of=` at any time folds from the newest one at or before
 * it instead of event 0. `at` is the snapshot's latest business time folded (epoch ms); the index finds the
 * newest row of a stream and schema at or before a time in one lookup. A cache like `snapshots`: rows of another
 * schema are ignored and never rewritten.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await sql`create table if not exists snapshot_history (
    stream_id text not null,
    schema text not null,
    bucket bigint not null,
    revision bigint not null,
    event_hash text not null,
    state text not null,
    annex text,
    at bigint not null,
    taken_at timestamptz not null default now(),
    primary key (stream_id, schema, bucket)
  )`.execute(db);
  await sql`create index if not exists snapshot_history_at
    on snapshot_history (stream_id, schema, at, revision)`.execute(db);
};

export const down = dropTables('snapshot_history');
