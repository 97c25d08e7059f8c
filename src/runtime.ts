import type { Logger } from 'pino';
import type { Projection } from '../projections/projection';
import { allProjections } from '../projections/registry';
import { ProjectionRunner } from '../projections/runner';
import type { Config } from './config';
import { type DatabaseHandle, openDatabase } from './db/database';
import { migrateToLatest } from './db/migrate';
import { createEsdbEventStore } from './eventstore/esdb';
import type { EventStore } from './eventstore/port';
import { createPostgresEventStore } from './eventstore/postgres';
import type { Services } from './services';

/** A started runtime: the services plus how to stop them in order. */
export interface Runtime {
  services: Services;
  /** Stops projections, closes the event store and the database (idempotent). */
  close(): Promise<void>;
}

/** Options of {@link createRuntime}. */
export interface RuntimeOptions {
  /** Use this database instead of opening the configured one (tests). */
  database?: DatabaseHandle;
  /** Projections to run (default: the registry). */
  projections?: Projection[];
  /** Start the projection loops (default: `config.PROJECTIONS`). */
  runProjections?: boolean;
}

/**
 * Composition root (ARCHITECTURE §3): opens the database (PGlite in `DATA_DIR` unless `DATABASE_URL`), migrates
 * it, opens the event store (`EVENT_STORE`), and starts the projection runner. Throws when storage is
 * unreachable; nothing is left open then.
 */
export const createRuntime = async (
  config: Config,
  logger: Logger,
  options: RuntimeOptions = {},
): Promise<Runtime> => {
  const database = options.database ?? (await openDatabase(config));
  let eventStore: EventStore | undefined;
  let projections: ProjectionRunner | undefined;
  try {
    const applied = await migrateToLatest(database.db);
    if (applied.length) logger.info({ migrations: applied.map((m) => m.migrationName) }, 'database migrated');
    eventStore =
      config.EVENT_STORE === 'esdb'
        ? createEsdbEventStore(config.ESDB_URL!)
        : createPostgresEventStore(database);
    projections = new ProjectionRunner(eventStore, database.db, options.projections ?? allProjections, {
      logger,
    });
    if (options.runProjections ?? config.PROJECTIONS) await projections.start();
  } catch (error) {
    await projections?.stop().catch(() => {});
    await eventStore?.close().catch(() => {});
    if (!options.database) await database.close().catch(() => {});
    throw error;
  }
  const services: Services = {
    config,
    logger,
    database,
    eventStore,
    projections,
    startedAt: Date.now(),
    healthChecks: [],
  };
  let closed = false;
  return {
    services,
    async close() {
      if (closed) return;
      closed = true;
      await services.projections.stop();
      await services.eventStore.close();
      if (!options.database) await database.close();
    },
  };
};
