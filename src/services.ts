import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { ProjectionRunner } from '../projections/runner';
import type { Config } from './config';
import type { DatabaseHandle } from './db/database';
import type { EventStore } from './eventstore/port';

/**
 * Everything a request handler or CLI command may use, built once by `createRuntime` and handed to the HTTP
 * app as a decorator (STYLE: plugins as dependency injection, no global singletons). Capabilities add their
 * services as optional members so the core builds without them.
 */
export interface Services {
  config: Config;
  logger: Logger;
  database: DatabaseHandle;
  eventStore: EventStore;
  projections: ProjectionRunner;
  /** Process start (ms since epoch), for `/health`. */
  startedAt: number;
  /** Extra health checks contributed by capabilities (market feed, matching engine). */
  healthChecks: HealthCheck[];
  /**
   * Maps a request's credential to a stable rate-limit identity (spec "Limits": per credential); `undefined`
   * counts the client IP. Default: a fingerprint of the raw API key or bearer token.
   */
  rateLimitIdentity?: (request: FastifyRequest) => Promise<string | undefined> | string | undefined;
}

/** A named check shown by `/health`; `ok: false` makes the service `degraded`. */
export interface HealthCheck {
  name: string;
  check(): Promise<{ ok: boolean } & Record<string, unknown>>;
}
