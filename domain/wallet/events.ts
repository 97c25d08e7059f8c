import type { FillModelName, Liquidity } from '../fill-model/model';
import type { DomainEvent } from '../shared/decider';
import type { ErrorCode } from '../shared/errors';
import type { OrderSide, OrderType, TimeInForce } from '../trading/orders';
import type { RiskRule } from '../trading/risk';

/**
 * Events of the `wallet-{owner_id}` stream: the trading ledger of an account or an agent (ARCHITECTURE §4, §8;
 * catalogue in `docs/events.md`). Money, prices and quantities are decimal strings with 8 places, never floats;
 * timestamps ISO 8601 UTC (business time: virtual in backtests). Every figure a fill changes is recorded with
 * the inputs that produced it, so an auditor can recompute it from the event alone.
 */
export type WalletEvent =
  | DomainEvent<'WalletOpened', WalletOpenedData>
  | DomainEvent<'SessionStarted', SessionStartedData>
  | DomainEvent<'TradingDayOpened', TradingDayOpenedData>
  | DomainEvent<'OrderPlaced', OrderPlacedData>
  | DomainEvent<'OrderFilled', OrderFilledData>
  | DomainEvent<'OrderCancelled', OrderCancelledData>
  | DomainEvent<'OrderRejected', OrderRejectedData>
  | DomainEvent<'WalletReset', WalletResetData>
  | DomainEvent<'FillModelSet', FillModelSetData>;

/** Who owns a wallet. */
export type OwnerType = 'account' | 'agent';

/** The wallet's first event. */
export interface WalletOpenedData {
  /** The owner: the account id or the agent id (the stream is `wallet-{owner_id}`). */
  owner_id: string;
  owner_type: OwnerType;
  account_id: string;
  opened_at: string;
  /**
   * The fill model the wallet opens with (docs/trading-rules.md, "Choosing a model"): `realistic` for wallets opened
   * since 2026-11-25 unless the owner chose otherwise; absent (wallets opened before): `instant`, so their history
   * replays as it was decided.
   */
  fill_model?: FillModelName;
  /** The participation share (%) of a print's volume its resting orders may take (`realistic`); absent: 10. */
  participation_pct?: number;
}

/** The owner chose the wallet's fill model (`PUT /account/fill-model`); applies to fills from now on. */
export interface FillModelSetData {
  fill_model: FillModelName;
  participation_pct: number;
  set_at: string;
}

/** Why a session started. */
export type SessionReason = 'opened' | 'reset' | 'owner_reset';

/**
 * A trading session started: cash is the starting balance, nothing held, nothing open. Follows `WalletOpened`
 * (reason `opened`) or `WalletReset` (reason `reset`: `POST /account/reset`; `owner_reset`: the agent was reset,
 * `POST /agents/{id}/reset`, and the wallet follows the agent's new session).
 */
export interface SessionStartedData {
  session_id: string;
  /** USDT. */
  starting_balance: string;
  /** The owner record's session this wallet follows (the account's or agent's `session_id`). */
  owner_session_id: string;
  reason: SessionReason;
  started_at: string;
}

/** The first order of a UTC day: the equity the daily loss breaker measures against (ARCHITECTURE §8). */
export interface TradingDayOpenedData {
  session_id: string;
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  /** cash + locked cash + Σ quantity × price at that moment, USDT. */
  equity: string;
  opened_at: string;
}

/**
 * The client's and the list's ids of an order, as its `OrderPlaced` says them, or as its `OrderRejected` says the
 * ids it was sent with (a rejected order was to join its list).
 */
export interface OrderIds {
  /**
   * The client's own id of the order (`client_order_id`; docs/trading-rules.md, "Client order ids"): unique among
   * the wallet's open orders when placed. Absent: none was sent (and every order recorded before 2026-11-28).
   */
  client_order_id?: string;
  /**
   * The order list it belongs to (docs/trading-rules.md, "Order lists: OCO and bracket"): an OCO's two legs, or a
   * bracket's entry and the exits it placed once it filled, share one id. Absent: a lone order.
   */
  order_list_id?: string;
  /** What the order is in its list: `entry` (a bracket's), `take_profit` or `stop_loss` (an exit, an OCO's leg). */
  list_role?: OrderListRole;
  /** `oco` or `bracket` (with `order_list_id`). */
  list_kind?: OrderListKind;
  /**
   * The client's own id of the whole list (an OCO's `list_client_order_id`, Binance `listClientOrderId`), on every
   * leg; absent when none was sent (and on every list recorded before 2026-11-28).
   */
  list_client_order_id?: string;
  /** An exit of a bracket: the entry whose fill placed it. */
  parent_order_id?: string;
}

/**
 * The fields in which an order's request is recorded alike by `OrderPlaced` and `OrderRejected`: the order's id,
 * pair, side, type, quantity and prices. The order read model's row and the sandbox log's entry pick them.
 */
export type OrderRequestKey =
  | 'order_id'
  | 'symbol'
  | 'side'
  | 'type'
  | 'quantity'
  | 'price'
  | 'trigger_price';

/** An order passed the risk chain. A market order's `OrderFilled` follows in the same append. */
export interface OrderPlacedData extends OrderIds {
  order_id: string;
  session_id: string;
  symbol: string;
  base_asset: string;
  side: OrderSide;
  type: OrderType;
  quantity: string;
  /** Limit price (limit orders), else null. */
  price: string | null;
  /** Trigger price (stop_loss, take_profit), else null. */
  trigger_price: string | null;
  /**
   * A limit order the current price already reached when it was placed (buy: price ≤ limit; sell: price ≥
   * limit): it takes liquidity, so its fill is priced like a market order's, capped at the limit
   * (docs/trading-rules.md, "Order types and triggers"). False for every other order; absent (false) in events
   * recorded before 2026-11-24.
   */
  marketable?: boolean;
  /**
   * `IOC` or `FOK` (docs/trading-rules.md, "Time in force"); absent: `GTC`, the default and every order recorded
   * before 2026-11-28. An IOC or FOK limit order is decided in the append that places it (filled, or its rest
   * cancelled); an IOC or FOK stop rests until triggered and is decided then.
   */
  time_in_force?: Exclude<TimeInForce, 'GTC'>;
  /**
   * A bracket's entry: the exits it places once it is done (their side is the entry's other side, their quantity
   * what the entry executed). Absent for every other order.
   */
  exits?: BracketExits;
  /**
   * Collateral held while the order is open: USDT for buys, the base quantity for sells; 0 for market. The legs of
   * an OCO hold one lock together (the larger leg's: the base quantity for sells): each leg records it, and every
   * leg after the first has `lock_shared` set, so it moves no balance.
   */
  locked_amount: string;
  /** Set on an OCO leg whose `locked_amount` is the lock its first leg already took (nothing more is locked). */
  lock_shared?: boolean;
  /** `USDT` or the base asset. */
  lock_asset: string;
  /** Fee rate the lock was sized with. */
  fee_rate: string;
  /** SHA-256 of the credential and the client's `Idempotency-Key`, or null. */
  idempotency_key: string | null;
  /** SHA-256 of the canonical request body (same key + other body → 409). */
  request_hash: string | null;
  placed_at: string;
}

/** The kinds of order list (docs/trading-rules.md, "Order lists: OCO and bracket"). */
export type OrderListKind = 'oco' | 'bracket';

/** The role of an order in its list. */
export type OrderListRole = 'entry' | 'take_profit' | 'stop_loss';

/**
 * A bracket's exits as its entry recorded them: a take-profit (a `limit` at `price`, or a `take_profit` triggered at
 * `trigger_price`) and/or a stop-loss (`stop_loss` at `trigger_price`); decimal strings, 8 places.
 */
export interface BracketExits {
  take_profit?: { type: 'limit' | 'take_profit'; price: string | null; trigger_price: string | null };
  stop_loss?: { trigger_price: string };
}

/** What made a fill happen. */
export type FillTrigger = 'market' | 'limit' | 'stop_loss' | 'take_profit' | 'reset';

/** Where a fill's reference price came from (`files`, `binance`, `synthetic`; `avg_entry` for a reset without price). */
export type PriceSource = string;

/** The position of the fill's base asset after the fill. */
export interface PositionAfter {
  quantity: string;
  cost_basis: string;
  /** cost_basis / quantity rounded half-even to 8 places; 0 when flat. */
  avg_entry_price: string;
}

/**
 * An order filled, wholly or (fill models) in part. Buys: `total = notional + fee` leaves the wallet (from the order's lock first; the
 * unused rest of the lock, `released_amount`, returns to available cash). Sells: `total = notional − fee` comes
 * in, `realized_pnl = notional − cost_basis` (the sold share of the position's cost).
 */
export interface OrderFilledData {
  order_id: string;
  trade_id: string;
  session_id: string;
  symbol: string;
  base_asset: string;
  side: OrderSide;
  type: OrderType;
  trigger: FillTrigger;
  quantity: string;
  /** The market price the fill was decided on, its time and source (ARCHITECTURE §7, §17). */
  reference_price: string;
  reference_time: string;
  price_source: PriceSource;
  /** Slippage inputs: the pair's 24h quote volume and the participation in % (null: none known / no slippage). */
  quote_volume_24h: string | null;
  participation_pct: string | null;
  /**
   * The slippage paid, in % of the reference price: the model's (docs/trading-rules.md, "Slippage"), or, for a
   * marketable limit order capped at its limit, `|limit − reference| / reference × 100`; 0 for a resting limit.
   */
  slippage_pct: string;
  /**
   * The order's limit price (limit orders: a resting one fills at it, a marketable one never beyond it), else
   * null. Absent in events recorded before 2026-11-24.
   */
  limit_price?: string | null;
  executed_price: string;
  /** quantity × executed_price, rounded half-even to 8 places. */
  notional: string;
  fee_rate: string;
  fee: string;
  total: string;
  /** Cost added to the position (buy: the notional) or removed from it (sell: its sold share). */
  cost_basis: string;
  /** Sell: notional − cost_basis; buy: 0. Fees are separate (`net = total − fees`). */
  realized_pnl: string;
  /** The order's lock consumed by the fill (0 for market orders). */
  locked_amount: string;
  /** Buy: the part of the lock returned to available cash (lock − total, not below 0). Sell: 0. */
  released_amount: string;
  position_after: PositionAfter;
  filled_at: string;
  // The fill model's inputs (docs/trading-rules.md, "Fill models"). Absent in fills recorded before 2026-11-25:
  // those were `instant` fills of the whole order, and replay as such.
  /** The model that decided the fill and its version. */
  fill_model?: FillModelName;
  fill_model_version?: number;
  /** `maker`: a resting limit order (fee at the maker rate); `taker`: anything that took liquidity. */
  liquidity?: Liquidity;
  /** Taker fills under `realistic`: the book levels walked, best first, `[price, quantity taken]`; else null. */
  book_levels?: [string, string][] | null;
  /** Taker fills under `realistic`: base depth of the same side the wallet had already taken at this reference. */
  book_taken?: string | null;
  /** Maker fills under `realistic`: base volume traded in the print (tick or candle) that reached the order. */
  volume_available?: string | null;
  /** Maker fills under `realistic`: the participation share of that volume (%) and what earlier fills of the wallet took of it. */
  participation_cap_pct?: string | null;
  volume_taken?: string | null;
  /** What is left of the order after this fill (0: filled). Absent: 0. */
  remaining_quantity?: string;
  /**
   * The order's figures after this fill, all its fills so far together (read models show them): executed base
   * quantity, average executed price (Σ notional / Σ quantity, half-even to 8 places), Σ fee, Σ total, Σ realized
   * PnL, and the lock it still holds. Absent: this fill's own (a whole fill).
   */
  order_after?: OrderAfter;
}

/** See {@link OrderFilledData.order_after}. */
export interface OrderAfter {
  executed_quantity: string;
  executed_price: string;
  fee: string;
  total: string;
  realized_pnl: string;
  locked_amount: string;
}

/** Why an order was cancelled. */
export type CancelReason =
  | 'user'
  | 'cancel_all'
  | 'reset'
  | 'owner_reset'
  | 'insufficient_balance'
  /**
   * A market order's or an IOC's part the book could not hold (or, for an IOC limit the price does not reach, all
   * of it): the rest of a taker is not kept.
   */
  | 'unfilled'
  /** A FOK order the book could not fill whole at once: dropped with no fill (docs/trading-rules.md). */
  | 'fill_or_kill'
  /** An OCO leg whose other leg started to fill (docs/trading-rules.md, "Order lists: OCO and bracket"). */
  | 'linked_fill'
  /** An OCO leg whose other leg was cancelled by the client: a list is cancelled whole. */
  | 'linked_cancel';

/**
 * An open order was cancelled; its whole (remaining) lock is released. An OCO leg's shared lock is released once:
 * by the last of its legs to be cancelled, or consumed by the leg that fills (the other leg then releases 0).
 */
export interface OrderCancelledData {
  order_id: string;
  session_id: string;
  symbol: string;
  reason: CancelReason;
  unlocked_amount: string;
  unlocked_asset: string;
  /** Set for `insufficient_balance`: the triggering price and what the fill would have cost. */
  trigger_price_seen?: string;
  required?: string;
  cancelled_at: string;
}

/** An order failed the risk chain (ARCHITECTURE §8): recorded, status `rejected`, listed by `GET /trade/orders`. */
export interface OrderRejectedData extends OrderIds {
  order_id: string;
  session_id: string;
  symbol: string;
  side: OrderSide;
  type: OrderType;
  quantity: string;
  price: string | null;
  trigger_price: string | null;
  /** Step 1–8 of the chain and its rule name. */
  step: number;
  rule: RiskRule;
  code: ErrorCode;
  message: string;
  details: Record<string, unknown>;
  idempotency_key: string | null;
  request_hash: string | null;
  rejected_at: string;
}

/**
 * The session ended by a reset: every order was cancelled and every position closed at market (those events
 * precede this one); a `SessionStarted` follows. History is kept.
 */
export interface WalletResetData {
  previous_session_id: string;
  previous_started_at: string;
  /** Equity when the session ended (after closing), USDT. */
  ending_equity: string;
  /** ending equity − the session's starting balance (net of fees). */
  total_pnl: string;
  realized_pnl: string;
  fees_paid: string;
  reason: Exclude<SessionReason, 'opened'>;
  reset_at: string;
}

/** Every wallet event type, for projections' `eventTypes`. */
export const WALLET_EVENT_TYPES = [
  'WalletOpened',
  'SessionStarted',
  'TradingDayOpened',
  'OrderPlaced',
  'OrderFilled',
  'OrderCancelled',
  'OrderRejected',
  'WalletReset',
  'FillModelSet',
] as const satisfies readonly WalletEvent['type'][];

/** The stream category of wallets. */
export const WALLET_CATEGORY = 'wallet';

/** Stream of one owner's wallet. */
export const walletStreamId = (ownerId: string): string => `${WALLET_CATEGORY}-${ownerId}`;

/** The owner id of a wallet stream, or undefined for another stream. */
export const walletOwnerOf = (streamId: string): string | undefined =>
  streamId.startsWith(`${WALLET_CATEGORY}-`) ? streamId.slice(WALLET_CATEGORY.length + 1) : undefined;
