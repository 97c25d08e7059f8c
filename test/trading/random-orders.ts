import fc from 'fast-check';
import type { RiskProfile } from '../../domain/shared/risk-profile';
import { dec } from '../../domain/trading/decimal';
import type { WalletCommand, WalletContext } from '../../domain/wallet/commands';
import { walletDecider } from '../../domain/wallet/decide';
import type { WalletEvent } from '../../domain/wallet/events';
import type { WalletState } from '../../domain/wallet/state';
import { context, fill, market, owner, type TestMarket } from './support';

/**
 * The random order flows of the wallet's property tests (the decider's invariants, the snapshot histories, the
 * ledger on the event store): orders of the four types on two pairs sized in lot steps, price moves, cancels,
 * cancel-alls and resets, each test weighting and bounding them its own way.
 */

/** The pairs random orders are placed on. */
export const RANDOM_SYMBOLS = ['BTCUSDT', 'ETHUSDT'] as const;
export type RandomSymbol = (typeof RANDOM_SYMBOLS)[number];
/** Each pair's lot step (base asset). */
const STEP: Record<RandomSymbol, string> = { BTCUSDT: '0.001', ETHUSDT: '0.01' };

/** A random order: pair, side, type, size in lot steps, and its limit or trigger level in % of the price then. */
export interface RandomOrder {
  symbol: RandomSymbol;
  side: 'buy' | 'sell';
  type: 'market' | 'limit' | 'stop_loss' | 'take_profit';
  steps: number;
  levelPct: number;
}

/**
 * The arbitraries of a {@link RandomOrder}'s fields, to spread into an `fc.record` beside the action's kind:
 * buys twice as likely as sells, 1 to `maxSteps` lot steps, the level `levelPct.min`–`levelPct.max` % of the price.
 */
export const randomOrderFields = (maxSteps: number, levelPct: { min: number; max: number }) => ({
  symbol: fc.constantFrom(...RANDOM_SYMBOLS),
  side: fc.constantFrom('buy' as const, 'buy' as const, 'sell' as const),
  type: fc.constantFrom('market' as const, 'limit' as const, 'stop_loss' as const, 'take_profit' as const),
  steps: fc.integer({ min: 1, max: maxSteps }),
  levelPct: fc.integer(levelPct),
});

/** A random {@link RandomOrder} as an action of kind `kind` (see {@link randomOrderFields}). */
export const randomPlace = <K extends string>(
  kind: K,
  maxSteps: number,
  levelPct: { min: number; max: number },
) => fc.record({ kind: fc.constant(kind), ...randomOrderFields(maxSteps, levelPct) });

/** A random price move of one pair to `pct.min`–`pct.max` % of its price. */
export const randomMove = (pct: { min: number; max: number }) =>
  fc.record({
    kind: fc.constant('move' as const),
    symbol: fc.constantFrom(...RANDOM_SYMBOLS),
    pct: fc.integer(pct),
  });

/**
 * The order's terms when its pair's price is `price` (USDT): the quantity (`steps` lots), and the level
 * (`levelPct` % of the price, 2 places) as `price` of a limit or `triggerPrice` of a stop-loss or take-profit;
 * the other of the two is absent.
 */
export const orderTerms = (o: RandomOrder, price: string) => {
  const level = dec(price).times(o.levelPct).div(100).decimalPlaces(2).toFixed();
  return {
    symbol: o.symbol,
    side: o.side,
    type: o.type,
    quantity: dec(STEP[o.symbol]).times(o.steps).toFixed(),
    ...(o.type === 'limit' ? { price: level } : {}),
    ...(o.type === 'stop_loss' || o.type === 'take_profit' ? { triggerPrice: level } : {}),
  };
};

/** The actions beside orders that the decider's property tests take on a wallet. */
export type WalletChange =
  | { kind: 'move'; symbol: RandomSymbol; pct: number }
  | { kind: 'cancel'; index: number }
  | { kind: 'cancelAll' }
  | { kind: 'reset'; balance: number | null };

/** Arbitraries of a cancel (of one of the first 11 open orders, by index), a cancel-all and a reset, weighted 2:1:1. */
export const randomCancelsAndResets = [
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), index: fc.nat(10) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'cancelAll' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('reset' as const),
      balance: fc.option(fc.integer({ min: 100, max: 50_000 }), { nil: null }),
    }),
  },
] as const;

/**
 * Decides `change` on a wallet of `state` through `decide` at time `now` on market `m`: a move sets the pair's new
 * price and offers it to each of the pair's open orders, as the matching engine does on a tick; a cancel cancels
 * the `index`-th open order (modulo their count; an unknown id when none is open); a reset starts again at
 * `balance` USDT (or the owner's starting balance).
 */
export const decideWalletChange = (
  change: WalletChange,
  state: WalletState,
  m: TestMarket,
  now: Date,
  decide: (command: WalletCommand) => void,
): void => {
  switch (change.kind) {
    case 'move': {
      const next = dec(m.prices.get(change.symbol)!).times(change.pct).div(100).decimalPlaces(2);
      m.prices.set(change.symbol, next.toFixed());
      for (const o of Object.values(state.openOrders)) {
        if (o.symbol === change.symbol) decide(fill(o.orderId, next.toFixed(), now.toISOString()));
      }
      return;
    }
    case 'cancel': {
      const open = Object.keys(state.openOrders);
      decide({
        type: 'CancelOrder',
        data: { orderId: open[change.index % Math.max(open.length, 1)] ?? 'none' },
      });
      return;
    }
    case 'cancelAll':
      decide({ type: 'CancelAllOrders', data: {} });
      return;
    case 'reset':
      decide({
        type: 'ResetWallet',
        data: {
          owner: owner(),
          ...(change.balance !== null ? { startingBalance: String(change.balance) } : {}),
        },
      });
      return;
  }
};

/** A wallet that random flows drive through the real decider (see {@link simulatedWallet}). */
export interface SimulatedWallet {
  /** The market the orders are priced on: BTCUSDT at 40,000 and ETHUSDT at 2,000 to begin with. */
  readonly market: TestMarket;
  /** The simulated clock: 2024-01-05T10:00:00Z to begin with, moved by {@link SimulatedWallet.later}. */
  now: Date;
  /** The wallet's state after every event recorded so far. */
  state: WalletState;
  /** The events recorded so far, in order. */
  readonly events: WalletEvent[];
  /** The decider's context at the current time with the risk profile, ids `id-1`, `id-2`, … and `extra`. */
  context(extra?: Partial<WalletContext>): WalletContext;
  /** Folds `produced` into the state and appends it to the events. */
  record(produced: WalletEvent[]): void;
  /** Moves the clock on by `ms` milliseconds. */
  later(ms: number): void;
}

/**
 * A fresh wallet for a random flow (the property tests and the snapshot histories): the state, the events, the
 * market and the clock one flow moves, and the decider's context under `riskProfile`.
 */
export const simulatedWallet = (riskProfile: Partial<RiskProfile>): SimulatedWallet => {
  let id = 0;
  const wallet: SimulatedWallet = {
    market: market({ BTCUSDT: '40000', ETHUSDT: '2000' }),
    now: new Date('2024-01-05T10:00:00.000Z'),
    state: walletDecider.initialState(),
    events: [],
    context: (extra = {}) => ({
      ...context(wallet.market, { now: wallet.now, riskProfile }),
      newId: () => `id-${++id}`,
      ...extra,
    }),
    record: (produced) => {
      for (const e of produced) wallet.state = walletDecider.evolve(wallet.state, e);
      wallet.events.push(...produced);
    },
    later: (ms) => {
      wallet.now = new Date(wallet.now.getTime() + ms);
    },
  };
  return wallet;
};
