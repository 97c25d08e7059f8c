import type { ColumnType, Generated } from 'kysely';
import type { BacktestTables } from './backtests';
import type { IdentityTables } from './identity-tables';
import type { StreamSummariesTable } from './stream-summaries';
import type { TradingTables } from './trading-tables';
import type { WebhookTables } from './webhooks';

/**
 * The read models as kysely sees them (STYLE: kysely, table types declared once), owned here because the
 * projections define them: `queries/`, `commands/` and `projections/` type their `db` with {@link ReadModels}, so
 * none of them imports the infrastructure's `Database` (`src/db/schema.ts`, which adds the event store's and the
 * market data's own tables). Read-model tables are views over the live projection generation
 * (`projections/generations.ts`); the projector writes to the generation's schema under the same names.
 */

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

/** The projections' bookkeeping tables and the stream summaries every capability reads. */
export interface ProjectionTables {
  stream_summaries: StreamSummariesTable;
  projections: ProjectionsTable;
  projection_generations: ProjectionGenerationsTable;
}

/** Every read model the application queries. */
export interface ReadModels
  extends ProjectionTables,
    IdentityTables,
    TradingTables,
    BacktestTables,
    WebhookTables {}
