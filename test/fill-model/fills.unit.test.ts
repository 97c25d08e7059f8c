import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FillModelName } from '../../domain/fill-model/model';
import { foldEvents } from '../../domain/shared/decider';
import { dec, ZERO } from '../../domain/trading/decimal';
import { feeFor } from '../../domain/trading/fees';
import type { WalletCommand, WalletContext } from '../../domain/wallet/commands';
import { walletDecider } from '../../domain/wallet/decide';
import type { OrderFilledData, WalletEvent } from '../../domain/wallet/events';
import type { WalletState } from '../../domain/wallet/state';
import { expectLocksMatch } from '../support/wallet-locks';
import { context, market, opened, place } from '../trading/support';

/**
 * The fill model wired into the wallet decider (issue 21, "Done when"), over random order sequences and tapes of
 * prints (price, base volume, time): no fill beyond the limit, the partial fills of an order never sum beyond it,
 * every open order's lock is the lock of what remains (and the wallet's locked cash and base the sum of them), fees
 * follow the liquidity flag, and cancelling a partly filled order releases exactly its remaining lock. Fills that
 * carry the model's inputs replay (fold) to the same state as the decision that made them.
 */

const MAKER = dec('0.0002');
const TAKER = dec('0.001');

const ctxOf = (model: FillModelName, at = '2024-01-05T10:00:00.000Z'): WalletContext => ({
  ...context(market({ BTCUSDT: '40000', ETHUSDT: '2000' })),
  now: new Date(at),
  fillModel: model,
  feeRate: TAKER,
  makerFeeRate: MAKER,
  participationPct: 10,
});

const fillCmd = (orderId: string, price: string, time: string, volume: string): WalletCommand => ({
  type: 'FillOrder',
  data: { orderId, price, time, source: 'files', volume },
});

/** Decides and folds `command`, returning the new events and state. */
const step = (state: WalletState, command: WalletCommand, ctx: WalletContext) => {
  const events = walletDecider.decide(command, state, ctx);
  return { events, state: foldEvents(walletDecider, events, state) };
};

/** The id of the order `events` placed (they hold an `OrderPlaced`). */
const placedId = (events: WalletEvent[]) =>
  events.find((e) => e.type === 'OrderPlaced')!.data.order_id as string;

/** A wallet of 1,000,000 USDT with a 1 BTC limit buy resting at 39,000 under `ctx`: its state and the order's id. */
const restingLimitBuy = (ctx: WalletContext) => {
  const placed = step(
    foldEvents(walletDecider, opened('1000000.00000000')),
    place({ type: 'limit', price: '39000', quantity: '1' }),
    ctx,
  );
  return { state: placed.state, id: placedId(placed.events) };
};

const expectFeeFollowsLiquidity = (f: OrderFilledData) => {
  expect(f.liquidity).toBeDefined();
  const rate = f.liquidity === 'maker' ? MAKER : TAKER;
  expect(f.fee_rate).toBe(rate.toFixed());
  expect(f.fee).toBe(feeFor(dec(f.notional), rate).toFixed(8));
};

/** A tape of prints around a price: each a price within ±3 % and a base volume (sometimes none). */
const tape = (center: number) =>
  fc
    .array(
      fc.record({
        move: fc.integer({ min: -300, max: 300 }),
        volume: fc.oneof(
          fc.constant('0'),
          fc.integer({ min: 1, max: 2_000_000 }).map((n) => dec(n).shiftedBy(-6).toFixed(8)),
        ),
      }),
      { minLength: 1, maxLength: 25 },
    )
    .map((prints) =>
      prints.map((p, i) => ({
        price: dec(center)
          .times(dec(10_000 + p.move).div(10_000))
          .decimalPlaces(2)
          .toFixed(8),
        volume: p.volume,
        time: new Date(Date.parse('2024-01-05T10:00:00.000Z') + (i + 1) * 1000).toISOString(),
      })),
    );

const fillsOf = (events: WalletEvent[]) =>
  events.filter((e) => e.type === 'OrderFilled').map((e) => e.data as OrderFilledData);

describe('realistic fills in the wallet decider', () => {
  it('rest at the limit, fill in parts of their participation share, keep the lock of what remains', () => {
    const seen = { placed: 0, partial: 0, maker: 0, taker: 0 };
    fc.assert(
      fc.property(
        fc.record({
          side: fc.constantFrom('buy' as const, 'sell' as const),
          type: fc.constantFrom(
            'limit' as const,
            'limit' as const,
            'limit' as const,
            'stop_loss' as const,
            'take_profit' as const,
          ),
          levelMove: fc.integer({ min: -100, max: 100 }),
          quantity: fc.integer({ min: 1, max: 20_000 }).map((n) => dec(n).shiftedBy(-5).toFixed(8)),
          cancelAfter: fc.integer({ min: 0, max: 30 }),
        }),
        tape(40_000),
        (o, prints) => {
          const ctx = ctxOf('realistic');
          let state = foldEvents(walletDecider, opened('1000000.00000000'));
          // A sell needs the base: buy it first at market (a taker fill).
          if (o.side === 'sell') {
            const bought = step(state, place({ type: 'market', quantity: '0.3' }), ctx);
            state = bought.state;
            for (const f of fillsOf(bought.events)) expectFeeFollowsLiquidity(f);
          }
          const level = dec(40_000)
            .times(dec(10_000 + o.levelMove).div(10_000))
            .decimalPlaces(2)
            .toFixed(8);
          const placed = step(
            state,
            place({
              side: o.side,
              type: o.type,
              quantity:
                o.side === 'sell' ? dec(o.quantity).mod('0.3').plus('0.00001').toFixed(8) : o.quantity,
              ...(o.type === 'limit' ? { price: level } : { triggerPrice: level }),
            }),
            ctx,
          );
          state = placed.state;
          const order = placed.events.find((e) => e.type === 'OrderPlaced');
          if (order?.type !== 'OrderPlaced') return; // refused by the risk chain: nothing to check
          const id = order.data.order_id;
          seen.placed++;
          const ordered = dec(order.data.quantity);
          let filled = ZERO;
          expectLocksMatch(state);
          for (const [i, p] of prints.entries()) {
            if (i === o.cancelAfter && state.openOrders[id]) {
              const before = state.openOrders[id]!;
              const cancelled = step(state, { type: 'CancelOrder', data: { orderId: id } }, ctx);
              const c = cancelled.events[0]!;
              expect(c.type).toBe('OrderCancelled');
              // Cancelling a partly filled order releases exactly its remaining lock.
              if (c.type === 'OrderCancelled')
                expect(c.data.unlocked_amount).toBe(before.lockedAmount.toFixed(8));
              const freed = before.side === 'buy' ? state.cash.plus(before.lockedAmount) : state.cash;
              state = cancelled.state;
              expect(state.cash.toFixed()).toBe(freed.toFixed());
              expectLocksMatch(state);
              break;
            }
            const out = step(state, fillCmd(id, p.price, p.time, p.volume), ctx);
            state = out.state;
            for (const f of fillsOf(out.events)) {
              expectFeeFollowsLiquidity(f);
              expect(f.fill_model).toBe('realistic');
              filled = filled.plus(f.quantity);
              expect(dec(f.remaining_quantity!).toFixed()).toBe(ordered.minus(filled).toFixed());
              if (o.type === 'limit') {
                // No fill beyond the limit.
                if (o.side === 'buy') expect(dec(f.executed_price).lte(level)).toBe(true);
                else expect(dec(f.executed_price).gte(level)).toBe(true);
              }
              if (dec(f.remaining_quantity!).gt(0)) seen.partial++;
              seen[f.liquidity!]++;
              if (f.liquidity === 'maker') {
                // At most the participation share of the print's volume.
                expect(dec(f.quantity).lte(dec(p.volume).times('0.1'))).toBe(true);
                expect(f.executed_price).toBe(level);
              } else {
                expect(f.book_levels).not.toBeNull();
              }
            }
            expect(filled.lte(ordered)).toBe(true);
            expectLocksMatch(state);
          }
        },
      ),
      { numRuns: 300 },
    );
    // The runs exercised what they check: orders placed, partial fills, both liquidity flags. Over 300 runs about
    // 255 orders are placed, with ~23 partial fills (8–22 in 200 runs: a bound of 10 there failed one run in ten),
    // ~45 maker and ~150 taker fills; the bounds sit four standard deviations or more below those.
    expect(seen.placed).toBeGreaterThan(150);
    expect(seen.partial).toBeGreaterThanOrEqual(5);
    expect(seen.maker).toBeGreaterThanOrEqual(15);
    expect(seen.taker).toBeGreaterThanOrEqual(50);
  });

  it('fills a large resting limit over several prints as partial fills, one event each', () => {
    const ctx = ctxOf('realistic');
    let { state, id } = restingLimitBuy(ctx);
    const locks: string[] = [state.openOrders[id]!.lockedAmount.toFixed(8)];
    const fills: OrderFilledData[] = [];
    for (let i = 0; i < 5; i++) {
      const out = step(state, fillCmd(id, '38999', `2024-01-05T10:00:0${i}.000Z`, '3'), ctx);
      state = out.state;
      fills.push(...fillsOf(out.events));
      if (state.openOrders[id]) locks.push(state.openOrders[id]!.lockedAmount.toFixed(8));
    }
    // 10 % of 3 BTC a print: 0.3 each, the fourth fills the last 0.1.
    expect(fills.map((f) => f.quantity)).toEqual(['0.30000000', '0.30000000', '0.30000000', '0.10000000']);
    expect(fills.map((f) => f.remaining_quantity)).toEqual([
      '0.70000000',
      '0.40000000',
      '0.10000000',
      '0.00000000',
    ]);
    expect(fills.every((f) => f.liquidity === 'maker' && f.executed_price === '39000.00000000')).toBe(true);
    expect(fills[0]).toMatchObject({
      fill_model: 'realistic',
      fill_model_version: 2,
      volume_available: '3.00000000',
      participation_cap_pct: '10',
      volume_taken: '0.00000000',
      fee_rate: '0.0002',
      order_after: { executed_quantity: '0.30000000', executed_price: '39000.00000000' },
    });
    expect(fills[3]!.order_after).toMatchObject({
      executed_quantity: '1.00000000',
      locked_amount: '0.00000000',
    });
    // The lock shrinks with each fill.
    expect(locks.map(Number)).toEqual([...locks.map(Number)].sort((a, b) => b - a));
    expect(new Set(locks).size).toBe(4);
    expect(state.openOrders[id]).toBeUndefined();
    expect(state.lockedCash.toFixed()).toBe('0');
  });

  it("gives an order the average of its fills' prices exactly, not of their notionals rounded to 8 places", () => {
    // 0.002 at 32,491.518827: the notional is 64.983037654, booked 64.98303765; the order's average from the booked
    // notional was 32,491.518825, two millionths away from the price of its only fill.
    const ctx = ctxOf('realistic');
    const placed = step(
      foldEvents(walletDecider, opened('1000000.00000000')),
      place({ type: 'limit', price: '32491.518827', quantity: '0.002' }),
      ctx,
    );
    const id = placedId(placed.events);
    const one = fillsOf(
      step(placed.state, fillCmd(id, '32491', '2024-01-05T10:00:00.000Z', '1'), ctx).events,
    );
    expect(one.map((f) => [f.quantity, f.executed_price, f.notional])).toEqual([
      ['0.00200000', '32491.51882700', '64.98303765'],
    ]);
    expect(one[0]!.order_after?.executed_price).toBe('32491.51882700');

    // Two fills of a resting order at one price (10 % of each print's 0.0015): the average is still that price.
    const resting = step(
      foldEvents(walletDecider, opened('1000000.00000000')),
      place({ type: 'limit', price: '32491.518827', quantity: '0.0003' }),
      ctx,
    );
    const rid = placedId(resting.events);
    let state = resting.state;
    const fills: OrderFilledData[] = [];
    for (let i = 0; i < 2; i++) {
      const out = step(state, fillCmd(rid, '32491', `2024-01-05T10:00:0${i}.000Z`, '0.0015'), ctx);
      state = out.state;
      fills.push(...fillsOf(out.events));
    }
    expect(fills.map((f) => f.quantity)).toEqual(['0.00015000', '0.00015000']);
    expect(fills.map((f) => f.order_after?.executed_price)).toEqual(['32491.51882700', '32491.51882700']);
    expect(state.openOrders[rid]).toBeUndefined();
  });

  it("shares one print among the wallet's resting orders, and never fills on a print without volume", () => {
    const ctx = ctxOf('realistic');
    let state = foldEvents(walletDecider, opened('1000000.00000000'));
    const ids: string[] = [];
    for (const price of ['39000', '39100']) {
      const out = step(state, place({ type: 'limit', price, quantity: '1' }), ctx);
      state = out.state;
      ids.push(placedId(out.events));
    }
    const time = '2024-01-05T10:00:01.000Z';
    expect(step(state, fillCmd(ids[0]!, '38900', time, '0'), ctx).events).toEqual([]);
    const a = step(state, fillCmd(ids[1]!, '38900', time, '2'), ctx);
    const b = step(a.state, fillCmd(ids[0]!, '38900', time, '2'), ctx);
    expect(fillsOf(a.events)[0]!.quantity).toBe('0.20000000');
    // The print's share is used up by the first order.
    expect(b.events).toEqual([]);
  });

  it('executes a triggered stop through the book at the gapped price, as a taker', () => {
    const ctx = ctxOf('realistic');
    let state = foldEvents(walletDecider, opened('1000000.00000000'));
    state = step(state, place({ type: 'market', quantity: '1' }), ctx).state;
    const placed = step(
      state,
      place({ side: 'sell', type: 'stop_loss', triggerPrice: '39000', quantity: '1' }),
      ctx,
    );
    state = placed.state;
    const id = placedId(placed.events);
    const out = step(state, fillCmd(id, '37000', '2024-01-05T10:00:05.000Z', '0'), ctx);
    const f = fillsOf(out.events)[0]!;
    expect(f).toMatchObject({ liquidity: 'taker', reference_price: '37000.00000000', fee_rate: '0.001' });
    // The walk starts at the gapped price, below the trigger, and goes down the bids.
    expect(dec(f.executed_price).lt('37000')).toBe(true);
    expect(dec(f.book_levels![0]![0]).lt('37000')).toBe(true);
  });

  it('keeps `instant` as it was: whole fills, the slippage table, no model book', () => {
    const ctx = ctxOf('instant');
    const { state, id } = restingLimitBuy(ctx);
    const f = fillsOf(step(state, fillCmd(id, '38999', '2024-01-05T10:00:01.000Z', '0'), ctx).events)[0]!;
    expect(f).toMatchObject({
      quantity: '1.00000000',
      executed_price: '39000.00000000',
      fill_model: 'instant',
      liquidity: 'maker',
      remaining_quantity: '0.00000000',
      book_levels: null,
    });
  });

  it('replays fills recorded before fill models (no model fields) as whole fills', () => {
    const ctx = { ...ctxOf('instant'), makerFeeRate: undefined };
    let state = foldEvents(walletDecider, opened());
    const placed = step(state, place({ type: 'limit', price: '39000', quantity: '0.05' }), ctx);
    state = placed.state;
    const id = placedId(placed.events);
    const out = step(state, fillCmd(id, '38999', '2024-01-05T10:00:01.000Z', '1'), ctx);
    // An old event: the same fill without any of the fields fill models added.
    const legacy = out.events.map((e) => {
      if (e.type !== 'OrderFilled') return e;
      const {
        fill_model: _m,
        fill_model_version: _v,
        liquidity: _l,
        book_levels: _b,
        book_taken: _t,
        volume_available: _a,
        participation_cap_pct: _p,
        volume_taken: _vt,
        remaining_quantity: _r,
        order_after: _o,
        ...old
      } = e.data;
      return { ...e, data: old };
    });
    const replayed = foldEvents(walletDecider, legacy, state);
    expect(replayed.openOrders).toEqual({});
    expect(replayed.cash.toFixed()).toBe(out.state.cash.toFixed());
    expect(replayed.holdings).toEqual(out.state.holdings);
    expect(replayed.print).toBeNull();
  });
});
