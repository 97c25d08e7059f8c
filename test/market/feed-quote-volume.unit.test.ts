import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromUnits } from '../../domain/market/decimal';
import { MarketFeed, type Ticker } from '../../src/market/feed';

/**
 * `MarketFeed.quoteVolume24h`, the slippage model's read on every market order, is the `quoteVolume` of the full
 * 24h ticker, whatever ticks came (late ones, price-only ones, other symbols, minutes falling out of the window)
 * and whichever ticker applies (the window's or the exchange's).
 */
const MINUTE = 60_000;
const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);

const tick = (symbol: string, time: number, priceUnits: number, quantityUnits: bigint, trade: boolean) => ({
  symbol,
  price: fromUnits(priceUnits),
  priceUnits,
  quantity: fromUnits(quantityUnits),
  quantityUnits,
  time,
  tradeId: 0,
  isBuyerMaker: false,
  trade,
  source: 'synthetic' as const,
});

describe('the feed’s 24h quote volume', () => {
  it('equals the ticker’s quoteVolume after any ticks, at any time', () => {
    const step = fc.record({
      symbol: fc.constantFrom('BTCUSDT', 'ETHUSDT'),
      // Minutes before or after the last reading (late ticks, and ticks a day or more apart).
      minutes: fc.integer({ min: -30, max: 1500 }),
      price: fc.integer({ min: 1, max: 10_000_000_000_000 }),
      quantity: fc.bigInt({ min: 0n, max: 10_000_000_000n }),
      trade: fc.boolean(),
      readAfter: fc.integer({ min: 0, max: 2000 }),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const feed = new MarketFeed();
        let now = T0;
        for (const s of steps) {
          const time = now + s.minutes * MINUTE;
          feed.ingest(tick(s.symbol, time, s.price, s.quantity, s.trade));
          now = Math.max(now, time) + s.readAfter * MINUTE;
          for (const symbol of ['BTCUSDT', 'ETHUSDT', 'SOLUSDT']) {
            // Read twice: the second answer comes from the text kept for the same window state.
            expect(feed.quoteVolume24h(symbol, now)).toBe(feed.ticker(symbol, now)?.quoteVolume);
            expect(feed.quoteVolume24h(symbol, now)).toBe(feed.ticker(symbol, now)?.quoteVolume);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('is the exchange ticker’s once the exchange reports one', () => {
    const feed = new MarketFeed();
    feed.ingest(tick('BTCUSDT', T0, 6_000_000_000_000, 100_000_000n, true));
    expect(feed.quoteVolume24h('BTCUSDT', T0)).toBe('60000.00000000');
    const exchange: Ticker = {
      ...feed.ticker('BTCUSDT', T0)!,
      quoteVolume: '123456789.12345678',
      basis: 'exchange',
    };
    feed.setExchangeTicker(exchange);
    expect(feed.quoteVolume24h('BTCUSDT', T0)).toBe('123456789.12345678');
    expect(feed.quoteVolume24h('BTCUSDT', T0 + 2 * 1440 * MINUTE)).toBe('123456789.12345678');
  });
});
