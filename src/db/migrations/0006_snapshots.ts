import { type Kysely, sql } from 'kysely';
import { dropTables } from './drop-tables';

/**
 * Aggregate snapshots (docs/architecture.md, "Snapshots"; `ports/snapshot-store.ts`): one row per stream, the
 * newest snapshot of its folded state. A cache beside the log, never a source of truth: `state` is text (not
 * `jsonb`, which would reorder keys), `schema` names the state's version, `event_hash` the last event folded.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await sql`create table if not exists snapshots (
    stream_id text primary key,
    schema text not null,
    revision bigint not null,
    event_hash text not null,
    state text not null,
    taken_at timestamptz not null default now()
  )`.execute(db);
};

export const down = dropTables('snapshots');
