import { createLeadership } from '../matching/leader';
import { installed, type Services } from '../services';
import { createSnapshotter, type Snapshotter } from './snapshotter';

/** The advisory lock key of the equity snapshotter (one recording process at a time; cf. the matching engine's). */
export const SNAPSHOTTER_LOCK_KEY = 7_208_114_305_551_002n;

declare module '../services' {
  interface Services {
    /** Analytics: the equity snapshotter and the analytics clock (`src/analytics`, docs/analytics.md). */
    analytics?: AnalyticsServices;
  }
}

/** The analytics capability's member of {@link Services}. */
export interface AnalyticsServices {
  /** Records the marks equity snapshots are valued at; present when the runtime has market data. */
  snapshotter?: Snapshotter;
  /** The clock the analytics periods end at (ms; the wall clock; tests may replace it). */
  now: () => number;
  /** Starts recording marks every minute (when enabled). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Wires analytics into the runtime (spec "Analytics endpoints", docs/analytics.md): the snapshotter over the
 * event store and the market's price cache, leader-elected on PostgreSQL. With `record`, it records every minute
 * once started; without it (the default of tests and one-off CLI runtimes) it records only when asked.
 */
export const installAnalytics = (services: Services, options: { record: boolean }): AnalyticsServices => {
  const market = services.market;
  const leadership = createLeadership(services.database, {
    name: 'equity_snapshots',
    key: SNAPSHOTTER_LOCK_KEY,
    logger: services.logger,
  });
  const snapshotter = market
    ? createSnapshotter({
        store: services.eventStore,
        db: services.database.db,
        price: (symbol) => market.feed.prices.get(symbol),
        leadership,
        logger: services.logger,
      })
    : undefined;
  const analytics: AnalyticsServices = {
    ...(snapshotter ? { snapshotter } : {}),
    now: Date.now,
    start: async () => {
      if (options.record && snapshotter) {
        services.leaderships.push(leadership);
        await snapshotter.start();
      }
    },
    stop: async () => {
      if (options.record) await snapshotter?.stop();
    },
  };
  services.analytics = analytics;
  return analytics;
};

/** The analytics services, or an error when the runtime was built without them. */
export const analytics = (services: Services): AnalyticsServices => installed(services, 'analytics');
