import BigNumber from 'bignumber.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal, dec, fmt, roundHalfEven8 } from '../../domain/trading/decimal';
import { decimalTextOf } from './support';

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
    const text = decimalTextOf(digits, places);
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

describe('fmt writes toFixed(8) from the digits (domain/trading/decimal.ts)', () => {
  /** Values as the ledger makes them: parsed, summed, multiplied, divided and rounded to 8 places, any sign. */
  const computed = fc
    .tuple(
      decimalText,
      decimalText,
      fc.constantFrom('plus', 'minus', 'times', 'div', 'shift'),
      fc.integer({ min: -20, max: 30 }),
    )
    .map(([a, b, op, k]) => {
      const [x, y] = [dec(a), dec(b)];
      if (op === 'plus') return x.plus(y);
      if (op === 'minus') return x.minus(y);
      if (op === 'times') return x.times(y);
      if (op === 'shift') return x.shiftedBy(k);
      return y.isZero() ? x : x.div(y);
    })
    .map((v) => roundHalfEven8(v));

  it('equals toFixed(8) on every finite value with at most 8 places, to the satoshi', () => {
    fc.assert(
      fc.property(computed, (v) => {
        expect(fmt(v)).toBe(v.isZero() ? '0.00000000' : v.toFixed(8));
      }),
      { numRuns: 5_000 },
    );
  });

  it('equals toFixed(8) at the limbs’ edges: 14-digit boundaries, tiny and huge values, negatives', () => {
    const texts = [
      '1',
      '0.00000001',
      '-0.00000001',
      '0.1',
      '0.05',
      '12345678901234',
      '123456789012345',
      '99999999999999.99999999',
      '100000000000000',
      '1e14',
      '1.5e15',
      '1e40',
      '-1e40',
      '123456789012345678901234567890.12345678',
      '0.12345678',
      '-7.1',
      '10000.00000000',
      '40001.00000000',
      '8.00820020',
      '1e-8',
      '-100000000000000.00000001',
    ];
    for (const t of texts) {
      const v = new Decimal(t);
      expect(fmt(v), t).toBe(v.toFixed(8));
    }
    for (let e = -8; e <= 45; e++) {
      for (const m of ['1', '7', '12345678', '99999999', '10000001']) {
        const v = new Decimal(m).shiftedBy(e - m.length + 1);
        if ((v.decimalPlaces() ?? 0) > 8) continue;
        expect(fmt(v), v.toString()).toBe(v.toFixed(8));
        expect(fmt(v.negated()), v.toString()).toBe(v.negated().toFixed(8));
      }
    }
  });
});
