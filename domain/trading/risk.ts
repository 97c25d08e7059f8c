import { DomainError, type ErrorCode } from '../shared/errors';
import type { RiskProfile } from '../shared/risk-profile';
import { type Dec, dec, fmt, roundDown8, roundHalfEven8, roundUp8 } from './decimal';
import type { OrderSide, OrderType } from './orders';
import { checkQuantity, type PairFilters } from './quantity';

/** The eight rules of the risk validation chain, in order (ARCHITECTURE §8; spec "Limits": eight steps). */
export type RiskRule =
  | 'account_active'
  | 'daily_loss_limit'
  | 'symbol_and_quantity'
  | 'min_notional'
  | 'max_order_size'
  | 'position_size_limit'
  | 'max_open_orders'
  | 'balance';

/** One step of the chain: its number, rule name and the error code a failure answers with. */
export interface RiskStep {
  step: number;
  rule: RiskRule;
  /** The code of a failure (step 1 may also answer `PERMISSION_DENIED`, step 3 `INVALID_QUANTITY`). */
  code: ErrorCode;
  title: string;
}

/** The chain (first failure wins). */
export const RISK_CHAIN: readonly RiskStep[] = [
  { step: 1, rule: 'account_active', code: 'ACCOUNT_SUSPENDED', title: 'account or agent active' },
  { step: 2, rule: 'daily_loss_limit', code: 'DAILY_LOSS_LIMIT', title: 'daily loss circuit breaker' },
  { step: 3, rule: 'symbol_and_quantity', code: 'INVALID_SYMBOL', title: 'symbol and quantity valid' },
  { step: 4, rule: 'min_notional', code: 'ORDER_REJECTED', title: 'minimum notional value' },
  { step: 5, rule: 'max_order_size', code: 'ORDER_REJECTED', title: 'maximum order size' },
  { step: 6, rule: 'position_size_limit', code: 'POSITION_LIMIT_EXCEEDED', title: 'position size limit' },
  { step: 7, rule: 'max_open_orders', code: 'ORDER_REJECTED', title: 'maximum open orders' },
  { step: 8, rule: 'balance', code: 'INSUFFICIENT_BALANCE', title: 'balance check' },
];

/** A failed step: what the rejection records and the error answers (`details.rule`, `details.step`). */
export interface RiskFailure {
  step: number;
  rule: RiskRule;
  code: ErrorCode;
  /** Names the rule, then says why. */
  message: string;
  details: Record<string, unknown>;
}

type Status = 'active' | 'suspended' | 'archived';

/**
 * What the chain reads. Values that cost something (prices, equity) are functions, evaluated only when the
 * chain reaches the step that needs them: an order refused at step 1 never asks for a price. A function may
 * throw a `DomainError` (`PRICE_NOT_AVAILABLE`): the order is then not decided at all.
 */
export interface RiskInput {
  owner: { type: 'account' | 'agent'; status: Status; accountStatus: Status };
  /** `rests`: false for an order that can never stay open (market, IOC, FOK limits): step 7 does not count it. */
  order: { side: OrderSide; type: OrderType; symbol: string; quantity: Dec; rests?: boolean };
  profile: RiskProfile;
  /** The pair and its filters; undefined when unknown. */
  pair: PairFilters | undefined;
  /** Starting balance of the wallet's session (base of the daily loss limit). */
  startingBalance: Dec;
  /** Equity at the opening of the current UTC trading day (`TradingDayOpened`). */
  dayOpeningEquity: () => Dec;
  /** Current equity: cash + locked cash + Σ quantity × current price. */
  equity: () => Dec;
  /** Price of the order's notional: current price (market), limit price (limit), trigger price (stops). */
  referencePrice: () => Dec;
  /** Price the position is valued at for the position limit (current price, else the reference price). */
  markPrice: () => Dec;
  /** Free USDT. */
  availableCash: Dec;
  /** Base quantity already held plus open buy orders of this symbol (what the order adds to). */
  exposureQuantity: () => Dec;
  /** Open (pending) orders now. */
  openOrders: number;
  /** What the order needs free (USDT for buys incl. fee and, for market buys, slippage; base for sells). */
  requirement: () => { asset: string; required: Dec; available: Dec };
}

const fail = (
  rule: RiskRule,
  reason: string,
  details: Record<string, unknown>,
  code?: ErrorCode,
): RiskFailure => {
  const step = RISK_CHAIN.find((s) => s.rule === rule)!;
  return {
    step: step.step,
    rule,
    code: code ?? step.code,
    message: `risk rule ${step.step} (${rule}): ${reason}`,
    details: { rule, step: step.step, ...details },
  };
};

/**
 * `percent` / 100 per percentage seen: the risk profile's are integers 1–100 (`RISK_PROFILE_BOUNDS`, `domain/shared/risk-profile.ts`); kept for the first
 * {@link PERCENT_FACTORS} values, so the memo stays bounded whatever a caller passes.
 */
const PERCENT_FACTORS = 128;
const percentFactors = new Map<number, Dec>();

/**
 * `percent` % of `value`, exact: one multiplication by the memoised `percent / 100` (a moved point, exact), the same
 * value as `value × percent` shifted two places. The number `percent` is not converted to a decimal on every order
 * (three rules of the chain ask; ~2 kB allocated per market order, docs/benchmarks.md, "Trading", issue 23).
 */
const pct = (value: Dec, percent: number): Dec => {
  let factor = percentFactors.get(percent);
  if (factor === undefined) {
    factor = dec(percent).shiftedBy(-2);
    if (percentFactors.size < PERCENT_FACTORS) percentFactors.set(percent, factor);
  }
  return value.times(factor);
};
/** Exact, for messages. */
const s = (v: Dec) => v.toFixed();
/**
 * For `details`, which clients parse: decimal strings with 8 places (spec "Conventions"). A figure is rounded
 * half to even; a limit is rounded down and a requirement up, so the shown figures never look satisfiable when
 * the exact ones are not.
 */
const d8 = (v: Dec) => fmt(roundHalfEven8(v));
const limit8 = (v: Dec) => fmt(roundDown8(v));
const needed8 = (v: Dec) => fmt(roundUp8(v));

/** Each rule as a check; undefined means passed. */
/**
 * Step 4 of the chain (ARCHITECTURE §8, spec "Limits": minimum notional value): the order's value at the price
 * it is judged at (`quantity × referencePrice`, USDT) must reach the pair's `min_notional`. Returns why not, or
 * undefined. Also what clients check before sending (the dashboard's order ticket), so both say the same.
 */
export const checkNotional = (
  quantity: Dec,
  referencePrice: Dec,
  pair: Pick<PairFilters, 'symbol' | 'minNotional'>,
): { message: string; notional: string; min_notional: string } | undefined => {
  const notional = quantity.times(referencePrice);
  if (!notional.lt(pair.minNotional)) return undefined;
  return {
    message: `order value ${s(notional)} USDT is below the minimum ${s(dec(pair.minNotional))} USDT of ${pair.symbol}`,
    notional: d8(notional),
    min_notional: pair.minNotional,
  };
};

/**
 * Rule 1 of the chain (`account_active`) on its own: the owner's account must be active (`ACCOUNT_SUSPENDED`), and
 * the owner too — an archived agent is `PERMISSION_DENIED` with `details.reason` `agent_archived` (spec "States and
 * transitions" → Agent: its key stops working for new trading requests). Also what a sandbox asks before a new
 * trading request or a step of an agent's backtest session or a historical battle's order (commands/backtest.ts,
 * commands/battle.ts), so every door answers an archived agent alike. Undefined when both are active.
 */
export const ownerStatusFailure = (owner: RiskInput['owner']): RiskFailure | undefined => {
  if (owner.accountStatus !== 'active') {
    return fail('account_active', `the account is ${owner.accountStatus}`, { status: owner.accountStatus });
  }
  if (owner.status !== 'active') {
    return fail(
      'account_active',
      `the ${owner.type} is ${owner.status}`,
      { status: owner.status, reason: `${owner.type}_${owner.status}` },
      owner.type === 'agent' ? 'PERMISSION_DENIED' : 'ACCOUNT_SUSPENDED',
    );
  }
  return undefined;
};

/**
 * {@link ownerStatusFailure} as the `DomainError` a refused request throws (its code, message and details, and
 * `details` added: what the request acted on); undefined when the owner may trade.
 */
export const ownerStatusError = (
  owner: RiskInput['owner'],
  details: Record<string, unknown>,
): DomainError | undefined => {
  const failure = ownerStatusFailure(owner);
  return failure && new DomainError(failure.code, failure.message, { ...failure.details, ...details });
};

const RULES: Record<RiskRule, (input: RiskInput) => RiskFailure | undefined> = {
  account_active: ({ owner }) => ownerStatusFailure(owner),
  daily_loss_limit(input) {
    const opening = input.dayOpeningEquity();
    const equity = input.equity();
    const limit = pct(input.startingBalance, input.profile.daily_loss_limit_pct);
    if (equity.lt(opening.minus(limit))) {
      return fail(
        'daily_loss_limit',
        `today's loss ${s(opening.minus(equity))} USDT exceeds ${input.profile.daily_loss_limit_pct}% of the starting balance (${s(limit)} USDT); trading resumes at 00:00 UTC`,
        {
          day_opening_equity: d8(opening),
          equity: d8(equity),
          loss_limit: limit8(limit),
          daily_loss_limit_pct: input.profile.daily_loss_limit_pct,
        },
      );
    }
    return undefined;
  },
  symbol_and_quantity({ pair, order }) {
    if (!pair) return fail('symbol_and_quantity', `unknown symbol ${order.symbol}`, { symbol: order.symbol });
    if (pair.status !== 'active') {
      return fail('symbol_and_quantity', `pair ${pair.symbol} is not active`, {
        symbol: pair.symbol,
        status: pair.status,
      });
    }
    const problem = checkQuantity(order.quantity, pair);
    if (problem) {
      const { message, ...rest } = problem;
      return fail('symbol_and_quantity', message, { symbol: pair.symbol, ...rest }, 'INVALID_QUANTITY');
    }
    return undefined;
  },
  min_notional(input) {
    const problem = checkNotional(input.order.quantity, input.referencePrice(), input.pair!);
    return (
      problem &&
      fail('min_notional', problem.message, {
        notional: problem.notional,
        min_notional: problem.min_notional,
      })
    );
  },
  max_order_size(input) {
    if (input.order.side !== 'buy') return undefined;
    const notional = input.order.quantity.times(input.referencePrice());
    const cap = pct(input.availableCash, input.profile.max_order_size_pct);
    if (notional.gt(cap)) {
      return fail(
        'max_order_size',
        `order value ${s(notional)} USDT exceeds ${input.profile.max_order_size_pct}% of available cash (${s(cap)} USDT)`,
        {
          notional: d8(notional),
          max_order_value: limit8(cap),
          max_order_size_pct: input.profile.max_order_size_pct,
        },
      );
    }
    return undefined;
  },
  position_size_limit(input) {
    if (input.order.side !== 'buy') return undefined;
    const after = input.exposureQuantity().plus(input.order.quantity).times(input.markPrice());
    const cap = pct(input.equity(), input.profile.max_position_size_pct);
    if (after.gt(cap)) {
      return fail(
        'position_size_limit',
        `the ${input.pair!.baseAsset} position would be worth ${s(after)} USDT, above ${input.profile.max_position_size_pct}% of equity (${s(cap)} USDT)`,
        {
          symbol: input.pair!.symbol,
          position_value_after: d8(after),
          max_position_value: limit8(cap),
          max_position_size_pct: input.profile.max_position_size_pct,
        },
      );
    }
    return undefined;
  },
  max_open_orders(input) {
    if (input.order.type === 'market' || input.order.rests === false) return undefined;
    if (input.openOrders >= input.profile.max_open_orders) {
      return fail(
        'max_open_orders',
        `${input.openOrders} orders are already open, the limit is ${input.profile.max_open_orders}`,
        { open_orders: input.openOrders, max_open_orders: input.profile.max_open_orders },
      );
    }
    return undefined;
  },
  balance(input) {
    const { asset, required, available } = input.requirement();
    if (required.gt(available)) {
      return fail('balance', `${s(required)} ${asset} needed, ${s(available)} ${asset} available`, {
        asset,
        required: needed8(required),
        available: limit8(available),
      });
    }
    return undefined;
  },
};

/** Runs the chain in order; the first failing step's failure, or undefined when the order passes. */
export const runRiskChain = (input: RiskInput): RiskFailure | undefined => {
  for (const { rule } of RISK_CHAIN) {
    const failure = RULES[rule](input);
    if (failure) return failure;
  }
  return undefined;
};
