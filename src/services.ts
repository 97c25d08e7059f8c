import type { Logger } from 'pino';
import type { EventStore } from '../ports/event-store';
import type { SnapshotStore } from '../ports/snapshot-store';
import type { ProjectionRunner } from '../projections/runner';
import type { Config } from './config';
import type { DatabaseHandle } from './db/database';
import type { Leadership } from './matching/leader';
import type { Metrics } from './operations/metrics';

/**
 * Everything a request handler or CLI command may use, built once by `createRuntime` and handed to the HTTP
 * app as a decorator (STYLE: plugins as dependency injection, no global singletons). These are the core members;
 * each capability adds its own as an optional member by declaration merging in its install module (as fastify's
 * decorators do: `declare module '../services' { interface Services { trading?: TradingServices } }`), so this
 * module imports no capability and the core builds without them (no import circle through the composition).
 */
export interface Services {
  config: Config;
  logger: Logger;
  database: DatabaseHandle;
  eventStore: EventStore;
  /** Snapshots of aggregate states beside the log (`SNAPSHOT_EVERY`; docs/architecture.md, "Snapshots"). */
  snapshots: SnapshotStore;
  projections: ProjectionRunner;
  /** Process start (ms since epoch), for `/health`. */
  startedAt: number;
  /** Extra health checks contributed by capabilities (market feed, matching engine). */
  healthChecks: HealthCheck[];
  /**
   * The singleton roles this process competes for (matching engine, battle and equity snapshots), for `/health`
   * and `/metrics`; capabilities push theirs when they run them.
   */
  leaderships: Leadership[];
  /** This process's Prometheus metrics (`/metrics`). */
  metrics: Metrics;
}

/** A named check shown by `/health`; `ok: false` makes the service `degraded`. */
export interface HealthCheck {
  name: string;
  check(): Promise<{ ok: boolean } & Record<string, unknown>>;
}

/**
 * The member `name` of the services that a capability's install module added, or an `Error` with `statusCode`
 * 500 (`<name> services are not installed`) when the runtime was built without that capability. Each capability's
 * accessor (`trading(services)`, `backtest(services)`, …) is this with its member's name.
 */
export const installed = <K extends keyof Services>(
  services: Services,
  name: K,
): NonNullable<Services[K]> => {
  const member = services[name];
  if (!member) throw Object.assign(new Error(`${name} services are not installed`), { statusCode: 500 });
  return member;
};
