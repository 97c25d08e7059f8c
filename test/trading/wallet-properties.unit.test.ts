import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldEvents } from '../../domain/shared/decider';
import { isDomainError } from '../../domain/shared/errors';
import type { RiskProfile } from '../../domain/shared/risk-profile';
import { dec, ZERO } from '../../domain/trading/decimal';
import { isTriggered } from '../../domain/trading/orders';
import type { WalletCommand } from '../../domain/wallet/commands';
import { walletDecider } from '../../domain/wallet/decide';
import type { WalletEvent } from '../../domain/wallet/events';
import { totalCost, type WalletState } from '../../domain/wallet/state';
import * as flows from './random-orders';
import { fill, owner, place } from './support';

/**
 * Property tests of the wallet decider (issue "Done when"): for random sequences of orders of the four types,
 * price moves that drive the pending orders like the matching engine, cancels, cancel-alls, resets and day
 * changes, after every step:
 * - cash + locked cash + Σ position cost = starting balance + realized PnL − fees paid (exactly);
 * - locked cash = Σ locks of open buy orders; each asset's locked quantity = Σ open sell quantities;
 * - no balance, quantity, lock or cost is ever negative, and locks never exceed holdings;
 * - every money figure in the events is an 8-place decimal string;
 * - folding the events after a JSON round trip (what the store keeps) gives the live state.
 */

type Action = (flows.RandomOrder & { kind: 'place' }) | flows.WalletChange | { kind: 'nextDay' };

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 6, arbitrary: flows.randomPlace('place', 120, { min: 80, max: 120 }) },
  { weight: 5, arbitrary: flows.randomMove({ min: 70, max: 140 }) },
  ...flows.randomCancelsAndResets,
  { weight: 1, arbitrary: fc.constant({ kind: 'nextDay' as const }) },
);

const profile = fc.record({
  max_position_size_pct: fc.constantFrom(25, 100),
  max_order_size_pct: fc.constantFrom(50, 100),
  daily_loss_limit_pct: fc.constantFrom(5, 20, 100),
  max_open_orders: fc.constantFrom(3, 50),
});

const MONEY = /^-?\d+\.\d{8}$/;
const MONEY_FIELDS = new Set([
  'quantity',
  'price',
  'trigger_price',
  'locked_amount',
  'starting_balance',
  'equity',
  'reference_price',
  'executed_price',
  'notional',
  'fee',
  'total',
  'cost_basis',
  'realized_pnl',
  'released_amount',
  'unlocked_amount',
  'slippage_pct',
  'avg_entry_price',
  'ending_equity',
  'total_pnl',
  'fees_paid',
]);

const checkMoneyStrings = (value: unknown, path = ''): void => {
  if (!value || typeof value !== 'object') return;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (k === 'details') continue; // free-form explanation of a rejection
    if (MONEY_FIELDS.has(k) && v !== null) expect(v, `${path}${k}`).toMatch(MONEY);
    checkMoneyStrings(v, `${path}${k}.`);
  }
};

/** The state as plain strings (BigNumbers compared by value). */
const snapshot = (state: WalletState): unknown =>
  JSON.parse(
    JSON.stringify(state, (_, v) =>
      v && typeof v === 'object' && '_isBigNumber' in v ? dec(v).toFixed() : v,
    ),
  );

const checkInvariants = (state: WalletState): void => {
  if (!state.session) return;
  // Conservation of value.
  const held = state.cash.plus(state.lockedCash).plus(totalCost(state));
  const expected = state.session.startingBalance.plus(state.realizedPnl).minus(state.feesPaid);
  expect(held.toFixed(), 'cash + locked + Σ cost = start + realized − fees').toBe(expected.toFixed());
  // Locks equal the locks of open orders.
  let buyLocks = ZERO;
  const sellLocks = new Map<string, ReturnType<typeof dec>>();
  for (const o of Object.values(state.openOrders)) {
    if (o.side === 'buy') buyLocks = buyLocks.plus(o.lockedAmount);
    else sellLocks.set(o.baseAsset, (sellLocks.get(o.baseAsset) ?? ZERO).plus(o.lockedAmount));
  }
  expect(state.lockedCash.toFixed(), 'locked cash = Σ open buy locks').toBe(buyLocks.toFixed());
  for (const h of Object.values(state.holdings)) {
    expect(h.locked.toFixed(), `${h.asset} locked = Σ open sells`).toBe(
      (sellLocks.get(h.asset) ?? ZERO).toFixed(),
    );
    expect(h.quantity.gt(0), `${h.asset} held > 0`).toBe(true);
    expect(h.locked.gte(0) && h.locked.lte(h.quantity), `${h.asset} 0 ≤ locked ≤ held`).toBe(true);
    expect(h.cost.gte(0), `${h.asset} cost ≥ 0`).toBe(true);
  }
  for (const [asset] of sellLocks)
    expect(state.holdings[asset], `${asset} is held while sells lock it`).toBeDefined();
  // Nothing negative.
  expect(state.cash.gte(0), `cash ${state.cash.toFixed()} ≥ 0`).toBe(true);
  expect(state.lockedCash.gte(0), 'locked cash ≥ 0').toBe(true);
  expect(state.feesPaid.gte(0), 'fees ≥ 0').toBe(true);
};

const simulate = (actions: Action[], riskProfile: Partial<RiskProfile>) => {
  const wallet = flows.simulatedWallet(riskProfile);
  const { market: m, events } = wallet;
  const decide = (command: WalletCommand) => {
    let produced: WalletEvent[];
    try {
      produced = walletDecider.decide(command, wallet.state, wallet.context());
    } catch (error) {
      // Refusals that record nothing are fine; anything else is a bug.
      if (isDomainError(error) && ['PRICE_NOT_AVAILABLE', 'ORDER_NOT_FOUND'].includes(error.code)) return;
      throw error;
    }
    for (const e of produced) checkMoneyStrings(e.data);
    wallet.record(produced);
    checkInvariants(wallet.state);
  };

  decide({ type: 'OpenWallet', data: { owner: owner() } });
  for (const a of actions) {
    switch (a.kind) {
      case 'place': {
        decide(place(flows.orderTerms(a, m.prices.get(a.symbol)!)));
        // The engine offers the current price to a new pending order at once.
        const last = events[events.length - 1];
        if (last?.type === 'OrderPlaced' && last.data.type !== 'market') {
          decide(fill(last.data.order_id, dec(m.prices.get(a.symbol)!).toFixed(), wallet.now.toISOString()));
        }
        break;
      }
      case 'nextDay':
        wallet.later(86_400_000);
        break;
      default:
        // A move is what the matching engine does on a tick: the price offered to every open order of the symbol.
        flows.decideWalletChange(a, wallet.state, m, wallet.now, decide);
    }
  }
  return { state: wallet.state, events, prices: m.prices };
};

describe('wallet decider properties', () => {
  it('conserves value, keeps locks equal to open orders, never goes negative, and replays to the same state', () => {
    fc.assert(
      fc.property(fc.array(action, { minLength: 1, maxLength: 60 }), profile, (actions, riskProfile) => {
        const { state, events } = simulate(actions, riskProfile);
        const stored = JSON.parse(JSON.stringify(events)) as WalletEvent[];
        expect(snapshot(foldEvents(walletDecider, stored))).toEqual(snapshot(state));
      }),
      { numRuns: 300 },
    );
  });

  it('fills every pending order the price crosses and leaves the others open', () => {
    fc.assert(
      fc.property(fc.array(action, { minLength: 1, maxLength: 40 }), (actions) => {
        const { state, prices: lastPrices } = simulate(actions, {
          max_position_size_pct: 100,
          max_order_size_pct: 100,
          daily_loss_limit_pct: 100,
          max_open_orders: 50,
        });
        // Every order still open is one the current price of its symbol does not reach.
        for (const o of Object.values(state.openOrders)) {
          const level = (o.type === 'limit' ? o.price : o.triggerPrice)!;
          const price = dec(lastPrices.get(o.symbol)!);
          expect(
            isTriggered({ side: o.side, type: o.type, level }, price),
            `${o.side} ${o.type} @ ${level}`,
          ).toBe(false);
        }
      }),
      { numRuns: 100 },
    );
  });
});
