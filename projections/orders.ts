import { type ColumnType, type Insertable, type Kysely, sql } from 'kysely';
import {
  type OrderPlacedData,
  type OrderRequestKey,
  WALLET_EVENT_TYPES,
  walletOwnerOf,
} from '../domain/wallet/events';
import { type FillRecord, fillRecordOf } from '../domain/wallet/fill-record';
import { walletEventOf } from '../domain/wallet/recorded';
import type { RecordedEvent } from '../ports/event-store';
import { deletedStreamOf, type NullableTimestamp, type Numeric, type Timestamp } from './columns';
import { declareTables, type TableDefinitions } from './ddl';
import { deleteRowsOf } from './entity-rows';
import type { Projection } from './projection';

/** Order statuses (spec "Order"). `partially_filled` is an open order with fills; a partly filled order that ends cancelled is `cancelled` with its fills (docs/trading-rules.md, "Partial fills"). */
export type OrderStatus = 'pending' | 'partially_filled' | 'filled' | 'cancelled' | 'rejected';

/** Row of `orders`: one per order of every wallet (placed, rejected, or a reset's closing fill). */
export interface OrdersTable {
  order_id: string;
  /** The wallet owner (account or agent id): ownership checks compare it with the caller. */
  owner_id: string;
  session_id: string;
  /** Stream revision of the order's first event: orders of a wallet in placement order. */
  seq: number;
  symbol: string;
  side: 'buy' | 'sell';
  type: 'market' | 'limit' | 'stop_loss' | 'take_profit';
  status: OrderStatus;
  quantity: Numeric;
  price: Numeric | null;
  trigger_price: Numeric | null;
  locked_amount: Numeric;
  lock_asset: string;
  executed_price: Numeric | null;
  executed_qty: Numeric | null;
  reference_price: Numeric | null;
  price_source: string | null;
  slippage_pct: Numeric | null;
  fee: Numeric | null;
  total_cost: Numeric | null;
  realized_pnl: Numeric | null;
  /** What filled it: `market`, `limit`, `stop_loss`, `take_profit`, `reset`. */
  fill_trigger: string | null;
  unlocked_amount: Numeric | null;
  cancel_reason: string | null;
  reject_code: string | null;
  reject_rule: string | null;
  reject_step: number | null;
  reject_message: string | null;
  reject_details: ColumnType<unknown, string | null, string | null>;
  idempotency_key: string | null;
  request_hash: string | null;
  /** `IOC` or `FOK`; null: `GTC` (docs/trading-rules.md, "Time in force"). */
  time_in_force: 'IOC' | 'FOK' | null;
  /** The client's own id of the order (`client_order_id`), null when none was sent. */
  client_order_id: string | null;
  /** The order list it belongs to and its role there (docs/trading-rules.md, "Order lists: OCO and bracket"). */
  order_list_id: string | null;
  list_kind: 'oco' | 'bracket' | null;
  list_role: 'entry' | 'take_profit' | 'stop_loss' | null;
  /** The client's own id of the order's list (`list_client_order_id`), null when none was sent. */
  list_client_order_id: string | null;
  created_at: Timestamp;
  filled_at: NullableTimestamp;
  cancelled_at: NullableTimestamp;
  updated_at: Timestamp;
}

/**
 * Row of `trade_counts`: how many fills an owner has per session, symbol and side, kept by the projection with the
 * fills themselves, so the `total` of a trade history page (any filter of `GET /trade/history`) is a sum of a few
 * rows instead of a `count(*)` of the owner's history (issue 20).
 */
export interface TradeCountsTable {
  owner_id: string;
  session_id: string;
  symbol: string;
  side: string;
  n: string;
}

/**
 * Row of `order_counts`: how many orders an owner has per session, symbol and status, kept by the projection with
 * the orders themselves (an order's insert counts it, a status change moves it from one row to another), so the
 * `total` of an order list page (`GET /trade/orders` with any filter, `/trade/orders/open`) is a sum of a few rows
 * instead of a `count(*)` of the owner's history (issue 20). A row whose count falls to zero is deleted, so the
 * table is the same whichever pages the log was folded in (`projections rebuild --verify` compares it).
 */
export interface OrderCountsTable {
  owner_id: string;
  session_id: string;
  symbol: string;
  status: OrderStatus;
  n: string;
}

/**
 * Row of `trades`: one per fill (spec "Trade fill"), with the fill's slippage inputs and realized PnL. Its order id,
 * owner, session, symbol and side are its order's (the columns of {@link OrdersTable}).
 */
export interface TradesTable
  extends Pick<OrdersTable, 'order_id' | 'owner_id' | 'session_id' | 'symbol' | 'side'> {
  trade_id: string;
  /** Stream revision of the fill: newest first ordering. */
  seq: number;
  type: string;
  fill_trigger: string;
  quantity: Numeric;
  price: Numeric;
  reference_price: Numeric;
  price_source: string;
  participation_pct: Numeric | null;
  slippage_pct: Numeric;
  notional: Numeric;
  fee: Numeric;
  total: Numeric;
  cost_basis: Numeric;
  realized_pnl: Numeric;
  executed_at: Timestamp;
  /** The fill model's record of the fill ({@link FillRecord}); null for fills recorded before fill models. */
  fill: ColumnType<FillRecord | null, FillRecord | null, FillRecord | null>;
}

type OrderRow = Required<Insertable<OrdersTable>>;
type TradeRow = Insertable<TradesTable>;

/** What an order's first event records of its request (a reset's closing fill: its own market order). */
type RequestFields = Pick<
  OrderPlacedData,
  OrderRequestKey | 'session_id' | 'idempotency_key' | 'request_hash'
> &
  Partial<
    Pick<
      OrderPlacedData,
      'client_order_id' | 'order_list_id' | 'list_kind' | 'list_role' | 'list_client_order_id'
    >
  >;

/**
 * The row of an order's first event (placed, rejected, or a reset's closing fill) with what they record alike (the
 * request: owner, session, symbol, side, type, quantity, prices, idempotency key and hash, client order id, list)
 * at `seq` (the event's stream revision), created and updated `at` (the event's ISO time), with `status`; no lock,
 * fill, cancel or rejection yet, for the caller to fill in. One object literal with every column: spreading an empty
 * row into it cost ~20 µs per order in the fold (docs/benchmarks.md, "Trading", 2026-11-29).
 */
const requestedOrder = (
  d: RequestFields,
  owner: string,
  seq: number,
  at: string,
  status: OrderRow['status'],
): OrderRow => ({
  order_id: d.order_id,
  owner_id: owner,
  session_id: d.session_id,
  seq,
  symbol: d.symbol,
  side: d.side,
  type: d.type,
  status,
  quantity: d.quantity,
  price: d.price,
  trigger_price: d.trigger_price,
  locked_amount: '0',
  lock_asset: 'USDT',
  executed_price: null,
  executed_qty: null,
  reference_price: null,
  price_source: null,
  slippage_pct: null,
  fee: null,
  total_cost: null,
  realized_pnl: null,
  fill_trigger: null,
  unlocked_amount: null,
  cancel_reason: null,
  reject_code: null,
  reject_rule: null,
  reject_step: null,
  reject_message: null,
  reject_details: null,
  idempotency_key: d.idempotency_key,
  request_hash: d.request_hash,
  time_in_force: null,
  client_order_id: d.client_order_id ?? null,
  order_list_id: d.order_list_id ?? null,
  list_kind: d.list_kind ?? null,
  list_role: d.list_role ?? null,
  list_client_order_id: d.list_client_order_id ?? null,
  filled_at: null,
  cancelled_at: null,
  created_at: at,
  updated_at: at,
});

type DB = Kysely<{
  orders: OrdersTable;
  trades: TradesTable;
  trade_counts: TradeCountsTable;
  order_counts: OrderCountsTable;
}>;

/** Changes of `order_counts` by (owner, session, symbol, status), summed in memory over a batch. */
class CountDeltas {
  private readonly byKey = new Map<
    string,
    { owner_id: string; session_id: string; symbol: string; status: string; n: number }
  >();

  add(owner_id: string, session_id: string, symbol: string, status: string, n: number): void {
    const key = JSON.stringify([owner_id, session_id, symbol, status]);
    const row = this.byKey.get(key);
    if (row) row.n += n;
    else this.byKey.set(key, { owner_id, session_id, symbol, status, n });
  }

  /** The non-zero changes (an order placed and filled in one batch moves nothing out of `pending`). */
  rows(): { owner_id: string; session_id: string; symbol: string; status: string; n: number }[] {
    return [...this.byKey.values()].filter((r) => r.n !== 0);
  }
}

/** The statement that adds a batch's count changes to `order_counts` (no rows when `deltas` is empty). */
const upsertOrderCounts = (deltas: readonly { n: number }[]) => sql`
  insert into order_counts (owner_id, session_id, symbol, status, n)
  select owner_id, session_id, symbol, status, n
    from json_populate_recordset(null::order_counts, ${JSON.stringify(deltas)}::json)
  on conflict (owner_id, session_id, symbol, status) do update set n = order_counts.n + excluded.n`;

/**
 * The JSON array of new order rows for `json_populate_recordset` (keys match the `orders` columns by name):
 * `reject_details` goes in as the JSON value itself (the column is `jsonb`), everything else as the row has it.
 */
const ordersJson = (rows: ReadonlyMap<string, OrderRow>): string => {
  const out: unknown[] = [];
  for (const row of rows.values()) {
    out.push(
      row.reject_details == null ? row : { ...row, reject_details: JSON.parse(row.reject_details as string) },
    );
  }
  return JSON.stringify(out);
};

/**
 * The updates of a batch, one per order (in first-seen order): successive changes of an order merge, later
 * values winning, which leaves the row exactly as applying them one by one would.
 */
const mergeUpdates = (
  updates: readonly { orderId: string; set: Partial<OrderRow> }[],
): { orderId: string; set: Partial<OrderRow> }[] => {
  const byOrder = new Map<string, Partial<OrderRow>>();
  for (const u of updates) byOrder.set(u.orderId, { ...byOrder.get(u.orderId), ...u.set });
  return [...byOrder].map(([orderId, set]) => ({ orderId, set }));
};

/** The DDL of its read-model tables. */
const ORDERS_TABLES: TableDefinitions = {
  orders: {
    columns: {
      order_id: 'text primary key',
      owner_id: 'text not null',
      session_id: 'text not null',
      seq: 'integer not null',
      symbol: 'text not null',
      side: 'text not null',
      type: 'text not null',
      status: 'text not null',
      quantity: 'numeric(38, 8) not null',
      price: 'numeric(38, 8)',
      trigger_price: 'numeric(38, 8)',
      locked_amount: 'numeric(38, 8) not null',
      lock_asset: 'text not null',
      executed_price: 'numeric(38, 8)',
      executed_qty: 'numeric(38, 8)',
      reference_price: 'numeric(38, 8)',
      price_source: 'text',
      slippage_pct: 'numeric(38, 8)',
      fee: 'numeric(38, 8)',
      total_cost: 'numeric(38, 8)',
      realized_pnl: 'numeric(38, 8)',
      fill_trigger: 'text',
      unlocked_amount: 'numeric(38, 8)',
      cancel_reason: 'text',
      reject_code: 'text',
      reject_rule: 'text',
      reject_step: 'integer',
      reject_message: 'text',
      reject_details: 'jsonb',
      idempotency_key: 'text',
      request_hash: 'text',
      time_in_force: 'text',
      client_order_id: 'text',
      order_list_id: 'text',
      list_kind: 'text',
      list_role: 'text',
      list_client_order_id: 'text',
      created_at: 'timestamptz not null',
      filled_at: 'timestamptz',
      cancelled_at: 'timestamptz',
      updated_at: 'timestamptz not null',
    },
    indexes: {
      orders_owner_seq: ['owner_id', 'seq'],
      orders_owner_status: ['owner_id', 'status', 'seq'],
      orders_owner_idempotency: { columns: ['owner_id', 'idempotency_key'], whereNotNull: 'idempotency_key' },
      orders_owner_client_order_id: {
        columns: ['owner_id', 'client_order_id', 'seq'],
        whereNotNull: 'client_order_id',
      },
      // The orders of a list (Binance `GET /orderList`, `allOrderList`, `openOrderList`).
      orders_owner_list: { columns: ['owner_id', 'order_list_id', 'seq'], whereNotNull: 'order_list_id' },
    },
  },
  trades: {
    columns: {
      trade_id: 'text primary key',
      order_id: 'text not null',
      owner_id: 'text not null',
      session_id: 'text not null',
      seq: 'integer not null',
      symbol: 'text not null',
      side: 'text not null',
      type: 'text not null',
      fill_trigger: 'text not null',
      quantity: 'numeric(38, 8) not null',
      price: 'numeric(38, 8) not null',
      reference_price: 'numeric(38, 8) not null',
      price_source: 'text not null',
      participation_pct: 'numeric(38, 8)',
      slippage_pct: 'numeric(38, 8) not null',
      notional: 'numeric(38, 8) not null',
      fee: 'numeric(38, 8) not null',
      total: 'numeric(38, 8) not null',
      cost_basis: 'numeric(38, 8) not null',
      realized_pnl: 'numeric(38, 8) not null',
      executed_at: 'timestamptz not null',
      fill: 'jsonb',
    },
    indexes: {
      trades_owner_seq: ['owner_id', 'seq'],
      trades_owner_time: ['owner_id', 'executed_at'],
    },
  },
  trade_counts: {
    columns: {
      owner_id: 'text not null',
      session_id: 'text not null',
      symbol: 'text not null',
      side: 'text not null',
      n: 'bigint not null',
    },
    primaryKey: ['owner_id', 'session_id', 'symbol', 'side'],
  },
  order_counts: {
    columns: {
      owner_id: 'text not null',
      session_id: 'text not null',
      symbol: 'text not null',
      status: 'text not null',
      n: 'bigint not null',
    },
    primaryKey: ['owner_id', 'session_id', 'symbol', 'status'],
  },
};

/**
 * `orders` and `trades` (ARCHITECTURE §6): every order of every wallet with its status, fill and cancel or
 * rejection details, and every fill. A batch is folded in memory first (an order placed and filled in the same
 * batch is one insert), then written with multi-row inserts. A `StreamDeleted` of `wallet-{owner}` removes the
 * owner's rows. Deterministic: values from event data, ordering from stream revisions.
 */
export const ordersProjection: Projection = {
  name: 'orders',
  // 2: `trades.fill` (the fill model's record), partial fills. 3: `trade_counts`. 4: `order_counts`.
  // 5: `orders.time_in_force`. 6: `orders.client_order_id`. 7: `orders.order_list_id`, `list_kind`, `list_role`.
  // 8: a filled or cancelled order's `locked_amount` is 0 (its lock was consumed or released).
  // 9: `orders.list_client_order_id`, and the index of an owner's orders by list.
  version: 9,
  ...declareTables(ORDERS_TABLES),
  eventTypes: [...WALLET_EVENT_TYPES, 'StreamDeleted'],
  async apply(db: DB, events: readonly RecordedEvent[]) {
    let inserts = new Map<string, OrderRow>();
    let updates: { orderId: string; set: Partial<OrderRow> }[] = [];
    let trades: TradeRow[] = [];

    const flush = async () => {
      const merged = mergeUpdates(updates);
      // The order counts move with every new order (by its status as inserted) and every status change (from
      // the row's status before this batch's update, read first: the update itself does not return it).
      const counts = new CountDeltas();
      for (const row of inserts.values()) counts.add(row.owner_id, row.session_id, row.symbol, row.status, 1);
      const moved = merged.filter((u) => u.set.status !== undefined);
      if (moved.length > 0) {
        const before = await db
          .selectFrom('orders')
          .select(['order_id', 'owner_id', 'session_id', 'symbol', 'status'])
          .where(
            'order_id',
            'in',
            moved.map((u) => u.orderId),
          )
          .execute();
        const next = new Map(moved.map((u) => [u.orderId, u.set.status!]));
        for (const row of before) {
          const status = next.get(row.order_id)!;
          if (status === row.status) continue;
          counts.add(row.owner_id, row.session_id, row.symbol, row.status, -1);
          counts.add(row.owner_id, row.session_id, row.symbol, status, 1);
        }
      }
      const deltas = counts.rows();
      if (inserts.size > 0 || trades.length > 0) {
        // One statement for every new order and fill of the batch (the hot path: a market order is placed and
        // filled in the same batch): the rows travel as one JSON text each and PostgreSQL types them by the
        // tables' own columns, so the statement text is constant and nothing is built per column.
        await sql`
          with o as (
            insert into orders select * from json_populate_recordset(null::orders, ${ordersJson(inserts)}::json)
          ), t as (
            insert into trades select * from json_populate_recordset(null::trades, ${JSON.stringify(trades)}::json)
            returning owner_id, session_id, symbol, side
          ), c as (
            ${upsertOrderCounts(deltas)}
          )
          insert into trade_counts (owner_id, session_id, symbol, side, n)
          select owner_id, session_id, symbol, side, count(*) from t group by owner_id, session_id, symbol, side
          on conflict (owner_id, session_id, symbol, side) do update set n = trade_counts.n + excluded.n`.execute(
          db,
        );
      }
      // (With no insert, the counts' changes go alone: a batch of cancels or fills of earlier orders.)
      else if (deltas.length > 0) await upsertOrderCounts(deltas).execute(db);
      if (deltas.length > 0) {
        // A status that lost its last order loses its row (a row of 0 would depend on how the log was paged).
        const emptied = [...new Set(deltas.filter((d) => d.n < 0).map((d) => d.owner_id))];
        if (emptied.length > 0)
          await db.deleteFrom('order_counts').where('owner_id', 'in', emptied).where('n', '=', '0').execute();
      }
      for (const u of merged)
        await db.updateTable('orders').set(u.set).where('order_id', '=', u.orderId).execute();
      inserts = new Map();
      updates = [];
      trades = [];
    };
    const change = (orderId: string, set: Partial<OrderRow>) => {
      const row = inserts.get(orderId);
      if (row) Object.assign(row, set);
      else updates.push({ orderId, set });
    };

    for (const e of events) {
      const deleted = deletedStreamOf(e);
      if (deleted !== undefined) {
        const owner = walletOwnerOf(deleted);
        if (!owner) continue;
        await flush();
        await deleteRowsOf(db, ['orders', 'trades', 'trade_counts', 'order_counts'], 'owner_id', owner);
        continue;
      }
      const wallet = walletEventOf(e);
      if (!wallet) continue;
      const { owner, event } = wallet;
      switch (event.type) {
        case 'OrderPlaced': {
          const d = event.data;
          const row = requestedOrder(d, owner, e.revision, d.placed_at, 'pending');
          row.locked_amount = d.locked_amount;
          row.lock_asset = d.lock_asset;
          row.time_in_force = d.time_in_force ?? null;
          inserts.set(d.order_id, row);
          break;
        }
        case 'OrderRejected': {
          const d = event.data;
          const row = requestedOrder(d, owner, e.revision, d.rejected_at, 'rejected');
          row.reject_code = d.code;
          row.reject_rule = d.rule;
          row.reject_step = d.step;
          row.reject_message = d.message;
          row.reject_details = JSON.stringify(d.details);
          inserts.set(d.order_id, row);
          break;
        }
        case 'OrderFilled': {
          const d = event.data;
          // A partial fill (fill models) carries the order's figures after it; a fill without them was whole.
          const after = d.order_after;
          const partial = d.remaining_quantity !== undefined && Number(d.remaining_quantity) > 0;
          const filled: Partial<OrderRow> = {
            status: partial ? 'partially_filled' : 'filled',
            executed_price: after?.executed_price ?? d.executed_price,
            executed_qty: after?.executed_quantity ?? d.quantity,
            reference_price: d.reference_price,
            price_source: d.price_source,
            slippage_pct: d.slippage_pct,
            fee: after?.fee ?? d.fee,
            total_cost: after?.total ?? d.total,
            realized_pnl: after?.realized_pnl ?? d.realized_pnl,
            fill_trigger: d.trigger,
            // What the order still holds: a partly filled one the lock of its rest, a filled one nothing.
            locked_amount: partial ? after!.locked_amount : '0',
            filled_at: d.filled_at,
            updated_at: d.filled_at,
          };
          if (d.trigger === 'reset') {
            // A reset's closing fill has no OrderPlaced: it is its own (market) order.
            const row = requestedOrder(
              {
                order_id: d.order_id,
                session_id: d.session_id,
                symbol: d.symbol,
                side: d.side,
                type: d.type,
                quantity: d.quantity,
                price: null,
                trigger_price: null,
                idempotency_key: null,
                request_hash: null,
              },
              owner,
              e.revision,
              d.filled_at,
              'filled',
            );
            row.lock_asset = d.side === 'buy' ? 'USDT' : d.base_asset;
            inserts.set(d.order_id, Object.assign(row, filled));
          } else {
            change(d.order_id, filled);
          }
          trades.push({
            trade_id: d.trade_id,
            order_id: d.order_id,
            owner_id: owner,
            session_id: d.session_id,
            seq: e.revision,
            symbol: d.symbol,
            side: d.side,
            type: d.type,
            fill_trigger: d.trigger,
            quantity: d.quantity,
            price: d.executed_price,
            reference_price: d.reference_price,
            price_source: d.price_source,
            participation_pct: d.participation_pct,
            slippage_pct: d.slippage_pct,
            notional: d.notional,
            fee: d.fee,
            total: d.total,
            cost_basis: d.cost_basis,
            realized_pnl: d.realized_pnl,
            executed_at: d.filled_at,
            fill: fillRecordOf(d),
          });
          break;
        }
        case 'OrderCancelled': {
          const d = event.data;
          change(d.order_id, {
            status: 'cancelled',
            unlocked_amount: d.unlocked_amount,
            // The whole remaining lock was released (`unlocked_amount`): the order holds nothing any more.
            locked_amount: '0',
            cancel_reason: d.reason,
            cancelled_at: d.cancelled_at,
            updated_at: d.cancelled_at,
          });
          break;
        }
        default:
          break;
      }
    }
    await flush();
  },
};
