import fc from 'fast-check';
import { isDomainError } from '../../domain/shared/errors';
import type { WalletCommand } from '../../domain/wallet/commands';
import { walletDecider } from '../../domain/wallet/decide';
import { type WalletEvent, walletStreamId } from '../../domain/wallet/events';
import { claimOfEvent } from '../../domain/wallet/idempotency';
import type { WalletState } from '../../domain/wallet/state';
import type { EventStore } from '../../ports/event-store';
import {
  decideWalletChange,
  orderTerms,
  type RandomOrder,
  randomCancelsAndResets,
  randomMove,
  randomOrderFields,
  simulatedWallet,
  type WalletChange,
} from './random-orders';
import { owner, place } from './support';

/**
 * Random wallet histories for snapshot tests: every event a wallet can record (orders of the four types with and
 * without idempotency keys, fills, cancels, rejections, resets, trading days), decided by the real decider on a
 * clock that moves by minutes and days (so idempotency claims expire; a keyed order gets its key's claim as the log lookup would find it).
 */

export type HistoryAction =
  | (RandomOrder & {
      kind: 'place';
      /** An idempotency key from a small set (so keys repeat, are replayed, conflict and expire). */
      key: number | null;
    })
  | WalletChange
  | { kind: 'later'; minutes: number };

export const historyAction: fc.Arbitrary<HistoryAction> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('place' as const),
      ...randomOrderFields(400, { min: 80, max: 120 }),
      key: fc.option(fc.nat(12), { nil: null }),
    }),
  },
  { weight: 4, arbitrary: randomMove({ min: 70, max: 140 }) },
  ...randomCancelsAndResets,
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
  const wallet = simulatedWallet({
    max_position_size_pct: 100,
    max_order_size_pct: 100,
    max_open_orders: 20,
  });
  const { events } = wallet;
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
    try {
      wallet.record(
        walletDecider.decide(command, wallet.state, wallet.context(claim ? { idempotencyClaim: claim } : {})),
      );
    } catch (error) {
      if (!isDomainError(error)) throw error;
    }
  };
  decide({ type: 'OpenWallet', data: { owner: owner() } });
  for (const a of actions) {
    switch (a.kind) {
      case 'place': {
        const terms = orderTerms(a, wallet.market.prices.get(a.symbol)!);
        decide(
          place({
            ...terms,
            ...(a.key !== null
              ? {
                  idempotencyKey: `key-${a.key}`,
                  requestHash: `${a.symbol}/${a.side}/${a.type}/${terms.quantity}`,
                }
              : {}),
          }),
        );
        break;
      }
      case 'later':
        wallet.later(a.minutes * 60_000);
        break;
      default:
        decideWalletChange(a, wallet.state, wallet.market, wallet.now, decide);
    }
  }
  return { events, state: wallet.state };
};

/** Random wallet histories of up to `maxActions` actions. */
export const walletHistories = (maxActions = 80) =>
  fc.array(historyAction, { minLength: 1, maxLength: maxActions }).map((actions) => walletHistory(actions));

/** A history's order and trade ids (`id-<n>` in every generated history) made the owner's own. */
export const ownIds = <E>(events: E[], ownerId: string): E[] =>
  JSON.parse(JSON.stringify(events).replace(/"id-(\d+)"/g, `"${ownerId}-$1"`)) as E[];

/**
 * Appends each history to the stream of the wallet `ids[w]` (its ids made that owner's, {@link ownIds}),
 * interleaved in the log chunk by chunk so that a reader's pages mix wallets: in round `r` history `w` appends its
 * next `chunkSizes[(r + w) % chunkSizes.length]` events. `fold()` is awaited after every `foldEvery`-th round (the
 * second, then every `foldEvery` more: a projection folds mid-history). Then deletes the wallet streams whose
 * `deleted[w]` is true, never the first.
 */
export const appendInterleaved = async (
  store: EventStore,
  ids: string[],
  histories: { events: WalletEvent[] }[],
  options: { chunkSizes: number[]; deleted: boolean[]; foldEvery: number; fold: () => Promise<void> },
): Promise<void> => {
  const { chunkSizes, deleted, foldEvery, fold } = options;
  const cursors = histories.map(() => 0);
  for (let round = 0, progressed = true; progressed; round++) {
    progressed = false;
    for (const [w, { events }] of histories.entries()) {
      const from = cursors[w]!;
      if (from >= events.length) continue;
      const size = chunkSizes[(round + w) % chunkSizes.length]!;
      await store.append(walletStreamId(ids[w]!), ownIds(events.slice(from, from + size), ids[w]!));
      cursors[w] = from + size;
      progressed = true;
    }
    if (round % foldEvery === 1) await fold();
  }
  for (const [w, gone] of deleted.entries())
    if (gone && w < ids.length && w > 0) await store.deleteStream(walletStreamId(ids[w]!));
};
