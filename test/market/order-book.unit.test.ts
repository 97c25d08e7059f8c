import { describe, expect, it } from 'vitest';
import { bookSnapshot } from '../../domain/fill-model/book';
import { toUnits } from '../../domain/market/decimal';

const input = {
  mid: '43250.12000000',
  tickSize: '0.01000000',
  stepSize: '0.00001000',
  quoteVolume24h: '2000000000',
};

describe('synthetic order book (spec: deterministic around the mid-price)', () => {
  it('orders bids down and asks up around the mid, on the tick and step grids', () => {
    const book = bookSnapshot(input, 20);
    expect(book.bids).toHaveLength(20);
    expect(book.asks).toHaveLength(20);
    const bids = book.bids.map(([p]) => toUnits(p));
    const asks = book.asks.map(([p]) => toUnits(p));
    for (let i = 1; i < 20; i++) {
      expect(bids[i]!).toBeLessThan(bids[i - 1]!);
      expect(asks[i]!).toBeGreaterThan(asks[i - 1]!);
    }
    expect(bids[0]!).toBeLessThan(toUnits(input.mid));
    expect(asks[0]!).toBeGreaterThan(toUnits(input.mid));
    for (const [p, q] of [...book.bids, ...book.asks]) {
      expect(toUnits(p) % 1_000_000n).toBe(0n);
      expect(toUnits(q) % 1000n).toBe(0n);
      expect(toUnits(q)).toBeGreaterThan(0n);
    }
  });

  it('is deterministic and scales the spread with volume', () => {
    expect(bookSnapshot(input, 10)).toEqual(bookSnapshot(input, 10));
    const thin = bookSnapshot({ ...input, quoteVolume24h: '100000' }, 10);
    expect(thin.spreadBps).toBeGreaterThan(bookSnapshot(input, 10).spreadBps);
    const spread = (b: ReturnType<typeof bookSnapshot>) => toUnits(b.asks[0]![0]) - toUnits(b.bids[0]![0]);
    expect(spread(thin)).toBeGreaterThan(spread(bookSnapshot(input, 10)));
    expect(bookSnapshot(input, 5).bids).toHaveLength(5);
    // The first levels of a deeper snapshot are the shallower snapshot.
    expect(bookSnapshot(input, 20).asks.slice(0, 5)).toEqual(bookSnapshot(input, 5).asks);
  });
});
