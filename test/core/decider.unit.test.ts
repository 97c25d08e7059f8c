import { describe, expect, it } from 'vitest';
import { StateCache } from '../../commands/state-cache';
import { foldEvents } from '../../domain/shared/decider';
import { cashDecider } from '../support/counter-decider';
import { deciderSpec } from '../support/decider-spec';

const ctx = { now: new Date('2026-01-02T03:04:05.000Z'), newId: () => 'id-1' };
const spec = deciderSpec(cashDecider);

describe('decider framework', () => {
  it('given/when/then: a funded box can spend', () => {
    spec
      .given([{ type: 'Funded', data: { amount: 10, at: 'x' } }])
      .when({ type: 'Spend', amount: 4 }, ctx)
      .thenEmits([{ type: 'Spent', data: { amount: 4, id: 'id-1', at: '2026-01-02T03:04:05.000Z' } }]);
  });

  it('given/when/thenThrows: overspending is refused with the domain code and details', () => {
    spec
      .given([{ type: 'Funded', data: { amount: 3, at: 'x' } }])
      .when({ type: 'Spend', amount: 4 }, ctx)
      .thenThrows('INSUFFICIENT_BALANCE', { available: 3, required: 4 });
  });

  it('thenAssert sees the state after the new events', () => {
    spec
      .given([])
      .when({ type: 'Fund', amount: 5 }, ctx)
      .thenAssert((events, state) => {
        expect(events).toHaveLength(1);
        expect(state.balance).toBe(5);
      });
  });

  it('foldEvents folds from the initial state', () => {
    const state = foldEvents(cashDecider, [
      { type: 'Funded', data: { amount: 10, at: 'x' } },
      { type: 'Spent', data: { amount: 2, id: 'a', at: 'x' } },
    ]);
    expect(state).toEqual({ balance: 8, spends: 1 });
  });
});

describe('StateCache', () => {
  it('evicts the least recently used stream beyond its capacity', () => {
    const cache = new StateCache<number>(2);
    cache.set('a', 1, 0, 'h-a');
    cache.set('b', 2, 0, 'h-b');
    cache.get('a');
    cache.set('c', 3, 0, 'h-c');
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toEqual({ state: 1, revision: 0, hash: 'h-a' });
    expect(cache.size).toBe(2);
  });
});
