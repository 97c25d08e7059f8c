import { describe, expect, it } from 'vitest';
import { dec } from '../../domain/trading/decimal';
import { largestOrderDecimal, MAX_ORDER_DECIMAL } from '../../domain/trading/orders';

/**
 * `largestOrderDecimal(step)`: the largest value of `step`'s grid below 10^15 (the decider's MAX_ORDER_DECIMAL) that
 * a client reading it as a double gets back exactly (exchangeInfo's maxPrice/maxQty, docs/binance-compatibility.md).
 */
describe('largestOrderDecimal', () => {
  it.each([
    ['0.00000001', '999999999999999.875'],
    ['0.00001', '999999999999999.875'],
    ['0.001', '999999999999999.875'],
    ['0.1', '999999999999999.5'],
    ['0.3', '999999999999999'],
    ['1', '999999999999999'],
    ['7', '999999999999994'],
  ])('step %s: %s, on the grid, below 10^15, the same value as a double', (step, largest) => {
    const value = largestOrderDecimal(dec(step));
    expect(value.toFixed()).toBe(largest);
    expect(value.mod(step).isZero()).toBe(true);
    expect(value.lt(MAX_ORDER_DECIMAL)).toBe(true);
    // A double's toFixed is its exact value: the double read from the text is the value itself.
    expect(Number(value.toFixed(8)) < 1e15).toBe(true);
    expect(dec(Number(value.toFixed(8)).toFixed(8)).eq(value)).toBe(true);
    // The next point of the grid is 10^15 or more, or reads back as another value.
    const next = value.plus(step);
    expect(next.gte(MAX_ORDER_DECIMAL) || !dec(Number(next.toFixed(8)).toFixed(8)).eq(next)).toBe(true);
  });

  it('refuses a step off the 8-place grid or not above 0', () => {
    for (const step of ['0', '-1', '0.000000001']) {
      expect(() => largestOrderDecimal(dec(step)), step).toThrow(RangeError);
    }
  });
});
