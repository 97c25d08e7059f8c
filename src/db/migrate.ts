import { type Kysely, type Migration, type MigrationResult, Migrator } from 'kysely';
import * as m0001 from './migrations/0001_event_store';
import * as m0002 from './migrations/0002_projections';
import * as m0003market from './migrations/0003_market_data';
import * as m0004 from './migrations/0004_append_batch';
import * as m0005rate from './migrations/0005_rate_limits';
import * as m0006snapshots from './migrations/0006_snapshots';
import * as m0007webhooks from './migrations/0007_webhooks';
import * as m0008idempotency from './migrations/0008_idempotency_keys';
import * as m0009annex from './migrations/0009_snapshot_annex';
import * as m0010history from './migrations/0010_snapshot_history';
import * as m0011unlogged from './migrations/0011_rate_limits_unlogged';

/**
 * Ordered migrations (STYLE: kysely's `Migrator`). A static list rather than a folder scan so the same code
 * runs under tsx, vitest and a bundle. Capabilities append theirs here.
 */
export const migrations: Record<string, Migration> = {
  '0001_event_store': m0001,
  '0002_projections': m0002,
  '0003_market_data': m0003market,
  '0004_append_batch': m0004,
  '0005_rate_limits': m0005rate,
  '0006_snapshots': m0006snapshots,
  '0007_webhooks': m0007webhooks,
  '0008_idempotency_keys': m0008idempotency,
  '0009_snapshot_annex': m0009annex,
  '0010_snapshot_history': m0010history,
  '0011_rate_limits_unlogged': m0011unlogged,
};

/** The `exclusively` lock name migrations run under, so processes starting together migrate one at a time. */
export const MIGRATION_LOCK = 'ptv:migrations';

/**
 * Brings the schema to the latest migration. Resolves to the migrations applied in this call; throws the
 * migrator's error (nothing half-applied: each migration runs in its own transaction).
 */
export const migrateToLatest = async (db: Kysely<any>): Promise<MigrationResult[]> => {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    // Capabilities add migrations independently; one added later under a lower name still applies.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success');
};
