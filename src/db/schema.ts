import type { Generated } from 'kysely';
import type { ReadModels } from '../../projections/read-models';
import type { MarketTables } from '../market/tables';

/**
 * Table types for kysely, declared once (STYLE: kysely). The read models' types are owned by the projections
 * (`projections/read-models.ts`); this adds the tables of the infrastructure: the PostgreSQL event store's log
 * and stream heads, and the market data store (`src/market/tables.ts`).
 */

/** `events`: the log of the PostgreSQL event store (ARCHITECTURE §5). */
export interface EventsTable {
  global_position: Generated<string>;
  transaction_id: Generated<string>;
  stream_id: string;
  revision: string;
  event_id: string;
  type: string;
  data: unknown;
  metadata: unknown;
  recorded_at: Generated<Date>;
}

/** `streams`: one row per live stream: its revision and the head of its hash chain. */
export interface StreamsTable {
  stream_id: string;
  revision: string;
  last_hash: string;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** `snapshots`: the newest snapshot of a stream's state (`ports/snapshot-store.ts`, migration 0007). */
export interface SnapshotsTable {
  stream_id: string;
  schema: string;
  revision: string;
  event_hash: string;
  state: string;
  /** The fold beside the state (migration 0009; `SnapshotAnnex`), null in rows written before it. */
  annex: string | null;
  taken_at: Generated<Date>;
}

/** `snapshot_history`: the sparse history of older snapshots of a stream (migration 0010). */
export interface SnapshotHistoryTable {
  stream_id: string;
  schema: string;
  bucket: string;
  revision: string;
  event_hash: string;
  state: string;
  annex: string | null;
  /** The latest business time folded (epoch ms). */
  at: string;
  taken_at: Generated<Date>;
}

/** The PostgreSQL event store's own tables. */
export interface EventStoreTables {
  events: EventsTable;
  streams: StreamsTable;
  snapshots: SnapshotsTable;
  snapshot_history: SnapshotHistoryTable;
}

/** Every table and read-model view of the database. */
export interface Database extends ReadModels, EventStoreTables, MarketTables {}
