import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toUnitsNumber } from '../../domain/market/decimal';
import { dec } from '../../domain/trading/decimal';
import { isTriggered } from '../../domain/trading/orders';
import { type IndexedOrder, indexedOrder, OrderIndex } from '../../src/matching/order-index';

const order = (
  id: string,
  side: 'buy' | 'sell',
  type: 'limit' | 'stop_loss' | 'take_profit',
  level: string,
  symbol = 'BTCUSDT',
) => indexedOrder({ orderId: id, ownerId: `w-${id.slice(0, 1)}`, symbol, side, type, level });

describe('matching index', () => {
  it('takes out exactly the orders a price reaches, side-aware, and leaves the rest', () => {
    const idx = new OrderIndex();
    idx.add(order('a', 'buy', 'limit', '100')); // ≤ 100
    idx.add(order('b', 'sell', 'limit', '110')); // ≥ 110
    idx.add(order('c', 'sell', 'stop_loss', '95')); // ≤ 95
    idx.add(order('d', 'buy', 'stop_loss', '105')); // ≥ 105
    idx.add(order('e', 'sell', 'take_profit', '120')); // ≥ 120
    idx.add(order('f', 'buy', 'take_profit', '90')); // ≤ 90
    idx.add(order('g', 'buy', 'limit', '100', 'ETHUSDT'));
    // Each reached order fills whole here: the engine removes it.
    const ids = (p: string) => {
      const reached = idx.reached('BTCUSDT', toUnitsNumber(p)).map((o) => o.orderId);
      for (const id of reached) idx.remove(id);
      return reached.sort();
    };
    expect(ids('102')).toEqual([]);
    expect(ids('100')).toEqual(['a']);
    expect(ids('106')).toEqual(['d']);
    expect(ids('89')).toEqual(['c', 'f']);
    expect(ids('125')).toEqual(['b', 'e']);
    expect(idx.size).toBe(1);
    expect(idx.has('g')).toBe(true);
  });

  it('skips removed orders and removes every order of a deleted wallet', () => {
    const idx = new OrderIndex();
    idx.add(order('a1', 'buy', 'limit', '100'));
    idx.add(order('a2', 'buy', 'limit', '99'));
    idx.add(order('b1', 'buy', 'limit', '98'));
    expect(idx.remove('a1')).toBe(true);
    expect(idx.remove('a1')).toBe(false);
    idx.removeOwner('w-a');
    expect(idx.reached('BTCUSDT', toUnitsNumber('1')).map((o) => o.orderId)).toEqual(['b1']);
    // Reached, it is parked: still indexed, but no later price reaches it until it is restored.
    expect(idx.size).toBe(1);
    expect(idx.reached('BTCUSDT', toUnitsNumber('1'))).toEqual([]);
    expect(idx.remove('b1')).toBe(true);
    expect(idx.size).toBe(0);
  });

  it('restores a parked order to its place: equal levels still come out in placement order', () => {
    const idx = new OrderIndex();
    const first = order('first', 'buy', 'limit', '100');
    const second = order('second', 'buy', 'limit', '100');
    const third = order('third', 'buy', 'limit', '100');
    idx.add(first);
    idx.add(second);
    const reach = () => idx.reached('BTCUSDT', toUnitsNumber('100')).map((o) => o.orderId);
    expect(reach()).toEqual(['first', 'second']);
    idx.add(third); // placed while the first two were parked (their fills queued)
    idx.restore(second);
    idx.restore(first);
    expect(reach()).toEqual(['first', 'second', 'third']);
    // A parked order removed meanwhile (cancelled) is not restored; one replaced is not restored twice.
    idx.remove('first');
    idx.restore(first);
    const replaced = order('second', 'buy', 'limit', '100');
    idx.add(replaced);
    idx.restore(second);
    expect(reach()).toEqual(['second']);
    expect(idx.size).toBe(2);
  });

  it('agrees with the trading rules for random orders and prices', () => {
    const kinds = [
      ['buy', 'limit'],
      ['sell', 'limit'],
      ['buy', 'stop_loss'],
      ['sell', 'stop_loss'],
      ['buy', 'take_profit'],
      ['sell', 'take_profit'],
    ] as const;
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(5), fc.integer({ min: 1, max: 200 })), { minLength: 1, maxLength: 60 }),
        fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 20 }),
        (orders, prices) => {
          const idx = new OrderIndex();
          const open = new Map<string, IndexedOrder>();
          orders.forEach(([k, level], i) => {
            const [side, type] = kinds[k]!;
            const o = order(`o${i}`, side, type, String(level));
            idx.add(o);
            open.set(o.orderId, o);
          });
          for (const p of prices) {
            const reached = new Set(idx.reached('BTCUSDT', toUnitsNumber(String(p))).map((o) => o.orderId));
            for (const [id, o] of open) {
              const expected = isTriggered({ side: o.side, type: o.type, level: dec(o.level) }, dec(p));
              expect(reached.has(id)).toBe(expected);
              if (expected) {
                open.delete(id);
                idx.remove(id); // filled
              }
            }
          }
          expect(idx.size).toBe(open.size);
        },
      ),
      { numRuns: 200 },
    );
  });
});
