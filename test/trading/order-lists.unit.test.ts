import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldEvents } from '../../domain/shared/decider';
import type { OrderRequest, WalletCommand, WalletContext } from '../../domain/wallet/commands';
import { walletDecider } from '../../domain/wallet/decide';
import type {
  OrderCancelledData,
  OrderFilledData,
  OrderPlacedData,
  WalletEvent,
} from '../../domain/wallet/events';
import { placeAndOffer } from '../../domain/wallet/place';
import { deciderSpec } from '../support/decider-spec';
import { expectLocksMatch } from '../support/wallet-locks';
import {
  context as baseContext,
  cancelPicked,
  dataOf,
  holdsForRandomSessions,
  market,
  opened as openedWith,
  place,
  printFills,
  run,
} from './support';

/**
 * Order lists (issue 21, item 2; docs/trading-rules.md, "Order lists: OCO and bracket"), decided by the wallet
 * decider: an OCO's legs share one lock and one leg's first fill cancels the other in the same decision; a bracket's
 * exits are placed as an OCO once its entry is done, sized to what it executed.
 */

const spec = deciderSpec(walletDecider);

/** The test context with a risk profile that lets whole-position orders through (the rules here are the lists'). */
const context: typeof baseContext = (m = market(), over = {}) =>
  baseContext(m, {
    ...over,
    riskProfile: { max_order_size_pct: 100, max_position_size_pct: 100, ...over.riskProfile },
  });
/** A fresh wallet with 100,000 USDT. */
const opened = (balance = '100000.00000000') => openedWith(balance);

const placedOf = (events: WalletEvent[]) =>
  events.flatMap((e) => (e.type === 'OrderPlaced' ? [e.data as OrderPlacedData] : []));
const fills = (events: WalletEvent[]) =>
  events.flatMap((e) => (e.type === 'OrderFilled' ? [e.data as OrderFilledData] : []));
const cancels = (events: WalletEvent[]) =>
  events.flatMap((e) => (e.type === 'OrderCancelled' ? [e.data as OrderCancelledData] : []));

/** A wallet holding 1 BTC bought at 40,000 (market, instant model). */
const holding = (ctx: WalletContext) => run([place({ quantity: '1' })], ctx, opened()).events;

const oco = (over: Partial<OrderRequest> = {}, stop = '38000'): WalletCommand =>
  place({
    side: 'sell',
    type: 'limit',
    quantity: '1',
    price: '42000',
    list: { kind: 'oco', stopLoss: { triggerPrice: stop } },
    ...over,
  });

const trigger = (orderId: string, price: string, volume = '1000'): WalletCommand => ({
  type: 'FillOrder',
  data: { orderId, price, time: '2024-01-05T10:00:01.000Z', source: 'files', volume },
});

describe('OCO: placement', () => {
  it('places both legs in one list; a sell OCO locks its base quantity once', () => {
    const ctx = context();
    const given = holding(ctx);
    spec
      .given(given)
      .when(oco(), ctx)
      .thenAssert((events, state) => {
        const [tp, sl] = placedOf(events);
        expect(tp).toMatchObject({
          type: 'limit',
          price: '42000.00000000',
          list_role: 'take_profit',
          list_kind: 'oco',
        });
        expect(sl).toMatchObject({
          type: 'stop_loss',
          trigger_price: '38000.00000000',
          list_role: 'stop_loss',
        });
        expect(tp!.order_list_id).toBe(sl!.order_list_id);
        expect(tp!.locked_amount).toBe('1.00000000');
        expect(sl!.locked_amount).toBe('1.00000000');
        expect(tp!.lock_shared).toBeUndefined();
        expect(sl!.lock_shared).toBe(true);
        expect(state.holdings['BTC']!.locked.toFixed()).toBe('1');
        expectLocksMatch(state);
      });
  });

  it('a buy OCO locks the larger leg’s USDT once (the stop’s, with its slippage margin)', () => {
    const ctx = context();
    const { state, last } = run(
      [oco({ side: 'buy', quantity: '0.1', price: '38000' }, '42000')],
      ctx,
      opened(),
    );
    const [tp, sl] = placedOf(last);
    // 0.1 × 42,000 × (1 + 0.001 + 0.005) = 4,225.2 > 0.1 × 38,000 × 1.001 = 3,803.8
    expect(tp!.locked_amount).toBe('4225.20000000');
    expect(sl!.locked_amount).toBe('4225.20000000');
    expect(state.lockedCash.toFixed()).toBe('4225.2');
    expect(state.cash.toFixed()).toBe('95774.8');
    expectLocksMatch(state);
  });

  it('refuses legs on the wrong sides, a time in force, or a missing stop (VALIDATION_ERROR, nothing recorded)', () => {
    const ctx = context();
    const given = holding(ctx);
    spec
      .given(given)
      .when(oco({}, '43000'), ctx)
      .thenThrows('VALIDATION_ERROR', { field: 'stop_loss.trigger_price' });
    spec
      .given(given)
      .when(oco({ timeInForce: 'IOC' }), ctx)
      .thenThrows('VALIDATION_ERROR', { field: 'time_in_force' });
    spec
      .given(given)
      .when(oco({ type: 'market', price: null }), ctx)
      .thenThrows('VALIDATION_ERROR');
    spec
      .given(given)
      .when(oco({ list: { kind: 'oco', stopLoss: { triggerPrice: '-1' } } }), ctx)
      .thenThrows('VALIDATION_ERROR');
  });

  it('records the list client order id on both legs (and on a rejected leg); a malformed one is refused', () => {
    const ctx = context();
    const given = holding(ctx);
    const named = (clientOrderId: string) =>
      oco({ list: { kind: 'oco', stopLoss: { triggerPrice: '38000' }, clientOrderId } });
    const { last } = run([named('exits-1')], ctx, given);
    expect(placedOf(last).map((p) => p.list_client_order_id)).toEqual(['exits-1', 'exits-1']);
    const rejected = run(
      [
        oco({
          quantity: '2',
          list: { kind: 'oco', stopLoss: { triggerPrice: '38000' }, clientOrderId: 'exits-2' },
        }),
      ],
      ctx,
      given,
    );
    expect(dataOf(rejected.last, 'OrderRejected').list_client_order_id).toBe('exits-2');
    // Without one, none is recorded (a list's events keep their shape).
    expect(placedOf(run([oco()], ctx, given).last).map((p) => 'list_client_order_id' in p)).toEqual([
      false,
      false,
    ]);
    spec
      .given(given)
      .when(named('not ok!'), ctx)
      .thenThrows('VALIDATION_ERROR', { field: 'list_client_order_id' });
  });

  it('both legs pass the risk chain: selling more than is held rejects the list, nothing placed', () => {
    const ctx = context();
    spec
      .given(holding(ctx))
      .when(oco({ quantity: '2' }), ctx)
      .thenAssert((events, state) => {
        expect(events.map((e) => e.type)).toEqual(['OrderRejected']);
        expect(dataOf(events, 'OrderRejected')).toMatchObject({
          rule: 'balance',
          list_role: 'take_profit',
          list_kind: 'oco',
        });
        expect(state.openOrders).toEqual({});
      });
  });

  it('max_open_orders counts both legs', () => {
    const ctx = context(market(), { riskProfile: { max_open_orders: 1 } });
    const { last } = run([oco()], ctx, holding(ctx));
    expect(dataOf(last, 'OrderRejected')).toMatchObject({ rule: 'max_open_orders', list_role: 'stop_loss' });
    expect(placedOf(last)).toEqual([]);
  });
});

describe('OCO: one leg’s fill cancels the other', () => {
  it('the take-profit filling cancels the stop in the same decision; the lock is consumed once', () => {
    const ctx = context();
    const placed = run([oco()], ctx, holding(ctx));
    const [tp, sl] = placedOf(placed.last);
    spec
      .given(placed.events)
      .when(trigger(tp!.order_id, '42000'), ctx)
      .thenAssert((events, state) => {
        expect(events.map((e) => e.type)).toEqual(['OrderFilled', 'OrderCancelled']);
        expect(fills(events)[0]).toMatchObject({
          order_id: tp!.order_id,
          quantity: '1.00000000',
          locked_amount: '1.00000000',
        });
        expect(cancels(events)[0]).toMatchObject({
          order_id: sl!.order_id,
          reason: 'linked_fill',
          unlocked_amount: '0.00000000',
        });
        expect(state.openOrders).toEqual({});
        expect(state.holdings).toEqual({});
        expectLocksMatch(state);
      });
  });

  it('the stop triggering cancels the take-profit', () => {
    const ctx = context();
    const placed = run([oco()], ctx, holding(ctx));
    const [tp, sl] = placedOf(placed.last);
    const { last, state } = run([trigger(sl!.order_id, '37900')], ctx, placed.events);
    expect(fills(last).map((f) => f.order_id)).toEqual([sl!.order_id]);
    expect(cancels(last)).toMatchObject([{ order_id: tp!.order_id, reason: 'linked_fill' }]);
    expect(state.openOrders).toEqual({});
    // The other leg is gone: a later print reaching it decides nothing.
    expect(walletDecider.decide(trigger(tp!.order_id, '42000'), state, ctx)).toEqual([]);
  });

  it('a partial fill (realistic participation) cancels the other leg at once; the filling leg keeps its remainder’s lock', () => {
    const ctx: WalletContext = { ...context(), fillModel: 'realistic' };
    const placed = run([oco()], ctx, holding(context()));
    const [tp, sl] = placedOf(placed.last);
    // 10 % of a 3 BTC print: 0.3 of the 1 BTC leg.
    const { last, state } = run([trigger(tp!.order_id, '42000', '3')], ctx, placed.events);
    expect(fills(last)).toMatchObject([{ quantity: '0.30000000', remaining_quantity: '0.70000000' }]);
    expect(cancels(last)).toMatchObject([
      { order_id: sl!.order_id, reason: 'linked_fill', unlocked_amount: '0.00000000' },
    ]);
    expect(state.openOrders[tp!.order_id]!.lockedAmount.toFixed()).toBe('0.7');
    expect(state.holdings['BTC']!.locked.toFixed()).toBe('0.7');
    expectLocksMatch(state);
  });

  it('a buy OCO’s cheaper leg filling releases the rest of the shared lock', () => {
    const ctx = context();
    const placed = run([oco({ side: 'buy', quantity: '0.1', price: '38000' }, '42000')], ctx, opened());
    const [tp] = placedOf(placed.last);
    const { state } = run([trigger(tp!.order_id, '38000')], ctx, placed.events);
    expect(state.lockedCash.toFixed()).toBe('0');
    expect(state.openOrders).toEqual({});
    // 10,000 − 0.1 × 38,000 × 1.001 (the maker fill at its limit with its fee)
    expect(state.cash.toFixed()).toBe('96196.2');
    expectLocksMatch(state);
  });

  it('placed at a price that already reaches one leg: the first offer fills it and cancels the other', () => {
    const ctx = context();
    const state = foldEvents(walletDecider, holding(ctx));
    const events = placeAndOffer(oco({ price: '39000' }) as never, state, ctx);
    const [tp, sl] = placedOf(events);
    expect(fills(events).map((f) => f.order_id)).toEqual([tp!.order_id]);
    expect(cancels(events)).toMatchObject([{ order_id: sl!.order_id, reason: 'linked_fill' }]);
  });
});

describe('OCO: cancelling', () => {
  it('cancelling either leg cancels both; the lock is released once', () => {
    const ctx = context();
    const placed = run([oco()], ctx, holding(ctx));
    const [tp, sl] = placedOf(placed.last);
    for (const [target, other] of [
      [tp!, sl!],
      [sl!, tp!],
    ] as const) {
      const { last, state } = run(
        [{ type: 'CancelOrder', data: { orderId: target.order_id } }],
        ctx,
        placed.events,
      );
      expect(cancels(last)).toMatchObject([
        { order_id: target.order_id, reason: 'user', unlocked_amount: '0.00000000' },
        { order_id: other.order_id, reason: 'linked_cancel', unlocked_amount: '1.00000000' },
      ]);
      expect(state.holdings['BTC']!.locked.toFixed()).toBe('0');
      expectLocksMatch(state);
    }
  });

  it('cancel-all and a reset release the shared lock once', () => {
    const ctx = context();
    const placed = run([oco()], ctx, holding(ctx));
    const all = run([{ type: 'CancelAllOrders', data: {} }], ctx, placed.events);
    expect(
      cancels(all.last)
        .map((c) => c.unlocked_amount)
        .sort(),
    ).toEqual(['0.00000000', '1.00000000']);
    expectLocksMatch(all.state);
  });
});

describe('bracket', () => {
  const bracket = (over: Partial<OrderRequest> = {}): WalletCommand =>
    place({
      quantity: '0.5',
      list: {
        kind: 'bracket',
        takeProfit: { type: 'limit', price: '44000' },
        stopLoss: { triggerPrice: '38000' },
      },
      ...over,
    });

  it('a market entry fills and places its exits as an OCO of the filled quantity, in the same decision', () => {
    const ctx = context();
    spec
      .given(opened())
      .when(bracket(), ctx)
      .thenAssert((events, state) => {
        const [entry, tp, sl] = placedOf(events);
        expect(entry).toMatchObject({ type: 'market', list_role: 'entry', list_kind: 'bracket' });
        expect(entry!.exits).toEqual({
          take_profit: { type: 'limit', price: '44000.00000000', trigger_price: null },
          stop_loss: { trigger_price: '38000.00000000' },
        });
        expect(tp).toMatchObject({
          side: 'sell',
          type: 'limit',
          quantity: '0.50000000',
          list_role: 'take_profit',
          parent_order_id: entry!.order_id,
        });
        expect(sl).toMatchObject({
          side: 'sell',
          type: 'stop_loss',
          quantity: '0.50000000',
          list_role: 'stop_loss',
          lock_shared: true,
        });
        expect(new Set([entry!.order_list_id, tp!.order_list_id, sl!.order_list_id]).size).toBe(1);
        expect(state.holdings['BTC']!.locked.toFixed()).toBe('0.5');
        expectLocksMatch(state);
      });
  });

  it('a limit entry places nothing more until it fills; its fill activates the exits', () => {
    const ctx = context();
    const placed = run([bracket({ type: 'limit', price: '39000' })], ctx, opened());
    expect(placedOf(placed.last)).toHaveLength(1);
    const entry = placedOf(placed.last)[0]!;
    const filled = run([trigger(entry.order_id, '39000')], ctx, placed.events);
    expect(filled.last.map((e) => e.type)).toEqual(['OrderFilled', 'OrderPlaced', 'OrderPlaced']);
    expect(
      Object.values(filled.state.openOrders)
        .map((o) => o.list?.role)
        .sort(),
    ).toEqual(['stop_loss', 'take_profit']);
    expectLocksMatch(filled.state);
  });

  it('a partly filled entry places its exits only once done, sized to all it executed', () => {
    const ctx: WalletContext = { ...context(), fillModel: 'realistic' };
    const placed = run([bracket({ type: 'limit', price: '39000' })], ctx, opened());
    const entry = placedOf(placed.last)[0]!;
    const first = run([trigger(entry.order_id, '39000', '2')], ctx, placed.events); // 0.2 of 0.5
    expect(placedOf(first.last)).toEqual([]);
    const rest = run(
      [
        {
          ...trigger(entry.order_id, '39000', '50'),
          data: { ...trigger(entry.order_id, '39000', '50').data, time: '2024-01-05T10:00:02.000Z' },
        } as WalletCommand,
      ],
      ctx,
      first.events,
    );
    expect(placedOf(rest.last).map((p) => p.quantity)).toEqual(['0.50000000', '0.50000000']);
    expectLocksMatch(rest.state);
  });

  it('a client’s cancel of the entry ends the bracket with no exits', () => {
    const ctx = context();
    const placed = run([bracket({ type: 'limit', price: '39000' })], ctx, opened());
    const entry = placedOf(placed.last)[0]!;
    const { last, state } = run(
      [{ type: 'CancelOrder', data: { orderId: entry.order_id } }],
      ctx,
      placed.events,
    );
    expect(last.map((e) => e.type)).toEqual(['OrderCancelled']);
    expect(state.openOrders).toEqual({});
  });

  it('refuses exits on the wrong side of a limit entry, a stop entry, or no exits (VALIDATION_ERROR)', () => {
    const ctx = context();
    spec
      .given(opened())
      .when(bracket({ type: 'limit', price: '45000' }), ctx)
      .thenThrows('VALIDATION_ERROR');
    spec
      .given(opened())
      .when(bracket({ type: 'stop_loss', triggerPrice: '41000' }), ctx)
      .thenThrows('VALIDATION_ERROR', { field: 'type' });
    spec
      .given(opened())
      .when(bracket({ list: { kind: 'bracket' } }), ctx)
      .thenThrows('VALIDATION_ERROR', { field: 'bracket' });
  });
});

describe('order lists: locks equal what remains, never both legs filled (property)', () => {
  /** A list's quantity and how far its upper and lower legs sit from the price, in tenths of a percent (`at`). */
  const legs = {
    quantity: fc.integer({ min: 1, max: 60 }).map((n) => (n / 100).toFixed(2)),
    up: fc.integer({ min: 1, max: 80 }),
    down: fc.integer({ min: 1, max: 80 }),
  };
  const command = fc.oneof(
    fc.record({
      kind: fc.constant('oco' as const),
      side: fc.constantFrom('buy' as const, 'sell' as const),
      tpType: fc.constantFrom('limit' as const, 'take_profit' as const),
      ...legs,
    }),
    fc.record({
      kind: fc.constant('bracket' as const),
      entry: fc.constantFrom('market' as const, 'limit' as const),
      ...legs,
    }),
    fc.record({
      kind: fc.constant('print' as const),
      move: fc.integer({ min: -100, max: 100 }),
      volume: fc.constantFrom('0', '0.5', '3', '40'),
    }),
    fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat(), all: fc.boolean() }),
  );

  it('holds after every decision of random OCOs, brackets, prints and cancels, under both models', () => {
    holdsForRandomSessions(command, 120, (model, steps) => {
      const m = market({ BTCUSDT: '40000', ETHUSDT: '2000' });
      m.volumes.set('ETHUSDT', '1000000');
      const ctx: WalletContext = {
        ...context(m),
        fillModel: model,
        riskProfile: { ...context().riskProfile, max_position_size_pct: 100, max_order_size_pct: 100 },
      };
      let state = foldEvents(walletDecider, opened());
      state = foldEvents(
        walletDecider,
        walletDecider.decide(place({ symbol: 'ETHUSDT', quantity: '5' }), state, ctx),
        state,
      );
      let clock = Date.parse('2024-01-05T10:00:00.000Z');
      const legOf = new Map<string, string>();
      const filledLegs = new Map<string, Set<string>>();
      for (const s of steps) {
        const price = Number(m.prices.get('ETHUSDT'));
        const at = (pct: number) => (price * (1 + pct / 1000)).toFixed(2);
        let cmds: WalletCommand[] = [];
        if (s.kind === 'oco') {
          const [tp, sl] = s.side === 'sell' ? [at(s.up), at(-s.down)] : [at(-s.down), at(s.up)];
          cmds = [
            place({
              symbol: 'ETHUSDT',
              side: s.side,
              type: s.tpType,
              quantity: s.quantity,
              ...(s.tpType === 'limit' ? { price: tp } : { triggerPrice: tp }),
              list: { kind: 'oco', stopLoss: { triggerPrice: sl } },
            }),
          ];
        } else if (s.kind === 'bracket') {
          cmds = [
            place({
              symbol: 'ETHUSDT',
              type: s.entry,
              quantity: s.quantity,
              ...(s.entry === 'limit' ? { price: at(0) } : {}),
              list: {
                kind: 'bracket',
                takeProfit: { type: 'limit', price: at(s.up) },
                stopLoss: { triggerPrice: at(-s.down) },
              },
            }),
          ];
        } else if (s.kind === 'print') {
          const next = at(s.move);
          m.prices.set('ETHUSDT', next);
          clock += 1000;
          const time = new Date(clock).toISOString();
          cmds = printFills(state, next, time, s.volume);
        } else {
          cmds = s.all ? [{ type: 'CancelAllOrders', data: {} }] : cancelPicked(state, s.pick);
        }
        for (const c of cmds) {
          const events = walletDecider.decide(c, state, ctx);
          state = foldEvents(walletDecider, events, state);
          for (const p of placedOf(events)) {
            if (p.order_list_id && p.list_role !== 'entry') legOf.set(p.order_id, p.order_list_id);
          }
          for (const f of fills(events)) {
            const listId = legOf.get(f.order_id);
            if (!listId) continue;
            const legs = filledLegs.get(listId) ?? new Set<string>();
            legs.add(f.order_id);
            filledLegs.set(listId, legs);
            // Never both legs of one list filled.
            expect(legs.size).toBe(1);
          }
          expectLocksMatch(state);
        }
      }
    });
  });
});
