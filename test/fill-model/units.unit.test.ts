import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BookLevel, bookLevels, sideTakenBy } from '../../domain/fill-model/book';
import { quoteTaker, type TakerInput, type TakerQuote } from '../../domain/fill-model/model';
import { walkBook } from '../../domain/fill-model/walk';
import { fromUnits } from '../../domain/market/decimal';
import {
  type Dec,
  dec,
  HUNDRED,
  max,
  min,
  roundDown8,
  roundHalfEven8,
  roundUp8,
  ZERO,
} from '../../domain/trading/decimal';
import { feeFor } from '../../domain/trading/fees';
import {
  averageEntry8,
  costShare8,
  executedPriceText,
  notional8,
  weighted8,
} from '../../domain/trading/fill-figures';
import { participationPct, slippagePct, slippedPrice } from '../../domain/trading/slippage';
import { divRound, EXACT_DIVISOR_BOUND, exactOf, unitsOf } from '../../domain/trading/units';

/*
 * The integer arithmetic of the fill (issue 23) against the decimal formulation it replaced, kept here as the oracle:
 * the same figures, digit for digit, on random books and orders — limit walks, depth already taken, whole fills past
 * the book, coarse ticks and steps, tiny and huge prices, volumes and fee rates with more than 8 places, and
 * quantities large enough to reach the decimal fallback (divisors ≥ 10^28 units).
 */

// ---------------------------------------------------------------------------------------------------------
// The oracle: the decimal formulation before the integer one (domain/fill-model/walk.ts and model.ts at b331687).
// ---------------------------------------------------------------------------------------------------------

const oracleWalk = (
  levels: readonly BookLevel[],
  quantity: Dec,
  options: { side: 'buy' | 'sell'; limit?: Dec | undefined; taken?: Dec | undefined },
) => {
  let skip = options.taken ?? ZERO;
  let left = quantity;
  let notional = ZERO;
  const consumed: BookLevel[] = [];
  for (const level of levels) {
    if (left.lte(0)) break;
    const { limit } = options;
    if (limit && (options.side === 'buy' ? level.price.gt(limit) : level.price.lt(limit))) break;
    let available = level.quantity;
    if (skip.gt(0)) {
      const skipped = min(skip, available);
      skip = skip.minus(skipped);
      available = available.minus(skipped);
      if (available.lte(0)) continue;
    }
    const take = min(left, available);
    consumed.push({ price: level.price, quantity: take });
    notional = notional.plus(take.times(level.price));
    left = left.minus(take);
  }
  return { quantity: quantity.minus(left), notional, levels: consumed };
};

const oracleSlippage = (executed: Dec, reference: Dec): Dec =>
  roundHalfEven8(executed.minus(reference).abs().div(reference).times(HUNDRED));

const oracleInstant = (input: TakerInput): TakerQuote => {
  const quoteVolume = input.quoteVolume24h ?? null;
  const participation = participationPct(input.quantity.times(input.reference), quoteVolume ?? undefined);
  let slippage = slippagePct(participation);
  let executed = slippedPrice(input.reference, input.side, slippage);
  const { limit } = input;
  if (limit && (input.side === 'buy' ? executed.gt(limit) : executed.lt(limit))) {
    executed = limit;
    slippage = oracleSlippage(limit, input.reference);
  }
  return {
    quantity: input.quantity,
    executedPrice: executed,
    slippagePct: slippage,
    quoteVolume,
    participationPct: participation,
    levels: null,
    bookTaken: null,
  };
};

const oracleRealistic = (input: TakerInput): TakerQuote => {
  const volume = input.quoteVolume24h;
  if (volume === undefined || !volume.isFinite() || volume.lte(0)) {
    return { ...oracleInstant({ ...input, quoteVolume24h: undefined }), bookTaken: null };
  }
  const levels = bookLevels(
    { mid: input.reference.toFixed(8), ...input.grid, quoteVolume24h: volume },
    sideTakenBy(input.side),
  );
  const taken = input.taken ?? ZERO;
  const walk = oracleWalk(levels, input.quantity, { side: input.side, limit: input.limit, taken });
  let { quantity, notional } = walk;
  const consumed = [...walk.levels];
  if (input.whole && quantity.lt(input.quantity)) {
    const rest = input.quantity.minus(quantity);
    const deepest =
      consumed[consumed.length - 1]?.price ?? levels[levels.length - 1]?.price ?? input.reference;
    consumed.push({ price: deepest, quantity: rest });
    notional = notional.plus(rest.times(deepest));
    quantity = input.quantity;
  }
  const participation = participationPct(input.quantity.times(input.reference), volume);
  if (quantity.isZero()) {
    return {
      quantity,
      executedPrice: input.reference,
      slippagePct: ZERO,
      quoteVolume: volume,
      participationPct: participation,
      levels: [],
      bookTaken: taken,
    };
  }
  const against = (v: Dec) => (input.side === 'buy' ? roundUp8(v) : roundDown8(v));
  let executed = against(notional.div(quantity));
  if (input.limit) executed = input.side === 'buy' ? min(executed, input.limit) : max(executed, input.limit);
  return {
    quantity,
    executedPrice: executed,
    slippagePct: oracleSlippage(executed, input.reference),
    quoteVolume: volume,
    participationPct: participation,
    levels: consumed,
    bookTaken: taken,
  };
};

// ---------------------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------------------

/** A non-negative 8-place decimal of 1 to `digits` digits of 1e-8 units: from 0.00000001 up to 10^(digits − 8). */
const units = (maxDigits: number, minDigits = 1) =>
  fc
    .integer({ min: minDigits, max: maxDigits })
    .chain((d) => fc.bigInt({ min: 10n ** BigInt(d - 1), max: 10n ** BigInt(d) - 1n }));
const eight = (maxDigits: number, minDigits = 1) => units(maxDigits, minDigits).map((u) => dec(fromUnits(u)));

/** A decimal with up to `places` places (more than 8 allowed): volumes and fee rates as they come. */
const anyPlaces = (maxDigits: number, places: number) =>
  fc
    .tuple(units(maxDigits), fc.integer({ min: 0, max: places }))
    .map(([u, p]) => dec(u.toString()).shiftedBy(-p));

const TICKS = ['0.00000001', '0.00001', '0.01', '0.025', '0.5', '1', '100'];
const STEPS = ['0.00000001', '0.00001', '0.001', '0.3', '1', '10'];
const side = fc.constantFrom<'buy' | 'sell'>('buy', 'sell');

const market = fc.record({
  // The mid: 0.00000001 to ~10^7 USDT (the book's prices are safe-integer units).
  mid: units(15),
  tickSize: fc.option(fc.constantFrom(...TICKS), { nil: undefined }),
  stepSize: fc.option(fc.constantFrom(...STEPS), { nil: undefined }),
  volume: fc.oneof(
    anyPlaces(16, 20),
    fc.constant(undefined),
    fc.constant(ZERO),
    anyPlaces(30, 2), // huge: 10^28 and more, the participation's decimal fallback
  ),
});

const takerCase = fc
  .tuple(
    market,
    side,
    fc.oneof(eight(14), eight(34, 28)), // the quantity; the second arm reaches the 10^28-unit fallback
    fc.option(fc.integer({ min: -300, max: 3_000 }), { nil: undefined }), // limit, bp from the mid
    fc.option(eight(14), { nil: undefined }), // taken
    fc.boolean(), // whole
  )
  .map(([m, s, quantity, limitBps, taken, whole]): TakerInput => {
    const reference = dec(fromUnits(m.mid));
    const limit =
      limitBps === undefined
        ? undefined
        : roundDown8(reference.times(s === 'buy' ? 10_000 + limitBps : 10_000 - limitBps).div(10_000));
    return {
      side: s,
      quantity,
      reference,
      quoteVolume24h: m.volume,
      grid: { tickSize: m.tickSize, stepSize: m.stepSize },
      ...(limit?.gt(0) ? { limit } : {}),
      ...(taken ? { taken } : {}),
      ...(whole ? { whole } : {}),
    };
  });

/** A quote as texts: every figure's exact decimal, so "equal" is digit for digit. */
const texts = (q: TakerQuote) => ({
  quantity: q.quantity.toFixed(),
  executedPrice: q.executedPrice.toFixed(),
  slippagePct: q.slippagePct.toFixed(),
  quoteVolume: q.quoteVolume?.toFixed() ?? null,
  participationPct: q.participationPct?.toFixed() ?? null,
  levels: q.levels?.map((l) => [l.price.toFixed(), l.quantity.toFixed()]) ?? null,
  bookTaken: q.bookTaken?.toFixed() ?? null,
});

const RUNS = { numRuns: 1_500 };

describe('integer units against the decimal formulation', () => {
  it('reads an 8-place value as its units, and nothing else', () => {
    fc.assert(
      fc.property(fc.oneof(anyPlaces(40, 16), fc.constant(ZERO)), fc.boolean(), (v, negative) => {
        const value = negative ? v.negated() : v;
        const places = value.decimalPlaces() ?? 0;
        expect(unitsOf(value)).toBe(places <= 8 ? BigInt(value.shiftedBy(8).toFixed()) : undefined);
        const exact = exactOf(value)!;
        expect(dec(exact.int.toString()).shiftedBy(-exact.scale).eq(value)).toBe(true);
      }),
      RUNS,
    );
  });

  it('rounds a quotient once, as the decimal division then the 8-place rounding does', () => {
    fc.assert(
      fc.property(units(40), units(28), (n, d) => {
        const q = dec(n.toString()).div(d.toString());
        expect(divRound(n, d, 'down').toString()).toBe(q.decimalPlaces(0, 1).toFixed());
        expect(divRound(n, d, 'up').toString()).toBe(q.decimalPlaces(0, 0).toFixed());
        expect(divRound(n, d, 'half-even').toString()).toBe(q.decimalPlaces(0, 6).toFixed());
      }),
      RUNS,
    );
  });

  it('walks the book to the same levels, quantity and notional', () => {
    fc.assert(
      fc.property(takerCase, (input) => {
        const volume = input.quoteVolume24h;
        fc.pre(volume?.gt(0) === true);
        const levels = bookLevels(
          { mid: input.reference.toFixed(8), ...input.grid, quoteVolume24h: volume },
          sideTakenBy(input.side),
        );
        const options = { side: input.side, limit: input.limit, taken: input.taken };
        const a = oracleWalk(levels, input.quantity, options);
        const b = walkBook(levels, input.quantity, options);
        expect(b.quantity.toFixed()).toBe(a.quantity.toFixed());
        expect(b.notional.toFixed()).toBe(a.notional.toFixed());
        expect(b.levels.map((l) => [l.price.toFixed(), l.quantity.toFixed()])).toEqual(
          a.levels.map((l) => [l.price.toFixed(), l.quantity.toFixed()]),
        );
      }),
      RUNS,
    );
  });

  it('prices realistic and instant takers to the same figures', () => {
    fc.assert(
      fc.property(takerCase, (input) => {
        expect(texts(quoteTaker('realistic', input))).toEqual(texts(oracleRealistic(input)));
        expect(texts(quoteTaker('instant', input))).toEqual(texts(oracleInstant(input)));
      }),
      RUNS,
    );
  });

  it('prices the walks of a fine book (many levels taken, 8-place ticks) the same', () => {
    const fine = fc
      .tuple(units(13, 9), side, units(12), fc.option(units(12), { nil: undefined }), fc.boolean())
      .map(
        ([mid, s, q, taken, whole]): TakerInput => ({
          side: s,
          quantity: dec(fromUnits(q)),
          reference: dec(fromUnits(mid)),
          quoteVolume24h: dec('123456789.123456789'),
          grid: {},
          ...(taken !== undefined ? { taken: dec(fromUnits(taken)) } : {}),
          ...(whole ? { whole } : {}),
        }),
      );
    fc.assert(
      fc.property(fine, (input) => {
        const q = quoteTaker('realistic', input);
        expect(texts(q)).toEqual(texts(oracleRealistic(input)));
      }),
      RUNS,
    );
  });

  it("computes a fill's notional, fee, average entry, cost share and executed price the same", () => {
    const rate = fc.oneof(fc.constantFrom('0.001', '0', '0.1', '0.00075').map(dec), anyPlaces(6, 16));
    fc.assert(
      fc.property(
        fc.oneof(eight(16), eight(34, 28)),
        eight(16),
        eight(16),
        fc.oneof(eight(16), eight(34, 28)),
        rate,
        (quantity, price, avg, held, feeRate) => {
          const notional = roundHalfEven8(quantity.times(price));
          expect(notional8(quantity, price).toFixed()).toBe(notional.toFixed());
          expect(feeFor(notional, feeRate).toFixed()).toBe(roundDown8(notional.times(feeRate)).toFixed());
          const after = held.plus(quantity);
          const average = weighted8(avg, held, quantity, price, after);
          const oracleAverage = roundHalfEven8(avg.times(held).plus(quantity.times(price)).div(after));
          if (after.shiftedBy(8).lt(EXACT_DIVISOR_BOUND.toString())) {
            expect(average).toBe(BigInt(oracleAverage.shiftedBy(8).toFixed()));
          } else expect(average).toBeUndefined();
          const share = weighted8(avg, quantity, undefined, undefined, held);
          const oracleShare = roundHalfEven8(avg.times(quantity).div(held));
          if (held.shiftedBy(8).lt(EXACT_DIVISOR_BOUND.toString())) {
            expect(share).toBe(BigInt(oracleShare.shiftedBy(8).toFixed()));
          } else expect(share).toBeUndefined();
          // What the ledger uses, on either path.
          expect(costShare8(avg, quantity, held).toFixed(8)).toBe(oracleShare.toFixed(8));
          expect(averageEntry8(avg, held, quantity, price, after).toFixed(8)).toBe(oracleAverage.toFixed(8));
          expect(executedPriceText(notional, quantity)).toBe(
            roundHalfEven8(notional.div(quantity)).toFixed(8),
          );
          expect(executedPriceText(notional, ZERO)).toBe('0.00000000');
        },
      ),
      RUNS,
    );
  });
});
