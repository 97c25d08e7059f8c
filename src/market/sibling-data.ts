import fs from 'node:fs';
import path from 'node:path';

/**
 * The real Binance data set that sits beside a checkout of this repository (`../shared/market-data`, holding
 * `binance/exchangeInfo.json`), or `undefined` when there is none.
 */
export const siblingMarketDataDir = (
  repoRoot = path.resolve(import.meta.dirname, '../..'),
): string | undefined => {
  const dir = path.resolve(repoRoot, '../shared/market-data');
  return fs.existsSync(path.join(dir, 'binance', 'exchangeInfo.json')) ? dir : undefined;
};

/**
 * `MARKET_DATA_DIR` for `serve` and `worker` when the environment names no market data at all (neither
 * `MARKET_DATA_DIR` nor `MARKET_SOURCE` is set, not even empty): the sibling data set if there is one, so that
 * `npm start` on a fresh clone trades the real pairs at replayed real prices instead of eight synthetic pairs.
 * An empty `MARKET_DATA_DIR` or any `MARKET_SOURCE` keeps the documented defaults (ARCHITECTURE §14); without
 * the sibling directory (a bare machine) the feed stays synthetic.
 */
export const defaultMarketDataDir = (
  env: Record<string, string | undefined>,
  sibling: () => string | undefined = siblingMarketDataDir,
): string | undefined =>
  env.MARKET_DATA_DIR === undefined && env.MARKET_SOURCE === undefined ? sibling() : undefined;
