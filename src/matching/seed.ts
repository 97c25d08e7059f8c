import type { Kysely } from 'kysely';
import type { LogPosition } from '../../ports/event-store';
import { liveGeneration } from '../../projections/generations';
import { ordersProjection } from '../../projections/orders';
import type { ReadModels } from '../../projections/read-models';
import { readSnapshot } from '../../queries/snapshot';
import { OPEN_STATUSES } from '../../queries/trading';
import { type IndexedOrder, indexedOrder } from './order-index';

/** The matching engine's index as a read model holds it: the open orders folded up to `position`. */
export interface IndexSeed {
  /** The `orders` projection's checkpoint: every event at or before it is in `orders`, none after. */
  position: LogPosition;
  /** The pending orders the engine indexes, each wallet's in placement order. */
  orders: IndexedOrder[];
}

/**
 * Reads the matching engine's starting index from the `orders` read model instead of the whole event log
 * (issue 20: a restart against a log of 10 M events read and folded every event of every stream). One
 * `REPEATABLE READ` snapshot gives the live generation's checkpoint and its open resting orders together, and
 * the projection commits each page's rows with its checkpoint, so the orders are exactly those open after the
 * events up to the checkpoint; the engine then reads the log after it. Indexed as the log would index them
 * (`MatchingEngine.applyEvent`): limit, stop-loss and take-profit orders `pending` or `partially_filled`, not IOC/FOK
 * limits (decided in their own append); a wallet's orders in stream order (`seq`), which orders equal levels
 * (across wallets that order decides nothing: a print's participation share and book depth are each wallet's own).
 * Costs one query of `orders` instead of a read and fold of the whole log.
 *
 * @returns undefined when the read model cannot stand in for the log: no live generation of `orders`, or one of
 *   another version than this code's (its rows may follow other rules). Throws what the database throws.
 */
export const readIndexSeed = async (db: Kysely<ReadModels>): Promise<IndexSeed | undefined> =>
  readSnapshot(db, async (trx) => {
    const live = await liveGeneration(trx, ordersProjection.name);
    if (!live || live.version !== ordersProjection.version) return undefined;
    const rows = await trx
      .selectFrom('orders')
      .select(['order_id', 'owner_id', 'symbol', 'side', 'type', 'price', 'trigger_price'])
      .where('status', 'in', OPEN_STATUSES)
      .where('type', '<>', 'market')
      .where('time_in_force', 'is', null)
      .orderBy('owner_id')
      .orderBy('seq')
      .execute();
    const orders = rows.map((r) =>
      indexedOrder({
        orderId: r.order_id,
        ownerId: r.owner_id,
        symbol: r.symbol,
        side: r.side,
        type: r.type as IndexedOrder['type'],
        level: String(r.type === 'limit' ? r.price : r.trigger_price),
      }),
    );
    return { position: live.checkpoint, orders };
  });
