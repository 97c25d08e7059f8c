import type { ColumnType, Generated } from 'kysely';
import type { BacktestTables } from '../../projections/backtests';
import type { StreamSummariesTable } from '../../projections/stream-summaries';
import type { MarketTables } from '../market/tables';
import type { IdentityTables } from './identity-tables';
import type { TradingTables } from './trading-tables';

/**
 * Table types for kysely, declared once (STYLE: kysely). Each capability adds its tables as its own interface
 * and joins it into {@link Database}. Read-model tables are views over the live projection generation
 * (see `projections/runner.ts`); the projector writes to the generation's schema with the same table names.
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

/** `projections`: one row per projection: which generation serves reads. */
export interface ProjectionsTable {
  name: string;
  live_generation: number | null;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** `projection_generations`: each built or building generation of a projection with its checkpoint. */
export interface ProjectionGenerationsTable {
  name: string;
  generation: number;
  version: number;
  schema_name: string;
  status: 'building' | 'live' | 'retired';
  checkpoint_commit: string;
  checkpoint_prepare: string;
  events_processed: string;
  created_at: Generated<Date>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface CoreTables {
  stream_summaries: StreamSummariesTable;
  events: EventsTable;
  streams: StreamsTable;
  projections: ProjectionsTable;
  projection_generations: ProjectionGenerationsTable;
}

/** Every table and read-model view the application queries. */
export interface Database extends CoreTables, IdentityTables, MarketTables, TradingTables, BacktestTables {}
