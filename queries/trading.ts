import { type Kysely, type Selectable, type SelectQueryBuilder, sql } from 'kysely';
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

/** The owner's rows of the `orders` read model, every column: the start of each lookup of one order. */
const ownOrders = (db: Kysely<ReadModels>, ownerId: string) =>
  db.selectFrom('orders').selectAll().where('owner_id', '=', ownerId);

/** One order of the owner, or undefined (unknown or another owner's: the caller answers `ORDER_NOT_FOUND`). */
export const getOrder = (
  db: Kysely<ReadModels>,
  ownerId: string,
  orderId: string,
): Promise<OrderRow | undefined> => ownOrders(db, ownerId).where('order_id', '=', orderId).executeTakeFirst();

/** Filters and page of {@link listOrders}. */
export interface OrderFilter {
  statuses?: readonly OrderStatus[];
  symbol?: string;
  sessionId?: string;
  /** Only orders placed with this client order id. */
  clientOrderId?: string;
  limit: number;
  offset: number;
  /**
   * Keyset cursor: only rows with `seq` below it (the `next` of the previous page). The page then starts there
   * with one index probe, however deep it is; `offset` skips rows after it (0 with a cursor, as the routes ask).
   */
  before?: number;
}

/**
 * A page of a list, newest first: its rows, the total matching the filter (whatever the cursor) and `next`, the
 * keyset cursor of the following page (the `seq` of this page's last row), null on the last page.
 */
export interface ListPage<Row> {
  rows: Row[];
  total: number;
  next: number | null;
}

/** `limit + 1` rows read to learn whether a next page exists: the page and its cursor. */
const pageOf = <Row extends { seq: number }>(rows: Row[], limit: number, total: number): ListPage<Row> => {
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  return { rows: page, total, next: more ? page[page.length - 1]!.seq : null };
};

/** The sum of the kept counts (`order_counts`, `trade_counts`) the query selects, as a one-row `n`. */
const keptTotal = <TB extends 'order_counts' | 'trade_counts'>(
  counts: SelectQueryBuilder<ReadModels, TB, object>,
) => counts.select(sql<string>`coalesce(sum(n), 0)::text`.as('n'));

/**
 * Reads one page of `rows` (the filtered rows after the cursor, every column), newest first by `seq`, and its total
 * from `total` (a one-row `n` query: a count, or a sum of kept counts), together.
 */
const readPage = async <TB extends keyof ReadModels, Row extends { seq: number }>(
  rows: SelectQueryBuilder<ReadModels, TB, Row>,
  total: SelectQueryBuilder<ReadModels, keyof ReadModels, { n: string }>,
  filter: { limit: number; offset: number },
): Promise<ListPage<Row>> => {
  const [page, count] = await Promise.all([
    rows
      .orderBy(sql.ref('seq'), 'desc')
      .limit(filter.limit + 1)
      .offset(filter.offset)
      .execute(),
    total.executeTakeFirstOrThrow(),
  ]);
  return pageOf(page, filter.limit, Number(count.n));
};

/**
 * The owner's rows of `from` narrowed by `equal`: per column, the value it must have (a list: one of its values);
 * an absent or empty one does not narrow. A list page and its total (its rows and their kept counts, tables with
 * the same filter columns) narrow alike; the conditions follow `equal`'s order.
 */
const ownRowsWhere = <TB extends keyof ReadModels, O>(
  from: SelectQueryBuilder<ReadModels, TB, O>,
  ownerId: string,
  equal: Partial<Record<keyof ReadModels[TB] & string, string | readonly string[]>>,
): SelectQueryBuilder<ReadModels, TB, O> => {
  let q = from.where(sql.ref('owner_id'), '=', ownerId);
  for (const [column, value] of Object.entries<string | readonly string[] | undefined>(equal)) {
    if (!value?.length) continue;
    q =
      typeof value === 'string'
        ? q.where(sql.ref(column), '=', value)
        : q.where(sql.ref(column), 'in', [...value]);
  }
  return q;
};

/**
 * Orders of the owner, newest first, with the total matching the filter and the next page's cursor. A page by
 * cursor (`before`) reads only its own rows (index `orders_owner_seq`, or `orders_owner_status` with a status
 * filter); `offset` reads the rows it skips. The total (the spec's response has it on every page) is summed from
 * `order_counts` (kept by the orders projection per session, symbol and status), so a page by cursor costs the
 * same at any depth of any history.
 */
export const listOrders = async (
  db: Kysely<ReadModels>,
  ownerId: string,
  filter: OrderFilter,
): Promise<ListPage<OrderRow>> => {
  const equal = { status: filter.statuses, symbol: filter.symbol, session_id: filter.sessionId };
  let q = ownRowsWhere(db.selectFrom('orders'), ownerId, equal);
  if (filter.clientOrderId) q = q.where('client_order_id', '=', filter.clientOrderId);
  let page = q;
  if (filter.before !== undefined) page = page.where('seq', '<', filter.before);
  if (filter.clientOrderId) {
    // A client order id names a few orders (unique among open ones): counted directly (index
    // `orders_owner_client_order_id`), as `order_counts` does not keep them.
    return readPage(page.selectAll(), q.select(sql<string>`count(*)::text`.as('n')), filter);
  }
  // The total from the kept counts (a few rows per owner: sessions × symbols × statuses), not a count of the orders.
  return readPage(
    page.selectAll(),
    keptTotal(ownRowsWhere(db.selectFrom('order_counts'), ownerId, equal)),
    filter,
  );
};

/** The newest order of the owner placed with this client order id, if any. */
export const findOrderByClientOrderId = (
  db: Kysely<ReadModels>,
  ownerId: string,
  clientOrderId: string,
): Promise<OrderRow | undefined> =>
  ownOrders(db, ownerId)
    .where('client_order_id', '=', clientOrderId)
    .orderBy('seq', 'desc')
    .executeTakeFirst();

/** The first order recorded with this idempotency key (its stored hash) since `since`, if any. */
export const findOrderByIdempotencyKey = (
  db: Kysely<ReadModels>,
  ownerId: string,
  key: string,
  since: Date,
): Promise<OrderRow | undefined> =>
  ownOrders(db, ownerId)
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
  /** Keyset cursor: only fills with `seq` below it (see {@link OrderFilter.before}). */
  before?: number;
}

/**
 * Fills of the owner, newest first, with the total matching the filter and the next page's cursor. A page by
 * cursor reads only its own rows (index `trades_owner_seq`); see {@link listOrders}. The total is summed from
 * `trade_counts` (kept by the orders projection), so a page by cursor costs the same at any depth.
 */
export const listTrades = async (
  db: Kysely<ReadModels>,
  ownerId: string,
  filter: TradeFilter,
): Promise<ListPage<TradeRow>> => {
  const equal = { symbol: filter.symbol, side: filter.side, session_id: filter.sessionId };
  let page = ownRowsWhere(db.selectFrom('trades'), ownerId, equal);
  if (filter.before !== undefined) page = page.where('seq', '<', filter.before);
  // The total from the kept counts (a few rows per owner: sessions × symbols × sides), not a count of the fills.
  return readPage(
    page.selectAll(),
    keptTotal(ownRowsWhere(db.selectFrom('trade_counts'), ownerId, equal)),
    filter,
  );
};

/** The fills of one order of the owner, oldest first (`GET /trade/order/{id}`). */
export const orderFills = (db: Kysely<ReadModels>, ownerId: string, orderId: string): Promise<TradeRow[]> =>
  db
    .selectFrom('trades')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('order_id', '=', orderId)
    .orderBy('seq')
    .execute();

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

/** The orders of one list of the owner (an OCO's legs, a bracket's entry and exits), oldest first; [] when none. */
export const getOrdersOfList = (
  db: Kysely<ReadModels>,
  ownerId: string,
  listId: string,
): Promise<OrderRow[]> =>
  db
    .selectFrom('orders')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('order_list_id', '=', listId)
    .orderBy('seq')
    .execute();

/** The id of the owner's newest list placed with this list client order id, if any. */
export const findListIdByClientOrderId = async (
  db: Kysely<ReadModels>,
  ownerId: string,
  listClientOrderId: string,
): Promise<string | undefined> =>
  (
    await db
      .selectFrom('orders')
      .select('order_list_id')
      .where('owner_id', '=', ownerId)
      .where('list_client_order_id', '=', listClientOrderId)
      .where('order_list_id', 'is not', null)
      .orderBy('seq', 'desc')
      .executeTakeFirst()
  )?.order_list_id ?? undefined;

/**
 * The owner's newest `limit` order lists, each its orders oldest first, the lists newest first (by their first
 * order); `open`: only lists with an order still open (pending or partially filled, {@link OPEN_STATUSES}). Two
 * reads of the index `orders_owner_list`: the lists' ids, then their orders.
 */
export const listOrderLists = async (
  db: Kysely<ReadModels>,
  ownerId: string,
  filter: { open: boolean; limit: number },
): Promise<OrderRow[][]> => {
  let ids = db
    .selectFrom('orders')
    .select(['order_list_id', sql<number>`min(seq)`.as('first')])
    .where('owner_id', '=', ownerId)
    .where('order_list_id', 'is not', null)
    .groupBy('order_list_id');
  if (filter.open) ids = ids.having(sql<boolean>`bool_or(status in (${sql.join([...OPEN_STATUSES])}))`);
  const lists = await ids.orderBy('first', 'desc').limit(filter.limit).execute();
  if (lists.length === 0) return [];
  const listIds = lists.map((l) => l.order_list_id!);
  const rows = await db
    .selectFrom('orders')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('order_list_id', 'in', listIds)
    .orderBy('seq')
    .execute();
  const byList = new Map<string, OrderRow[]>(listIds.map((id) => [id, []]));
  for (const row of rows) byList.get(row.order_list_id!)!.push(row);
  return [...byList.values()];
};
