import client from 'prom-client';
import type { RecordedEvent } from '../../ports/event-store';
import type { ProjectionStatus } from '../../projections/runner';
import type { DatabaseAvailability } from '../db/availability';

/** What {@link collectServiceMetrics} reads of the services at each scrape. */
export interface MetricSources {
  database: { availability: DatabaseAvailability };
  projections: { status(): Promise<ProjectionStatus[]> };
  market?: { feed: { prices: { all(): Iterable<{ time: number }> } } } | undefined;
  leaderships: readonly { name: string; isLeader(): boolean }[];
}

/**
 * The process's Prometheus metrics (issue 16, item 6; docs/operations.md "Metrics"), through `prom-client`. One
 * registry per process, every series labelled with the process's `role` (`api`: `serve` without projections,
 * `serve`: API and projections, `worker`); Prometheus adds `instance` per scrape target. Names follow Prometheus'
 * conventions (`_total` counters, base units: seconds and bytes).
 *
 * - `ptv_http_requests_total{method,route,status}`, `ptv_http_request_duration_seconds{method,route}`: per route
 *   template (`/api/v1/trade/order/:order_id`), never the raw URL.
 * - `ptv_wallet_events_total{type}`: wallet events this process appended — `OrderPlaced` (orders), `OrderFilled`
 *   (fills, the matching engine's too), `OrderRejected`, `OrderCancelled`...; `rate()` gives orders and fills/s.
 * - `ptv_eventstore_append_batch_size` (appends per batch), `ptv_eventstore_append_batch_duration_seconds`,
 *   `ptv_eventstore_append_batches_total{outcome}`: the append batcher (PostgreSQL event store).
 * - `ptv_projection_lag_events{projection}`, `ptv_projection_lag_seconds{projection}`: events of the log the read
 *   model has not folded, and the age of the oldest of them (0 when caught up). Measured at scrape.
 * - `ptv_market_feed_lag_seconds`: age of the newest price in the cache; `ptv_market_feed_prices`.
 * - `ptv_websocket_connections`: open `/ws/v1` sockets.
 * - `ptv_leader{leadership}`: 1 while this process holds the singleton role (matching engine, battle snapshots, equity
 *   snapshots), else 0.
 * - `ptv_database_up`, `ptv_database_outages`: the database as this process sees it (outages since start).
 * - `ptv_nodejs_eventloop_lag_*` (event-loop delay percentiles), memory, CPU, GC, handles: prom-client's defaults.
 */
export interface Metrics {
  readonly registry: client.Registry;
  readonly httpRequests: client.Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: client.Histogram<'method' | 'route'>;
  readonly walletEvents: client.Counter<'type'>;
  readonly appendBatchSize: client.Histogram;
  readonly appendBatchDuration: client.Histogram;
  readonly appendBatches: client.Counter<'outcome'>;
  /** Counts the wallet events of one append of this process. */
  observeWalletAppend(events: readonly RecordedEvent[]): void;
  /** Records one append batch: how many appends, how long, whether it committed. */
  observeAppendBatch(appends: number, seconds: number, ok: boolean): void;
}

/**
 * Creates the registry and the metrics whose sources exist before the services do (HTTP, wallet events, append
 * batches, event-loop delay); {@link collectServiceMetrics} adds the ones read from the services at scrape.
 */
export const createMetrics = (role: string): Metrics => {
  const registry = new client.Registry();
  registry.setDefaultLabels({ role });
  client.collectDefaultMetrics({ register: registry, prefix: 'ptv_', eventLoopMonitoringPrecision: 20 });
  const httpRequests = new client.Counter({
    name: 'ptv_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const httpDuration = new client.Histogram({
    name: 'ptv_http_request_duration_seconds',
    help: 'HTTP request duration from arrival to the last byte sent, by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const walletEvents = new client.Counter({
    name: 'ptv_wallet_events_total',
    help: 'Wallet events appended by this process, by type (OrderPlaced = orders, OrderFilled = fills)',
    labelNames: ['type'] as const,
    registers: [registry],
  });
  const appendBatchSize = new client.Histogram({
    name: 'ptv_eventstore_append_batch_size',
    help: 'Appends per batch of the event store append batcher',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128],
    registers: [registry],
  });
  const appendBatchDuration = new client.Histogram({
    name: 'ptv_eventstore_append_batch_duration_seconds',
    help: 'Round trip of one append batch (one transaction), commit included',
    buckets: [0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers: [registry],
  });
  const appendBatches = new client.Counter({
    name: 'ptv_eventstore_append_batches_total',
    help: 'Append batches sent, by outcome (ok, failed)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  return {
    registry,
    httpRequests,
    httpDuration,
    walletEvents,
    appendBatchSize,
    appendBatchDuration,
    appendBatches,
    observeWalletAppend(events) {
      for (const e of events) walletEvents.inc({ type: e.type });
    },
    observeAppendBatch(appends, seconds, ok) {
      appendBatches.inc({ outcome: ok ? 'ok' : 'failed' });
      if (!ok) return;
      appendBatchSize.observe(appends);
      appendBatchDuration.observe(seconds);
    },
  };
};

/**
 * Adds the metrics read from the services at each scrape: projection lag, market feed lag, leaderships, the
 * database's availability. Idempotent per registry.
 */
export const collectServiceMetrics = (metrics: Metrics, services: MetricSources): void => {
  const { registry } = metrics;
  if (registry.getSingleMetric('ptv_leader')) return;
  // One status read per scrape serves both lag gauges.
  let lagRead: { at: number; rows: Promise<{ name: string; events: number; seconds: number }[]> } | undefined;
  const lags = () => {
    if (!lagRead || Date.now() - lagRead.at > 1_000) {
      lagRead = {
        at: Date.now(),
        rows: services.database.availability.available
          ? services.projections
              .status()
              .then((all) =>
                all.map((p) => ({
                  name: p.name,
                  events: p.lag_events ?? 0,
                  seconds: (p.lag_ms ?? 0) / 1000,
                })),
              )
              .catch(() => [])
          : Promise.resolve([]),
      };
    }
    return lagRead.rows;
  };
  /** A gauge of each projection's lag (`lags()`), in events or in seconds. */
  const lagGauge = (name: string, help: string, of: 'events' | 'seconds') =>
    new client.Gauge({
      name,
      help,
      labelNames: ['projection'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const l of await lags()) this.set({ projection: l.name }, l[of]);
      },
    });
  lagGauge('ptv_projection_lag_events', 'Events in the log that the read model has not folded yet', 'events');
  lagGauge(
    'ptv_projection_lag_seconds',
    'Age of the oldest event the read model has not folded yet (0 when caught up)',
    'seconds',
  );
  new client.Gauge({
    name: 'ptv_market_feed_lag_seconds',
    help: 'Age of the newest price in the market feed cache',
    registers: [registry],
    collect() {
      let newest = 0;
      for (const p of services.market?.feed.prices.all() ?? []) if (p.time > newest) newest = p.time;
      if (newest > 0) this.set(Math.max(0, (Date.now() - newest) / 1000));
    },
  });
  new client.Gauge({
    name: 'ptv_market_feed_prices',
    help: 'Pairs with a price in the market feed cache',
    registers: [registry],
    collect() {
      this.set([...(services.market?.feed.prices.all() ?? [])].length);
    },
  });
  new client.Gauge({
    name: 'ptv_leader',
    help: 'Whether this process holds the singleton role (1) or not (0)',
    labelNames: ['leadership'] as const,
    registers: [registry],
    collect() {
      for (const l of services.leaderships) this.set({ leadership: l.name }, l.isLeader() ? 1 : 0);
    },
  });
  new client.Gauge({
    name: 'ptv_database_up',
    help: 'Whether the database answers (1) or is away (0), as this process last saw it',
    registers: [registry],
    collect() {
      this.set(services.database.availability.available ? 1 : 0);
    },
  });
  new client.Gauge({
    name: 'ptv_database_outages',
    help: 'Database outages this process has seen since it started',
    registers: [registry],
    collect() {
      this.set(services.database.availability.snapshot().outages);
    },
  });
};
