import { type Kysely, sql } from 'kysely';
import type { SnapshotStore, StoredSnapshot } from '../../ports/snapshot-store';
import type { Database } from '../db/schema';

/** Rows read per page by {@link SnapshotStore.list}. */
const LIST_PAGE = 500;

/**
 * The snapshot store on the `snapshots` table (migration 0007) of the PostgreSQL server or PGlite: the same
 * database as the log with `EVENT_STORE=postgres`, the read models' database beside EventStoreDB. A write keeps
 * the newer of two snapshots of one schema, and replaces a snapshot of another schema whatever its revision (one
 * row per stream: the storage cost is one state per stream).
 */
export const createSqlSnapshotStore = (db: Kysely<Database>): SnapshotStore => ({
  async read(streamId) {
    const row = await db
      .selectFrom('snapshots')
      .select(['stream_id', 'schema', 'revision', 'event_hash', 'state', 'annex'])
      .where('stream_id', '=', streamId)
      .executeTakeFirst();
    return row ? toSnapshot(row) : undefined;
  },

  async write(s) {
    await sql`
      insert into snapshots (stream_id, schema, revision, event_hash, state, annex)
      values (${s.streamId}, ${s.schema}, ${s.revision}, ${s.eventHash}, ${s.state}, ${s.annex ?? null})
      on conflict (stream_id) do update
        set schema = excluded.schema, revision = excluded.revision, event_hash = excluded.event_hash,
            state = excluded.state, annex = excluded.annex, taken_at = now()
        where snapshots.schema <> excluded.schema or snapshots.revision < excluded.revision
          or (snapshots.revision = excluded.revision and snapshots.annex is null
              and excluded.annex is not null)`.execute(db);
  },

  async *list(prefix) {
    let after = '';
    for (;;) {
      // Keyset pages: `stream_id > after` on the primary key, whatever the table's size.
      const rows = await db
        .selectFrom('snapshots')
        .select(['stream_id', 'schema', 'revision', 'event_hash', 'state', 'annex'])
        .where('stream_id', '>', after)
        .where('stream_id', 'like', `${prefix.replace(/[\\%_]/g, '\\$&')}%`)
        .orderBy('stream_id')
        .limit(LIST_PAGE)
        .execute();
      for (const r of rows) yield toSnapshot(r);
      if (rows.length < LIST_PAGE) return;
      after = rows[rows.length - 1]!.stream_id;
    }
  },
});

const toSnapshot = (r: {
  stream_id: string;
  schema: string;
  revision: string;
  event_hash: string;
  state: string;
  annex: string | null;
}): StoredSnapshot => ({
  streamId: r.stream_id,
  schema: r.schema,
  revision: Number(r.revision),
  eventHash: r.event_hash,
  state: r.state,
  ...(r.annex === null ? {} : { annex: r.annex }),
});
