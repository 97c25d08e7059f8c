import { describe, expect, it } from 'vitest';
import { toUnits } from '../../domain/market/decimal';
import { buildOrderBook } from '../../domain/market/order-book';

const input = {
  symbol: 'BTCUSDT',
  mid: 4_325_012_000_000,
  tickUnits: 1_000_000,
  stepUnits: 1000,
  quoteVolume24h: 2e9,
  depth: 20,
};

describe('synthetic order book (spec: deterministic around the mid-price)', () => {
  it('orders bids down and asks up around the mid, on the tick and step grids', () => {
    const book = buildOrderBook(input);
    expect(book.bids).toHaveLength(20);
    expect(book.asks).toHaveLength(20);
    const bids = book.bids.map(([p]) => toUnits(p));
    const asks = book.asks.map(([p]) => toUnits(p));
    for (let i = 1; i < 20; i++) {
      expect(bids[i]!).toBeLessThan(bids[i - 1]!);
      expect(asks[i]!).toBeGreaterThan(asks[i - 1]!);
    }
    expect(bids[0]!).toBeLessThan(BigInt(input.mid));
    expect(asks[0]!).toBeGreaterThan(BigInt(input.mid));
    for (const [p, q] of [...book.bids, ...book.asks]) {
      expect(toUnits(p) % 1_000_000n).toBe(0n);
      expect(toUnits(q) % 1000n).toBe(0n);
      expect(toUnits(q)).toBeGreaterThan(0n);
    }
  });

  it('is deterministic and scales the spread with volume', () => {
    expect(buildOrderBook(input)).toEqual(buildOrderBook(input));
    const thin = buildOrderBook({ ...input, quoteVolume24h: 1e5 });
    expect(thin.spreadBps).toBeGreaterThan(buildOrderBook(input).spreadBps);
    const spread = (b: ReturnType<typeof buildOrderBook>) => toUnits(b.asks[0]![0]) - toUnits(b.bids[0]![0]);
    expect(spread(thin)).toBeGreaterThan(spread(buildOrderBook(input)));
    expect(buildOrderBook({ ...input, depth: 5 }).bids).toHaveLength(5);
  });
});
