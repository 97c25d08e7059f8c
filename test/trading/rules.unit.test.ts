import { describe, expect, it } from 'vitest';
import { DEFAULT_RISK_PROFILE } from '../../domain/shared/risk-profile';
import { dec, fmt, parseDecimal } from '../../domain/trading/decimal';
import { feeFor, parseFeeRate } from '../../domain/trading/fees';
import { isTriggered, lockFor, triggerDirection } from '../../domain/trading/orders';
import { checkQuantity, floorToStep } from '../../domain/trading/quantity';
import { RISK_CHAIN, type RiskInput, runRiskChain } from '../../domain/trading/risk';
import { participationPct, slippagePct, slippedPrice } from '../../domain/trading/slippage';
import { PAIRS } from './support';

const BTC = PAIRS.BTCUSDT!;

describe('decimals', () => {
  it('prints exactly 8 places and refuses to drop digits silently', () => {
    expect(fmt(dec('1.5'))).toBe('1.50000000');
    expect(fmt(dec('0'))).toBe('0.00000000');
    expect(fmt(dec('-0'))).toBe('0.00000000');
    expect(() => fmt(dec('0.000000001'))).toThrow(RangeError);
  });

  it('parses plain decimals with at most 8 places only', () => {
    expect(parseDecimal('0.001')?.toFixed()).toBe('0.001');
    expect(parseDecimal('-2')?.toFixed()).toBe('-2');
    expect(parseDecimal('1e5')).toBeUndefined();
    expect(parseDecimal('0.123456789')).toBeUndefined();
    expect(parseDecimal('abc')).toBeUndefined();
    expect(parseDecimal('')).toBeUndefined();
  });
});

describe('fees (0.1% of notional, rounded down to 8 places)', () => {
  it('charges the rate on the notional', () => {
    expect(fmt(feeFor(dec('2000.2'), dec('0.001')))).toBe('2.00020000');
  });
  it('rounds down, never up', () => {
    expect(fmt(feeFor(dec('0.12345679'), dec('0.001')))).toBe('0.00012345');
  });
  it('validates a configured rate', () => {
    expect(parseFeeRate('0.002').toFixed()).toBe('0.002');
    expect(() => parseFeeRate('-0.1')).toThrow(RangeError);
    expect(() => parseFeeRate('0.5')).toThrow(RangeError);
  });
});

describe('slippage (participation of 24h quote volume, ARCHITECTURE §8)', () => {
  const s = (p: string | null) => fmt(slippagePct(p === null ? null : dec(p)));

  it('is 0.01% up to a participation of 0.01%', () => {
    expect(s('0')).toBe('0.01000000');
    expect(s('0.0005')).toBe('0.01000000');
    expect(s('0.01')).toBe('0.01000000');
  });
  it('is linear from 0.05 to 0.1 between 0.01% and 0.1%', () => {
    expect(s('0.01000001')).toBe('0.05000001'); // just past the band's start: 0.05 + 0.00000001/0.09 × 0.05
    expect(s('0.055')).toBe('0.07500000');
    expect(s('0.1')).toBe('0.10000000');
  });
  it('is linear from 0.1 to 0.5 between 0.1% and 1%', () => {
    expect(s('0.55')).toBe('0.30000000');
    expect(s('1')).toBe('0.50000000');
  });
  it('is 0.5% above 1% and when no volume is known', () => {
    expect(s('1.00000001')).toBe('0.50000000');
    expect(s('250')).toBe('0.50000000');
    expect(s(null)).toBe('0.50000000');
  });
  it('measures participation in percent of the 24h quote volume', () => {
    expect(fmt(participationPct(dec('1000'), dec('10000000'))!)).toBe('0.01000000');
    expect(participationPct(dec('1000'), dec('0'))).toBeNull();
    expect(participationPct(dec('1000'), undefined)).toBeNull();
  });
  it('moves buys up (rounded up) and sells down (rounded down)', () => {
    expect(fmt(slippedPrice(dec('40000'), 'buy', dec('0.01')))).toBe('40004.00000000');
    expect(fmt(slippedPrice(dec('40000'), 'sell', dec('0.01')))).toBe('39996.00000000');
    // 0.12345678 × 1.0007 = 0.123543199746 → up; × 0.9993 = 0.123370360254 → down
    expect(fmt(slippedPrice(dec('0.12345678'), 'buy', dec('0.07')))).toBe('0.12354320');
    expect(fmt(slippedPrice(dec('0.12345678'), 'sell', dec('0.07')))).toBe('0.12337036');
  });
});

describe('pending orders: side-aware triggers and locks (ARCHITECTURE §8, §16)', () => {
  it.each([
    ['buy', 'limit', 'at_or_below'],
    ['sell', 'limit', 'at_or_above'],
    ['sell', 'stop_loss', 'at_or_below'],
    ['buy', 'stop_loss', 'at_or_above'],
    ['sell', 'take_profit', 'at_or_above'],
    ['buy', 'take_profit', 'at_or_below'],
  ] as const)('%s %s fires %s its level', (side, type, direction) => {
    expect(triggerDirection(side, type)).toBe(direction);
    const terms = { side, type, level: dec('100') };
    expect(isTriggered(terms, dec('100'))).toBe(true);
    expect(isTriggered(terms, dec('99.99999999'))).toBe(direction === 'at_or_below');
    expect(isTriggered(terms, dec('100.00000001'))).toBe(direction === 'at_or_above');
  });

  it('locks qty × limit × (1 + fee) for a buy limit', () => {
    expect(fmt(lockFor({ side: 'buy', type: 'limit', level: dec('40000') }, dec('0.5'), dec('0.001')))).toBe(
      '20020.00000000',
    );
  });
  it('locks qty × trigger × (1 + fee + 0.5%) for buy stops', () => {
    for (const type of ['stop_loss', 'take_profit'] as const) {
      expect(fmt(lockFor({ side: 'buy', type, level: dec('40000') }, dec('0.5'), dec('0.001')))).toBe(
        '20120.00000000',
      );
    }
  });
  it('rounds a lock up so it always covers the fill', () => {
    // 0.00001 × 33333.33333333 = 0.3333333333333333 → 0.33333334 → × 1.001 = 0.33366667334 → 0.33366668
    expect(
      fmt(
        lockFor({ side: 'buy', type: 'limit', level: dec('33333.33333333') }, dec('0.00001'), dec('0.001')),
      ),
    ).toBe('0.33366668');
  });
  it('locks the base quantity for sells', () => {
    expect(fmt(lockFor({ side: 'sell', type: 'limit', level: dec('40000') }, dec('0.5'), dec('0.001')))).toBe(
      '0.50000000',
    );
  });
});

describe('quantity rules', () => {
  it('accepts a positive multiple of the step at or above the minimum', () => {
    expect(checkQuantity(dec('0.00123'), BTC)).toBeUndefined();
  });
  it('refuses zero, negative, below min_qty and off-step quantities', () => {
    expect(checkQuantity(dec('0'), BTC)?.reason).toBe('not_positive');
    expect(checkQuantity(dec('-1'), BTC)?.reason).toBe('not_positive');
    expect(checkQuantity(dec('0.000005'), BTC)?.reason).toBe('below_min_qty');
    expect(checkQuantity(dec('0.000015'), BTC)?.reason).toBe('not_step_multiple');
  });
  it('has no step constraint for a zero step', () => {
    expect(checkQuantity(dec('0.12345678'), { ...BTC, stepSize: '0.00000000' })).toBeUndefined();
  });
  it('floors to the step', () => {
    expect(floorToStep(dec('0.123456'), dec('0.001')).toFixed()).toBe('0.123');
  });
});

describe('risk chain', () => {
  const input = (over: Partial<RiskInput> = {}): RiskInput => ({
    owner: { type: 'account', status: 'active', accountStatus: 'active' },
    order: { side: 'buy', type: 'limit', symbol: 'BTCUSDT', quantity: dec('0.01') },
    profile: { ...DEFAULT_RISK_PROFILE },
    pair: BTC,
    startingBalance: dec('10000'),
    dayOpeningEquity: () => dec('10000'),
    equity: () => dec('10000'),
    referencePrice: () => dec('40000'),
    markPrice: () => dec('40000'),
    availableCash: dec('10000'),
    exposureQuantity: () => dec('0'),
    openOrders: 0,
    requirement: () => ({ asset: 'USDT', required: dec('400.4'), available: dec('10000') }),
    ...over,
  });

  it('has eight steps in the documented order', () => {
    expect(RISK_CHAIN.map((s) => `${s.step}:${s.rule}`)).toEqual([
      '1:account_active',
      '2:daily_loss_limit',
      '3:symbol_and_quantity',
      '4:min_notional',
      '5:max_order_size',
      '6:position_size_limit',
      '7:max_open_orders',
      '8:balance',
    ]);
  });

  it('passes a sound order', () => {
    expect(runRiskChain(input())).toBeUndefined();
  });

  it('reports the first failing step only, naming the rule in message and details', () => {
    const failure = runRiskChain(
      input({
        order: { side: 'buy', type: 'limit', symbol: 'BTCUSDT', quantity: dec('0.0001') }, // 4 USDT < 5
        openOrders: 50, // rule 7 fails too
        requirement: () => ({ asset: 'USDT', required: dec('1e9'), available: dec('0') }), // and rule 8
      }),
    );
    expect(failure).toMatchObject({ step: 4, rule: 'min_notional', code: 'ORDER_REJECTED' });
    expect(failure?.message).toMatch(/^risk rule 4 \(min_notional\)/);
    expect(failure?.details).toMatchObject({ rule: 'min_notional', step: 4 });
  });

  it('does not evaluate prices for an order refused before it needs one', () => {
    const failure = runRiskChain(
      input({
        owner: { type: 'account', status: 'suspended', accountStatus: 'suspended' },
        referencePrice: () => {
          throw new Error('must not be asked');
        },
        equity: () => {
          throw new Error('must not be asked');
        },
      }),
    );
    expect(failure).toMatchObject({ step: 1, code: 'ACCOUNT_SUSPENDED' });
  });

  it('answers PERMISSION_DENIED for an archived agent, ACCOUNT_SUSPENDED for an agent of a suspended account', () => {
    expect(
      runRiskChain(input({ owner: { type: 'agent', status: 'archived', accountStatus: 'active' } })),
    ).toMatchObject({ step: 1, code: 'PERMISSION_DENIED', details: { reason: 'agent_archived' } });
    expect(
      runRiskChain(input({ owner: { type: 'agent', status: 'active', accountStatus: 'suspended' } })),
    ).toMatchObject({ step: 1, code: 'ACCOUNT_SUSPENDED' });
  });

  it('trips the daily loss breaker strictly below opening equity − limit', () => {
    // limit 20% of 10,000 = 2,000: equity 8,000 is at the limit (still allowed), 7,999.99999999 below it.
    expect(runRiskChain(input({ equity: () => dec('8000') }))).toBeUndefined();
    expect(runRiskChain(input({ equity: () => dec('7999.99999999') }))).toMatchObject({
      step: 2,
      code: 'DAILY_LOSS_LIMIT',
    });
  });

  it('applies max order size and the position limit to buys only', () => {
    const sell = { side: 'sell' as const, type: 'limit' as const, symbol: 'BTCUSDT', quantity: dec('1') };
    expect(
      runRiskChain(
        input({
          order: sell,
          requirement: () => ({ asset: 'BTC', required: dec('1'), available: dec('1') }),
        }),
      ),
    ).toBeUndefined();
    const big = { side: 'buy' as const, type: 'limit' as const, symbol: 'BTCUSDT', quantity: dec('0.13') };
    expect(runRiskChain(input({ order: big }))).toMatchObject({ step: 5, rule: 'max_order_size' });
    const exposure = input({ exposureQuantity: () => dec('0.06') }); // (0.06 + 0.01) × 40,000 = 2,800 > 2,500
    expect(runRiskChain(exposure)).toMatchObject({ step: 6, code: 'POSITION_LIMIT_EXCEEDED' });
  });

  it('counts open orders for pending orders only', () => {
    expect(runRiskChain(input({ openOrders: 50 }))).toMatchObject({ step: 7, rule: 'max_open_orders' });
    expect(
      runRiskChain(
        input({
          openOrders: 50,
          order: { side: 'buy', type: 'market', symbol: 'BTCUSDT', quantity: dec('0.01') },
        }),
      ),
    ).toBeUndefined();
  });
});
