import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RISK_PROFILE } from '../../domain/shared/risk-profile';
import { Decimal, dec } from '../../domain/trading/decimal';
import { checkQuantity } from '../../domain/trading/quantity';
import { type RiskInput, runRiskChain } from '../../domain/trading/risk';
import { decimalTextOf, PAIRS } from './support';

const BTC = PAIRS.BTCUSDT!;

/** A positive decimal text of up to 16 digits and up to `maxPlaces` places. */
const positiveText = (maxPlaces: number) =>
  fc
    .tuple(fc.bigInt({ min: 1n, max: 10n ** 16n }), fc.integer({ min: 0, max: maxPlaces }))
    .map(([digits, places]) => decimalTextOf(digits, places));

describe('checkQuantity: the step multiple without a division (domain/trading/quantity.ts)', () => {
  // Also with the trailing zeros the real pairs' filters carry (`0.00001000`, `1.00000000`).
  const steps = [
    '1',
    '0.1',
    '0.001',
    '0.00001',
    '0.00000001',
    '10',
    '0.5',
    '0.00025',
    '2.5',
    '0.00001000',
    '1.00000000',
    '0.10',
    '10.00000000',
    '0.50000000',
  ];

  it('answers as the remainder does, for power-of-ten steps and others', () => {
    fc.assert(
      fc.property(positiveText(12), fc.constantFrom(...steps), (quantity, stepSize) => {
        const pair = { ...BTC, minQty: '0', stepSize };
        const q = dec(quantity);
        const byRemainder = q.mod(new Decimal(stepSize)).isZero();
        const problem = checkQuantity(q, pair);
        expect(problem?.reason === 'not_step_multiple').toBe(!byRemainder);
        if (byRemainder) expect(problem).toBeUndefined();
      }),
      { numRuns: 3_000 },
    );
  });
});

describe("the risk chain's percentages (domain/trading/risk.ts, pct)", () => {
  const input = (cash: string, percent: number): RiskInput => ({
    owner: { type: 'account', status: 'active', accountStatus: 'active' },
    order: { side: 'buy', type: 'market', symbol: 'BTCUSDT', quantity: dec('1') },
    profile: { ...DEFAULT_RISK_PROFILE, max_order_size_pct: percent, daily_loss_limit_pct: 100 },
    pair: { ...BTC, minNotional: '0' },
    startingBalance: dec('1'),
    dayOpeningEquity: () => dec('1'),
    equity: () => dec('1'),
    // The order's value is always above the cap: step 5 fails and says the cap.
    referencePrice: () => dec(cash).plus(1),
    markPrice: () => dec('1'),
    availableCash: dec(cash),
    exposureQuantity: () => dec('0'),
    openOrders: 0,
    requirement: () => ({ asset: 'USDT', required: dec('0'), available: dec('0') }),
  });

  it('states the cap as `cash × percent` shifted two places, exactly, for every percentage', () => {
    fc.assert(
      fc.property(positiveText(8), fc.integer({ min: 1, max: 100 }), (cash, percent) => {
        const failure = runRiskChain(input(cash, percent));
        const cap = new Decimal(cash).times(percent).shiftedBy(-2).toFixed();
        expect(failure?.rule).toBe('max_order_size');
        expect(failure?.message).toContain(`of available cash (${cap} USDT)`);
      }),
      { numRuns: 2_000 },
    );
  });
});
