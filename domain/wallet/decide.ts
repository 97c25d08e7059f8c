import {
  DEFAULT_PARTICIPATION_PCT,
  FILL_MODEL_VERSION,
  FILL_MODELS,
  type FillModelName,
  quoteMaker,
  quoteTaker,
} from '../fill-model/model';
import { normalizeSymbol } from '../market/pair';
import type { Decider } from '../shared/decider';
import { DomainError } from '../shared/errors';
import { type Dec, dec, fmt, fmtOrNull, max, parseDecimal, roundHalfEven8, ZERO } from '../trading/decimal';
import { feeFor } from '../trading/fees';
import { averageEntry8, costShare8, executedPriceText, notional8 } from '../trading/fill-figures';
import {
  isTriggered,
  lockFor,
  MAX_ORDER_DECIMAL,
  type OrderSide,
  type OrderType,
  type PendingTerms,
  TIME_IN_FORCE,
  type TimeInForce,
} from '../trading/orders';
import { type RiskFailure, runRiskChain } from '../trading/risk';
import { clientOrderIdOf, listClientOrderIdOf } from './client-order-id';
import type {
  OrderListRequest,
  OrderRequest,
  OwnerSnapshot,
  QuotedPrice,
  WalletCommand,
  WalletContext,
} from './commands';
import type {
  BracketExits,
  CancelReason,
  FillTrigger,
  OrderFilledData,
  OrderListKind,
  OrderListRole,
  SessionReason,
  WalletEvent,
} from './events';
import { checkClaim } from './idempotency';
import { evolveWallet, initialWalletState, type OpenOrder, type WalletState, walletEquity } from './state';

/**
 * Accumulates the events of one decision and the state they lead to, so later steps of the same decision
 * (an order after opening the wallet, a close after a cancel) see the effect of the earlier ones.
 */
class Decision {
  readonly events: WalletEvent[] = [];
  constructor(public state: WalletState) {}
  emit(event: WalletEvent): void {
    this.events.push(event);
    this.state = evolveWallet(this.state, event);
  }
}

const utcDay = (now: Date): string => now.toISOString().slice(0, 10);

const priceOf = (ctx: WalletContext) => (symbol: string) => {
  const p = ctx.prices(symbol);
  return p ? dec(p.price) : undefined;
};

const requireSession = (state: WalletState) => {
  if (!state.session) throw new DomainError('INTERNAL_ERROR', 'wallet has no session');
  return state.session;
};

/** Parses a decimal field of the request: `VALIDATION_ERROR` when it is not a plain decimal with ≤ 8 places. */
const parseField = (value: string, field: string): Dec => {
  const parsed = parseDecimal(value);
  if (!parsed) {
    throw new DomainError(
      'VALIDATION_ERROR',
      `${field} must be a decimal string with at most 8 decimal places, e.g. "0.001"`,
      { field },
    );
  }
  if (parsed.abs().gte(MAX_ORDER_DECIMAL)) {
    throw new DomainError(
      'VALIDATION_ERROR',
      `${field} must be less than ${MAX_ORDER_DECIMAL} in absolute value`,
      {
        field,
      },
    );
  }
  return parsed;
};

const positivePrice = (value: string | null | undefined, field: string, type: OrderType): Dec => {
  if (value === null || value === undefined || value === '') {
    throw new DomainError('VALIDATION_ERROR', `${field} is required for ${type} orders`, { field });
  }
  const parsed = parseField(value, field);
  if (parsed.lte(0)) throw new DomainError('VALIDATION_ERROR', `${field} must be greater than 0`, { field });
  return parsed;
};

/** Throws `VALIDATION_ERROR` when `value` is given for an order type that does not use `field`. */
const refuseUnused = (
  value: string | null | undefined,
  field: string,
  type: OrderType,
  used: boolean,
  usedBy: string,
): void => {
  if (used || value === null || value === undefined || value === '') return;
  throw new DomainError(
    'VALIDATION_ERROR',
    `${field} is only taken by ${usedBy} orders; leave it out of a ${type} order`,
    { field },
  );
};

/** The order's time in force (absent: `GTC`); anything else than GTC, IOC or FOK is `VALIDATION_ERROR`. */
const timeInForceOf = (value: string | null | undefined): TimeInForce => {
  if (value === null || value === undefined || value === '') return 'GTC';
  if (!(TIME_IN_FORCE as readonly string[]).includes(value)) {
    throw new DomainError('VALIDATION_ERROR', `time_in_force must be one of ${TIME_IN_FORCE.join(', ')}`, {
      field: 'time_in_force',
    });
  }
  return value as TimeInForce;
};

// ---------------------------------------------------------------------------------------------------------
// Opening, following the owner's session, resets
// ---------------------------------------------------------------------------------------------------------

/** Opens the wallet on first use; follows a new owner session (agent reset) by resetting to it. */
const prelude = (d: Decision, owner: OwnerSnapshot, ctx: WalletContext): void => {
  const at = ctx.now.toISOString();
  if (!d.state.opened) {
    d.emit({
      type: 'WalletOpened',
      data: {
        owner_id: owner.ownerId,
        owner_type: owner.ownerType,
        account_id: owner.accountId,
        opened_at: at,
        fill_model: owner.fillModel ?? 'realistic',
        participation_pct: owner.participationPct ?? DEFAULT_PARTICIPATION_PCT,
      },
    });
    startSession(d, owner.sessionId, dec(owner.startingBalance), owner.sessionId, 'opened', at);
    return;
  }
  if (d.state.session?.ownerSessionId !== owner.sessionId) {
    reset(d, ctx, {
      reason: 'owner_reset',
      sessionId: owner.sessionId,
      startingBalance: dec(owner.startingBalance),
      ownerSessionId: owner.sessionId,
    });
  }
};

const startSession = (
  d: Decision,
  sessionId: string,
  startingBalance: Dec,
  ownerSessionId: string,
  reason: SessionReason,
  at: string,
): void => {
  d.emit({
    type: 'SessionStarted',
    data: {
      session_id: sessionId,
      starting_balance: fmt(startingBalance),
      owner_session_id: ownerSessionId,
      reason,
      started_at: at,
    },
  });
};

/**
 * Ends the session (ARCHITECTURE §8 "Reset"): cancels every open order, closes every position at market (a
 * fill with slippage and fee; at the average entry price, source `avg_entry`, when no price is known), records
 * the session's result and starts the new session.
 */
const reset = (
  d: Decision,
  ctx: WalletContext,
  next: { reason: 'reset' | 'owner_reset'; sessionId: string; startingBalance: Dec; ownerSessionId: string },
): void => {
  const at = ctx.now.toISOString();
  const session = requireSession(d.state);
  for (const order of Object.values(d.state.openOrders)) {
    cancel(d, d.state.openOrders[order.orderId]!, next.reason === 'reset' ? 'reset' : 'owner_reset', at);
  }
  for (const holding of Object.values(d.state.holdings)) {
    const quoted = ctx.prices(holding.symbol);
    const reference: QuotedPrice = quoted ?? {
      price: fmt(holding.avgEntry),
      timestamp: at,
      source: 'avg_entry',
    };
    // A close without a price is booked at the average entry (no market, no slippage).
    const pricing: Pricing = quoted
      ? takerPricing(d.state, ctx, {
          symbol: holding.symbol,
          side: 'sell',
          quantity: holding.quantity,
          reference,
          whole: true,
        })
      : {
          quantity: holding.quantity,
          executedPrice: holding.avgEntry,
          slippage: ZERO,
          quoteVolume: null,
          participation: null,
          feeRate: ctx.feeRate,
          inputs: {
            fill_model: modelOf(ctx, d.state),
            fill_model_version: FILL_MODEL_VERSION,
            liquidity: 'taker',
            book_levels: null,
            book_taken: null,
            volume_available: null,
            participation_cap_pct: null,
            volume_taken: null,
          },
        };
    const quote = quoteFill(d.state, {
      symbol: holding.symbol,
      baseAsset: holding.asset,
      side: 'sell',
      reference,
      pricing,
    });
    d.emit({
      type: 'OrderFilled',
      data: fillData(quote, {
        orderId: ctx.newId(),
        tradeId: ctx.newId(),
        sessionId: session.id,
        type: 'market',
        trigger: 'reset',
        lockedAmount: ZERO,
        at,
      }),
    });
  }
  const ending = roundHalfEven8(walletEquity(d.state, priceOf(ctx)));
  d.emit({
    type: 'WalletReset',
    data: {
      previous_session_id: session.id,
      previous_started_at: session.startedAt,
      ending_equity: fmt(ending),
      total_pnl: fmt(ending.minus(session.startingBalance)),
      realized_pnl: fmt(d.state.realizedPnl),
      fees_paid: fmt(d.state.feesPaid),
      reason: next.reason,
      reset_at: at,
    },
  });
  startSession(d, next.sessionId, next.startingBalance, next.ownerSessionId, next.reason, at);
};

/** The other open legs of an order's OCO (orders that share its lock), in placement order; none for a lone order. */
const openSiblings = (state: WalletState, order: OpenOrder): OpenOrder[] => {
  const list = order.list;
  if (!list || list.role === 'entry') return [];
  return Object.values(state.openOrders).filter(
    (o) => o.orderId !== order.orderId && o.list?.id === list.id && o.list.role !== 'entry',
  );
};

/**
 * Cancels an open order and releases its lock. An OCO leg's shared lock is released by the last open leg of its
 * list (the others release 0), unless `unlocked` says otherwise (0 for the leg whose sibling's fill consumed it).
 */
const cancel = (
  d: Decision,
  order: OpenOrder,
  reason: CancelReason,
  at: string,
  extra = {},
  unlocked?: Dec,
): void => {
  const release = unlocked ?? (openSiblings(d.state, order).length > 0 ? ZERO : order.lockedAmount);
  d.emit({
    type: 'OrderCancelled',
    data: {
      order_id: order.orderId,
      session_id: order.sessionId,
      symbol: order.symbol,
      reason,
      unlocked_amount: fmt(release),
      unlocked_asset: order.lockAsset,
      ...extra,
      cancelled_at: at,
    },
  });
};

// ---------------------------------------------------------------------------------------------------------
// Fills
// ---------------------------------------------------------------------------------------------------------

/** How a fill was priced and sized by the fill model, with the inputs it records (docs/trading-rules.md). */
interface Pricing {
  quantity: Dec;
  executedPrice: Dec;
  slippage: Dec;
  quoteVolume: Dec | null;
  participation: Dec | null;
  feeRate: Dec;
  inputs: FillInputs;
}

/** The fill model's inputs as `OrderFilled` records them. */
type FillInputs = Required<
  Pick<
    OrderFilledData,
    | 'fill_model'
    | 'fill_model_version'
    | 'liquidity'
    | 'book_levels'
    | 'book_taken'
    | 'volume_available'
    | 'participation_cap_pct'
    | 'volume_taken'
  >
>;

/** A fill computed from the rules (ARCHITECTURE §8), before it is recorded. */
interface FillQuote extends Pricing {
  symbol: string;
  baseAsset: string;
  side: OrderSide;
  reference: QuotedPrice;
  /** `reference.price` as a decimal. */
  referencePrice: Dec;
  notional: Dec;
  fee: Dec;
  /** Buy: notional + fee (paid). Sell: notional − fee (received). */
  total: Dec;
  costBasis: Dec;
  realizedPnl: Dec;
  positionAfter: { quantity: Dec; cost: Dec; avgEntry: Dec };
}

/** The model of a fill: the context's when it names one (previews, tests), else the wallet's. */
const modelOf = (ctx: WalletContext, state: WalletState): FillModelName => ctx.fillModel ?? state.fillModel;

const gridOf = (ctx: WalletContext, symbol: string) => {
  const pair = ctx.pairs(symbol);
  return { tickSize: pair?.tickSize, stepSize: pair?.stepSize };
};

/** The print use of the wallet at this symbol and time (its earlier fills on the same print), if any. */
const printAt = (state: WalletState, symbol: string, time: string) =>
  state.print !== null && state.print.symbol === symbol && state.print.time === time
    ? state.print
    : undefined;

/**
 * Prices a taker fill (a market order, a triggered stop or take-profit, a marketable limit, a reset's close) with
 * the wallet's fill model (`domain/fill-model`): `realistic` walks the book around the reference past what the
 * wallet's own fills already took of it on this print, `instant` moves the reference by the slippage table. A
 * `limit` caps the price (a buy never pays more, a sell never gets less); `whole` fills the whole quantity even
 * beyond the book (a reset's closing fills). Fee at the taker rate.
 */
const takerPricing = (
  state: WalletState,
  ctx: WalletContext,
  args: {
    symbol: string;
    side: OrderSide;
    quantity: Dec;
    reference: QuotedPrice;
    limit?: Dec | undefined;
    whole?: boolean;
  },
): Pricing => {
  const model = modelOf(ctx, state);
  const reference = dec(args.reference.price);
  const print = printAt(state, args.symbol, args.reference.timestamp);
  const taken =
    print && print.price === fmt(reference) ? (args.side === 'buy' ? print.asks : print.bids) : ZERO;
  const quote = quoteTaker(model, {
    side: args.side,
    quantity: args.quantity,
    reference,
    quoteVolume24h: ctx.quoteVolume24h(args.symbol),
    grid: gridOf(ctx, args.symbol),
    limit: args.limit,
    taken,
    ...(args.whole ? { whole: true } : {}),
  });
  return {
    quantity: quote.quantity,
    executedPrice: quote.executedPrice,
    slippage: quote.slippagePct,
    quoteVolume: quote.quoteVolume,
    participation: quote.participationPct,
    feeRate: ctx.feeRate,
    inputs: {
      fill_model: model,
      fill_model_version: FILL_MODEL_VERSION,
      liquidity: 'taker',
      book_levels: quote.levels?.map((l) => [fmt(l.price), fmt(l.quantity)]) ?? null,
      book_taken: fmtOrNull(quote.bookTaken),
      volume_available: null,
      participation_cap_pct: null,
      volume_taken: null,
    },
  };
};

/**
 * Sizes a resting limit fill (a maker: at its limit, no slippage, fee at the maker rate): `instant` fills the
 * whole remainder, `realistic` at most the participation share of the print's volume less what the wallet's
 * earlier resting fills of the same print took.
 */
const makerPricing = (
  state: WalletState,
  ctx: WalletContext,
  order: OpenOrder,
  print: { time: string; volume: Dec },
): Pricing => {
  const model = modelOf(ctx, state);
  const share = ctx.participationPct ?? state.participationPct;
  const quote = quoteMaker(model, {
    remaining: order.remaining,
    printVolume: print.volume,
    participationPct: share,
    taken: printAt(state, order.symbol, print.time)?.maker ?? ZERO,
    grid: gridOf(ctx, order.symbol),
  });
  return {
    quantity: quote.quantity,
    executedPrice: order.price!,
    slippage: ZERO,
    quoteVolume: null,
    participation: null,
    feeRate: ctx.makerFeeRate ?? ctx.feeRate,
    inputs: {
      fill_model: model,
      fill_model_version: FILL_MODEL_VERSION,
      liquidity: 'maker',
      book_levels: null,
      book_taken: null,
      volume_available: fmtOrNull(quote.volumeAvailable),
      participation_cap_pct: quote.participationCapPct === null ? null : String(quote.participationCapPct),
      volume_taken: fmtOrNull(quote.volumeTaken),
    },
  };
};

/** The ledger side of a priced fill: notional, fee, total, cost basis, realized PnL and the position after. */
const quoteFill = (
  state: WalletState,
  args: { symbol: string; baseAsset: string; side: OrderSide; reference: QuotedPrice; pricing: Pricing },
): FillQuote => {
  const { pricing } = args;
  const { quantity, executedPrice } = pricing;
  const reference = dec(args.reference.price);
  const notional = notional8(quantity, executedPrice);
  const fee = feeFor(notional, pricing.feeRate);
  const held = state.holdings[args.baseAsset];
  const heldQty = held?.quantity ?? ZERO;
  const heldCost = held?.cost ?? ZERO;
  // The side's ledger: a buy adds to the position at the quantity-weighted price; a sell takes its share of the
  // cost basis (the whole of it when the position is closed, so a flat position has no cost left over from rounding)
  // and leaves the average entry price as it was (a closed position has none).
  let total: Dec;
  let costBasis: Dec;
  let positionAfter: FillQuote['positionAfter'];
  if (args.side === 'buy') {
    // The quantity-weighted executed price: exact but for the final rounding, so buys at one price average to it.
    const quantityAfter = heldQty.plus(quantity);
    const avgEntry = averageEntry8(held?.avgEntry, heldQty, quantity, executedPrice, quantityAfter);
    total = notional.plus(fee);
    costBasis = notional;
    positionAfter = { quantity: quantityAfter, cost: heldCost.plus(notional), avgEntry };
  } else {
    const closes = quantity.eq(heldQty);
    total = notional.minus(fee);
    costBasis = closes ? heldCost : costShare8(heldCost, quantity, heldQty);
    positionAfter = {
      quantity: heldQty.minus(quantity),
      cost: heldCost.minus(costBasis),
      avgEntry: closes ? ZERO : (held?.avgEntry ?? ZERO),
    };
  }
  // One literal, field by field rather than spread from `pricing`: object spreads per fill were ~7 % of a market
  // order's decision (docs/benchmarks.md, "Trading", issue 23).
  return {
    symbol: args.symbol,
    baseAsset: args.baseAsset,
    side: args.side,
    reference: args.reference,
    referencePrice: reference,
    quantity,
    executedPrice,
    slippage: pricing.slippage,
    quoteVolume: pricing.quoteVolume,
    participation: pricing.participation,
    feeRate: pricing.feeRate,
    inputs: pricing.inputs,
    notional,
    fee,
    total,
    costBasis,
    realizedPnl: args.side === 'buy' ? ZERO : notional.minus(costBasis),
    positionAfter,
  };
};

const fillData = (
  q: FillQuote,
  o: {
    orderId: string;
    tradeId: string;
    sessionId: string;
    type: OrderType;
    trigger: FillTrigger;
    lockedAmount: Dec;
    /** The order's limit price (limit orders only). */
    limitPrice?: Dec;
    /** What is left of the order after the fill. */
    remaining?: Dec;
    /** The open order before the fill (pending orders): its earlier partial fills and its lock. */
    open?: OpenOrder;
    at: string;
  },
): OrderFilledData => {
  const avg = q.positionAfter.avgEntry;
  const earlier = o.open?.done;
  const executed = o.open ? o.open.quantity.minus(o.open.remaining).plus(q.quantity) : q.quantity;
  // The order's average price: its first fill's own price, else Σ price × quantity of its fills (exact) over what
  // they filled (`executedPriceText`).
  const averagePrice =
    earlier === undefined || earlier.notional.isZero()
      ? fmt(q.executedPrice)
      : executedPriceText(earlier.notional.plus(q.executedPrice.times(q.quantity)), executed);
  return {
    order_id: o.orderId,
    trade_id: o.tradeId,
    session_id: o.sessionId,
    symbol: q.symbol,
    base_asset: q.baseAsset,
    side: q.side,
    type: o.type,
    trigger: o.trigger,
    quantity: fmt(q.quantity),
    reference_price: fmt(q.referencePrice),
    reference_time: q.reference.timestamp,
    price_source: q.reference.source,
    quote_volume_24h: fmtOrNull(q.quoteVolume === null ? null : roundHalfEven8(q.quoteVolume)),
    participation_pct: fmtOrNull(q.participation),
    slippage_pct: fmt(q.slippage),
    limit_price: o.limitPrice ? fmt(o.limitPrice) : null,
    executed_price: fmt(q.executedPrice),
    notional: fmt(q.notional),
    fee_rate: q.feeRate.toFixed(),
    fee: fmt(q.fee),
    total: fmt(q.total),
    cost_basis: fmt(q.costBasis),
    realized_pnl: fmt(q.realizedPnl),
    locked_amount: fmt(o.lockedAmount),
    released_amount: fmt(q.side === 'buy' ? max(o.lockedAmount.minus(q.total), ZERO) : ZERO),
    position_after: {
      quantity: fmt(q.positionAfter.quantity),
      cost_basis: fmt(q.positionAfter.cost),
      avg_entry_price: fmt(avg),
    },
    filled_at: o.at,
    // The fill model's inputs (every field of `FillInputs`), written out: a spread in the middle of a literal is a
    // runtime copy.
    fill_model: q.inputs.fill_model,
    fill_model_version: q.inputs.fill_model_version,
    liquidity: q.inputs.liquidity,
    book_levels: q.inputs.book_levels,
    book_taken: q.inputs.book_taken,
    volume_available: q.inputs.volume_available,
    participation_cap_pct: q.inputs.participation_cap_pct,
    volume_taken: q.inputs.volume_taken,
    remaining_quantity: fmt(o.remaining ?? ZERO),
    order_after: {
      executed_quantity: fmt(executed),
      executed_price: averagePrice,
      fee: fmt(earlier ? earlier.fee.plus(q.fee) : q.fee),
      total: fmt(earlier ? earlier.total.plus(q.total) : q.total),
      realized_pnl: fmt(earlier ? earlier.realizedPnl.plus(q.realizedPnl) : q.realizedPnl),
      locked_amount: fmt(o.open ? o.open.lockedAmount.minus(o.lockedAmount) : ZERO),
    },
  };
};

// ---------------------------------------------------------------------------------------------------------
// Placing orders
// ---------------------------------------------------------------------------------------------------------

/** How {@link placeOrder} places an order that joins a list (docs/trading-rules.md, "Order lists: OCO and bracket"). */
interface PlaceOptions {
  /** The list the order joins, its role in it, and (a bracket's exit) the entry that placed it. */
  list?: {
    id: string;
    kind: OrderListKind;
    role: OrderListRole;
    parentOrderId?: string;
    clientOrderId?: string | undefined;
  };
  /** An OCO leg's lock: the list's one lock; `shared` for every leg after the first (it moves no balance). */
  lock?: { amount: Dec; shared: boolean };
  /** Legs of the same list placed before this one in the decision (step 7 counts them as open). */
  pendingLegs?: number;
  /** Run the checks and the risk chain only: emit no order event, answer the failure or the lock it would take. */
  check?: boolean;
  /** Leave the idempotency key off the event (every leg of a list but the first: the first one claims it). */
  unkeyed?: boolean;
  /** The risk chain already passed (the legs of a list are judged together, before any is placed). */
  prechecked?: boolean;
}

/** What {@link placeOrder} decided: the order's id (absent in a check), its risk failure, or the lock it takes. */
interface Placement {
  orderId?: string;
  failure?: RiskFailure;
  lock: Dec;
}

const placeOrder = (
  d: Decision,
  request: OrderRequest,
  owner: OwnerSnapshot,
  ctx: WalletContext,
  opts: PlaceOptions = {},
): Placement => {
  const at = ctx.now.toISOString();
  const symbol = normalizeSymbol(request.symbol);
  const { side, type } = request;
  const quantity = parseField(request.quantity, 'quantity');
  // A price the order type does not use is refused rather than ignored: an agent that sends a market order
  // with a price most likely means a limit order, and must not get a fill at market instead.
  refuseUnused(request.price, 'price', type, type === 'limit', 'limit');
  refuseUnused(
    request.triggerPrice,
    'trigger_price',
    type,
    type === 'stop_loss' || type === 'take_profit',
    'stop_loss and take_profit',
  );
  const price = type === 'limit' ? positivePrice(request.price, 'price', type) : null;
  const trigger =
    type === 'stop_loss' || type === 'take_profit'
      ? positivePrice(request.triggerPrice, 'trigger_price', type)
      : null;
  const timeInForce = timeInForceOf(request.timeInForce);
  const clientOrderId = clientOrderIdOf(request.clientOrderId, d.state.openOrders);
  // An IOC or FOK limit is decided now, against the current price, and never rests (docs/trading-rules.md).
  const immediateLimit = type === 'limit' && timeInForce !== 'GTC';
  const pair = ctx.pairs(symbol);
  const session = requireSession(d.state);

  // The first order of a UTC day records the day's opening equity (daily loss breaker, ARCHITECTURE §8).
  const day = utcDay(ctx.now);
  if (d.state.tradingDay?.day !== day) {
    d.emit({
      type: 'TradingDayOpened',
      data: {
        session_id: session.id,
        day,
        equity: fmt(roundHalfEven8(walletEquity(d.state, priceOf(ctx)))),
        opened_at: at,
      },
    });
  }
  const state = d.state;
  const baseAsset = pair?.baseAsset ?? symbol.replace(/USDT$/, '');
  const market = (): QuotedPrice => {
    const quoted = ctx.prices(symbol);
    if (!quoted) throw new DomainError('PRICE_NOT_AVAILABLE', `no price for ${symbol} yet`, { symbol });
    if (quoted.stale) {
      throw new DomainError(
        'PRICE_NOT_AVAILABLE',
        `the price of ${symbol} is stale: its last market data is ${quoted.stale.age_ms} ms old (limit ${quoted.stale.max_age_ms} ms)`,
        {
          symbol,
          price_age_ms: quoted.stale.age_ms,
          max_price_age_ms: quoted.stale.max_age_ms,
          last_price_at: quoted.stale.last_at ?? quoted.timestamp,
        },
      );
    }
    return quoted;
  };
  // The chain may ask for the same figures at several steps: each is computed once per decision (prices do not
  // move during a synchronous decision, so this changes nothing but the work).
  let referenceMemo: Dec | undefined;
  const reference = (): Dec =>
    (referenceMemo ??= type === 'market' ? dec(market().price) : (price ?? trigger!));
  let equityMemo: Dec | undefined;
  let markMemo: Dec | undefined;
  const holding = state.holdings[baseAsset];
  const terms: PendingTerms | null = type === 'market' ? null : { side, type, level: (price ?? trigger)! };
  let marketQuote: FillQuote | undefined;
  const quoteMarket = (): FillQuote => {
    if (marketQuote) return marketQuote;
    const reference = market();
    marketQuote = quoteFill(state, {
      symbol,
      baseAsset,
      side,
      reference,
      pricing: takerPricing(state, ctx, { symbol, side, quantity, reference }),
    });
    return marketQuote;
  };
  const lock = (): Dec => (terms ? lockFor(terms, quantity, ctx.feeRate) : ZERO);

  const failure = opts.prechecked
    ? undefined
    : runRiskChain({
        owner: { type: owner.ownerType, status: owner.status, accountStatus: owner.accountStatus },
        order: { side, type, symbol, quantity, rests: type !== 'market' && !immediateLimit },
        profile: ctx.riskProfile,
        pair,
        startingBalance: session.startingBalance,
        dayOpeningEquity: () => state.tradingDay!.openingEquity,
        equity: () => (equityMemo ??= walletEquity(state, priceOf(ctx))),
        referencePrice: reference,
        markPrice: () => {
          if (markMemo) return markMemo;
          const quoted = ctx.prices(symbol);
          markMemo = quoted ? dec(quoted.price) : reference();
          return markMemo;
        },
        availableCash: state.cash,
        exposureQuantity: () => {
          let exposure = holding?.quantity ?? ZERO;
          for (const o of Object.values(state.openOrders)) {
            if (o.symbol === symbol && o.side === 'buy') exposure = exposure.plus(o.remaining);
          }
          return exposure;
        },
        openOrders: Object.keys(state.openOrders).length + (opts.pendingLegs ?? 0),
        requirement: () => {
          if (side === 'sell') {
            const free = holding ? holding.quantity.minus(holding.locked) : ZERO;
            return { asset: baseAsset, required: quantity, available: free };
          }
          return {
            asset: 'USDT',
            required: type === 'market' ? quoteMarket().total : lock(),
            available: state.cash,
          };
        },
      });

  if (opts.check) return { ...(failure ? { failure } : {}), lock: failure ? ZERO : lock() };
  const orderId = ctx.newId();
  const listFields = opts.list
    ? {
        order_list_id: opts.list.id,
        list_role: opts.list.role,
        list_kind: opts.list.kind,
        ...(opts.list.clientOrderId ? { list_client_order_id: opts.list.clientOrderId } : {}),
        ...(opts.list.parentOrderId ? { parent_order_id: opts.list.parentOrderId } : {}),
      }
    : {};
  const keyOf = (value: string | null | undefined) => (opts.unkeyed ? null : (value ?? null));
  if (failure) {
    d.emit({
      type: 'OrderRejected',
      data: {
        order_id: orderId,
        session_id: session.id,
        symbol,
        side,
        type,
        quantity: fmt(quantity),
        price: fmtOrNull(price),
        trigger_price: fmtOrNull(trigger),
        ...(clientOrderId ? { client_order_id: clientOrderId } : {}),
        ...listFields,
        step: failure.step,
        rule: failure.rule,
        code: failure.code,
        message: failure.message,
        details: failure.details,
        idempotency_key: keyOf(request.idempotencyKey),
        request_hash: keyOf(request.requestHash),
        rejected_at: at,
      },
    });
    return { orderId, failure, lock: ZERO };
  }

  const locked = opts.lock?.amount ?? lock();
  const exits = request.list?.kind === 'bracket' ? bracketExitsOf(request.list) : undefined;
  // A limit the current price already reaches takes liquidity: priced as a taker when filled (fillPending). An IOC
  // or FOK limit needs that price now, fresh (`market()` refuses a missing or stale one; nothing is recorded).
  const now = immediateLimit ? market() : type === 'limit' ? ctx.prices(symbol) : undefined;
  const marketable = now !== undefined && isTriggered(terms!, dec(now.price));
  d.emit({
    type: 'OrderPlaced',
    data: {
      order_id: orderId,
      session_id: session.id,
      symbol,
      base_asset: baseAsset,
      side,
      type,
      quantity: fmt(quantity),
      price: fmtOrNull(price),
      trigger_price: fmtOrNull(trigger),
      marketable,
      ...(timeInForce !== 'GTC' ? { time_in_force: timeInForce } : {}),
      ...(clientOrderId ? { client_order_id: clientOrderId } : {}),
      ...listFields,
      ...(exits ? { exits } : {}),
      locked_amount: fmt(locked),
      ...(opts.lock?.shared ? { lock_shared: true } : {}),
      lock_asset: side === 'buy' ? 'USDT' : baseAsset,
      fee_rate: ctx.feeRate.toFixed(),
      idempotency_key: keyOf(request.idempotencyKey),
      request_hash: keyOf(request.requestHash),
      placed_at: at,
    },
  });
  decideAtPlacement();
  // A bracket's entry decided now (a market order, an IOC or FOK limit) places its exits in the same decision.
  if (exits && opts.list && !d.state.openOrders[orderId]) {
    activateExits(
      d,
      { orderId, sessionId: session.id, symbol, side, listId: opts.list.id, exits, executedBefore: ZERO },
      ctx,
    );
  }
  return { orderId, lock: locked };

  function decideAtPlacement(): void {
    if (immediateLimit) {
      // Decided now: a limit the price reaches takes what the book holds within it (all of it, for a FOK); one the
      // price does not reach fills nothing. What does not fill is cancelled in this same decision (fillPending).
      if (marketable) {
        fillPending(d, { orderId, price: now!.price, time: now!.timestamp, source: now!.source }, ctx);
      }
      const open = d.state.openOrders[orderId];
      if (open) cancel(d, open, timeInForce === 'FOK' ? 'fill_or_kill' : 'unfilled', at);
      return;
    }
    if (type === 'market') {
      // A market order locks nothing: what of it does not fill is cancelled with nothing to unlock.
      const cancelUnlocked = (reason: 'fill_or_kill' | 'unfilled') =>
        d.emit({
          type: 'OrderCancelled',
          data: {
            order_id: orderId,
            session_id: session.id,
            symbol,
            reason,
            unlocked_amount: fmt(ZERO),
            unlocked_asset: side === 'buy' ? 'USDT' : baseAsset,
            cancelled_at: at,
          },
        });
      const quote = quoteMarket();
      if (timeInForce === 'FOK' && quote.quantity.lt(quantity)) {
        // Fill or kill: the book cannot hold the whole order now, so none of it fills.
        cancelUnlocked('fill_or_kill');
        return;
      }
      const rest = quantity.minus(quote.quantity);
      if (quote.quantity.gt(0)) {
        d.emit({
          type: 'OrderFilled',
          data: fillData(quote, {
            orderId,
            tradeId: ctx.newId(),
            sessionId: session.id,
            type,
            trigger: 'market',
            lockedAmount: ZERO,
            remaining: rest,
            at,
          }),
        });
      }
      // What the book could not hold is not kept (a market order is immediate-or-cancel): cancelled at once.
      if (rest.gt(0)) {
        cancelUnlocked('unfilled');
      }
    }
  }
};

// ---------------------------------------------------------------------------------------------------------
// Matching: a pending order reached
// ---------------------------------------------------------------------------------------------------------

/**
 * Fills an open order the price reaches (docs/trading-rules.md, "Order types and triggers", "Fill models"):
 * - a resting limit order as a maker, at its limit, sized by the fill model from the print's volume (`realistic`:
 *   its participation share, so a large order fills over several prints; a print too small fills nothing);
 * - a triggered stop or take-profit, and a limit that was marketable when placed (never beyond its limit), as a
 *   taker through the model's book at the reached price (a gap fills at the gapped price, not the trigger);
 * - what stays open keeps the lock of its remaining quantity (`lockFor` at the order's fee rate); the fill
 *   consumes the rest of the lock, and a buy whose fill costs more than that plus the free cash (a gap) is
 *   cancelled instead, its whole lock released.
 */
const fillPending = (
  d: Decision,
  command: Extract<WalletCommand, { type: 'FillOrder' }>['data'],
  ctx: WalletContext,
): void => {
  const order = d.state.openOrders[command.orderId];
  if (!order) return; // already filled or cancelled: nothing to do (idempotent)
  const price = parseField(command.price, 'price');
  const level = (order.type === 'limit' ? order.price : order.triggerPrice)!;
  if (!isTriggered({ side: order.side, type: order.type, level }, price)) return;
  const at = ctx.now.toISOString();
  const reference: QuotedPrice = { price: fmt(price), timestamp: command.time, source: command.source };
  const volume = command.volume ? parseDecimal(command.volume) : undefined;
  const pricing =
    order.type === 'limit' && !order.marketable
      ? makerPricing(d.state, ctx, order, {
          time: command.time,
          volume: volume?.gt(0) ? volume : ZERO,
        })
      : takerPricing(d.state, ctx, {
          symbol: order.symbol,
          side: order.side,
          quantity: order.remaining,
          reference,
          limit: order.type === 'limit' ? order.price! : undefined,
        });
  // An IOC or FOK is decided on this one price (a triggered stop's, or an IOC/FOK limit's at placement): FOK fills
  // whole or not at all, IOC fills what the book holds; what does not fill is cancelled, never left open.
  if (order.timeInForce === 'FOK' && pricing.quantity.lt(order.remaining)) {
    cancel(d, order, 'fill_or_kill', at);
    return;
  }
  if (pricing.quantity.lte(0)) {
    if (order.timeInForce === 'IOC') cancel(d, order, 'unfilled', at);
    return; // nothing on this print: the order waits for the next
  }
  const quote = quoteFill(d.state, {
    symbol: order.symbol,
    baseAsset: order.baseAsset,
    side: order.side,
    reference,
    pricing,
  });
  const remaining = order.remaining.minus(quote.quantity);
  const keep = remaining.gt(0)
    ? lockFor({ side: order.side, type: order.type, level }, remaining, order.feeRate)
    : ZERO;
  const consumed = order.lockedAmount.minus(keep);
  if (order.side === 'buy' && quote.total.gt(consumed.plus(d.state.cash))) {
    // A price gap made the fill dearer than the lock plus the free cash (ARCHITECTURE §8): cancel, release.
    cancel(d, order, 'insufficient_balance', at, {
      trigger_price_seen: fmt(price),
      required: fmt(quote.total),
    });
    return;
  }
  d.emit({
    type: 'OrderFilled',
    data: fillData(quote, {
      orderId: order.orderId,
      tradeId: ctx.newId(),
      sessionId: order.sessionId,
      type: order.type,
      trigger: order.type,
      lockedAmount: consumed,
      ...(order.price ? { limitPrice: order.price } : {}),
      remaining,
      open: order,
      at,
    }),
  });
  // One leg of an OCO starting to fill cancels the other at once (Binance's rule): its share of the lock went with
  // the fill, so it releases nothing.
  for (const sibling of openSiblings(d.state, order)) cancel(d, sibling, 'linked_fill', at, {}, ZERO);
  const rest = d.state.openOrders[order.orderId];
  if (rest && order.timeInForce !== 'GTC') cancel(d, rest, 'unfilled', at);
};

// ---------------------------------------------------------------------------------------------------------
// The decider
// ---------------------------------------------------------------------------------------------------------

/**
 * Decides a wallet command (ARCHITECTURE §8, the trading rules; `docs/trading-rules.md`):
 * - every command that names the owner first opens the wallet (`WalletOpened`, `SessionStarted`) or, when the
 *   owner's session changed (agent reset), resets to it;
 * - `PlaceOrder`: opens the UTC trading day if needed, runs the 8-step risk chain (a failure is recorded as
 *   `OrderRejected`, the command layer then answers with its error), then places the order with its lock and,
 *   for a market order, fills it at once; a market order without a price is refused (`PRICE_NOT_AVAILABLE`,
 *   nothing recorded); bad decimals and a missing limit/trigger price are `VALIDATION_ERROR` (nothing recorded);
 * - `FillOrder`: fills an open order the price reaches (a resting limit at its limit; stops, and a limit that was
 *   marketable when placed, at the price with slippage, the latter never beyond its limit), or
 *   cancels a buy whose gap-priced fill exceeds lock + cash; anything else decides nothing;
 * - `CancelOrder`: an open order → `OrderCancelled`; not open → `ORDER_NOT_FOUND` (the command layer tells a
 *   finished order, `ORDER_NOT_CANCELLABLE`, from an unknown one with the read model);
 * - `CancelAllOrders`: every open order, in one decision;
 * - `ResetWallet`: cancels, closes at market, records the session's result, starts a new session.
 */
export const decideWallet = (command: WalletCommand, state: WalletState, ctx: WalletContext): WalletEvent[] =>
  decideWalletWithState(command, state, ctx).events;

/**
 * {@link decideWallet}, also returning the state the new events lead to (what folding them into `state` with
 * `evolveWallet` gives: the decision folds each event as it emits it), so the command handler need not fold
 * them a second time.
 */
export const decideWalletWithState = (
  command: WalletCommand,
  state: WalletState,
  ctx: WalletContext,
): { events: WalletEvent[]; state: WalletState } => {
  const d = new Decision(state);
  switch (command.type) {
    case 'OpenWallet':
      prelude(d, command.data.owner, ctx);
      break;
    case 'PlaceOrder': {
      // The same key and body again within the window: nothing new to decide (the caller replays the claim).
      const key = command.data.order.idempotencyKey;
      if (key && checkClaim(ctx.idempotencyClaim, command.data.order.requestHash, ctx.now.getTime())) {
        break;
      }
      prelude(d, command.data.owner, ctx);
      const kind = command.data.order.list?.kind;
      if (kind === 'oco') placeOco(d, command.data.order, command.data.owner, ctx);
      else if (kind === 'bracket') placeBracket(d, command.data.order, command.data.owner, ctx);
      else placeOrder(d, command.data.order, command.data.owner, ctx);
      break;
    }
    case 'FillOrder': {
      const before = state.openOrders[command.data.orderId];
      fillPending(d, command.data, ctx);
      // A bracket's entry the venue finished (filled, or its rest cancelled) places its exits in the same decision.
      if (before?.exits && !d.state.openOrders[before.orderId]) activateExits(d, before, ctx);
      break;
    }
    case 'CancelOrder': {
      const order = state.openOrders[command.data.orderId];
      if (!order) {
        throw new DomainError('ORDER_NOT_FOUND', 'no open order with this id', {
          order_id: command.data.orderId,
        });
      }
      // An OCO is cancelled whole: cancelling either leg cancels the other (the lock is released once).
      const at = ctx.now.toISOString();
      cancel(d, order, 'user', at);
      for (const sibling of openSiblings(d.state, order)) cancel(d, sibling, 'linked_cancel', at);
      break;
    }
    case 'CancelAllOrders':
      for (const order of Object.values(state.openOrders))
        cancel(d, d.state.openOrders[order.orderId]!, 'cancel_all', ctx.now.toISOString());
      break;
    case 'SetFillModel': {
      prelude(d, command.data.owner, ctx);
      const { fillModel, participationPct } = command.data;
      if (!(FILL_MODELS as readonly string[]).includes(fillModel)) {
        throw new DomainError('VALIDATION_ERROR', `fill_model must be one of ${FILL_MODELS.join(', ')}`, {
          field: 'fill_model',
        });
      }
      const share = participationPct ?? DEFAULT_PARTICIPATION_PCT;
      if (!Number.isInteger(share) || share < 1 || share > 100) {
        throw new DomainError('VALIDATION_ERROR', 'participation_pct must be an integer from 1 to 100', {
          field: 'participation_pct',
          min: 1,
          max: 100,
          value: share,
        });
      }
      if (d.state.fillModel !== fillModel || d.state.participationPct !== share) {
        d.emit({
          type: 'FillModelSet',
          data: {
            fill_model: fillModel as FillModelName,
            participation_pct: share,
            set_at: ctx.now.toISOString(),
          },
        });
      }
      break;
    }
    case 'ResetWallet': {
      prelude(d, command.data.owner, ctx);
      const starting =
        command.data.startingBalance !== undefined
          ? parseField(command.data.startingBalance, 'new_starting_balance')
          : dec(command.data.owner.startingBalance);
      if (starting.lte(0)) {
        throw new DomainError('VALIDATION_ERROR', 'new_starting_balance must be greater than 0', {
          field: 'new_starting_balance',
        });
      }
      reset(d, ctx, {
        reason: 'reset',
        sessionId: ctx.newId(),
        startingBalance: starting,
        ownerSessionId: d.state.session!.ownerSessionId,
      });
      break;
    }
    default: {
      // Exhaustive (the Emmett deciders' pattern): a command type added to WalletCommand without a case here
      // fails to compile; one that reaches here at run time (an unchecked cast) is refused, not ignored.
      const unknown: never = command;
      throw new DomainError(
        'INTERNAL_ERROR',
        `unknown wallet command: ${(unknown as { type: string }).type}`,
      );
    }
  }
  return { events: d.events, state: d.state };
};

/** The wallet decider (`wallet-{owner_id}` streams). */
export const walletDecider: Decider<WalletState, WalletCommand, WalletEvent, WalletContext> & {
  decideWithState: typeof decideWalletWithState;
} = {
  initialState: initialWalletState,
  evolve: evolveWallet,
  decide: decideWallet,
  decideWithState: decideWalletWithState,
};

// ---------------------------------------------------------------------------------------------------------
// Order lists: OCO and bracket (docs/trading-rules.md, "Order lists: OCO and bracket")
// ---------------------------------------------------------------------------------------------------------

/** The level that decides a take-profit (its limit price or trigger) and a stop-loss (its trigger), parsed. */
const levelsOf = (
  takeProfit: { type: string; price?: string | null; triggerPrice?: string | null } | null | undefined,
  stopLoss: { triggerPrice: string } | null | undefined,
  prefix: string,
) => {
  if (takeProfit && takeProfit.type !== 'limit' && takeProfit.type !== 'take_profit') {
    throw new DomainError('VALIDATION_ERROR', `${prefix}take_profit.type must be limit or take_profit`, {
      field: `${prefix}take_profit.type`,
    });
  }
  const tp = takeProfit
    ? takeProfit.type === 'limit'
      ? positivePrice(takeProfit.price, `${prefix}take_profit.price`, 'limit')
      : positivePrice(takeProfit.triggerPrice, `${prefix}take_profit.trigger_price`, 'take_profit')
    : undefined;
  if (takeProfit) {
    const unused = takeProfit.type === 'limit' ? takeProfit.triggerPrice : takeProfit.price;
    const field = takeProfit.type === 'limit' ? 'trigger_price' : 'price';
    refuseUnused(
      unused,
      `${prefix}take_profit.${field}`,
      takeProfit.type as OrderType,
      false,
      field === 'price' ? 'limit' : 'take_profit',
    );
  }
  const sl = stopLoss
    ? positivePrice(stopLoss.triggerPrice, `${prefix}stop_loss.trigger_price`, 'stop_loss')
    : undefined;
  return { tp, sl };
};

/**
 * The exits' levels must be on the right sides: exits that sell take profit above and stop the loss below (a
 * sell OCO: take-profit level > stop trigger); exits that buy the mirror. `VALIDATION_ERROR` otherwise.
 */
const checkSides = (exitSide: OrderSide, tp: Dec | undefined, sl: Dec | undefined, prefix: string): void => {
  if (!tp || !sl) return;
  const right = exitSide === 'sell' ? tp.gt(sl) : tp.lt(sl);
  if (!right) {
    throw new DomainError(
      'VALIDATION_ERROR',
      exitSide === 'sell'
        ? `a sell take-profit must be above its stop-loss (${prefix}take_profit above ${prefix}stop_loss.trigger_price)`
        : `a buy take-profit must be below its stop-loss (${prefix}take_profit below ${prefix}stop_loss.trigger_price)`,
      { field: `${prefix}stop_loss.trigger_price` },
    );
  }
};

/** A bracket's exits as its entry records them (`OrderPlaced.exits`), from the request (already validated). */
const bracketExitsOf = (list: Extract<OrderListRequest, { kind: 'bracket' }>): BracketExits => {
  const { tp, sl } = levelsOf(list.takeProfit, list.stopLoss, 'bracket.');
  return {
    ...(list.takeProfit && tp
      ? {
          take_profit: {
            type: list.takeProfit.type,
            price: list.takeProfit.type === 'limit' ? fmt(tp) : null,
            trigger_price: list.takeProfit.type === 'take_profit' ? fmt(tp) : null,
          },
        }
      : {}),
    ...(sl ? { stop_loss: { trigger_price: fmt(sl) } } : {}),
  };
};

/**
 * Places the legs of one list together: each through the risk chain (judged on the wallet before any of them is
 * placed, step 7 counting the legs before it), then, if all pass, all of them; else the failing leg's rejection
 * alone (nothing is placed). Two or more legs share one lock: the largest leg's (a sell's is the base quantity, so
 * a sell OCO locks its quantity once), recorded on every leg, taken by the first. The first leg claims the
 * idempotency key. `activation`: a bracket's exits placed by their entry's fill, judged only by the balance they
 * lock (they close what the entry opened; the rest of the chain judged the entry).
 */
const placeLinked = (
  d: Decision,
  legs: { request: OrderRequest; role: OrderListRole }[],
  owner: OwnerSnapshot,
  ctx: WalletContext,
  list: { id: string; kind: OrderListKind; parentOrderId?: string; clientOrderId?: string | undefined },
  activation = false,
): void => {
  let lock = ZERO;
  for (const [i, leg] of legs.entries()) {
    const checked = placeOrder(d, leg.request, owner, ctx, {
      check: true,
      pendingLegs: i,
      prechecked: activation,
    });
    if (checked.failure) {
      placeOrder(d, leg.request, owner, ctx, { pendingLegs: i, list: { ...list, role: leg.role } });
      return;
    }
    lock = max(lock, checked.lock);
  }
  const first = legs[0]!.request;
  if (activation && first.side === 'buy' && d.state.cash.lt(lock)) {
    // The exits of a sell entry buy back: they need the cash their lock holds.
    const failure: RiskFailure = {
      step: 8,
      rule: 'balance',
      code: 'INSUFFICIENT_BALANCE',
      message: `risk rule 8 (balance): the exits need ${fmt(lock)} USDT free, ${fmt(d.state.cash)} is`,
      details: { rule: 'balance', step: 8, asset: 'USDT', required: fmt(lock), available: fmt(d.state.cash) },
    };
    rejectLeg(d, first, failure, ctx, { ...list, role: legs[0]!.role });
    return;
  }
  legs.forEach((leg, i) => {
    placeOrder(d, leg.request, owner, ctx, {
      list: { ...list, role: leg.role },
      prechecked: true,
      unkeyed: i > 0,
      ...(legs.length > 1 ? { lock: { amount: lock, shared: i > 0 } } : {}),
    });
  });
};

/** Records a list leg's rejection decided outside the chain (a bracket's exits short of cash when activated). */
const rejectLeg = (
  d: Decision,
  request: OrderRequest,
  failure: RiskFailure,
  ctx: WalletContext,
  list: {
    id: string;
    kind: OrderListKind;
    role: OrderListRole;
    parentOrderId?: string;
    clientOrderId?: string | undefined;
  },
): void => {
  d.emit({
    type: 'OrderRejected',
    data: {
      order_id: ctx.newId(),
      session_id: requireSession(d.state).id,
      symbol: normalizeSymbol(request.symbol),
      side: request.side,
      type: request.type,
      quantity: request.quantity,
      price: request.price ?? null,
      trigger_price: request.triggerPrice ?? null,
      order_list_id: list.id,
      list_role: list.role,
      list_kind: list.kind,
      ...(list.clientOrderId ? { list_client_order_id: list.clientOrderId } : {}),
      ...(list.parentOrderId ? { parent_order_id: list.parentOrderId } : {}),
      step: failure.step,
      rule: failure.rule,
      code: failure.code,
      message: failure.message,
      details: failure.details,
      idempotency_key: null,
      request_hash: null,
      rejected_at: ctx.now.toISOString(),
    },
  });
};

/**
 * `PlaceOrder` of an OCO (`order.list.kind === 'oco'`): the order is the take-profit leg (a `limit` or a
 * `take_profit`, GTC), `list.stopLoss` the stop-loss leg, same symbol, side and quantity; the take-profit level is
 * above the stop for a sell, below it for a buy. Both legs pass the risk chain and share one lock.
 */
const placeOco = (d: Decision, request: OrderRequest, owner: OwnerSnapshot, ctx: WalletContext): void => {
  const list = request.list as Extract<OrderListRequest, { kind: 'oco' }>;
  if (request.type !== 'limit' && request.type !== 'take_profit') {
    throw new DomainError('VALIDATION_ERROR', "an OCO's take-profit leg is a limit or a take_profit order", {
      field: 'take_profit.type',
    });
  }
  if (timeInForceOf(request.timeInForce) !== 'GTC') {
    throw new DomainError('VALIDATION_ERROR', 'the legs of an OCO are GTC: leave time_in_force out', {
      field: 'time_in_force',
    });
  }
  if (!list.stopLoss) {
    throw new DomainError('VALIDATION_ERROR', 'stop_loss.trigger_price is required for an OCO', {
      field: 'stop_loss.trigger_price',
    });
  }
  const takeProfit = {
    type: request.type,
    price: request.price ?? null,
    triggerPrice: request.triggerPrice ?? null,
  };
  const { tp, sl } = levelsOf(takeProfit, list.stopLoss, '');
  checkSides(request.side, tp, sl, '');
  const listClientOrderId = listClientOrderIdOf(list.clientOrderId);
  stopLegClientOrderId(list.stopLoss.clientOrderId, request.clientOrderId, d);
  const common = {
    symbol: request.symbol,
    side: request.side,
    quantity: request.quantity,
    idempotencyKey: request.idempotencyKey ?? null,
    requestHash: request.requestHash ?? null,
  };
  placeLinked(
    d,
    [
      // Each leg takes its own client order id: the order's for the take-profit, the stop's own for the stop.
      {
        request: { ...common, ...takeProfit, clientOrderId: request.clientOrderId ?? null },
        role: 'take_profit',
      },
      {
        request: {
          ...common,
          type: 'stop_loss',
          triggerPrice: list.stopLoss.triggerPrice,
          clientOrderId: list.stopLoss.clientOrderId ?? null,
        },
        role: 'stop_loss',
      },
    ],
    owner,
    ctx,
    { id: ctx.newId(), kind: 'oco', clientOrderId: listClientOrderId },
  );
};

/**
 * Checks an OCO stop leg's client order id before either leg is placed, so its errors name the leg's field
 * (`stop_loss.client_order_id`): the pattern and uniqueness among open orders of any client order id
 * ({@link clientOrderIdOf}), and different from the take-profit leg's (both legs open at once: one id would name
 * two open orders).
 */
const stopLegClientOrderId = (
  stopId: string | null | undefined,
  takeProfitId: string | null | undefined,
  d: Decision,
): void => {
  const field = 'stop_loss.client_order_id';
  try {
    clientOrderIdOf(stopId, d.state.openOrders);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    throw new DomainError(error.code, error.message.replace('client_order_id', field), {
      ...error.details,
      field,
    });
  }
  if (stopId && stopId === takeProfitId) {
    throw new DomainError('VALIDATION_ERROR', 'the legs of an OCO need different client order ids', {
      field,
    });
  }
};

/**
 * `PlaceOrder` of a bracket (`order.list.kind === 'bracket'`): the order is the entry (a `market` or `limit`
 * order) and goes through the risk chain as any order; its exits (at least one) are validated now — their sides,
 * and for a limit entry, the take-profit beyond and the stop short of the entry's price — and placed once the entry
 * is done ({@link activateExits}).
 */
const placeBracket = (d: Decision, request: OrderRequest, owner: OwnerSnapshot, ctx: WalletContext): void => {
  const list = request.list as Extract<OrderListRequest, { kind: 'bracket' }>;
  if (request.type !== 'market' && request.type !== 'limit') {
    throw new DomainError('VALIDATION_ERROR', "a bracket's entry is a market or a limit order", {
      field: 'type',
    });
  }
  if (!list.takeProfit && !list.stopLoss) {
    throw new DomainError(
      'VALIDATION_ERROR',
      'a bracket needs bracket.take_profit, bracket.stop_loss or both',
      {
        field: 'bracket',
      },
    );
  }
  const { tp, sl } = levelsOf(list.takeProfit, list.stopLoss, 'bracket.');
  const exitSide: OrderSide = request.side === 'buy' ? 'sell' : 'buy';
  checkSides(exitSide, tp, sl, 'bracket.');
  const entry = request.type === 'limit' ? parseDecimal(request.price ?? '') : undefined;
  if (entry) checkSides(exitSide, tp, entry, 'bracket.');
  if (entry) checkSides(exitSide, entry, sl, 'bracket.');
  placeOrder(d, request, owner, ctx, { list: { id: ctx.newId(), kind: 'bracket', role: 'entry' } });
};

/** A bracket's entry as {@link activateExits} needs it. */
interface BracketEntry {
  orderId: string;
  sessionId: string;
  symbol: string;
  side: OrderSide;
  listId: string;
  exits: BracketExits;
  /** What the entry had executed before this decision (base quantity). */
  executedBefore: Dec;
}

/**
 * Places a bracket's exits once its entry is done (filled, or its rest cancelled by the venue: a market order's or
 * an IOC's unfilled part, a gap): the entry's other side, sized to what the entry executed in all; both exits form
 * an OCO (one lock, one fill cancels the other). An entry that executed nothing places nothing. A client's cancel of
 * the entry ends the bracket without exits (docs/trading-rules.md, "Order lists: OCO and bracket").
 */
const activateExits = (d: Decision, entry: BracketEntry | OpenOrder, ctx: WalletContext): void => {
  const e: BracketEntry =
    'exits' in entry && 'remaining' in entry
      ? {
          orderId: entry.orderId,
          sessionId: entry.sessionId,
          symbol: entry.symbol,
          side: entry.side,
          listId: entry.list!.id,
          exits: entry.exits!,
          executedBefore: entry.quantity.minus(entry.remaining),
        }
      : (entry as BracketEntry);
  let executed = e.executedBefore;
  for (const event of d.events) {
    if (event.type === 'OrderFilled' && event.data.order_id === e.orderId)
      executed = executed.plus(event.data.quantity);
  }
  if (executed.lte(0)) return;
  const side: OrderSide = e.side === 'buy' ? 'sell' : 'buy';
  const common = { symbol: e.symbol, side, quantity: fmt(executed) };
  const legs: { request: OrderRequest; role: OrderListRole }[] = [];
  const tp = e.exits.take_profit;
  if (tp) {
    legs.push({
      request: { ...common, type: tp.type, price: tp.price, triggerPrice: tp.trigger_price },
      role: 'take_profit',
    });
  }
  if (e.exits.stop_loss) {
    legs.push({
      request: { ...common, type: 'stop_loss', triggerPrice: e.exits.stop_loss.trigger_price },
      role: 'stop_loss',
    });
  }
  const state = d.state;
  const session = requireSession(state);
  // The entry's owner placed the bracket; its exits only close what the entry opened (no owner check again).
  const owner: OwnerSnapshot = {
    ownerId: state.ownerId ?? '',
    ownerType: state.ownerType ?? 'account',
    accountId: state.accountId ?? '',
    status: 'active',
    accountStatus: 'active',
    sessionId: session.ownerSessionId,
    startingBalance: fmt(session.startingBalance),
  };
  placeLinked(d, legs, owner, ctx, { id: e.listId, kind: 'bracket', parentOrderId: e.orderId }, true);
};
