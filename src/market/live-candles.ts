import type { Subscription } from 'rxjs';
import type { Candle } from '../../domain/market/candle';
import { fromUnits, maxNormalized, minNormalized } from '../../domain/market/decimal';
import type { MarketFeed } from './feed';
import type { MarketData } from './market-data';
import type { PriceTick } from './ticks';

/**
 * Builds closed 1-minute candles from a live tick stream (the `binance` trade streams, the `synthetic` walk)
 * and appends them to the candle store, from which the coarser intervals are aggregated. A minute is recorded
 * only when it was observed from its start (the first, partial minute after a (re)connect is left to the REST
 * backfill). `onClosed` receives each recorded candle (the `binance` source persists them).
 */
export const recordLiveCandles = (
  feed: MarketFeed,
  data: MarketData,
  onClosed?: (symbol: string, candles: Candle[]) => void,
): { stop(): void; flush(now?: number): void; restart(now?: number): void } => {
  const MINUTE = 60_000;
  const open = new Map<string, { candle: Candle; volume: bigint; quote: bigint; complete: boolean }>();
  let startedMinute = Math.floor(Date.now() / MINUTE);

  const close = (
    symbol: string,
    entry: { candle: Candle; volume: bigint; quote: bigint; complete: boolean },
  ) => {
    if (!entry.complete) return;
    const candle = { ...entry.candle, volume: fromUnits(entry.volume), quoteVolume: fromUnits(entry.quote) };
    const added = data.candles.merge(symbol, '1m', [candle]);
    if (added.length) onClosed?.(symbol, added);
  };

  const onTick = (tick: PriceTick) => {
    const minute = Math.floor(tick.time / MINUTE);
    const openTime = minute * MINUTE;
    let entry = open.get(tick.symbol);
    if (entry && entry.candle.openTime < openTime) {
      close(tick.symbol, entry);
      entry = undefined;
    } else if (entry && entry.candle.openTime > openTime) {
      return; // late tick of a closed minute
    }
    if (!entry) {
      entry = {
        candle: {
          openTime,
          open: tick.price,
          high: tick.price,
          low: tick.price,
          close: tick.price,
          volume: '0.00000000',
          quoteVolume: '0.00000000',
          tradeCount: 0,
        },
        volume: 0n,
        quote: 0n,
        complete: minute > startedMinute,
      };
      open.set(tick.symbol, entry);
    }
    const c = entry.candle;
    c.high = maxNormalized(c.high, tick.price);
    c.low = minNormalized(c.low, tick.price);
    c.close = tick.price;
    if (tick.trade) {
      entry.volume += tick.quantityUnits;
      entry.quote += (tick.quantityUnits * BigInt(tick.priceUnits)) / 100_000_000n;
      c.tradeCount = (c.tradeCount ?? 0) + 1;
    }
  };

  const subscription: Subscription = feed.ticks$.subscribe(onTick);
  return {
    stop: () => subscription.unsubscribe(),
    /** After a feed interruption: the current minute is partial everywhere, record from the next one. */
    restart(now = Date.now()) {
      startedMinute = Math.floor(now / MINUTE);
      open.clear();
    },
    /** Closes every candle whose minute has ended by `now`. */
    flush(now = Date.now()) {
      const current = Math.floor(now / MINUTE) * MINUTE;
      for (const [symbol, entry] of open) {
        if (entry.candle.openTime < current) {
          close(symbol, entry);
          open.delete(symbol);
        }
      }
    },
  };
};
