import type { Logger } from 'pino';
import type { MarketFeed } from '../feed';
import type { MarketData } from '../market-data';
import type { MarketSourceName } from '../ticks';

/**
 * The price-source port (ARCHITECTURE §7, issue item 3): `files` (replay), `binance` (live exchange data) and
 * `synthetic` (seeded random walk) all feed the same `MarketFeed` and are chosen by `MARKET_SOURCE`.
 */
export interface MarketSource {
  readonly name: MarketSourceName;
  /** Loads what the source needs and starts feeding; resolves once the first prices are in the cache. */
  start(): Promise<void>;
  /** Stops timers and connections (idempotent). */
  stop(): Promise<void>;
  /** Health details for `/health` (`market_feed`); `ok: false` marks the service degraded. */
  status(): { ok: boolean } & Record<string, unknown>;
}

/** What a source that ticks every second from local data is given (`files`, `synthetic`). */
export interface LocalSourceOptions {
  feed: MarketFeed;
  data: MarketData;
  logger?: Logger | undefined;
  /** Only these symbols (default: every symbol the source has data or a walk for). */
  symbols?: readonly string[] | undefined;
  /** Wall clock (tests). */
  now?: () => number;
  /** Timer period (ms) for tests; default: just after each wall-clock second. */
  timerMs?: number;
}
