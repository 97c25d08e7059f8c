import type { Order, Pair } from './contract';
import { pairs } from './venue';

let cache: Promise<Map<string, Pair>> | null = null;

/** Every pair of the venue by symbol, read once per page load (the pair list is the venue's exchange info). */
export const pairMap = (): Promise<Map<string, Pair>> => {
  cache ??= pairs().then(
    (r) => new Map(r.pairs.map((p) => [p.symbol, p])),
    (e: unknown) => {
      cache = null;
      throw e;
    },
  );
  return cache;
};

/**
 * The asset a pending order's `locked_amount` is counted in (spec "Orders": USDT for buys, the base quantity for
 * sells), or undefined while the pairs are not read (or the pair is unknown), so a figure is never labelled wrongly.
 */
export const lockAsset = (
  side: Order['side'],
  symbol: string,
  pairs: Map<string, Pair> | null | undefined,
): string | undefined => (side === 'buy' ? 'USDT' : pairs?.get(symbol)?.base_asset);
