import { type Kysely, sql } from 'kysely';
import type { SnapshotStore, StoredSnapshot } from '../../ports/snapshot-store';
import type { Database, SnapshotsTable } from '../db/schema';

/** Rows read per page by {@link SnapshotStore.list}. */
const LIST_PAGE = 500;

/** Historical snapshots written per statement by {@link SnapshotStore.writeHistory}. */
const WRITE_HISTORY_ROWS = 100;

/**
 * The snapshot store on the `snapshots` table (migration 0007) of the PostgreSQL server or PGlite: the same
 * database as the log with `EVENT_STORE=postgres`, the read models' database beside EventStoreDB. A write keeps
 * the newer of two snapshots of one schema, and replaces a snapshot of another schema whatever its revision (one
 * row per stream: the storage cost is one state per stream). With a history entry, the same statement also keeps
 * the snapshot in `snapshot_history` (migration 0010) if its bucket has none yet: the first one written stays.
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

  async write(s, history) {
    // One statement (one round trip): the history row, if any, in a data-modifying CTE.
    const keep = history
      ? sql`with kept as (
          insert into snapshot_history (stream_id, schema, bucket, revision, event_hash, state, annex, at)
          values (${s.streamId}, ${s.schema}, ${history.bucket}, ${s.revision}, ${s.eventHash}, ${s.state},
                  ${s.annex ?? null}, ${history.at})
          on conflict do nothing)`
      : sql``;
    await sql`${keep}
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

  async writeHistory(offers) {
    for (let i = 0; i < offers.length; i += WRITE_HISTORY_ROWS) {
      await db
        .insertInto('snapshot_history')
        .values(
          offers.slice(i, i + WRITE_HISTORY_ROWS).map(({ snapshot: s, history }) => ({
            stream_id: s.streamId,
            schema: s.schema,
            bucket: String(history.bucket),
            revision: String(s.revision),
            event_hash: s.eventHash,
            state: s.state,
            annex: s.annex ?? null,
            at: String(history.at),
          })),
        )
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
  },

  async readHistory(streamId, schema, at) {
    // `at` never decreases with the revision (a latest time), so the newest row at or before it is the first of
    // the index (stream_id, schema, at, revision) read backwards from `at`.
    const row = await db
      .selectFrom('snapshot_history')
      .select(['stream_id', 'schema', 'revision', 'event_hash', 'state', 'annex'])
      .where('stream_id', '=', streamId)
      .where('schema', '=', schema)
      .where('at', '<=', String(at))
      .orderBy('at', 'desc')
      .orderBy('revision', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? toSnapshot(row) : undefined;
  },

  async history(streamId) {
    const rows = await db
      .selectFrom('snapshot_history')
      .select(['stream_id', 'schema', 'revision', 'event_hash', 'state', 'annex'])
      .where('stream_id', '=', streamId)
      .orderBy('revision')
      .orderBy('schema')
      .execute();
    return rows.map(toSnapshot);
  },
});

const toSnapshot = (r: Omit<SnapshotsTable, 'taken_at'>): StoredSnapshot => ({
  streamId: r.stream_id,
  schema: r.schema,
  revision: Number(r.revision),
  eventHash: r.event_hash,
  state: r.state,
  ...(r.annex === null ? {} : { annex: r.annex }),
});
