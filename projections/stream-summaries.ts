import { type Kysely, sql } from 'kysely';
import type { RecordedEvent, StreamDeletedData } from '../ports/event-store';
import { DELETIONS_STREAM } from '../ports/event-store';
import type { Projection } from './projection';

/** Row of the `stream_summaries` read model: one per live stream, for auditors browsing the log. */
export interface StreamSummariesTable {
  stream_id: string;
  /** The part before the first `-` (`wallet`, `agent`, ...). */
  category: string;
  event_count: number;
  last_revision: number;
  last_event_type: string;
  /** `hash` of the last event: the head of the stream's chain. */
  last_hash: string;
  first_occurred_at: string;
  last_occurred_at: string;
}

/**
 * `stream_summaries`: per stream its category, event count, last revision, last type and chain head. Rows of
 * deleted streams are removed when their `StreamDeleted` arrives. Deterministic (built from event data and
 * metadata only), so a rebuild compares equal row by row.
 */
export const streamSummariesProjection: Projection = {
  name: 'stream_summaries',
  version: 1,
  tables: ['stream_summaries'],
  async createTables(db, schema) {
    await db.schema
      .withSchema(schema)
      .createTable('stream_summaries')
      .addColumn('stream_id', 'text', (c) => c.primaryKey())
      .addColumn('category', 'text', (c) => c.notNull())
      .addColumn('event_count', 'integer', (c) => c.notNull())
      .addColumn('last_revision', 'integer', (c) => c.notNull())
      .addColumn('last_event_type', 'text', (c) => c.notNull())
      .addColumn('last_hash', 'text', (c) => c.notNull())
      .addColumn('first_occurred_at', 'text', (c) => c.notNull())
      .addColumn('last_occurred_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .withSchema(schema)
      .createIndex('stream_summaries_category')
      .on('stream_summaries')
      .column('category')
      .execute();
  },
  async apply(db: Kysely<{ stream_summaries: StreamSummariesTable }>, events: readonly RecordedEvent[]) {
    // Fold the batch per stream first: one upsert per stream instead of one per event.
    const folded = new Map<string, StreamSummariesTable>();
    for (const e of events) {
      if (e.streamId === DELETIONS_STREAM && e.type === 'StreamDeleted') {
        const { stream_id } = e.data as StreamDeletedData;
        folded.delete(stream_id);
        await db.deleteFrom('stream_summaries').where('stream_id', '=', stream_id).execute();
        continue;
      }
      const prev = folded.get(e.streamId);
      folded.set(e.streamId, {
        stream_id: e.streamId,
        category: e.streamId.split('-')[0] ?? e.streamId,
        event_count: (prev?.event_count ?? 0) + 1,
        last_revision: e.revision,
        last_event_type: e.type,
        last_hash: e.metadata.hash,
        first_occurred_at: prev?.first_occurred_at ?? e.metadata.occurred_at,
        last_occurred_at: e.metadata.occurred_at,
      });
    }
    if (folded.size === 0) return;
    await db
      .insertInto('stream_summaries')
      .values([...folded.values()])
      .onConflict((oc) =>
        oc.column('stream_id').doUpdateSet({
          event_count: sql`stream_summaries.event_count + excluded.event_count`,
          last_revision: sql`excluded.last_revision`,
          last_event_type: sql`excluded.last_event_type`,
          last_hash: sql`excluded.last_hash`,
          last_occurred_at: sql`excluded.last_occurred_at`,
        }),
      )
      .execute();
  },
};
