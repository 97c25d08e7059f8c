import { type Kysely, sql } from 'kysely';
import type { RecordedEvent, StreamDeletedData } from '../ports/event-store';
import { DELETIONS_STREAM } from '../ports/event-store';
import { declareTables, type TableDefinitions } from './ddl';
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

/** The DDL of its read-model tables. */
const STREAM_SUMMARIES_TABLES: TableDefinitions = {
  stream_summaries: {
    columns: {
      stream_id: 'text primary key',
      category: 'text not null',
      event_count: 'integer not null',
      last_revision: 'integer not null',
      last_event_type: 'text not null',
      last_hash: 'text not null',
      first_occurred_at: 'text not null',
      last_occurred_at: 'text not null',
    },
    indexes: {
      stream_summaries_category: ['category'],
    },
  },
};

/**
 * `stream_summaries`: per stream its category, event count, last revision, last type and chain head. Rows of
 * deleted streams are removed when their `StreamDeleted` arrives. Deterministic (built from event data and
 * metadata only), so a rebuild compares equal row by row.
 */
export const streamSummariesProjection: Projection = {
  name: 'stream_summaries',
  version: 1,
  ...declareTables(STREAM_SUMMARIES_TABLES),
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
