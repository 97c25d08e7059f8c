import { describe, expect, it } from 'vitest';
import { foldEvents } from '../../domain/shared/decider';
import { walletDecider } from '../../domain/wallet/decide';
import type { WalletEvent } from '../../domain/wallet/events';
import { tradingModeDecider } from '../../domain/wallet/mode';
import { deciderSpec } from '../support/decider-spec';
import {
  AT,
  context,
  dataOf,
  fill,
  market,
  NOW,
  OWNER_ID,
  opened,
  owner,
  place,
  run,
  SESSION_ID,
} from './support';

const spec = deciderSpec(walletDecider);
const wide = { max_position_size_pct: 100, max_order_size_pct: 100 };

/** A wallet that bought 0.05 BTC at market (reference 40,000: executed 40,004, total 2,002.2002). */
const afterBuy = () => run([place({ quantity: '0.05' })]).events;

describe('wallet decider: opening and market orders', () => {
  it('opens the wallet and its session on the first order, opens the trading day, fills a market buy with slippage and fee', () => {
    spec
      .given([])
      .when(place({ quantity: '0.05', idempotencyKey: 'k1', requestHash: 'h1' }), context())
      .thenEmits([
        ...opened(),
        {
          type: 'TradingDayOpened',
          data: { session_id: SESSION_ID, day: '2024-01-05', equity: '10000.00000000', opened_at: AT },
        },
        {
          type: 'OrderPlaced',
          data: {
            order_id: 'id-1',
            session_id: SESSION_ID,
            symbol: 'BTCUSDT',
            base_asset: 'BTC',
            side: 'buy',
            type: 'market',
            quantity: '0.05000000',
            price: null,
            trigger_price: null,
            marketable: false,
            locked_amount: '0.00000000',
            lock_asset: 'USDT',
            fee_rate: '0.001',
            idempotency_key: 'k1',
            request_hash: 'h1',
            placed_at: AT,
          },
        },
        {
          type: 'OrderFilled',
          data: {
            order_id: 'id-1',
            trade_id: 'id-2',
            session_id: SESSION_ID,
            symbol: 'BTCUSDT',
            base_asset: 'BTC',
            side: 'buy',
            type: 'market',
            trigger: 'market',
            quantity: '0.05000000',
            reference_price: '40000.00000000',
            reference_time: '2024-01-05T09:59:59.000Z',
            price_source: 'files',
            quote_volume_24h: '400000000.00000000',
            participation_pct: '0.00050000', // 2,000 / 400,000,000 × 100
            slippage_pct: '0.01000000',
            limit_price: null,
            executed_price: '40004.00000000',
            notional: '2000.20000000',
            fee_rate: '0.001',
            fee: '2.00020000',
            total: '2002.20020000',
            cost_basis: '2000.20000000',
            realized_pnl: '0.00000000',
            locked_amount: '0.00000000',
            released_amount: '0.00000000',
            position_after: {
              quantity: '0.05000000',
              cost_basis: '2000.20000000',
              avg_entry_price: '40004.00000000',
            },
            filled_at: AT,
            // The fill model's record (issue 21): this context sets none, so `instant`, the venue's rule before.
            fill_model: 'instant',
            fill_model_version: 2,
            liquidity: 'taker',
            book_levels: null,
            book_taken: null,
            volume_available: null,
            participation_cap_pct: null,
            volume_taken: null,
            remaining_quantity: '0.00000000',
            order_after: {
              executed_quantity: '0.05000000',
              executed_price: '40004.00000000',
              fee: '2.00020000',
              total: '2002.20020000',
              realized_pnl: '0.00000000',
              locked_amount: '0.00000000',
            },
          },
        },
      ]);
  });

  it('books the buy: cash down by the total, the position at cost, the fee paid', () => {
    const state = foldEvents(walletDecider, afterBuy());
    expect(state.cash.toFixed()).toBe('7997.7998');
    expect(state.lockedCash.toFixed()).toBe('0');
    expect(state.holdings.BTC?.quantity.toFixed()).toBe('0.05');
    expect(state.holdings.BTC?.cost.toFixed()).toBe('2000.2');
    expect(state.feesPaid.toFixed()).toBe('2.0002');
    expect(state.openOrders).toEqual({});
  });

  it('sells below the reference price and realizes (exit − average entry) × quantity; fees apart', () => {
    spec
      .given(afterBuy())
      .when(place({ side: 'sell', quantity: '0.02' }), context(market({ BTCUSDT: '44000' })))
      .thenAssert((produced, state) => {
        const f = dataOf(produced, 'OrderFilled');
        expect(f).toMatchObject({
          side: 'sell',
          executed_price: '43995.60000000', // 44,000 × (1 − 0.01%)
          notional: '879.91200000',
          fee: '0.87991200',
          total: '879.03208800', // notional − fee
          cost_basis: '800.08000000', // 2,000.2 × 0.02 / 0.05
          realized_pnl: '79.83200000',
          position_after: {
            quantity: '0.03000000',
            cost_basis: '1200.12000000',
            avg_entry_price: '40004.00000000',
          },
        });
        expect(state.realizedPnl.toFixed()).toBe('79.832');
        expect(state.cash.toFixed()).toBe('8876.831888');
        expect(state.closedTrades).toBe(1);
        expect(state.winningTrades).toBe(1);
      });
  });

  it('closes a whole position with its whole cost basis (nothing left over from rounding)', () => {
    const { state, last } = run(
      [place({ quantity: '0.03' }), place({ quantity: '0.03', side: 'sell' })],
      context(undefined, { riskProfile: wide }),
    );
    expect(dataOf(last, 'OrderFilled').position_after).toEqual({
      quantity: '0.00000000',
      cost_basis: '0.00000000',
      avg_entry_price: '0.00000000',
    });
    expect(state.holdings).toEqual({});
  });

  it('accepts symbols in any case', () => {
    spec
      .given([])
      .when(place({ symbol: ' btcusdt ', quantity: '0.01' }), context())
      .thenAssert((produced) => expect(dataOf(produced, 'OrderPlaced').symbol).toBe('BTCUSDT'));
  });

  it('takes the maximum slippage when no 24h volume is known', () => {
    const m = market();
    m.volumes.clear();
    spec
      .given([])
      .when(place({ quantity: '0.01' }), context(m))
      .thenAssert((produced) =>
        expect(dataOf(produced, 'OrderFilled')).toMatchObject({
          quote_volume_24h: null,
          participation_pct: null,
          slippage_pct: '0.50000000',
          executed_price: '40200.00000000',
        }),
      );
  });

  it('refuses a market order without a price (PRICE_NOT_AVAILABLE, nothing recorded)', () => {
    spec
      .given(afterBuy())
      .when(place({ symbol: 'ETHUSDT', quantity: '0.1' }), context(market({ BTCUSDT: '40000' })))
      .thenThrows('PRICE_NOT_AVAILABLE', { symbol: 'ETHUSDT' });
  });

  it('opens a new trading day once per UTC day only', () => {
    spec
      .given(afterBuy())
      .when(place({ quantity: '0.01' }), context())
      .thenAssert((produced) => expect(produced.map((e) => e.type)).toEqual(['OrderPlaced', 'OrderFilled']));
    spec
      .given(afterBuy())
      .when(place({ quantity: '0.01' }), context(undefined, { now: new Date('2024-01-06T00:00:00.000Z') }))
      .thenAssert((produced) =>
        expect(dataOf(produced, 'TradingDayOpened')).toMatchObject({
          day: '2024-01-06',
          equity: '9997.79980000', // 7,997.7998 cash + 0.05 × 40,000
        }),
      );
  });
});

describe('wallet decider: request validation (not recorded)', () => {
  it.each([
    [{ quantity: '0.123456789' }, 'quantity'],
    [{ quantity: '1e-3' }, 'quantity'],
    [{ type: 'limit' as const }, 'price'],
    [{ type: 'limit' as const, price: '0' }, 'price'],
    [{ type: 'limit' as const, price: '-5' }, 'price'],
    [{ type: 'stop_loss' as const }, 'trigger_price'],
    [{ type: 'take_profit' as const, triggerPrice: 'abc' }, 'trigger_price'],
    // A price the type does not use is refused, not ignored (a market order with a price is likely a mistake).
    [{ type: 'market' as const, price: '40000' }, 'price'],
    [{ type: 'stop_loss' as const, price: '39000', triggerPrice: '39000' }, 'price'],
    [{ type: 'market' as const, triggerPrice: '39000' }, 'trigger_price'],
    [{ type: 'limit' as const, price: '39000', triggerPrice: '39000' }, 'trigger_price'],
    // At or above 10^15 (MAX_ORDER_DECIMAL): beyond what the read models store.
    [{ quantity: '1000000000000000' }, 'quantity'],
    [{ quantity: '12345678901234567890123456789012345678' }, 'quantity'],
    [{ type: 'limit' as const, price: '1000000000000000.5' }, 'price'],
    [{ type: 'stop_loss' as const, triggerPrice: '9999999999999999' }, 'trigger_price'],
  ])('%o → VALIDATION_ERROR on %s', (order, field) => {
    spec.given([]).when(place(order), context()).thenThrows('VALIDATION_ERROR', { field });
  });
});

describe('wallet decider: the risk chain (each failure recorded as OrderRejected)', () => {
  const rejected = (events: WalletEvent[]) => dataOf(events, 'OrderRejected');

  it('1 account_active: a suspended account → ACCOUNT_SUSPENDED', () => {
    spec
      .given(opened())
      .when(place({}, { status: 'suspended', accountStatus: 'suspended' }), context())
      .thenAssert((produced, state) => {
        expect(rejected(produced)).toMatchObject({
          order_id: 'id-1',
          step: 1,
          rule: 'account_active',
          code: 'ACCOUNT_SUSPENDED',
          symbol: 'BTCUSDT',
          quantity: '0.01000000',
        });
        expect(state.cash.toFixed()).toBe('10000');
      });
  });

  it('1 account_active: an archived agent → PERMISSION_DENIED', () => {
    spec
      .given([])
      .when(place({}, { ownerType: 'agent', status: 'archived' }), context())
      .thenAssert((produced) =>
        expect(rejected(produced)).toMatchObject({ step: 1, code: 'PERMISSION_DENIED' }),
      );
  });

  it('2 daily_loss_limit: equity below the day opening − limit % of the starting balance → DAILY_LOSS_LIMIT', () => {
    const ctx = context(market({ BTCUSDT: '20000', ETHUSDT: '2000' }), {
      riskProfile: { daily_loss_limit_pct: 5 },
    });
    spec
      .given(afterBuy())
      .when(place({ symbol: 'ETHUSDT', quantity: '0.1' }), ctx)
      .thenAssert((produced) =>
        // equity 7,997.7998 + 0.05 × 20,000 = 8,997.7998 < 10,000 − 5% × 10,000
        expect(rejected(produced)).toMatchObject({
          step: 2,
          rule: 'daily_loss_limit',
          code: 'DAILY_LOSS_LIMIT',
          details: {
            day_opening_equity: '10000.00000000',
            equity: '8997.79980000',
            loss_limit: '500.00000000',
          },
        }),
      );
  });

  it('2 daily_loss_limit: clears at 00:00 UTC (the new day opens at the current equity)', () => {
    const ctx = context(market({ BTCUSDT: '20000', ETHUSDT: '2000' }), {
      riskProfile: { daily_loss_limit_pct: 5 },
      now: new Date('2024-01-06T00:00:00.000Z'),
    });
    spec
      .given(afterBuy())
      .when(place({ symbol: 'ETHUSDT', quantity: '0.1' }), ctx)
      .thenAssert((produced) => {
        expect(produced.map((e) => e.type)).toEqual(['TradingDayOpened', 'OrderPlaced', 'OrderFilled']);
        expect(dataOf(produced, 'TradingDayOpened').equity).toBe('8997.79980000');
      });
  });

  it('3 symbol_and_quantity: unknown or inactive symbol → INVALID_SYMBOL', () => {
    for (const symbol of ['DOGEUSDT', 'LUNAUSDT']) {
      spec
        .given(opened())
        .when(place({ symbol }), context())
        .thenAssert((produced) =>
          expect(rejected(produced)).toMatchObject({
            step: 3,
            rule: 'symbol_and_quantity',
            code: 'INVALID_SYMBOL',
          }),
        );
    }
  });

  it.each([
    ['0', 'not_positive'],
    ['-1', 'not_positive'],
    ['0.000005', 'below_min_qty'],
    ['0.000015', 'not_step_multiple'],
  ])('3 symbol_and_quantity: quantity %s → INVALID_QUANTITY (%s)', (quantity, reason) => {
    spec
      .given(opened())
      .when(place({ quantity }), context())
      .thenAssert((produced) =>
        expect(rejected(produced)).toMatchObject({ step: 3, code: 'INVALID_QUANTITY', details: { reason } }),
      );
  });

  it('4 min_notional: order value below the pair minimum → ORDER_REJECTED', () => {
    spec
      .given(opened())
      .when(place({ quantity: '0.0001' }), context()) // 4 USDT < 5
      .thenAssert((produced) =>
        expect(rejected(produced)).toMatchObject({
          step: 4,
          rule: 'min_notional',
          code: 'ORDER_REJECTED',
          details: { notional: '4.00000000', min_notional: '5.00000000' },
        }),
      );
  });

  it('5 max_order_size: a buy above max_order_size_pct of available cash → ORDER_REJECTED', () => {
    spec
      .given(opened())
      .when(place({ quantity: '0.13' }), context(undefined, { riskProfile: { max_position_size_pct: 100 } }))
      .thenAssert((produced) =>
        expect(rejected(produced)).toMatchObject({ step: 5, rule: 'max_order_size', code: 'ORDER_REJECTED' }),
      );
  });

  it('6 position_size_limit: a buy lifting the coin above 25% of equity → POSITION_LIMIT_EXCEEDED', () => {
    spec
      .given(opened())
      .when(place({ quantity: '0.07' }), context()) // 2,800 > 2,500
      .thenAssert((produced) =>
        expect(rejected(produced)).toMatchObject({
          step: 6,
          code: 'POSITION_LIMIT_EXCEEDED',
          details: { position_value_after: '2800.00000000', max_position_value: '2500.00000000' },
        }),
      );
  });

  it('6 position_size_limit: counts open buy orders of the coin too', () => {
    const given = run([place({ type: 'limit', price: '39000', quantity: '0.05' })]).events;
    spec
      .given(given)
      .when(place({ quantity: '0.02' }), context()) // (0.05 pending + 0.02) × 40,000 = 2,800
      .thenAssert((produced) => expect(rejected(produced)).toMatchObject({ step: 6 }));
  });

  it('7 max_open_orders: no more pending orders than the profile allows → ORDER_REJECTED', () => {
    const ctx = context(undefined, { riskProfile: { max_open_orders: 1 } });
    const given = run([place({ type: 'limit', price: '39000', quantity: '0.01' })], ctx).events;
    spec
      .given(given)
      .when(place({ type: 'limit', price: '38000', quantity: '0.01' }), ctx)
      .thenAssert((produced) =>
        expect(rejected(produced)).toMatchObject({
          step: 7,
          rule: 'max_open_orders',
          code: 'ORDER_REJECTED',
        }),
      );
    // market orders never become pending: not counted
    spec
      .given(given)
      .when(place({ quantity: '0.01' }), ctx)
      .thenAssert((produced) => expect(produced.map((e) => e.type)).toContain('OrderFilled'));
  });

  it('8 balance: a buy costing more than the free cash → INSUFFICIENT_BALANCE', () => {
    spec
      .given(opened('100.00000000'))
      .when(place({ quantity: '0.0025' }), context(undefined, { riskProfile: wide })) // 100 + slippage + fee
      .thenAssert((produced) =>
        expect(rejected(produced)).toMatchObject({
          step: 8,
          rule: 'balance',
          code: 'INSUFFICIENT_BALANCE',
          details: { asset: 'USDT', required: '100.11001000', available: '100.00000000' },
        }),
      );
  });

  it('8 balance: no selling what is not held → INSUFFICIENT_BALANCE', () => {
    spec
      .given(opened())
      .when(place({ side: 'sell', quantity: '0.01' }), context())
      .thenAssert((produced) =>
        expect(rejected(produced)).toMatchObject({
          step: 8,
          details: { asset: 'BTC', available: '0.00000000' },
        }),
      );
    spec
      .given(afterBuy())
      .when(place({ side: 'sell', quantity: '0.05001' }), context())
      .thenAssert((produced) => expect(rejected(produced)).toMatchObject({ step: 8 }));
  });

  it('8 balance: quantity locked by an open sell cannot be sold again', () => {
    const given = [
      ...afterBuy(),
      ...run(
        [place({ side: 'sell', type: 'stop_loss', triggerPrice: '38000', quantity: '0.05' })],
        context(),
        afterBuy(),
      ).last,
    ];
    spec
      .given(given)
      .when(place({ side: 'sell', quantity: '0.01' }), context())
      .thenAssert((produced) =>
        expect(rejected(produced)).toMatchObject({ step: 8, details: { available: '0.00000000' } }),
      );
  });

  it('first failure wins: an order breaking rules 4, 6 and 8 is refused by rule 4', () => {
    spec
      .given(opened('1.00000000'))
      .when(place({ quantity: '0.0001' }), context())
      .thenAssert((produced) => expect(rejected(produced)).toMatchObject({ step: 4 }));
  });
});

describe('wallet decider: pending orders, locks and matching', () => {
  const limitBuy = () => run([place({ type: 'limit', price: '39000', quantity: '0.05' })]);

  it('places a buy limit as pending and locks qty × limit × (1 + fee)', () => {
    const { last, state } = limitBuy();
    expect(dataOf(last, 'OrderPlaced')).toMatchObject({
      type: 'limit',
      price: '39000.00000000',
      trigger_price: null,
      locked_amount: '1951.95000000',
      lock_asset: 'USDT',
    });
    expect(last.map((e) => e.type)).not.toContain('OrderFilled');
    expect(state.cash.toFixed()).toBe('8048.05');
    expect(state.lockedCash.toFixed()).toBe('1951.95');
  });

  it('does not fill a buy limit above its price, fills at the limit price (no slippage) at or below it', () => {
    const { events } = limitBuy();
    spec.given(events).when(fill('id-1', '39000.00000001'), context()).thenEmits([]);
    spec
      .given(events)
      .when(fill('id-1', '38900', '2024-01-05T10:00:05.000Z'), context())
      .thenAssert((produced, state) => {
        expect(dataOf(produced, 'OrderFilled')).toMatchObject({
          order_id: 'id-1',
          trigger: 'limit',
          reference_price: '38900.00000000',
          reference_time: '2024-01-05T10:00:05.000Z',
          slippage_pct: '0.00000000',
          participation_pct: null,
          executed_price: '39000.00000000',
          notional: '1950.00000000',
          fee: '1.95000000',
          total: '1951.95000000',
          locked_amount: '1951.95000000',
          released_amount: '0.00000000',
        });
        expect(state.lockedCash.toFixed()).toBe('0');
        expect(state.cash.toFixed()).toBe('8048.05');
        expect(state.openOrders).toEqual({});
      });
  });

  it('is idempotent: a second fill of the same order, or a fill of an unknown order, decides nothing', () => {
    const { events } = run([
      place({ type: 'limit', price: '39000', quantity: '0.05' }),
      fill('id-1', '38000'),
    ]);
    spec.given(events).when(fill('id-1', '38000'), context()).thenEmits([]);
    spec.given(events).when(fill('nope', '38000'), context()).thenEmits([]);
    spec.given([]).when(fill('nope', '38000'), context()).thenEmits([]);
  });

  it('buy stop_loss: locks with max slippage, triggers at or above, fills at the price with slippage and releases the rest', () => {
    const { events, last } = run([place({ type: 'stop_loss', triggerPrice: '41000', quantity: '0.05' })]);
    expect(dataOf(last, 'OrderPlaced').locked_amount).toBe('2062.30000000'); // 2,050 × 1.006
    spec.given(events).when(fill('id-1', '40999.99'), context()).thenEmits([]);
    spec
      .given(events)
      .when(fill('id-1', '41200'), context())
      .thenAssert((produced, state) => {
        expect(dataOf(produced, 'OrderFilled')).toMatchObject({
          trigger: 'stop_loss',
          reference_price: '41200.00000000',
          slippage_pct: '0.01000000',
          executed_price: '41204.12000000',
          total: '2062.26620600',
          released_amount: '0.03379400',
        });
        expect(state.lockedCash.toFixed()).toBe('0');
        expect(state.cash.toFixed()).toBe(`${10000 - 2062.266206}`);
      });
  });

  it('a gap above the lock takes the excess from free cash', () => {
    const { events } = run([place({ type: 'stop_loss', triggerPrice: '41000', quantity: '0.05' })]);
    spec
      .given(events)
      .when(fill('id-1', '45000'), context())
      .thenAssert((produced, state) => {
        expect(dataOf(produced, 'OrderFilled')).toMatchObject({
          total: '2252.47522500',
          released_amount: '0.00000000',
        });
        expect(state.cash.toFixed()).toBe('7747.524775');
        expect(state.lockedCash.toFixed()).toBe('0');
      });
  });

  it('a gap beyond lock + free cash cancels the buy (insufficient_balance) and releases its lock', () => {
    const { events } = run([place({ type: 'stop_loss', triggerPrice: '41000', quantity: '0.05' })]);
    spec
      .given(events)
      .when(fill('id-1', '300000'), context())
      .thenAssert((produced, state) => {
        expect(produced).toEqual([
          {
            type: 'OrderCancelled',
            data: {
              order_id: 'id-1',
              session_id: SESSION_ID,
              symbol: 'BTCUSDT',
              reason: 'insufficient_balance',
              unlocked_amount: '2062.30000000',
              unlocked_asset: 'USDT',
              trigger_price_seen: '300000.00000000',
              required: '15016.50150000',
              cancelled_at: AT,
            },
          },
        ]);
        expect(state.cash.toFixed()).toBe('10000');
        expect(state.openOrders).toEqual({});
      });
  });

  it('sell stop_loss: locks the base quantity, triggers at or below, realizes the loss', () => {
    const given = afterBuy();
    const { events, last } = run(
      [place({ side: 'sell', type: 'stop_loss', triggerPrice: '38000', quantity: '0.05' })],
      context(),
      given,
    );
    expect(dataOf(last, 'OrderPlaced')).toMatchObject({ locked_amount: '0.05000000', lock_asset: 'BTC' });
    spec.given(events).when(fill('id-1', '38000.00000001'), context()).thenEmits([]);
    spec
      .given(events)
      .when(fill('id-1', '37900'), context())
      .thenAssert((produced, state) => {
        expect(dataOf(produced, 'OrderFilled')).toMatchObject({
          side: 'sell',
          executed_price: '37896.21000000',
          notional: '1894.81050000',
          fee: '1.89481050',
          total: '1892.91568950',
          realized_pnl: '-105.38950000',
          locked_amount: '0.05000000',
        });
        expect(state.holdings).toEqual({});
        expect(state.closedTrades).toBe(1);
        expect(state.winningTrades).toBe(0);
      });
  });

  it('take_profit: a sell triggers at or above, a buy at or below', () => {
    const sell = run(
      [place({ side: 'sell', type: 'take_profit', triggerPrice: '45000', quantity: '0.05' })],
      context(),
      afterBuy(),
    );
    spec.given(sell.events).when(fill('id-1', '44999'), context()).thenEmits([]);
    spec
      .given(sell.events)
      .when(fill('id-1', '45500'), context())
      .thenAssert((produced) => expect(dataOf(produced, 'OrderFilled').trigger).toBe('take_profit'));
    const buy = run([place({ type: 'take_profit', triggerPrice: '39000', quantity: '0.05' })]);
    spec.given(buy.events).when(fill('id-1', '39001'), context()).thenEmits([]);
    spec
      .given(buy.events)
      .when(fill('id-1', '38000'), context())
      .thenAssert((produced) =>
        expect(dataOf(produced, 'OrderFilled').executed_price).toBe('38003.80000000'),
      );
  });

  it('sell limit: fills at its limit price at or above it', () => {
    const { events } = run(
      [place({ side: 'sell', type: 'limit', price: '42000', quantity: '0.05' })],
      context(),
      afterBuy(),
    );
    spec.given(events).when(fill('id-1', '41999.99999999'), context()).thenEmits([]);
    spec
      .given(events)
      .when(fill('id-1', '43000'), context())
      .thenAssert((produced) =>
        expect(dataOf(produced, 'OrderFilled')).toMatchObject({
          executed_price: '42000.00000000',
          realized_pnl: '99.80000000',
        }),
      );
  });
});

describe('wallet decider: average entry price', () => {
  // 37,140.44 × 1.0001 = 37,144.154044: each 0.001 BTC fill's notional, 37.144154044, is booked as 37.14415404.
  const at = context(market({ BTCUSDT: '37140.44' }));
  const buys = Array.from({ length: 5 }, () => place({ quantity: '0.001' }));

  it('is the quantity-weighted executed price: buys at one price average to that price, not to cost / quantity', () => {
    const { last, state } = run(buys, at);
    expect(dataOf(last, 'OrderFilled').executed_price).toBe('37144.15404400');
    expect(dataOf(last, 'OrderFilled').position_after).toEqual({
      quantity: '0.00500000',
      cost_basis: '185.72077020', // the money booked: 5 × 37.14415404
      avg_entry_price: '37144.15404400', // cost / quantity would be 37,144.15404
    });
    expect(state.holdings.BTC?.avgEntry.toFixed()).toBe('37144.154044');
  });

  it('weights each buy by its quantity, and a sell leaves it where it was', () => {
    const bought = run([...buys, place({ quantity: '0.003' })], context(market({ BTCUSDT: '40000' })));
    // 5 buys at 40,004 then 0.003 at 40,004: all at one price again.
    expect(bought.state.holdings.BTC?.avgEntry.toFixed()).toBe('40004');
    const mixed = run([place({ quantity: '0.003' })], at, bought.events);
    // (0.008 × 40,004 + 0.003 × 37,144.154044) / 0.011 = 39,224.04201200
    expect(mixed.state.holdings.BTC?.avgEntry.toFixed(8)).toBe('39224.04201200');
    const sold = run([place({ side: 'sell', quantity: '0.004' })], at, mixed.events);
    expect(dataOf(sold.last, 'OrderFilled').position_after.avg_entry_price).toBe('39224.04201200');
    const closed = run([place({ side: 'sell', quantity: '0.007' })], at, sold.events);
    expect(dataOf(closed.last, 'OrderFilled').position_after).toMatchObject({
      quantity: '0.00000000',
      avg_entry_price: '0.00000000',
    });
  });
});

describe('wallet decider: marketable limit orders (the price already reaches the limit when placed)', () => {
  it('a buy limit above the price is marketable: it fills like a market order, not at its dearer limit', () => {
    const { events, last } = run([place({ type: 'limit', price: '41000', quantity: '0.05' })]);
    expect(dataOf(last, 'OrderPlaced')).toMatchObject({ marketable: true, locked_amount: '2052.05000000' });
    spec
      .given(events)
      .when(fill('id-1', '40000'), context())
      .thenAssert((produced, state) => {
        expect(dataOf(produced, 'OrderFilled')).toMatchObject({
          trigger: 'limit',
          reference_price: '40000.00000000',
          participation_pct: '0.00050000',
          slippage_pct: '0.01000000',
          limit_price: '41000.00000000',
          executed_price: '40004.00000000', // 40,000 × 1.0001, below the limit
          total: '2002.20020000',
          released_amount: '49.84980000', // 2,052.05 − 2,002.2002
        });
        expect(state.cash.toFixed()).toBe('7997.7998');
        expect(state.lockedCash.toFixed()).toBe('0');
      });
  });

  it('a marketable buy limit never pays more than its limit; the fill records the slippage it paid', () => {
    const { events } = run([place({ type: 'limit', price: '40002', quantity: '0.05' })]);
    spec
      .given(events)
      .when(fill('id-1', '40000'), context())
      .thenAssert((produced) =>
        expect(dataOf(produced, 'OrderFilled')).toMatchObject({
          executed_price: '40002.00000000', // 40,004 with slippage, capped at the limit
          slippage_pct: '0.00500000', // (40,002 − 40,000) / 40,000 × 100
          total: '2002.10010000',
          released_amount: '0.00000000',
        }),
      );
  });

  it('a sell limit below the price is marketable: it fills at the price less slippage, not at its lower limit', () => {
    const { events, last } = run(
      [place({ side: 'sell', type: 'limit', price: '39000', quantity: '0.05' })],
      context(),
      afterBuy(),
    );
    expect(dataOf(last, 'OrderPlaced').marketable).toBe(true);
    spec
      .given(events)
      .when(fill('id-1', '40000'), context())
      .thenAssert((produced) =>
        expect(dataOf(produced, 'OrderFilled')).toMatchObject({
          executed_price: '39996.00000000',
          slippage_pct: '0.01000000',
          limit_price: '39000.00000000',
          realized_pnl: '-0.40000000', // 1,999.8 − 2,000.2
        }),
      );
  });

  it('a limit the price does not reach when placed rests, and fills at its limit (no slippage)', () => {
    const { last } = run([place({ type: 'limit', price: '39999.99999999', quantity: '0.05' })]);
    expect(dataOf(last, 'OrderPlaced').marketable).toBe(false);
    const atLimit = run([place({ type: 'limit', price: '40000', quantity: '0.05' })]);
    expect(dataOf(atLimit.last, 'OrderPlaced').marketable).toBe(true); // P ≤ limit: reached
  });
});

describe('wallet decider: cancels', () => {
  it('cancels an open order and releases its whole lock', () => {
    const { events } = run([place({ type: 'limit', price: '39000', quantity: '0.05' })]);
    spec
      .given(events)
      .when({ type: 'CancelOrder', data: { orderId: 'id-1' } }, context())
      .thenAssert((produced, state) => {
        expect(produced).toEqual([
          {
            type: 'OrderCancelled',
            data: {
              order_id: 'id-1',
              session_id: SESSION_ID,
              symbol: 'BTCUSDT',
              reason: 'user',
              unlocked_amount: '1951.95000000',
              unlocked_asset: 'USDT',
              cancelled_at: AT,
            },
          },
        ]);
        expect(state.cash.toFixed()).toBe('10000');
        expect(state.lockedCash.toFixed()).toBe('0');
      });
  });

  it('releases a sell lock back to the free quantity', () => {
    const { events } = run(
      [place({ side: 'sell', type: 'limit', price: '42000', quantity: '0.05' })],
      context(),
      afterBuy(),
    );
    spec
      .given(events)
      .when({ type: 'CancelOrder', data: { orderId: 'id-1' } }, context())
      .thenAssert((_, state) => expect(state.holdings.BTC?.locked.toFixed()).toBe('0'));
  });

  it('refuses to cancel an order that is not open (ORDER_NOT_FOUND; the command layer tells finished from unknown)', () => {
    const { events } = run([place({ quantity: '0.01' })]);
    spec
      .given(events)
      .when({ type: 'CancelOrder', data: { orderId: 'id-1' } }, context())
      .thenThrows('ORDER_NOT_FOUND');
    spec
      .given([])
      .when({ type: 'CancelOrder', data: { orderId: 'x' } }, context())
      .thenThrows('ORDER_NOT_FOUND');
  });

  it('cancels every open order at once, or nothing when none is open', () => {
    const { events } = run(
      [
        place({ type: 'limit', price: '39000', quantity: '0.01' }),
        place({ symbol: 'ETHUSDT', type: 'stop_loss', triggerPrice: '2100', quantity: '0.1' }),
      ],
      context(undefined, { ids: 'o' }),
    );
    spec
      .given(events)
      .when({ type: 'CancelAllOrders', data: {} }, context())
      .thenAssert((produced, state) => {
        expect(produced.map((e) => [e.type, (e.data as { reason: string }).reason])).toEqual([
          ['OrderCancelled', 'cancel_all'],
          ['OrderCancelled', 'cancel_all'],
        ]);
        expect(state.cash.toFixed()).toBe('10000');
      });
    spec.given(opened()).when({ type: 'CancelAllOrders', data: {} }, context()).thenEmits([]);
  });
});

describe('wallet decider: resets and sessions', () => {
  it('closes positions at market, cancels orders, records the session result and starts a new session', () => {
    const given = run(
      [
        place({ quantity: '0.05' }),
        place({ symbol: 'ETHUSDT', type: 'limit', price: '1900', quantity: '1' }),
      ],
      context(undefined, { ids: 'g' }),
    ).events;
    spec
      .given(given)
      .when(
        { type: 'ResetWallet', data: { owner: owner(), startingBalance: '5000' } },
        context(market({ BTCUSDT: '42000', ETHUSDT: '2000' })),
      )
      .thenAssert((produced, state) => {
        expect(produced.map((e) => e.type)).toEqual([
          'OrderCancelled',
          'OrderFilled',
          'WalletReset',
          'SessionStarted',
        ]);
        expect(dataOf(produced, 'OrderCancelled').reason).toBe('reset');
        expect(dataOf(produced, 'OrderFilled')).toMatchObject({
          trigger: 'reset',
          side: 'sell',
          quantity: '0.05000000',
          executed_price: '41995.80000000',
          realized_pnl: '99.59000000', // 2,099.79 − 2,000.2
        });
        // cash after: 7,997.7998 + 2,099.79 − 2.09979 = 10,095.49001
        expect(dataOf(produced, 'WalletReset')).toMatchObject({
          previous_session_id: SESSION_ID,
          ending_equity: '10095.49001000',
          total_pnl: '95.49001000',
          realized_pnl: '99.59000000',
          fees_paid: '4.09999000',
          reason: 'reset',
        });
        expect(dataOf(produced, 'SessionStarted')).toMatchObject({
          session_id: 'id-1',
          starting_balance: '5000.00000000',
          owner_session_id: SESSION_ID,
          reason: 'reset',
        });
        expect(state.cash.toFixed()).toBe('5000');
        expect(state.holdings).toEqual({});
        expect(state.openOrders).toEqual({});
        expect(state.realizedPnl.toFixed()).toBe('0');
        expect(state.tradingDay).toBeNull();
      });
  });

  it("defaults to the owner's starting balance and closes at the average entry price when no price is known", () => {
    spec
      .given(afterBuy())
      .when({ type: 'ResetWallet', data: { owner: owner() } }, context(market({})))
      .thenAssert((produced, state) => {
        expect(dataOf(produced, 'OrderFilled')).toMatchObject({
          price_source: 'avg_entry',
          slippage_pct: '0.00000000',
          executed_price: '40004.00000000',
          realized_pnl: '0.00000000',
        });
        expect(state.cash.toFixed()).toBe('10000');
      });
  });

  it('refuses a non-positive new starting balance', () => {
    spec
      .given(afterBuy())
      .when({ type: 'ResetWallet', data: { owner: owner(), startingBalance: '0' } }, context())
      .thenThrows('VALIDATION_ERROR');
  });

  it("follows the owner's new session (agent reset) before deciding the order", () => {
    spec
      .given(afterBuy())
      .when(
        place(
          { symbol: 'ETHUSDT', quantity: '0.1' },
          { sessionId: 'agent-session-2', startingBalance: '20000' },
        ),
        context(),
      )
      .thenAssert((produced, state) => {
        expect(produced.map((e) => e.type)).toEqual([
          'OrderFilled',
          'WalletReset',
          'SessionStarted',
          'TradingDayOpened',
          'OrderPlaced',
          'OrderFilled',
        ]);
        expect(dataOf(produced, 'WalletReset').reason).toBe('owner_reset');
        expect(dataOf(produced, 'SessionStarted')).toMatchObject({
          session_id: 'agent-session-2',
          owner_session_id: 'agent-session-2',
          starting_balance: '20000.00000000',
          reason: 'owner_reset',
        });
        expect(state.session?.id).toBe('agent-session-2');
        expect(state.holdings.ETH?.quantity.toFixed()).toBe('0.1');
      });
  });

  it('OpenWallet opens once and then decides nothing', () => {
    const open = { type: 'OpenWallet' as const, data: { owner: owner() } };
    spec.given([]).when(open, context()).thenEmits(opened());
    spec.given(opened()).when(open, context()).thenEmits([]);
    expect(foldEvents(walletDecider, opened()).ownerId).toBe(OWNER_ID);
    expect(NOW.toISOString()).toBe(AT);
  });
});

describe('trading mode', () => {
  const modeSpec = deciderSpec(tradingModeDecider);
  const set = (mode: 'live' | 'backtest', strategyLabel: string | null = null) => ({
    type: 'SetTradingMode' as const,
    data: { ownerId: OWNER_ID, mode, strategyLabel },
  });
  const changed = (mode: 'live' | 'backtest', label: string | null = null) => ({
    type: 'TradingModeChanged' as const,
    data: { owner_id: OWNER_ID, mode, strategy_label: label, changed_at: AT },
  });

  it('records a change of mode or label, nothing otherwise', () => {
    const ctx = { now: NOW, newId: () => 'x' };
    modeSpec
      .given([])
      .when(set('live'), ctx)
      .thenEmits([changed('live')]);
    modeSpec
      .given([changed('live')])
      .when(set('live'), ctx)
      .thenEmits([]);
    modeSpec
      .given([changed('live')])
      .when(set('backtest', 'v2'), ctx)
      .thenEmits([changed('backtest', 'v2')]);
    modeSpec
      .given([changed('backtest', 'v2')])
      .when(set('backtest', 'v3'), ctx)
      .thenEmits([changed('backtest', 'v3')]);
  });
});
