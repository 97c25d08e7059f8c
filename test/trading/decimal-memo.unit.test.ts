import BigNumber from 'bignumber.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal, dec, fmt, roundHalfEven8 } from '../../domain/trading/decimal';

/** A fresh parse with the ledger's own constructor, as `dec` did before it remembered texts. */
const fresh = (text: string) => new Decimal(text);

const decimalText = fc
  .tuple(
    fc.constantFrom('', '-', '+'),
    fc.bigInt({ min: 0n, max: 10n ** 16n }),
    fc.integer({ min: 0, max: 12 }),
    fc.boolean(),
  )
  .map(([sign, digits, places, pad]) => {
    const s = digits.toString().padStart(places + 1, '0');
    const text = places === 0 ? s : `${s.slice(0, -places)}.${s.slice(-places)}`;
    return `${sign}${pad ? `${text}000` : text}`;
  });

describe('dec: parsed texts are remembered, values unchanged (domain/trading/decimal.ts)', () => {
  it('gives the value a fresh parse gives, first time and again, across generations of the memo', () => {
    fc.assert(
      fc.property(fc.array(decimalText, { minLength: 1, maxLength: 300 }), (texts) => {
        for (const text of [...texts, ...texts]) {
          const v = dec(text);
          const want = fresh(text);
          expect(v.eq(want)).toBe(true);
          expect(v.toFixed()).toBe(want.toFixed());
          expect(v.decimalPlaces()).toBe(want.decimalPlaces());
          expect(v.isNegative()).toBe(want.isNegative());
        }
      }),
      { numRuns: 200 },
    );
  });

  it('keeps arithmetic exact to the satoshi against fresh values (sums, products, rounding, formatting)', () => {
    fc.assert(
      fc.property(decimalText, decimalText, (a, b) => {
        const [x, y] = [dec(a), dec(b)];
        const [fx, fy] = [fresh(a), fresh(b)];
        expect(x.plus(y).toFixed()).toBe(fx.plus(fy).toFixed());
        expect(x.minus(y).toFixed()).toBe(fx.minus(fy).toFixed());
        expect(roundHalfEven8(x.times(y)).toFixed()).toBe(roundHalfEven8(fx.times(fy)).toFixed());
        expect(fmt(roundHalfEven8(x))).toBe(fmt(roundHalfEven8(fx)));
      }),
      { numRuns: 500 },
    );
  });

  it('is not disturbed by using a remembered value: values are immutable', () => {
    const a = dec('1.50000000');
    a.plus(1);
    a.times(3);
    expect(dec('1.50000000').toFixed(8)).toBe('1.50000000');
    expect(dec('1.50000000')).toBe(a);
  });

  it('passes a Decimal through, copies other values, and parses what is not a number to NaN as before', () => {
    const v = dec('2.5');
    expect(dec(v)).toBe(v);
    expect(dec(new BigNumber('2.5')).eq(v)).toBe(true);
    expect(dec(7).toFixed()).toBe('7');
    expect(dec('abc').isNaN()).toBe(true);
    expect(dec('abc').isNaN()).toBe(true);
  });
});
