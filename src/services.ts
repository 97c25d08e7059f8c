import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { AccountCommands } from '../commands/accounts';
import type { AgentCommands } from '../commands/agents';
import type { ProjectionRunner } from '../projections/runner';
import type { AnalyticsServices } from './analytics/install';
import type { AuthService } from './auth/service';
import type { BacktestServices } from './backtest/install';
import type { BattleServices } from './battle/install';
import type { Config } from './config';
import type { DatabaseHandle } from './db/database';
import type { EventStore } from './eventstore/port';
import type { MarketServices } from './market/services';
import type { TradingServices } from './trading/install';

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
  /** Who is calling: API keys and JWTs to a principal (`resolveCredential` also serves the WebSocket). */
  auth?: AuthService;
  /** Account commands: registration, password, risk profile, status. */
  accounts?: AccountCommands;
  /** Agent commands: the agent lifecycle and its keys. */
  agents?: AgentCommands;
  /** Market data: pairs, prices, tickers, candles, the tick stream (ARCHITECTURE §7; `src/market`). */
  market?: MarketServices;
  /** Trading: wallet commands and the matching engine (ARCHITECTURE §8; `src/trading`, `src/matching`). */
  trading?: TradingServices;
  /** Backtests: sessions on a virtual clock (ARCHITECTURE §9; `src/backtest`, `commands/backtest.ts`). */
  backtest?: BacktestServices;
  /** Battles: live and historical competitions between agents (ARCHITECTURE §10; `src/battle`, `commands/battle.ts`). */
  battle?: BattleServices;
  /** Analytics: the equity snapshotter and the analytics clock (`src/analytics`, docs/analytics.md). */
  analytics?: AnalyticsServices;
}

/** A named check shown by `/health`; `ok: false` makes the service `degraded`. */
export interface HealthCheck {
  name: string;
  check(): Promise<{ ok: boolean } & Record<string, unknown>>;
}
