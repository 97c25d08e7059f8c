import { DEFAULT_PARTICIPATION_PCT, type FillModelName } from '../fill-model/model';
import { type Dec, dec, ZERO } from '../trading/decimal';
import type { OrderSide, OrderType, TimeInForce } from '../trading/orders';
import type { BracketExits, OrderListKind, OrderListRole, OwnerType, WalletEvent } from './events';

/** A held base asset (a position: spot only, never negative). */
export interface Holding {
  asset: string;
  /** The pair it trades in (`{asset}USDT`). */
  symbol: string;
  /** Total held, including what open sell orders lock. */
  quantity: Dec;
  /** Locked by open sell orders. */
  locked: Dec;
  /** Cost basis: Σ notional of buys minus the sold shares (fees excluded), USDT. */
  cost: Dec;
  /**
   * Average entry price (USDT per unit, 8 places): the quantity-weighted executed price of the buys, moved by each
   * buy and kept by sells (average-cost method; ARCHITECTURE §8). The `avg_entry_price` of the last fill.
   */
  avgEntry: Dec;
  /** When the position was opened (first fill after being flat). */
  openedAt: string;
}

/** An order that is pending (open). */
export interface OpenOrder {
  orderId: string;
  sessionId: string;
  symbol: string;
  baseAsset: string;
  side: OrderSide;
  type: Exclude<OrderType, 'market'>;
  /** The quantity ordered. */
  quantity: Dec;
  /** What is left to fill: `quantity` less the partial fills so far (docs/trading-rules.md, "Fill models"). */
  remaining: Dec;
  price: Dec | null;
  triggerPrice: Dec | null;
  /** USDT (buys) or base quantity (sells): always the lock of {@link remaining} (`lockFor`). */
  lockedAmount: Dec;
  lockAsset: string;
  /** The fee rate the lock was sized with (`OrderPlaced.fee_rate`): a partial fill re-sizes the lock with it. */
  feeRate: Dec;
  /**
   * What its partial fills so far came to (zero until the first), USDT: `notional` Σ price × quantity, exact (up to
   * 16 places, for the order's average price: `executedPriceText`), and Σ fee, total, realized PnL.
   */
  done: { notional: Dec; fee: Dec; total: Dec; realizedPnl: Dec };
  /** A limit order the price already reached when placed: filled as a taker (see `OrderPlacedData.marketable`). */
  marketable: boolean;
  /** `GTC`, or the `IOC`/`FOK` of a stop or take-profit, applied when it triggers (`OrderPlaced.time_in_force`). */
  timeInForce: TimeInForce;
  /** The client's own id (`OrderPlaced.client_order_id`), null when none: unique among open orders. */
  clientOrderId: string | null;
  placedAt: string;
  /**
   * Its order list (docs/trading-rules.md, "Order lists: OCO and bracket"), null for a lone order. The open legs of
   * an OCO each carry the list's one lock in `lockedAmount`, which the balances hold once.
   */
  list: { id: string; kind: OrderListKind; role: OrderListRole } | null;
  /** A bracket's entry: the exits it places once done (`OrderPlaced.exits`); null otherwise. */
  exits: BracketExits | null;
}

/**
 * The last print the wallet filled on (docs/trading-rules.md, "Fill models"): the liquidity its own fills already
 * used, so a second order on the same print neither takes the same book depth again nor a second participation
 * share. `time` is the fill's `reference_time` (a tick's time, a candle's open time).
 */
export interface PrintUse {
  symbol: string;
  time: string;
  /** Base quantity of the print's volume taken by resting (maker) fills. */
  maker: Dec;
  /** The reference price of the takers' book and the depth taken from each side of it (base quantity). */
  price: string;
  asks: Dec;
  bids: Dec;
}

/** The current session. */
export interface Session {
  id: string;
  startingBalance: Dec;
  startedAt: string;
  /** The owner record's session this wallet follows (see `SessionStartedData.owner_session_id`). */
  ownerSessionId: string;
}

/**
 * The state of one wallet (the fold of its stream). Only what decisions need: open orders (bounded by
 * `max_open_orders`) and holdings; filled, cancelled and rejected orders live in the read models.
 * Figures of realized PnL and fees are those of the current session.
 */
export interface WalletState {
  opened: boolean;
  ownerId: string | null;
  ownerType: OwnerType | null;
  accountId: string | null;
  session: Session | null;
  /** Available (free) USDT. */
  cash: Dec;
  /** USDT locked by open buy orders. */
  lockedCash: Dec;
  holdings: Readonly<Record<string, Holding>>;
  openOrders: Readonly<Record<string, OpenOrder>>;
  realizedPnl: Dec;
  feesPaid: Dec;
  /** Closing fills (sells) this session and how many realized a profit (> 0). */
  closedTrades: number;
  winningTrades: number;
  /** The current UTC trading day and its opening equity (daily loss breaker). */
  tradingDay: { day: string; openingEquity: Dec } | null;
  /** Time of the last event (business time). */
  updatedAt: string | null;
  /**
   * Revision of the last event folded (-1 for none): the wallet stream's revision. (Idempotency claims are not
   * part of the state: they are looked up in the log per keyed order, `domain/wallet/idempotency.ts`.)
   */
  version: number;
  /** Liquidity the wallet's fills used on the last print ({@link PrintUse}); null before any fill-model fill. */
  print: PrintUse | null;
  /** The wallet's fill model and its participation share (%) (`WalletOpened`, `FillModelSet`). */
  fillModel: FillModelName;
  participationPct: number;
}

/**
 * What a session starts from besides its cash: nothing locked, held or open, no P&L, fees or trades yet, and no
 * trading day (the keys in {@link WalletState}'s order, which the snapshot codec keeps).
 */
const emptyBooks = () =>
  ({
    lockedCash: ZERO,
    holdings: {},
    openOrders: {},
    realizedPnl: ZERO,
    feesPaid: ZERO,
    closedTrades: 0,
    winningTrades: 0,
    tradingDay: null,
  }) satisfies Partial<WalletState>;

/** The state of a wallet with no events. */
export const initialWalletState = (): WalletState => ({
  opened: false,
  ownerId: null,
  ownerType: null,
  accountId: null,
  session: null,
  cash: ZERO,
  ...emptyBooks(),
  updatedAt: null,
  version: -1,
  print: null,
  fillModel: 'instant',
  participationPct: DEFAULT_PARTICIPATION_PCT,
});

/**
 * The print use after a fill: accumulated on the same print (symbol and time), started afresh on another. Fills
 * recorded before fill models (no `liquidity`) leave it as it is.
 */
const usePrint = (
  print: PrintUse | null,
  d: Extract<WalletEvent, { type: 'OrderFilled' }>['data'],
): PrintUse | null => {
  if (d.liquidity === undefined || d.trigger === 'reset') return print;
  const same = print !== null && print.symbol === d.symbol && print.time === d.reference_time;
  const base: PrintUse = same
    ? print
    : {
        symbol: d.symbol,
        time: d.reference_time,
        maker: ZERO,
        price: d.reference_price,
        asks: ZERO,
        bids: ZERO,
      };
  const quantity = dec(d.quantity);
  if (d.liquidity === 'maker') return { ...base, maker: base.maker.plus(quantity) };
  const book =
    base.price === d.reference_price ? base : { ...base, price: d.reference_price, asks: ZERO, bids: ZERO };
  return d.side === 'buy'
    ? { ...book, asks: book.asks.plus(quantity) }
    : { ...book, bids: book.bids.plus(quantity) };
};

const without = <T>(record: Readonly<Record<string, T>>, key: string): Record<string, T> => {
  const { [key]: _removed, ...rest } = record;
  return rest;
};

/**
 * Folds one wallet event (pure; never mutates `state`). Amounts are taken from the event as recorded: the
 * decider computed them, `evolve` only books them. Every event moves `version`.
 */
export const evolveWallet = (state: WalletState, event: WalletEvent): WalletState => {
  const next = foldBalances(state, event);
  // Every case of the fold returns a fresh copy of the state: its version is set on it rather than copying the
  // whole state once more (a spread of ~20 fields per event, three events per market order; issue 23).
  if (next === state || next === undefined) return { ...next, version: state.version + 1 };
  next.version = state.version + 1;
  return next;
};

/** The balances, orders and session figures after one event (everything but the bookkeeping of `evolveWallet`). */
const foldBalances = (state: WalletState, event: WalletEvent): WalletState => {
  switch (event.type) {
    case 'WalletOpened': {
      const d = event.data;
      return {
        ...state,
        opened: true,
        ownerId: d.owner_id,
        ownerType: d.owner_type,
        accountId: d.account_id,
        fillModel: d.fill_model ?? 'instant',
        participationPct: d.participation_pct ?? DEFAULT_PARTICIPATION_PCT,
        updatedAt: d.opened_at,
      };
    }
    case 'FillModelSet':
      return {
        ...state,
        fillModel: event.data.fill_model,
        participationPct: event.data.participation_pct,
        updatedAt: event.data.set_at,
      };
    case 'SessionStarted': {
      const d = event.data;
      return {
        ...state,
        session: {
          id: d.session_id,
          startingBalance: dec(d.starting_balance),
          startedAt: d.started_at,
          ownerSessionId: d.owner_session_id,
        },
        cash: dec(d.starting_balance),
        ...emptyBooks(),
        updatedAt: d.started_at,
      };
    }
    case 'TradingDayOpened':
      return {
        ...state,
        tradingDay: { day: event.data.day, openingEquity: dec(event.data.equity) },
        updatedAt: event.data.opened_at,
      };
    case 'OrderPlaced': {
      const d = event.data;
      if (d.type === 'market') return { ...state, updatedAt: d.placed_at };
      const lock = dec(d.locked_amount);
      const order: OpenOrder = {
        orderId: d.order_id,
        sessionId: d.session_id,
        symbol: d.symbol,
        baseAsset: d.base_asset,
        side: d.side,
        type: d.type,
        quantity: dec(d.quantity),
        remaining: dec(d.quantity),
        price: d.price === null ? null : dec(d.price),
        triggerPrice: d.trigger_price === null ? null : dec(d.trigger_price),
        lockedAmount: lock,
        lockAsset: d.lock_asset,
        feeRate: dec(d.fee_rate),
        done: { notional: ZERO, fee: ZERO, total: ZERO, realizedPnl: ZERO },
        marketable: d.marketable === true,
        timeInForce: d.time_in_force ?? 'GTC',
        clientOrderId: d.client_order_id ?? null,
        placedAt: d.placed_at,
        list:
          d.order_list_id === undefined
            ? null
            : { id: d.order_list_id, kind: d.list_kind ?? 'oco', role: d.list_role ?? 'take_profit' },
        exits: d.exits ?? null,
      };
      const next = {
        ...state,
        openOrders: { ...state.openOrders, [d.order_id]: order },
        updatedAt: d.placed_at,
      };
      // An OCO leg after the first shares the lock its first leg took: nothing more moves.
      if (d.lock_shared) return next;
      if (d.side === 'buy')
        return { ...next, cash: state.cash.minus(lock), lockedCash: state.lockedCash.plus(lock) };
      const holding = state.holdings[d.base_asset];
      if (!holding) return next; // unreachable: the decider only places sells of held quantity
      return {
        ...next,
        holdings: { ...state.holdings, [d.base_asset]: { ...holding, locked: holding.locked.plus(lock) } },
      };
    }
    case 'OrderFilled': {
      const d = event.data;
      const open = state.openOrders[d.order_id];
      const locked = dec(d.locked_amount);
      // A partial fill (fill models) leaves the order open with less to fill and the smaller lock; a fill recorded
      // before them always filled the whole order.
      const remaining = open ? open.remaining.minus(dec(d.quantity)) : ZERO;
      const openOrders =
        open === undefined
          ? state.openOrders
          : remaining.gt(0)
            ? {
                ...state.openOrders,
                // A marketable limit's rest rests on the book at its limit: a maker from now on.
                [d.order_id]: {
                  ...open,
                  remaining,
                  lockedAmount: open.lockedAmount.minus(locked),
                  marketable: false,
                  done: {
                    notional: open.done.notional.plus(dec(d.executed_price).times(dec(d.quantity))),
                    fee: open.done.fee.plus(dec(d.fee)),
                    total: open.done.total.plus(dec(d.total)),
                    realizedPnl: open.done.realizedPnl.plus(dec(d.realized_pnl)),
                  },
                },
              }
            : without(state.openOrders, d.order_id);
      const total = dec(d.total);
      const prev = state.holdings[d.base_asset];
      const after = d.position_after;
      const holdings: Record<string, Holding> = { ...state.holdings };
      if (dec(after.quantity).isZero()) {
        delete holdings[d.base_asset];
      } else {
        holdings[d.base_asset] = {
          asset: d.base_asset,
          symbol: d.symbol,
          quantity: dec(after.quantity),
          locked: d.side === 'sell' ? (prev?.locked ?? ZERO).minus(locked) : (prev?.locked ?? ZERO),
          cost: dec(after.cost_basis),
          avgEntry: dec(after.avg_entry_price),
          openedAt: prev?.openedAt ?? d.filled_at,
        };
      }
      const realized = dec(d.realized_pnl);
      // One copy of the state per fill (not a common part spread again), and the event's amounts through `dec`'s
      // memo rather than parsed again by `plus` (issue 23).
      const fee = dec(d.fee);
      // A buy pays `total` from its lock (the rest of the lock back to cash); a sell receives `total` and closes a
      // trade (won when its realized PnL is positive).
      const buy = d.side === 'buy';
      return {
        ...state,
        openOrders,
        holdings,
        feesPaid: state.feesPaid.plus(fee),
        print: usePrint(state.print, d),
        updatedAt: d.filled_at,
        lockedCash: buy ? state.lockedCash.minus(locked) : state.lockedCash,
        cash: buy ? state.cash.plus(locked).minus(total) : state.cash.plus(total),
        realizedPnl: buy ? state.realizedPnl : state.realizedPnl.plus(realized),
        closedTrades: buy ? state.closedTrades : state.closedTrades + 1,
        winningTrades: !buy && realized.gt(0) ? state.winningTrades + 1 : state.winningTrades,
      };
    }
    case 'OrderCancelled': {
      const d = event.data;
      const order = state.openOrders[d.order_id];
      if (!order) return { ...state, updatedAt: d.cancelled_at };
      const amount = dec(d.unlocked_amount);
      const next = { ...state, openOrders: without(state.openOrders, d.order_id), updatedAt: d.cancelled_at };
      if (order.side === 'buy') {
        return { ...next, cash: state.cash.plus(amount), lockedCash: state.lockedCash.minus(amount) };
      }
      const holding = state.holdings[order.baseAsset];
      if (!holding) return next;
      return {
        ...next,
        holdings: {
          ...state.holdings,
          [order.baseAsset]: { ...holding, locked: holding.locked.minus(amount) },
        },
      };
    }
    case 'OrderRejected':
      return { ...state, updatedAt: event.data.rejected_at };
    case 'WalletReset':
      // The new session's `SessionStarted` (same append) restores cash and clears the rest.
      return { ...state, updatedAt: event.data.reset_at };
  }
};

/** Price lookup for valuation: the current price of a symbol, or undefined when none is known. */
export type PriceOf = (symbol: string) => Dec | undefined;

/**
 * Equity: available cash + locked cash + Σ quantity × current price (spec "Balance": `total_equity_usdt`).
 * A holding without a known price is valued at its cost basis. Exact (not rounded).
 */
export const walletEquity = (state: WalletState, priceOf: PriceOf): Dec => {
  let equity = state.cash.plus(state.lockedCash);
  for (const h of Object.values(state.holdings)) {
    const price = priceOf(h.symbol);
    equity = equity.plus(price ? h.quantity.times(price) : h.cost);
  }
  return equity;
};

/** Σ cost basis of all holdings. */
export const totalCost = (state: WalletState): Dec => {
  let total = ZERO;
  for (const h of Object.values(state.holdings)) total = total.plus(h.cost);
  return total;
};
