import path from 'node:path';
import type { Config } from '../config';
import type { MarketSourceName } from './ticks';

/** The market settings of the configuration, resolved (ARCHITECTURE §14 defaults). */
export interface MarketSettings {
  source: MarketSourceName;
  /** Absolute path of MARKET_DATA_DIR, if set. */
  dataDir: string | undefined;
  /** Absolute path of the candle store (MARKET_STORE_DIR, else DATA_DIR/market). */
  storeDir: string;
  /** Upper-cased MARKET_SYMBOLS, if set. */
  symbols: string[] | undefined;
  seed: number;
  /** MAX_PRICE_AGE_MS: the live feed's largest age before its prices are stale (ms; 0 = never). */
  maxPriceAgeMs: number;
  binance: {
    restUrl: string;
    wsUrl: string;
    stream: 'trade' | 'miniTicker';
    reconnectMinMs: number;
    reconnectMaxMs: number;
  };
}

/** Resolves MARKET_SOURCE's default: `files` when MARKET_DATA_DIR is set, else `synthetic`. */
export const marketSettings = (config: Config): MarketSettings => ({
  source: config.MARKET_SOURCE ?? (config.MARKET_DATA_DIR ? 'files' : 'synthetic'),
  dataDir: config.MARKET_DATA_DIR ? path.resolve(config.MARKET_DATA_DIR) : undefined,
  storeDir: path.resolve(config.MARKET_STORE_DIR ?? path.join(config.DATA_DIR, 'market')),
  symbols: config.MARKET_SYMBOLS?.split(',')
    .map((s) => s.trim().toUpperCase())
    .filter(Boolean),
  seed: config.MARKET_SEED,
  maxPriceAgeMs: config.MAX_PRICE_AGE_MS,
  binance: {
    restUrl: config.BINANCE_REST_URL.replace(/\/+$/, ''),
    wsUrl: config.BINANCE_WS_URL.replace(/\/+$/, ''),
    stream: config.BINANCE_STREAM,
    reconnectMinMs: config.BINANCE_RECONNECT_MIN_MS,
    reconnectMaxMs: Math.max(config.BINANCE_RECONNECT_MIN_MS, config.BINANCE_RECONNECT_MAX_MS),
  },
});
