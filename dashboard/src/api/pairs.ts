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
 * The base asset of a pair's symbol (`BTCUSDT` → `BTC`): the unit of its quantities. Every pair of the venue is
 * quoted in USDT (`quote_asset` is the literal `USDT` in `src/contract/market.ts`), so the base is the symbol
 * without it; undefined for a symbol not so formed, so a figure is never labelled wrongly.
 */
export const baseAsset = (symbol: string): string | undefined =>
  symbol.endsWith(QUOTE) && symbol.length > QUOTE.length ? symbol.slice(0, -QUOTE.length) : undefined;

/** The asset every price, value, fee and PnL of the venue is counted in (spec: pairs are quoted in USDT). */
export const QUOTE = 'USDT';

/**
 * The asset a pending order's `locked_amount` is counted in (spec "Orders": USDT for buys, the base quantity for
 * sells): the quote, or the base of the symbol ({@link baseAsset}, undefined for a symbol not so formed).
 */
export const lockAsset = (side: Order['side'], symbol: string): string | undefined =>
  side === 'buy' ? QUOTE : baseAsset(symbol);
