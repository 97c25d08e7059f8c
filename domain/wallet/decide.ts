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
import { runRiskChain } from '../trading/risk';
import { clientOrderIdOf } from './client-order-id';
import type { OrderRequest, OwnerSnapshot, QuotedPrice, WalletCommand, WalletContext } from './commands';
import type { CancelReason, FillTrigger, OrderFilledData, SessionReason, WalletEvent } from './events';
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
        participation_pct: DEFAULT_PARTICIPATION_PCT,
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
    cancel(d, order, next.reason === 'reset' ? 'reset' : 'owner_reset', at);
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

const cancel = (d: Decision, order: OpenOrder, reason: CancelReason, at: string, extra = {}): void => {
  d.emit({
    type: 'OrderCancelled',
    data: {
      order_id: order.orderId,
      session_id: order.sessionId,
      symbol: order.symbol,
      reason,
      unlocked_amount: fmt(order.lockedAmount),
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
  const notional = roundHalfEven8(quantity.times(executedPrice));
  const fee = feeFor(notional, pricing.feeRate);
  const held = state.holdings[args.baseAsset];
  const heldQty = held?.quantity ?? ZERO;
  const heldCost = held?.cost ?? ZERO;
  const common = {
    symbol: args.symbol,
    baseAsset: args.baseAsset,
    side: args.side,
    reference: args.reference,
    referencePrice: reference,
    ...pricing,
    notional,
    fee,
  };
  if (args.side === 'buy') {
    // The quantity-weighted executed price: exact but for the final rounding, so buys at one price average to it.
    const quantityAfter = heldQty.plus(quantity);
    const avgEntry = roundHalfEven8(
      (held?.avgEntry ?? ZERO).times(heldQty).plus(quantity.times(executedPrice)).div(quantityAfter),
    );
    return {
      ...common,
      total: notional.plus(fee),
      costBasis: notional,
      realizedPnl: ZERO,
      positionAfter: { quantity: quantityAfter, cost: heldCost.plus(notional), avgEntry },
    };
  }
  // The sold share of the cost basis; the whole of it when the position is closed, so a flat position has
  // no cost left over from rounding.
  const costBasis = quantity.eq(heldQty) ? heldCost : roundHalfEven8(heldCost.times(quantity).div(heldQty));
  return {
    ...common,
    total: notional.minus(fee),
    costBasis,
    realizedPnl: notional.minus(costBasis),
    positionAfter: {
      quantity: heldQty.minus(quantity),
      cost: heldCost.minus(costBasis),
      // A sell does not move the average entry price; a closed position has none.
      avgEntry: quantity.eq(heldQty) ? ZERO : (held?.avgEntry ?? ZERO),
    },
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
  const notional = earlier ? earlier.notional.plus(q.notional) : q.notional;
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
    ...q.inputs,
    remaining_quantity: fmt(o.remaining ?? ZERO),
    order_after: {
      executed_quantity: fmt(executed),
      executed_price: fmt(executed.isZero() ? ZERO : roundHalfEven8(notional.div(executed))),
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

const placeOrder = (d: Decision, request: OrderRequest, owner: OwnerSnapshot, ctx: WalletContext): void => {
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

  const failure = runRiskChain({
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
    openOrders: Object.keys(state.openOrders).length,
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

  const orderId = ctx.newId();
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
        step: failure.step,
        rule: failure.rule,
        code: failure.code,
        message: failure.message,
        details: failure.details,
        idempotency_key: request.idempotencyKey ?? null,
        request_hash: request.requestHash ?? null,
        rejected_at: at,
      },
    });
    return;
  }

  const locked = lock();
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
      locked_amount: fmt(locked),
      lock_asset: side === 'buy' ? 'USDT' : baseAsset,
      fee_rate: ctx.feeRate.toFixed(),
      idempotency_key: request.idempotencyKey ?? null,
      request_hash: request.requestHash ?? null,
      placed_at: at,
    },
  });
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
    const quote = quoteMarket();
    if (timeInForce === 'FOK' && quote.quantity.lt(quantity)) {
      // Fill or kill: the book cannot hold the whole order now, so none of it fills.
      d.emit({
        type: 'OrderCancelled',
        data: {
          order_id: orderId,
          session_id: session.id,
          symbol,
          reason: 'fill_or_kill',
          unlocked_amount: fmt(ZERO),
          unlocked_asset: side === 'buy' ? 'USDT' : baseAsset,
          cancelled_at: at,
        },
      });
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
      d.emit({
        type: 'OrderCancelled',
        data: {
          order_id: orderId,
          session_id: session.id,
          symbol,
          reason: 'unfilled',
          unlocked_amount: fmt(ZERO),
          unlocked_asset: side === 'buy' ? 'USDT' : baseAsset,
          cancelled_at: at,
        },
      });
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
      placeOrder(d, command.data.order, command.data.owner, ctx);
      break;
    }
    case 'FillOrder':
      fillPending(d, command.data, ctx);
      break;
    case 'CancelOrder': {
      const order = state.openOrders[command.data.orderId];
      if (!order) {
        throw new DomainError('ORDER_NOT_FOUND', 'no open order with this id', {
          order_id: command.data.orderId,
        });
      }
      cancel(d, order, 'user', ctx.now.toISOString());
      break;
    }
    case 'CancelAllOrders':
      for (const order of Object.values(state.openOrders))
        cancel(d, order, 'cancel_all', ctx.now.toISOString());
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
