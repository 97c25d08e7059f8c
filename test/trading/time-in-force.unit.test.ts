import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FillModelName } from '../../domain/fill-model/model';
import { foldEvents } from '../../domain/shared/decider';
import { dec } from '../../domain/trading/decimal';
import type { WalletCommand, WalletContext } from '../../domain/wallet/commands';
import { walletDecider } from '../../domain/wallet/decide';
import type { OrderCancelledData, OrderFilledData, WalletEvent } from '../../domain/wallet/events';
import { deciderSpec } from '../support/decider-spec';
import { expectLocksMatch } from '../support/wallet-locks';
import {
  cancelPicked,
  context,
  dataOf,
  holdsForRandomSessions,
  market,
  opened,
  place,
  printFills,
  run,
} from './support';

/**
 * Time in force (issue 21, item 2; docs/trading-rules.md, "Time in force"), decided by the wallet decider: an IOC
 * fills what the book holds now and cancels the rest, a FOK fills whole now or records no fill, neither keeps a
 * lock; a GTC order is what every order was before. "Now" is the current price at placement (market and limit
 * orders) or the triggering print (stops). Locks always equal what remains open, over random sequences.
 */

const spec = deciderSpec(walletDecider);

/** ETHUSDT with 100,000 USDT of 24h volume: each side of the realistic book holds 1 %, 1,000 USDT (~0.5 ETH). */
const thin = () => {
  const m = market({ BTCUSDT: '40000', ETHUSDT: '2000' });
  m.volumes.set('ETHUSDT', '100000');
  return m;
};

const ctxOf = (model: FillModelName = 'realistic', m = thin()): WalletContext => ({
  ...context(m),
  fillModel: model,
});

const eth = (over: Partial<Extract<WalletCommand, { type: 'PlaceOrder' }>['data']['order']>) =>
  place({ symbol: 'ETHUSDT', ...over });

const fills = (events: WalletEvent[]) =>
  events.flatMap((e) => (e.type === 'OrderFilled' ? [e.data as OrderFilledData] : []));
const cancels = (events: WalletEvent[]) =>
  events.flatMap((e) => (e.type === 'OrderCancelled' ? [e.data as OrderCancelledData] : []));

describe('time in force: market orders', () => {
  it('GTC and IOC market orders fill what the book holds and cancel the rest (unfilled)', () => {
    for (const tif of [undefined, 'IOC'] as const) {
      const { last, state } = run([eth({ quantity: '1', ...(tif ? { timeInForce: tif } : {}) })], ctxOf());
      const [f] = fills(last);
      expect(Number(f!.quantity)).toBeGreaterThan(0.4);
      expect(Number(f!.quantity)).toBeLessThan(0.6);
      expect(cancels(last)).toMatchObject([{ reason: 'unfilled', unlocked_amount: '0.00000000' }]);
      expect(dataOf(last, 'OrderPlaced').time_in_force).toBe(tif);
      expect(state.holdings['ETH']!.quantity.toFixed(8)).toBe(f!.quantity);
      expectLocksMatch(state);
    }
  });

  it('a FOK market order the book cannot hold whole records no fill and keeps nothing', () => {
    spec
      .given(opened())
      .when(eth({ quantity: '1', timeInForce: 'FOK' }), ctxOf())
      .thenAssert((events, state) => {
        expect(events.map((e) => e.type)).toEqual(['TradingDayOpened', 'OrderPlaced', 'OrderCancelled']);
        expect(dataOf(events, 'OrderPlaced')).toMatchObject({
          time_in_force: 'FOK',
          locked_amount: '0.00000000',
        });
        expect(dataOf(events, 'OrderCancelled')).toMatchObject({
          reason: 'fill_or_kill',
          unlocked_amount: '0.00000000',
        });
        expect(state.cash.toFixed()).toBe('10000');
        expect(state.holdings).toEqual({});
      });
  });

  it('a FOK market order the book holds whole fills whole', () => {
    const { last } = run([eth({ quantity: '0.2', timeInForce: 'FOK' })], ctxOf());
    expect(fills(last).map((f) => f.quantity)).toEqual(['0.20000000']);
    expect(cancels(last)).toEqual([]);
  });
});

describe('time in force: limit orders, decided at placement', () => {
  it('an IOC limit the price does not reach fills nothing and is cancelled with its whole lock released', () => {
    spec
      .given(opened())
      .when(eth({ type: 'limit', quantity: '0.5', price: '1900', timeInForce: 'IOC' }), ctxOf())
      .thenAssert((events, state) => {
        const placed = dataOf(events, 'OrderPlaced');
        expect(placed).toMatchObject({
          marketable: false,
          time_in_force: 'IOC',
          locked_amount: '950.95000000',
        });
        expect(dataOf(events, 'OrderCancelled')).toMatchObject({
          reason: 'unfilled',
          unlocked_amount: '950.95000000',
          unlocked_asset: 'USDT',
        });
        expect(fills(events)).toEqual([]);
        expect(state.cash.toFixed()).toBe('10000');
        expect(state.lockedCash.toFixed()).toBe('0');
        expect(state.openOrders).toEqual({});
      });
  });

  it('a marketable IOC limit takes what the book holds within its limit now; the rest is cancelled, its lock released', () => {
    const { last, state } = run(
      [eth({ type: 'limit', quantity: '1', price: '2010', timeInForce: 'IOC' })],
      ctxOf(),
    );
    const placed = dataOf(last, 'OrderPlaced');
    expect(placed).toMatchObject({ marketable: true, time_in_force: 'IOC' });
    const [f] = fills(last);
    expect(f).toMatchObject({
      liquidity: 'taker',
      reference_price: '2000.00000000',
      limit_price: '2010.00000000',
    });
    expect(Number(f!.executed_price)).toBeLessThanOrEqual(2010);
    const [c] = cancels(last);
    expect(c).toMatchObject({ reason: 'unfilled' });
    // The lock at placement = what the fill consumed + what the cancel released, to the last unit.
    expect(Number(c!.unlocked_amount)).toBeGreaterThan(0);
    expect(dec(f!.locked_amount).plus(c!.unlocked_amount).toFixed(8)).toBe(placed.locked_amount);
    expect(state.cash.toFixed(8)).toBe(dec('10000').minus(f!.total).toFixed(8));
    expect(state.lockedCash.toFixed()).toBe('0');
    expect(state.openOrders).toEqual({});
    expectLocksMatch(state);
  });

  it('a marketable FOK limit the book cannot fill within its limit is cancelled with no fill; one it can fills whole', () => {
    const killed = run([eth({ type: 'limit', quantity: '1', price: '2010', timeInForce: 'FOK' })], ctxOf());
    expect(fills(killed.last)).toEqual([]);
    expect(cancels(killed.last)).toMatchObject([
      { reason: 'fill_or_kill', unlocked_amount: '2012.01000000' },
    ]);
    expect(killed.state.cash.toFixed()).toBe('10000');
    const whole = run([eth({ type: 'limit', quantity: '0.2', price: '2010', timeInForce: 'FOK' })], ctxOf());
    expect(fills(whole.last).map((f) => f.quantity)).toEqual(['0.20000000']);
    expect(cancels(whole.last)).toEqual([]);
    expect(whole.state.lockedCash.toFixed()).toBe('0');
  });

  it('under instant a marketable IOC or FOK limit fills whole at once, capped at its limit', () => {
    for (const tif of ['IOC', 'FOK'] as const) {
      const { last, state } = run(
        [eth({ type: 'limit', quantity: '1', price: '2000.1', timeInForce: tif })],
        ctxOf('instant'),
      );
      expect(fills(last)).toMatchObject([{ quantity: '1.00000000', executed_price: '2000.10000000' }]);
      expect(cancels(last)).toEqual([]);
      expect(state.lockedCash.toFixed()).toBe('0');
    }
  });

  it('needs a fresh price now: none or a stale one is PRICE_NOT_AVAILABLE, nothing recorded', () => {
    const m = thin();
    m.prices.delete('ETHUSDT');
    spec
      .given(opened())
      .when(eth({ type: 'limit', quantity: '0.1', price: '1900', timeInForce: 'IOC' }), ctxOf('realistic', m))
      .thenThrows('PRICE_NOT_AVAILABLE');
    const stale: WalletContext = {
      ...ctxOf(),
      prices: (s) => ({
        price: '2000',
        timestamp: '2024-01-05T09:00:00.000Z',
        source: 'binance',
        ...(s === 'ETHUSDT' ? { stale: { age_ms: 60_000, max_age_ms: 10_000 } } : {}),
      }),
    };
    spec
      .given(opened())
      .when(eth({ type: 'limit', quantity: '0.1', price: '1900', timeInForce: 'FOK' }), stale)
      .thenThrows('PRICE_NOT_AVAILABLE', { price_age_ms: 60_000 });
  });

  it('does not count against max_open_orders (it never rests); an unknown time in force is VALIDATION_ERROR', () => {
    const ctx = { ...ctxOf('instant'), riskProfile: { ...context().riskProfile, max_open_orders: 1 } };
    const { state, last } = run(
      [
        eth({ type: 'limit', quantity: '0.1', price: '1000' }),
        eth({ type: 'limit', quantity: '0.1', price: '1000', timeInForce: 'IOC' }),
      ],
      ctx,
    );
    expect(last.map((e) => e.type)).toEqual(['OrderPlaced', 'OrderCancelled']);
    expect(Object.keys(state.openOrders)).toHaveLength(1);
    spec
      .given(opened())
      .when(eth({ type: 'limit', quantity: '0.1', price: '1000', timeInForce: 'GTD' }), ctx)
      .thenThrows('VALIDATION_ERROR', { field: 'time_in_force' });
  });

  it('GTC, sent or not, records no time_in_force: the order rests as before', () => {
    for (const tif of [undefined, 'GTC'] as const) {
      const { last, state } = run(
        [eth({ type: 'limit', quantity: '0.1', price: '1900', ...(tif ? { timeInForce: tif } : {}) })],
        ctxOf(),
      );
      expect('time_in_force' in dataOf(last, 'OrderPlaced')).toBe(false);
      expect(Object.values(state.openOrders)[0]!.timeInForce).toBe('GTC');
    }
  });
});

describe('time in force: stops apply it when triggered', () => {
  const trigger = (orderId: string, price: string): WalletCommand => ({
    type: 'FillOrder',
    data: { orderId, price, time: '2024-01-05T10:00:01.000Z', source: 'files', volume: '1' },
  });

  /** A 1 ETH buy stop at 2,100 with `timeInForce`, placed in a fresh wallet: its context, run and order id. */
  const placeStop = (timeInForce: 'IOC' | 'FOK') => {
    const ctx = ctxOf();
    const placed = run([eth({ type: 'stop_loss', quantity: '1', triggerPrice: '2100', timeInForce })], ctx);
    return { ctx, placed, id: dataOf(placed.last, 'OrderPlaced').order_id };
  };

  it('an IOC buy stop rests with its lock, then takes what the book holds at the trigger and cancels the rest', () => {
    const { ctx, placed, id } = placeStop('IOC');
    expect(placed.state.openOrders[id]!.timeInForce).toBe('IOC');
    const triggered = run([trigger(id, '2100')], ctx, placed.events);
    expect(fills(triggered.last)).toHaveLength(1);
    expect(cancels(triggered.last)).toMatchObject([{ reason: 'unfilled' }]);
    expect(triggered.state.openOrders).toEqual({});
    expect(triggered.state.lockedCash.toFixed()).toBe('0');
  });

  it('a FOK stop the book cannot fill whole at the trigger is cancelled with no fill, its lock released', () => {
    const { ctx, placed, id } = placeStop('FOK');
    const lock = dataOf(placed.last, 'OrderPlaced').locked_amount;
    const triggered = run([trigger(id, '2100')], ctx, placed.events);
    expect(fills(triggered.last)).toEqual([]);
    expect(cancels(triggered.last)).toMatchObject([{ reason: 'fill_or_kill', unlocked_amount: lock }]);
    expect(triggered.state.cash.toFixed()).toBe('10000');
  });
});

describe('time in force: locks equal what remains open (property)', () => {
  const tifs = fc.constantFrom(undefined, 'GTC', 'IOC', 'FOK');
  const command = fc.oneof(
    fc.record({
      kind: fc.constant('order' as const),
      side: fc.constantFrom('buy' as const, 'sell' as const),
      type: fc.constantFrom(
        'market' as const,
        'limit' as const,
        'stop_loss' as const,
        'take_profit' as const,
      ),
      quantity: fc.integer({ min: 1, max: 80 }).map((n) => (n / 100).toFixed(2)),
      level: fc.integer({ min: -100, max: 100 }),
      tif: tifs,
    }),
    fc.record({
      kind: fc.constant('print' as const),
      move: fc.integer({ min: -120, max: 120 }),
      volume: fc.constantFrom('0', '0.5', '3', '40'),
    }),
    fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
  );

  it('holds after every step of random IOC/FOK/GTC sequences, under both models', () => {
    holdsForRandomSessions(command, 150, (model, steps) => {
      const m = thin();
      const ctx = {
        ...ctxOf(model, m),
        riskProfile: { ...context().riskProfile, max_position_size_pct: 100, max_order_size_pct: 100 },
      };
      let state = foldEvents(walletDecider, opened());
      let clock = Date.parse('2024-01-05T10:00:00.000Z');
      for (const s of steps) {
        let cmd: WalletCommand[] = [];
        const price = Number(m.prices.get('ETHUSDT'));
        if (s.kind === 'order') {
          const level = (price * (1 + s.level / 1000)).toFixed(2);
          cmd = [
            eth({
              side: s.side,
              type: s.type,
              quantity: s.quantity,
              ...(s.type === 'limit' ? { price: level } : {}),
              ...(s.type === 'stop_loss' || s.type === 'take_profit' ? { triggerPrice: level } : {}),
              ...(s.tif ? { timeInForce: s.tif } : {}),
            }),
          ];
        } else if (s.kind === 'print') {
          const next = (price * (1 + s.move / 1000)).toFixed(2);
          m.prices.set('ETHUSDT', next);
          clock += 1000;
          const time = new Date(clock).toISOString();
          cmd = printFills(state, next, time, s.volume);
        } else {
          cmd = cancelPicked(state, s.pick);
        }
        for (const c of cmd) {
          const events = walletDecider.decide(c, state, ctx);
          state = foldEvents(walletDecider, events, state);
          // An IOC or FOK order never stays open after the decision that placed (or triggered) it, but a stop's
          // before its trigger.
          for (const o of Object.values(state.openOrders)) {
            if (o.type === 'limit') expect(o.timeInForce).toBe('GTC');
          }
          for (const f of fills(events)) expect(Number(f.quantity)).toBeGreaterThan(0);
          expectLocksMatch(state);
        }
      }
    });
  });
});
