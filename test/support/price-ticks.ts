import { fromUnits, toUnits, toUnitsNumber } from '../../domain/market/decimal';
import type { MarketFeed } from '../../src/market/feed';
import type { MarketServices } from '../../src/market/services';
import type { PriceTick } from '../../src/market/ticks';

/**
 * One price tick as a market source publishes it (source `synthetic`, not a buyer-maker trade): `price` and `quantity`
 * are decimal strings (USDT, base units), `time` ms since the epoch; `trade` says whether it records a public trade.
 * Give it to `MarketFeed.ingest`.
 */
export const syntheticTick = (
  symbol: string,
  price: string,
  quantity: string,
  time: number,
  tradeId: number,
  trade = quantity !== '0',
): PriceTick => ({
  symbol,
  price: fromUnits(toUnits(price)),
  priceUnits: toUnitsNumber(price),
  quantity: fromUnits(toUnits(quantity)),
  quantityUnits: toUnits(quantity),
  time,
  tradeId,
  isBuyerMaker: false,
  trade,
  source: 'synthetic',
});

/**
 * Returns `tick(symbol, price, quantity?)`, which publishes one price tick into a runtime's market feed exactly
 * as a market source would ({@link syntheticTick}, the wall clock, strictly increasing times and trade ids), so a
 * test moves a pair's price when it says so. `price` and `quantity` are decimal strings (USDT, base units); a
 * quantity other than `'0'` also records a public trade (it feeds the 24h volume that slippage reads).
 */
export const priceTicker = (market: () => MarketServices) => {
  let clock = Date.now();
  let tradeId = 1;
  return (symbol: string, price: string, quantity = '0'): void => {
    clock = Math.max(clock + 1, Date.now());
    market().feed.ingest(syntheticTick(symbol, price, quantity, clock, tradeId++));
  };
};

/**
 * Market services over `feed` alone, for a unit test of what follows the market (a hub, a channel): the feed, its
 * ticks and a `requirePair` that takes any symbol. Nothing else of the services is there.
 */
export const feedOnlyMarket = (feed: MarketFeed): MarketServices =>
  ({
    feed,
    ticks$: feed.ticks$,
    requirePair: (symbol: string) => ({ symbol }),
  }) as unknown as MarketServices;
