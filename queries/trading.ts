import { type Kysely, type Selectable, sql } from 'kysely';
import type { OrderStatus, OrdersTable, TradesTable } from '../projections/orders';
import type { ReadModels } from '../projections/read-models';
import type {
  BalancesTable,
  PositionsTable,
  WalletSessionsTable,
  WalletsTable,
} from '../projections/wallets';

/**
 * Read side of the trading ledger (ARCHITECTURE §3 `queries/`): typed kysely queries over the `orders`,
 * `trades`, `wallets`, `wallet_sessions`, `balances` and `positions` read models. Every query is scoped by the
 * wallet owner (account or agent id); none writes.
 */

export type OrderRow = Selectable<OrdersTable>;
export type TradeRow = Selectable<TradesTable>;
export type WalletRow = Selectable<WalletsTable>;
export type SessionRow = Selectable<WalletSessionsTable>;
export type BalanceRow = Selectable<BalancesTable>;
export type PositionRow = Selectable<PositionsTable>;

/** Statuses that count as open (spec: `GET /trade/orders/open` lists pending and partially filled orders). */
export const OPEN_STATUSES: readonly OrderStatus[] = ['pending', 'partially_filled'];

/** The wallet of an owner and its current session, or undefined when it never traded. */
export const getWallet = async (
  db: Kysely<ReadModels>,
  ownerId: string,
): Promise<{ wallet: WalletRow; session: SessionRow | undefined } | undefined> => {
  const wallet = await db
    .selectFrom('wallets')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .executeTakeFirst();
  if (!wallet) return undefined;
  const session = await db
    .selectFrom('wallet_sessions')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('session_id', '=', wallet.session_id)
    .executeTakeFirst();
  return { wallet, session };
};

/** Balances of the current session (USDT first, then assets by name). */
export const getBalances = (db: Kysely<ReadModels>, ownerId: string): Promise<BalanceRow[]> =>
  db
    .selectFrom('balances')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .orderBy(sql`asset = 'USDT'`, 'desc')
    .orderBy('asset')
    .execute();

/**
 * The last revision of a stream that the read models include (`stream_summaries`, folded in the same page
 * transaction as the wallet read models), -1 when none: the revision a snapshot read from them reflects. The
 * event store's head can be ahead of it while a page is being folded.
 */
export const foldedRevision = async (db: Kysely<ReadModels>, streamId: string): Promise<number> =>
  (
    await db
      .selectFrom('stream_summaries')
      .select('last_revision')
      .where('stream_id', '=', streamId)
      .executeTakeFirst()
  )?.last_revision ?? -1;

/** Non-zero positions, by asset. */
export const getPositions = (db: Kysely<ReadModels>, ownerId: string): Promise<PositionRow[]> =>
  db.selectFrom('positions').selectAll().where('owner_id', '=', ownerId).orderBy('asset').execute();

/** One order of the owner, or undefined (unknown or another owner's: the caller answers `ORDER_NOT_FOUND`). */
export const getOrder = (
  db: Kysely<ReadModels>,
  ownerId: string,
  orderId: string,
): Promise<OrderRow | undefined> =>
  db
    .selectFrom('orders')
    .selectAll()
    .where('order_id', '=', orderId)
    .where('owner_id', '=', ownerId)
    .executeTakeFirst();

/** Filters and page of {@link listOrders}. */
export interface OrderFilter {
  statuses?: readonly OrderStatus[];
  symbol?: string;
  sessionId?: string;
  limit: number;
  offset: number;
}

/** Orders of the owner, newest first, with the total matching the filter. */
export const listOrders = async (
  db: Kysely<ReadModels>,
  ownerId: string,
  filter: OrderFilter,
): Promise<{ rows: OrderRow[]; total: number }> => {
  let q = db.selectFrom('orders').where('owner_id', '=', ownerId);
  if (filter.statuses?.length) q = q.where('status', 'in', [...filter.statuses]);
  if (filter.symbol) q = q.where('symbol', '=', filter.symbol);
  if (filter.sessionId) q = q.where('session_id', '=', filter.sessionId);
  const [rows, count] = await Promise.all([
    q.selectAll().orderBy('seq', 'desc').limit(filter.limit).offset(filter.offset).execute(),
    q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
};

/** The first order recorded with this idempotency key (its stored hash) since `since`, if any. */
export const findOrderByIdempotencyKey = (
  db: Kysely<ReadModels>,
  ownerId: string,
  key: string,
  since: Date,
): Promise<OrderRow | undefined> =>
  db
    .selectFrom('orders')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('idempotency_key', '=', key)
    .where('created_at', '>=', since)
    .orderBy('seq')
    .executeTakeFirst();

/** Filters and page of {@link listTrades}. */
export interface TradeFilter {
  symbol?: string;
  side?: 'buy' | 'sell';
  sessionId?: string;
  limit: number;
  offset: number;
}

/** Fills of the owner, newest first, with the total matching the filter. */
export const listTrades = async (
  db: Kysely<ReadModels>,
  ownerId: string,
  filter: TradeFilter,
): Promise<{ rows: TradeRow[]; total: number }> => {
  let q = db.selectFrom('trades').where('owner_id', '=', ownerId);
  if (filter.symbol) q = q.where('symbol', '=', filter.symbol);
  if (filter.side) q = q.where('side', '=', filter.side);
  if (filter.sessionId) q = q.where('session_id', '=', filter.sessionId);
  const [rows, count] = await Promise.all([
    q.selectAll().orderBy('seq', 'desc').limit(filter.limit).offset(filter.offset).execute(),
    q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
};

/** Realized PnL, fees and closed-trade counts of a session's fills since `since` (all when absent). */
export interface TradeStats {
  realizedPnl: string;
  feesPaid: string;
  fills: number;
  closedTrades: number;
  winningTrades: number;
  /** Sells with realized PnL below zero (break-even is neither a win nor a loss, as in /analytics/performance). */
  losingTrades: number;
}

export const tradeStats = async (
  db: Kysely<ReadModels>,
  ownerId: string,
  sessionId: string,
  since?: Date,
): Promise<TradeStats> => {
  let q = db.selectFrom('trades').where('owner_id', '=', ownerId).where('session_id', '=', sessionId);
  if (since) q = q.where('executed_at', '>=', since);
  const row = await q
    .select([
      sql<string>`coalesce(sum(realized_pnl), 0)`.as('realized'),
      sql<string>`coalesce(sum(fee), 0)`.as('fees'),
      sql<string>`count(*)`.as('fills'),
      sql<string>`count(*) filter (where side = 'sell')`.as('closed'),
      sql<string>`count(*) filter (where side = 'sell' and realized_pnl > 0)`.as('wins'),
      sql<string>`count(*) filter (where side = 'sell' and realized_pnl < 0)`.as('losses'),
    ])
    .executeTakeFirstOrThrow();
  return {
    realizedPnl: row.realized,
    feesPaid: row.fees,
    fills: Number(row.fills),
    closedTrades: Number(row.closed),
    winningTrades: Number(row.wins),
    losingTrades: Number(row.losses),
  };
};
