import type { OrderSide, OrderType } from '../trading/orders';
import type {
  OrderFilledData,
  OrderPlacedData,
  OrderRejectedData,
  OrderRequestKey,
  WalletEvent,
} from '../wallet/events';
import { type FillRecord, fillRecordOf } from '../wallet/fill-record';

/**
 * An order of the sandbox as the read endpoints show it (wire strings, 8 decimal places; times virtual). Once it
 * has filled in part (`partially_filled`, docs/trading-rules.md "Partial fills") the executed figures are those of
 * all its fills so far (`OrderFilled.order_after`: quantity, average price, Σ fee, Σ total) and `locked_amount` the
 * lock it still holds (0 once filled or cancelled: the lock was consumed or released); `filled_at` is the time of its
 * last fill (as the live orders read model shows them).
 */
export interface SandboxOrder extends Pick<OrderPlacedData, OrderRequestKey> {
  status: 'pending' | 'partially_filled' | 'filled' | 'cancelled' | 'rejected';
  executed_price: string | null;
  executed_qty: string | null;
  slippage_pct: string | null;
  fee: string | null;
  total_cost: string | null;
  locked_amount: string;
  created_at: string;
  filled_at: string | null;
  cancelled_at: string | null;
  cancel_reason: string | null;
  rejection: { code: string; rule: string; step: number; message: string } | null;
  /** The client's own id of the order: present only when it was placed with one. */
  client_order_id?: string;
  /** The order list (docs/trading-rules.md, "Order lists: OCO and bracket"); present only for an order of one. */
  order_list_id?: string;
  list_kind?: 'oco' | 'bracket';
  list_role?: 'entry' | 'take_profit' | 'stop_loss';
}

/** What a placed and a rejected order's event both say of the order (`OrderPlaced`, `OrderRejected`). */
type OrderRequest = Pick<
  OrderPlacedData & OrderRejectedData,
  OrderRequestKey | 'client_order_id' | 'order_list_id' | 'list_kind' | 'list_role'
>;

/**
 * A new order of the sandbox, not filled: `d`'s fields, its `client_order_id` and list fields only when set, with
 * the `status`, lock, creation time and rejection given.
 */
const newOrder = (
  d: OrderRequest,
  status: 'pending' | 'rejected',
  locked_amount: string,
  created_at: string,
  rejection: SandboxOrder['rejection'],
): SandboxOrder => ({
  order_id: d.order_id,
  status,
  symbol: d.symbol,
  side: d.side,
  type: d.type,
  quantity: d.quantity,
  price: d.price,
  trigger_price: d.trigger_price,
  executed_price: null,
  executed_qty: null,
  slippage_pct: null,
  fee: null,
  total_cost: null,
  locked_amount,
  created_at,
  filled_at: null,
  cancelled_at: null,
  cancel_reason: null,
  rejection,
  ...(d.client_order_id ? { client_order_id: d.client_order_id } : {}),
  ...(d.order_list_id
    ? {
        order_list_id: d.order_list_id,
        ...(d.list_kind ? { list_kind: d.list_kind } : {}),
        ...(d.list_role ? { list_role: d.list_role } : {}),
      }
    : {}),
});

/** A fill of the sandbox (spec "Trade fill" plus what produced it). */
export interface SandboxFill {
  trade_id: string;
  order_id: string;
  symbol: string;
  side: OrderSide;
  type: OrderType;
  trigger: string;
  quantity: string;
  price: string;
  notional: string;
  fee: string;
  total: string;
  realized_pnl: string;
  slippage_pct: string;
  reference_price: string;
  reference_time: string;
  price_source: string;
  executed_at: string;
  /** How the fill model decided it; null for fills recorded before fill models. */
  fill: FillRecord | null;
}

/**
 * What a sandbox fill and a backtest's `backtest_trades` row say of an `OrderFilled` after its order's side, type
 * and trigger: quantity, price (the executed one), notional, fee, total, realized P&L, slippage (%), the reference
 * price and time and the price's source (wire strings as recorded), and its time (`filled_at`), in that order.
 */
export const fillFigures = (d: OrderFilledData) => ({
  quantity: d.quantity,
  price: d.executed_price,
  notional: d.notional,
  fee: d.fee,
  total: d.total,
  realized_pnl: d.realized_pnl,
  slippage_pct: d.slippage_pct,
  reference_price: d.reference_price,
  reference_time: d.reference_time,
  price_source: d.price_source,
  executed_at: d.filled_at,
});

/**
 * The sandbox's orders and fills in memory, folded from the wallet events of a backtest stream alongside the
 * decider's state. It serves the sandbox read endpoints without a read-model round trip, so a client always reads
 * what its last command did. Append-only: `apply` is called once per recorded event, in stream order.
 */
export class SandboxLog {
  readonly orders: SandboxOrder[] = [];
  readonly fills: SandboxFill[] = [];
  private readonly byId = new Map<string, SandboxOrder>();

  private add(order: SandboxOrder): void {
    this.orders.push(order);
    this.byId.set(order.order_id, order);
  }

  apply(event: WalletEvent): void {
    switch (event.type) {
      case 'OrderPlaced': {
        const d = event.data;
        this.add(newOrder(d, 'pending', d.locked_amount, d.placed_at, null));
        break;
      }
      case 'OrderRejected': {
        const d = event.data;
        const rejection = { code: d.code, rule: d.rule, step: d.step, message: d.message };
        this.add(newOrder(d, 'rejected', '0.00000000', d.rejected_at, rejection));
        break;
      }
      case 'OrderFilled': {
        const d = event.data;
        const order = this.byId.get(d.order_id);
        if (order) {
          const rest = d.remaining_quantity;
          const open = rest !== undefined && Number(rest) > 0;
          const after = d.order_after;
          order.status = open ? 'partially_filled' : 'filled';
          order.executed_price = after?.executed_price ?? d.executed_price;
          order.executed_qty = after?.executed_quantity ?? d.quantity;
          order.slippage_pct = d.slippage_pct;
          order.fee = after?.fee ?? d.fee;
          order.total_cost = after?.total ?? d.total;
          // As the live orders read model: a partly filled order shows the lock it still holds, a filled one none.
          order.locked_amount = open && after ? after.locked_amount : '0.00000000';
          order.filled_at = d.filled_at;
        }
        this.fills.push({
          trade_id: d.trade_id,
          order_id: d.order_id,
          symbol: d.symbol,
          side: d.side,
          type: d.type,
          trigger: d.trigger,
          ...fillFigures(d),
          fill: fillRecordOf(d),
        });
        break;
      }
      case 'OrderCancelled': {
        const order = this.byId.get(event.data.order_id);
        if (order) {
          order.status = 'cancelled';
          // Its remaining lock was released.
          order.locked_amount = '0.00000000';
          order.cancelled_at = event.data.cancelled_at;
          order.cancel_reason = event.data.reason;
        }
        break;
      }
      default:
        break;
    }
  }

  /** One order, or undefined. */
  order(orderId: string): SandboxOrder | undefined {
    return this.byId.get(orderId);
  }

  /** The fills of one order, oldest first (several when it filled in parts). */
  fillsOf(orderId: string): SandboxFill[] {
    return this.fills.filter((f) => f.order_id === orderId);
  }
}
