import type { FillModelName } from '../fill-model/model';
import type { BaseContext } from '../shared/decider';
import type { RiskProfile } from '../shared/risk-profile';
import type { Dec } from '../trading/decimal';
import type { OrderSide, OrderType, TimeInForce } from '../trading/orders';
import type { PairFilters } from '../trading/quantity';
import type { OwnerType } from './events';
import type { IdempotencyClaim } from './idempotency';

type Status = 'active' | 'suspended' | 'archived';

/**
 * The owner record as the accounts capability knows it when the command is issued (status, starting balance,
 * session). The wallet opens its first session from it and follows a new owner session (an agent reset).
 */
export interface OwnerSnapshot {
  ownerId: string;
  ownerType: OwnerType;
  accountId: string;
  status: Status;
  accountStatus: Status;
  /** The owner record's current session id. */
  sessionId: string;
  /** USDT, decimal string. */
  startingBalance: string;
  /** The fill model a new wallet opens with; absent: `realistic` (docs/trading-rules.md, "Choosing a model"). */
  fillModel?: FillModelName | undefined;
  /**
   * The participation share (%) a new wallet opens with (a backtest's or battle's sandbox: its agent wallet's, as
   * recorded when the session was created); absent: 10.
   */
  participationPct?: number | undefined;
}

/** An order as the client asked for it (decimal strings; validated by the decider). */
export interface OrderRequest {
  symbol: string;
  side: OrderSide;
  type: OrderType;
  quantity: string;
  /** Limit price: required for `limit`, ignored otherwise. */
  price?: string | null;
  /** Trigger price: required for `stop_loss` and `take_profit`, ignored otherwise. */
  triggerPrice?: string | null;
  /**
   * `GTC` (absent: the default), `IOC` or `FOK` (docs/trading-rules.md, "Time in force"); any other text is
   * `VALIDATION_ERROR`.
   */
  timeInForce?: TimeInForce | string | null;
  /**
   * The client's own id of the order (`client_order_id`, Binance `newClientOrderId`; `./client-order-id.ts`):
   * unique among the wallet's open orders; absent: none.
   */
  clientOrderId?: string | null;
  /**
   * Links the order into a list (docs/trading-rules.md, "Order lists: OCO and bracket"):
   * - `oco`: this order (a `limit`, or a `take_profit`) is the take-profit leg and `stopLoss` the other leg, same
   *   symbol, side and quantity; one leg's first fill cancels the other;
   * - `bracket`: this order (a `market` or `limit`) is the entry; `takeProfit` and/or `stopLoss` are placed as exits
   *   (the other side, the executed quantity) once the entry is done.
   * Absent: a lone order, as before.
   */
  list?: OrderListRequest | null;
  /** Hash of credential + `Idempotency-Key` and of the body (recorded for idempotent replays). */
  idempotencyKey?: string | null;
  requestHash?: string | null;
}

/** A take-profit exit: a `limit` at `price` (a maker) or a `take_profit` triggered at `triggerPrice` (a taker). */
export interface TakeProfitRequest {
  type: 'limit' | 'take_profit';
  price?: string | null;
  triggerPrice?: string | null;
}

/** A stop-loss exit: a `stop_loss` triggered at `triggerPrice`. */
export interface StopLossRequest {
  triggerPrice: string;
  /** An OCO's stop leg's own client order id (the Binance door's `stopClientOrderId`); absent: none. */
  clientOrderId?: string | null;
}

/** See {@link OrderRequest.list}. */
export type OrderListRequest =
  | {
      kind: 'oco';
      stopLoss: StopLossRequest;
      /**
       * The client's own id of the list (REST `list_client_order_id`, Binance `listClientOrderId`), recorded on both
       * legs; the same pattern as a client order id, not required unique (a query by it names the newest list).
       */
      clientOrderId?: string | null;
    }
  | { kind: 'bracket'; takeProfit?: TakeProfitRequest | null; stopLoss?: StopLossRequest | null };

/** Commands of the wallet aggregate. */
export type WalletCommand =
  /** Opens the wallet (or follows a new owner session); nothing when already in step. */
  | { type: 'OpenWallet'; data: { owner: OwnerSnapshot } }
  /** `POST /trade/order`: the risk chain, then a fill (market) or a pending order with its lock. */
  | { type: 'PlaceOrder'; data: { owner: OwnerSnapshot; order: OrderRequest } }
  /**
   * The matching engine saw `price` (at `time`, from `source`) reach a pending order: fill it. Idempotent: an
   * order that is no longer open, or a price that does not reach it, decides nothing.
   */
  | {
      type: 'FillOrder';
      data: {
        orderId: string;
        price: string;
        time: string;
        source: string;
        /**
         * Base volume traded in the print (a tick's quantity, a candle's volume): what a resting limit order's
         * participation share is taken of under `realistic` (absent or 0: a price-only update, no maker fill).
         */
        volume?: string | undefined;
      };
    }
  /** `DELETE /trade/order/{id}`. */
  | { type: 'CancelOrder'; data: { orderId: string } }
  /** `DELETE /trade/orders/open`: every open order, in one append (atomic). */
  | { type: 'CancelAllOrders'; data: Record<string, never> }
  /** `PUT /account/fill-model`: the wallet's fill model and participation share (%, default 10) from now on. */
  | {
      type: 'SetFillModel';
      data: { owner: OwnerSnapshot; fillModel: string; participationPct?: number | undefined };
    }
  /** `POST /account/reset`: close at market, cancel, new session at `startingBalance` (default: the owner's). */
  | { type: 'ResetWallet'; data: { owner: OwnerSnapshot; startingBalance?: string } };

/** A price as market data serves it: value, observation time (ISO 8601) and source. */
export interface QuotedPrice {
  price: string;
  timestamp: string;
  source: string;
  /**
   * Set when the feed behind the price has been silent past the venue's limit (ms; docs/trading-rules.md "Stale
   * prices"): the decider then refuses to fill at it.
   */
  stale?: {
    age_ms: number;
    max_age_ms: number;
    /** When the market data behind the price last moved (ISO 8601), when not `timestamp` (a candle's close time). */
    last_at?: string;
  };
}

/**
 * The context of a wallet command (ARCHITECTURE §4): business time, ids, market data and the owner's risk
 * profile. Live, the handler builds it from the price cache and the read models; in backtests from the virtual
 * clock and preloaded candles. The decider reads nothing else.
 */
export interface WalletContext extends BaseContext {
  /** Current price of a symbol, undefined when none is known. */
  prices: (symbol: string) => QuotedPrice | undefined;
  /** A pair's filters, undefined when unknown. */
  pairs: (symbol: string) => PairFilters | undefined;
  /** 24h quote volume (USDT) of a symbol, undefined when unknown (slippage then takes its maximum). */
  quoteVolume24h: (symbol: string) => Dec | undefined;
  riskProfile: RiskProfile;
  /** Fee per fill as a fraction of notional (0.001 = 0.1%): the taker rate, and what locks are sized with. */
  feeRate: Dec;
  /**
   * For a `PlaceOrder` with an idempotency key: the key's newest claim in the wallet's stream (looked up after the
   * state was loaded, on every attempt; `domain/wallet/idempotency.ts`), absent when the key was never used. The
   * decider replays a live claim of the same request and refuses another body under it.
   */
  idempotencyClaim?: IdempotencyClaim;
  /** The maker rate (resting limit fills); absent: {@link feeRate}. */
  makerFeeRate?: Dec | undefined;
  /** The wallet's fill model (docs/trading-rules.md, "Fill models"); absent: `instant`. */
  fillModel?: FillModelName | undefined;
  /** The share (%) of a print's volume the wallet's resting orders may take under `realistic`; absent: 10. */
  participationPct?: number | undefined;
}
