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
