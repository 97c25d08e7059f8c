import type { Logger } from 'pino';
import { BACKTEST_STEPPED_ELIDED } from '../domain/backtest/events';
import type { Projection } from '../projections/projection';
import { allProjections } from '../projections/registry';
import { ProjectionRunner } from '../projections/runner';
import { installAnalytics } from './analytics/install';
import { installIdentity } from './auth/install';
import { loadServerKeys } from './auth/server-keys';
import { installBacktest } from './backtest/install';
import { createMetricsPool, withResultsOffThread } from './backtest/metrics-pool';
import { installBattle } from './battle/install';
import type { Config } from './config';
import { isConnectionError } from './db/connection-errors';
import { type DatabaseHandle, openDatabase } from './db/database';
import { exclusively } from './db/exclusive';
import { MIGRATION_LOCK, migrateToLatest } from './db/migrate';
import { createEsdbEventStore } from './eventstore/esdb';
import { createPostgresEventStore } from './eventstore/postgres';
import { createSqlSnapshotStore } from './eventstore/snapshots';
import { createMarketServices } from './market/services';
import { collectServiceMetrics, createMetrics } from './operations/metrics';
import { createRateLimiter } from './rate-limits/limiter';
import type { Services } from './services';
import { installTrading } from './trading/install';
import { installWebhooks } from './webhooks/install';

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
  /** Start market data (default true): loads pairs and candles, starts the `MARKET_SOURCE` feed. */
  market?: boolean;
  /** Run the matching engine (default: when projections run; it needs market data). */
  matching?: boolean;
  /**
   * Record the marks of every minute for the equity snapshots (default false; `serve` and `worker` turn it on):
   * off in tests and one-off CLI runtimes, whose logs should hold only what they do.
   */
  equitySnapshots?: boolean;
  /**
   * Run the webhook delivery worker (default false; `serve` with projections and `worker` turn it on): tests and
   * one-off CLI runtimes must not send deliveries. The webhook commands are installed either way.
   */
  webhooks?: boolean;
  /** The `role` label of this process's metrics (default: `serve`, or `api` without projections). */
  role?: string;
  /**
   * Hand the process's subscriptions `BacktestStepped` without its packed equity (`BACKTEST_STEPPED_ELIDED`; default
   * true): the venue's subscribers (projections, matching engine, webhooks) read none of it but the `backtests`
   * projection, which copies it from the stored event. Off for a runtime whose subscriptions show events
   * (`events tail --follow`).
   */
  elideSubscriptions?: boolean;
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
  const serverKeys = loadServerKeys(config, logger);
  const database = options.database ?? (await openDatabase(config));
  // Everything started so far, stopped in reverse order on close or when a later step fails.
  const stops: (() => Promise<void>)[] = [];
  if (!options.database) stops.push(() => database.close());
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse())
      await stop().catch((e) => logger.error({ err: e }, 'stop failed'));
  };
  try {
    // Several processes starting on a fresh database migrate one at a time (issue 16, item 3).
    const applied = await exclusively(database, MIGRATION_LOCK, () => migrateToLatest(database.db));
    if (applied.length) logger.info({ migrations: applied.map((m) => m.migrationName) }, 'database migrated');
    const metrics = createMetrics(options.role ?? (config.PROJECTIONS ? 'serve' : 'api'));
    const eventStore =
      config.EVENT_STORE === 'esdb'
        ? createEsdbEventStore(config.ESDB_URL!)
        : createPostgresEventStore(database, {
            observeBatch: (appends, seconds, ok) => metrics.observeAppendBatch(appends, seconds, ok),
            ...(options.elideSubscriptions === false ? {} : { elide: [BACKTEST_STEPPED_ELIDED] }),
          });
    stops.push(() => eventStore.close());
    // With backtest threads, a session's results are computed on a worker thread too (issue 24, item 4).
    const metricsPool = config.BACKTEST_THREADS > 0 ? createMetricsPool(logger) : undefined;
    if (metricsPool) stops.push(() => metricsPool.close());
    const projectionList =
      options.projections ??
      (metricsPool ? withResultsOffThread(allProjections, metricsPool.performance) : allProjections);
    const projections = new ProjectionRunner(eventStore, database.db, projectionList, {
      logger,
      unwaitedFoldDelayMs: config.READ_MODEL_LAZY_MS,
      concurrentFolds: database.kind === 'postgres' ? config.READ_MODEL_FOLDS : 1,
      isTransient: isConnectionError,
      waitForDatabase: (ms) => database.availability.waitUntilAvailable(ms),
    });
    stops.push(() => projections.stop());
    if (options.runProjections ?? config.PROJECTIONS) await projections.start();
    const services: Services = {
      config,
      logger,
      database,
      eventStore,
      snapshots: createSqlSnapshotStore(database.all),
      projections,
      startedAt: Date.now(),
      healthChecks: [],
      leaderships: [],
      metrics,
    };
    installIdentity(services, serverKeys);
    // Before the database closes: no shared credential round of open sockets runs against it.
    stops.push(async () => services.credentialWatcher?.close());
    services.rateLimits = createRateLimiter({
      store:
        config.RATE_LIMIT_STORE === 'memory' ||
        (config.RATE_LIMIT_STORE === 'auto' && database.kind !== 'postgres')
          ? 'memory'
          : 'postgres',
      db: database.db,
      logger,
    });
    if (options.market ?? true) {
      const market = createMarketServices(config, { db: database.all, logger });
      stops.push(() => market.stop());
      await market.start();
      services.market = market;
      services.healthChecks.push(market.healthCheck);
    }
    const trading = installTrading(services, {
      matching: options.matching ?? options.runProjections ?? config.PROJECTIONS,
    });
    stops.push(() => trading.stop());
    await trading.start();
    const runsProjections = options.runProjections ?? config.PROJECTIONS;
    const backtests = installBacktest(services, {
      // Results are computed where the projections run: warm the thread only there (and only the runtime's own).
      ...(metricsPool && !options.projections && runsProjections
        ? { warmResults: () => metricsPool.warm() }
        : {}),
    });
    stops.push(() => backtests.stop());
    const battles = installBattle(services, {
      snapshots: options.matching ?? options.runProjections ?? config.PROJECTIONS,
    });
    stops.push(() => battles.stop());
    await battles.start();
    const analytics = installAnalytics(services, { record: options.equitySnapshots ?? false });
    collectServiceMetrics(metrics, services);
    stops.push(() => analytics.stop());
    await analytics.start();
    const webhooks = installWebhooks(services, { deliver: options.webhooks ?? false });
    stops.push(() => webhooks.stop());
    await webhooks.start();
    let closed = false;
    return {
      services,
      async close() {
        if (closed) return;
        closed = true;
        await stopAll();
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
};
