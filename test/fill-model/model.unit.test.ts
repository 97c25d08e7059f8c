import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BOOK_DEPTH_PCT, BOOK_LEVELS, bookLevels, halfSpreadBps } from '../../domain/fill-model/book';
import { feeRateOf, quoteMaker, quoteTaker } from '../../domain/fill-model/model';
import { walkBook } from '../../domain/fill-model/walk';
import { type Dec, dec, ZERO } from '../../domain/trading/decimal';
import { floorToStep } from '../../domain/trading/quantity';

/**
 * Properties of the fill model (issue 21, "Done when"), over random books (mid, tick, step, 24h volume) and orders:
 * the book is on its grids and holds its depth; a walk never fills beyond its limit nor more than asked; splitting
 * an order into parts at one price costs exactly what the whole costs; the walk's slippage follows the spec's table
 * at the sizes it names (pairs whose tick is fine against the price); resting fills never take more than their
 * participation share of a print; fees follow the liquidity flag.
 */

/** A price with up to 8 places between 1e-6 and 1e5, and a tick that is a power of ten below it. */
const market = fc
  .record({
    mantissa: fc.integer({ min: 100_000, max: 999_999 }),
    exponent: fc.integer({ min: -11, max: -1 }),
    tickBelow: fc.integer({ min: 4, max: 8 }),
    stepExp: fc.integer({ min: -8, max: 0 }),
    volumeExp: fc.integer({ min: 4, max: 10 }),
    volumeMantissa: fc.integer({ min: 1, max: 9 }),
  })
  .map((r) => {
    const mid = dec(r.mantissa).shiftedBy(r.exponent);
    const midExp = Math.floor(Math.log10(mid.toNumber()));
    const tickExp = Math.max(-8, midExp - r.tickBelow);
    return {
      mid: mid.decimalPlaces(8).toFixed(8),
      tickSize: dec(1).shiftedBy(tickExp).toFixed(8),
      stepSize: dec(1).shiftedBy(r.stepExp).toFixed(8),
      quoteVolume24h: dec(r.volumeMantissa).shiftedBy(r.volumeExp),
      /** The tick as a fraction of the price. */
      tickShare: dec(1).shiftedBy(tickExp).div(mid).toNumber(),
    };
  })
  .filter((m) => dec(m.mid).gt(0));

const side = fc.constantFrom('buy' as const, 'sell' as const);

const sideLevels = (m: ReturnType<typeof market.generate>['value'], s: 'buy' | 'sell') =>
  bookLevels(m, s === 'buy' ? 'asks' : 'bids');

const sum = (xs: Dec[]) => xs.reduce((a, b) => a.plus(b), ZERO);

describe('the book', () => {
  it('is deterministic, strictly ordered beyond the mid, on the tick and step grids', () => {
    fc.assert(
      fc.property(market, (m) => {
        const asks = bookLevels(m, 'asks');
        const bids = bookLevels(m, 'bids');
        expect(bookLevels(m, 'asks')).toEqual(asks);
        expect(asks).toHaveLength(BOOK_LEVELS);
        const mid = dec(m.mid);
        let last = mid;
        for (const l of asks) {
          expect(l.price.gt(last)).toBe(true);
          expect(l.price.mod(m.tickSize).isZero()).toBe(true);
          expect(l.quantity.gt(0) && l.quantity.mod(m.stepSize).isZero()).toBe(true);
          last = l.price;
        }
        last = mid;
        for (const l of bids) {
          expect(l.price.lt(last) && l.price.gt(0)).toBe(true);
          expect(l.price.mod(m.tickSize).isZero()).toBe(true);
          last = l.price;
        }
      }),
    );
  });

  it('holds about BOOK_DEPTH_PCT % of the 24h quote volume per side when its levels are many steps deep', () => {
    fc.assert(
      fc.property(
        market.filter((m) => m.tickShare < 1e-4),
        (m) => {
          const asks = bookLevels(m, 'asks');
          const stepUsdt = dec(m.stepSize).times(m.mid);
          // Each level loses less than one step to rounding down (and gains at most one when it holds a single step).
          const depth = sum(asks.map((l) => l.quantity.times(l.price)));
          const target = m.quoteVolume24h.times(BOOK_DEPTH_PCT).shiftedBy(-2);
          const slack = stepUsdt.times(BOOK_LEVELS * 1.01).plus(target.times('0.01'));
          expect(depth.minus(target).abs().lte(slack)).toBe(true);
        },
      ),
    );
  });

  it('spreads wider for thinner pairs', () => {
    expect(halfSpreadBps(1e9)).toBeLessThan(halfSpreadBps(1e6));
    expect(halfSpreadBps(1e6)).toBeLessThan(halfSpreadBps(1e3));
    expect(halfSpreadBps(0)).toBe(25);
  });
});

describe('the taker walk', () => {
  it('never fills beyond the limit nor more than asked; fills whole when the book holds it', () => {
    fc.assert(
      fc.property(
        market,
        side,
        fc.integer({ min: 1, max: 5_000 }),
        fc.integer({ min: -50, max: 200 }),
        (m, s, n, limitBps) => {
          const quantity = dec(m.stepSize).times(n);
          const mid = dec(m.mid);
          const limit = (
            s === 'buy' ? mid.times(1 + limitBps / 10_000) : mid.times(1 - limitBps / 10_000)
          ).decimalPlaces(8);
          const levels = sideLevels(m, s);
          const walk = walkBook(levels, quantity, { side: s, limit });
          expect(walk.quantity.lte(quantity)).toBe(true);
          expect(sum(walk.levels.map((l) => l.quantity)).eq(walk.quantity)).toBe(true);
          for (const l of walk.levels)
            expect(s === 'buy' ? l.price.lte(limit) : l.price.gte(limit)).toBe(true);
          const quote = quoteTaker('realistic', {
            side: s,
            quantity,
            reference: mid,
            quoteVolume24h: m.quoteVolume24h,
            grid: m,
            limit,
          });
          expect(quote.quantity.eq(walk.quantity)).toBe(true);
          if (quote.quantity.gt(0)) {
            expect(s === 'buy' ? quote.executedPrice.lte(limit) : quote.executedPrice.gte(limit)).toBe(true);
            // Never better for the taker than the book's own average.
            const vwap = walk.notional.div(walk.quantity);
            expect(s === 'buy' ? quote.executedPrice.gte(vwap) : quote.executedPrice.lte(vwap)).toBe(true);
          }
          const depth = sum(levels.map((l) => l.quantity));
          const unlimited = walkBook(levels, quantity, { side: s });
          expect(unlimited.quantity.eq(quantity.lte(depth) ? quantity : depth)).toBe(true);
        },
      ),
    );
  });

  it('costs the same split into parts at one price as whole (the parts walk on past what the first took)', () => {
    fc.assert(
      fc.property(
        market,
        side,
        fc.array(fc.integer({ min: 1, max: 3_000 }), { minLength: 1, maxLength: 6 }),
        (m, s, parts) => {
          const levels = sideLevels(m, s);
          let taken = ZERO;
          let notional = ZERO;
          for (const n of parts) {
            const w = walkBook(levels, dec(m.stepSize).times(n), { side: s, taken });
            taken = taken.plus(w.quantity);
            notional = notional.plus(w.notional);
          }
          const whole = walkBook(levels, taken, { side: s });
          expect(whole.quantity.eq(taken)).toBe(true);
          expect(whole.notional.eq(notional)).toBe(true);
        },
      ),
    );
  });

  it("pays the spec's slippage at the sizes its table names (pairs with a tick under 0.1 bp of the price)", () => {
    const fine = market.filter((m) => m.tickShare <= 1e-5 && m.quoteVolume24h.gte(1e6));
    fc.assert(
      fc.property(fine, side, fc.double({ min: 0.0005, max: 1, noNaN: true }), (m, s, p) => {
        const mid = dec(m.mid);
        const quantity = floorToStep(
          m.quoteVolume24h.times(p).shiftedBy(-2).div(mid).decimalPlaces(8, 1),
          dec(m.stepSize),
        );
        const stepShare = dec(m.stepSize).times(mid).div(m.quoteVolume24h).times(100).toNumber();
        fc.pre(quantity.gt(0) && stepShare < p / 50);
        const q = quoteTaker('realistic', {
          side: s,
          quantity,
          reference: mid,
          quoteVolume24h: m.quoteVolume24h,
          grid: m,
        });
        const slip = q.slippagePct.toNumber();
        const h = halfSpreadBps(m.quoteVolume24h.toNumber()) / 100;
        // The table: about 0.01 % below 0.01 %, 0.05–0.1 % to 0.1 %, 0.1–0.5 % above; the book's average cannot jump,
        // so from 0.01 % to 0.1 % it ramps from 0.01 to 0.1 %. Tolerance: a level's rounding and the half-spread floor.
        const tol = 0.003 + h * 0.2;
        if (p <= 0.01) expect(slip).toBeLessThanOrEqual(Math.max(0.01, h) + tol);
        else if (p <= 0.1) {
          expect(slip).toBeGreaterThanOrEqual(0.01 - tol);
          expect(slip).toBeLessThanOrEqual(Math.max(0.1, h) + tol);
        } else {
          expect(slip).toBeGreaterThanOrEqual(0.1 * (p < 0.12 ? 0.85 : 1) - tol);
          expect(slip).toBeLessThanOrEqual(0.5 + h + tol);
        }
      }),
    );
  });

  it('prices like the table when no 24h volume is known (no book to walk)', () => {
    const q = quoteTaker('realistic', {
      side: 'buy',
      quantity: dec('1'),
      reference: dec('100'),
      quoteVolume24h: undefined,
      grid: {},
    });
    expect(q.executedPrice.toFixed()).toBe('100.5');
    expect(q.levels).toBeNull();
  });

  it('fills a reset whole: beyond the book at its deepest level', () => {
    const m = { mid: '10.00000000', tickSize: '0.01', stepSize: '1', quoteVolume24h: dec(100_000) };
    const depth = sum(bookLevels(m, 'bids').map((l) => l.quantity));
    const q = quoteTaker('realistic', {
      side: 'sell',
      quantity: depth.times(2),
      reference: dec('10'),
      quoteVolume24h: m.quoteVolume24h,
      grid: m,
      whole: true,
    });
    expect(q.quantity.eq(depth.times(2))).toBe(true);
    const deepest = bookLevels(m, 'bids').at(-1)!.price;
    expect(q.levels!.at(-1)!.price.eq(deepest)).toBe(true);
  });
});

describe('resting fills', () => {
  it("never take more than the share of a print's volume, together, on the step grid", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 10_000 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: -6, max: 0 }),
        (orders, volumeSteps, share, stepExp) => {
          const step = dec(1).shiftedBy(stepExp);
          const volume = step.times(volumeSteps).div(7).decimalPlaces(8, 1);
          let taken = ZERO;
          for (const n of orders) {
            const q = quoteMaker('realistic', {
              remaining: step.times(n),
              printVolume: volume,
              participationPct: share,
              taken,
              grid: { stepSize: step.toFixed(8) },
            });
            expect(q.quantity.gte(0) && q.quantity.lte(step.times(n))).toBe(true);
            expect(q.quantity.mod(step).isZero()).toBe(true);
            taken = taken.plus(q.quantity);
          }
          expect(taken.lte(volume.times(share).div(100))).toBe(true);
          const instant = quoteMaker('instant', {
            remaining: step.times(orders[0]!),
            printVolume: ZERO,
            participationPct: share,
            taken: ZERO,
            grid: {},
          });
          expect(instant.quantity.eq(step.times(orders[0]!))).toBe(true);
        },
      ),
    );
  });
});

describe('fees', () => {
  it('follow the liquidity flag', () => {
    const fees = { maker: dec('0.0002'), taker: dec('0.0007') };
    expect(feeRateOf('maker', fees).toFixed()).toBe('0.0002');
    expect(feeRateOf('taker', fees).toFixed()).toBe('0.0007');
  });
});
