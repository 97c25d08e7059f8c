import fc from 'fast-check';
import { isDomainError } from '../../domain/shared/errors';
import { dec } from '../../domain/trading/decimal';
import type { WalletCommand } from '../../domain/wallet/commands';
import { walletDecider } from '../../domain/wallet/decide';
import type { WalletEvent } from '../../domain/wallet/events';
import { claimOfEvent } from '../../domain/wallet/idempotency';
import type { WalletState } from '../../domain/wallet/state';
import { context, fill, market, owner, place } from './support';

/**
 * Random wallet histories for snapshot tests: every event a wallet can record (orders of the four types with and
 * without idempotency keys, fills, cancels, rejections, resets, trading days), decided by the real decider on a
 * clock that moves by minutes and days (so idempotency claims expire; a keyed order gets its key's claim as the log lookup would find it).
 */

const SYMBOLS = ['BTCUSDT', 'ETHUSDT'] as const;
const STEP = { BTCUSDT: '0.001', ETHUSDT: '0.01' } as const;

export type HistoryAction =
  | {
      kind: 'place';
      symbol: (typeof SYMBOLS)[number];
      side: 'buy' | 'sell';
      type: 'market' | 'limit' | 'stop_loss' | 'take_profit';
      steps: number;
      levelPct: number;
      /** An idempotency key from a small set (so keys repeat, are replayed, conflict and expire). */
      key: number | null;
    }
  | { kind: 'move'; symbol: (typeof SYMBOLS)[number]; pct: number }
  | { kind: 'cancel'; index: number }
  | { kind: 'cancelAll' }
  | { kind: 'reset'; balance: number | null }
  | { kind: 'later'; minutes: number };

const symbol = fc.constantFrom(...SYMBOLS);

export const historyAction: fc.Arbitrary<HistoryAction> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('place' as const),
      symbol,
      side: fc.constantFrom('buy' as const, 'buy' as const, 'sell' as const),
      type: fc.constantFrom(
        'market' as const,
        'limit' as const,
        'stop_loss' as const,
        'take_profit' as const,
      ),
      steps: fc.integer({ min: 1, max: 400 }),
      levelPct: fc.integer({ min: 80, max: 120 }),
      key: fc.option(fc.nat(12), { nil: null }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('move' as const),
      symbol,
      pct: fc.integer({ min: 70, max: 140 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), index: fc.nat(10) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'cancelAll' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('reset' as const),
      balance: fc.option(fc.integer({ min: 100, max: 50_000 }), { nil: null }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('later' as const),
      minutes: fc.constantFrom(1, 7, 60, 600, 1440, 2000),
    }),
  },
);

/** The events a wallet records for `actions` (refusals that record nothing are skipped), and its final state. */
export const walletHistory = (actions: HistoryAction[]): { events: WalletEvent[]; state: WalletState } => {
  const m = market({ BTCUSDT: '40000', ETHUSDT: '2000' });
  let now = new Date('2024-01-05T10:00:00.000Z');
  let id = 0;
  let state = walletDecider.initialState();
  const events: WalletEvent[] = [];
  const decide = (command: WalletCommand) => {
    // A keyed order's claim as the wallet commands look it up in the log: the newest event recording the key.
    const key = command.type === 'PlaceOrder' ? command.data.order.idempotencyKey : null;
    const claim = key
      ? events
          .map((e, revision) => claimOfEvent({ ...e, revision }))
          .findLast(
            (c, i) =>
              c !== undefined && (events[i]!.data as { idempotency_key?: string }).idempotency_key === key,
          )
      : undefined;
    const ctx = {
      ...context(m, {
        now,
        riskProfile: { max_position_size_pct: 100, max_order_size_pct: 100, max_open_orders: 20 },
      }),
      newId: () => `id-${++id}`,
      ...(claim ? { idempotencyClaim: claim } : {}),
    };
    try {
      const produced = walletDecider.decide(command, state, ctx);
      for (const e of produced) state = walletDecider.evolve(state, e);
      events.push(...produced);
    } catch (error) {
      if (!isDomainError(error)) throw error;
    }
  };
  decide({ type: 'OpenWallet', data: { owner: owner() } });
  for (const a of actions) {
    switch (a.kind) {
      case 'place': {
        const price = dec(m.prices.get(a.symbol)!);
        const level = price.times(a.levelPct).div(100).decimalPlaces(2).toFixed();
        const quantity = dec(STEP[a.symbol]).times(a.steps).toFixed();
        decide(
          place({
            symbol: a.symbol,
            side: a.side,
            type: a.type,
            quantity,
            ...(a.type === 'limit' ? { price: level } : {}),
            ...(a.type === 'stop_loss' || a.type === 'take_profit' ? { triggerPrice: level } : {}),
            ...(a.key !== null
              ? { idempotencyKey: `key-${a.key}`, requestHash: `${a.symbol}/${a.side}/${a.type}/${quantity}` }
              : {}),
          }),
        );
        break;
      }
      case 'move': {
        const next = dec(m.prices.get(a.symbol)!).times(a.pct).div(100).decimalPlaces(2);
        m.prices.set(a.symbol, next.toFixed());
        for (const o of Object.values(state.openOrders)) {
          if (o.symbol === a.symbol) decide(fill(o.orderId, next.toFixed(), now.toISOString()));
        }
        break;
      }
      case 'cancel': {
        const open = Object.keys(state.openOrders);
        decide({
          type: 'CancelOrder',
          data: { orderId: open[a.index % Math.max(open.length, 1)] ?? 'none' },
        });
        break;
      }
      case 'cancelAll':
        decide({ type: 'CancelAllOrders', data: {} });
        break;
      case 'reset':
        decide({
          type: 'ResetWallet',
          data: { owner: owner(), ...(a.balance !== null ? { startingBalance: String(a.balance) } : {}) },
        });
        break;
      case 'later':
        now = new Date(now.getTime() + a.minutes * 60_000);
        break;
    }
  }
  return { events, state };
};

/** Random wallet histories of up to `maxActions` actions. */
export const walletHistories = (maxActions = 80) =>
  fc.array(historyAction, { minLength: 1, maxLength: maxActions }).map((actions) => walletHistory(actions));
