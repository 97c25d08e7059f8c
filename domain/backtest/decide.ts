import { INTERVAL_MS, INTERVALS, isInterval } from '../market/intervals';
import { normalizeSymbol } from '../market/pair';
import type { Decider } from '../shared/decider';
import { DomainError } from '../shared/errors';
import { normalizeStartingBalance } from '../shared/starting-balance';
import type { OwnerSnapshot } from '../wallet/commands';
import { walletDecider } from '../wallet/decide';
import { advanceSandboxSliced, closedAt, placeInSandbox, runToEnd, sandboxContext } from './advance';
import { MAX_BATCH_STEPS, totalSteps } from './clock';
import type { BacktestCommand, BacktestContext } from './commands';
import { EquityMeter } from './equity';
import { type BacktestEndedData, type BacktestStreamEvent, equityPeakOf } from './events';
import { residentAt, type SessionMarket } from './market';
import { resolveSessionPairs } from './pairs';
import {
  type BacktestConfig,
  type BacktestState,
  type BacktestStatus,
  evolveBacktest,
  initialBacktestState,
} from './state';

const iso = (ms: number): string => new Date(ms).toISOString();

const requireStatus = (state: BacktestState, allowed: readonly BacktestStatus[], action: string) => {
  if (!state.config || !state.status) {
    throw new DomainError('BACKTEST_NOT_FOUND', 'no backtest session with this id');
  }
  if (!allowed.includes(state.status)) {
    throw new DomainError(
      'BACKTEST_INVALID_STATE',
      `cannot ${action}: the session is ${state.status} (needs ${allowed.join(' or ')})`,
      { status: state.status, allowed: [...allowed] },
    );
  }
  return state.config;
};

const requireMarket = (ctx: BacktestContext): SessionMarket => {
  if (!ctx.market) throw new DomainError('INTERNAL_ERROR', 'the session market is not loaded');
  return ctx.market;
};

/** The sandbox wallet's owner: the session's agent, in a session of its own, always active inside it. */
export const sandboxOwner = (config: BacktestConfig): OwnerSnapshot => ({
  ownerId: config.agentId,
  ownerType: 'agent',
  accountId: config.accountId,
  status: 'active',
  accountStatus: 'active',
  sessionId: config.sessionId,
  startingBalance: config.startingBalance,
  fillModel: config.fillModel,
  participationPct: config.participationPct,
});

// ---------------------------------------------------------------------------------------------------------
// Create and start
// ---------------------------------------------------------------------------------------------------------

const create = (
  command: Extract<BacktestCommand, { type: 'CreateBacktest' }>['data'],
  state: BacktestState,
  ctx: BacktestContext,
): BacktestStreamEvent[] => {
  if (state.config) throw new DomainError('CONFLICT', 'a session with this id exists');
  const catalog = ctx.catalog;
  if (!catalog) throw new DomainError('INTERNAL_ERROR', 'no market catalog in the context');
  const r = command.request;
  if (!isInterval(r.candleInterval)) {
    throw new DomainError('VALIDATION_ERROR', `candle_interval must be one of ${INTERVALS.join(', ')}`, {
      field: 'candle_interval',
    });
  }
  const interval = r.candleInterval;
  if (!Number.isFinite(r.startTime) || !Number.isFinite(r.endTime) || r.startTime >= r.endTime) {
    throw new DomainError('VALIDATION_ERROR', 'start_time must be before end_time', { field: 'start_time' });
  }
  const steps = totalSteps(r.startTime, r.endTime, interval);
  if (steps < 1) {
    throw new DomainError('VALIDATION_ERROR', `end_time must be at least one ${interval} after start_time`, {
      field: 'end_time',
    });
  }
  const startingBalance = normalizeStartingBalance(r.startingBalance);
  const pairs = resolveSessionPairs(catalog, interval, r.startTime, r.endTime, r.pairs);
  return [
    {
      type: 'BacktestCreated',
      data: {
        session_id: command.sessionId,
        account_id: command.accountId,
        agent_id: command.agentId,
        strategy_label: r.strategyLabel,
        start_time: iso(r.startTime),
        end_time: iso(r.endTime),
        candle_interval: interval,
        starting_balance: startingBalance,
        pairs,
        pairs_requested: r.pairs === null ? null : r.pairs.map(normalizeSymbol),
        total_steps: steps,
        risk_profile: command.riskProfile,
        fee_rate: command.feeRate,
        ...(command.makerFeeRate ? { maker_fee_rate: command.makerFeeRate } : {}),
        ...(command.fillModel ? { fill_model: command.fillModel } : {}),
        ...(command.participationPct !== undefined ? { participation_pct: command.participationPct } : {}),
        created_at: ctx.now.toISOString(),
      },
    },
  ];
};

const start = (
  command: Extract<BacktestCommand, { type: 'StartBacktest' }>['data'],
  state: BacktestState,
  ctx: BacktestContext,
): BacktestStreamEvent[] => {
  const config = requireStatus(state, ['created'], 'start');
  if (command.loadError !== undefined || !ctx.market) {
    return [
      {
        type: 'BacktestFailed',
        data: {
          session_id: config.sessionId,
          reason: command.loadError ?? 'the session market could not be loaded',
          failed_at: ctx.now.toISOString(),
        },
      },
    ];
  }
  const market = ctx.market;
  const opened = walletDecider.decide(
    { type: 'OpenWallet', data: { owner: sandboxOwner(config) } },
    state.wallet,
    sandboxContext(config, market, config.startTime, ctx.newId),
  );
  return [
    {
      type: 'BacktestStarted',
      data: {
        session_id: config.sessionId,
        virtual_time: iso(config.startTime),
        total_steps: config.totalSteps,
        pairs: market.series.map((s) => ({
          symbol: s.symbol,
          candles: s.length,
          first_open_time: s.firstOpenTime !== undefined ? iso(s.firstOpenTime) : null,
          last_open_time: s.lastOpenTime !== undefined ? iso(s.lastOpenTime) : null,
        })),
        data_fingerprint: command.fingerprint,
        started_at: ctx.now.toISOString(),
      },
    },
    ...opened,
  ];
};

// ---------------------------------------------------------------------------------------------------------
// Stepping
// ---------------------------------------------------------------------------------------------------------

/** Prices and equity when a session ends at the state given by `closed` counts. */
const ended = (
  config: BacktestConfig,
  market: SessionMarket,
  closed: Int32Array,
  equity: string,
  step: number,
  state: BacktestState,
  ctx: BacktestContext,
): BacktestEndedData => {
  const finalPrices: Record<string, string> = {};
  market.series.forEach((s, i) => {
    const n = closed[i]!;
    if (n > 0) finalPrices[s.symbol] = s.candleAt(n - 1).close;
  });
  const started = state.startedAt ? Date.parse(state.startedAt) : null;
  return {
    session_id: config.sessionId,
    step,
    virtual_time: iso(config.startTime + step * config.intervalMs),
    final_equity: equity,
    final_prices: finalPrices,
    ended_at: ctx.now.toISOString(),
    duration_real_seconds:
      started === null ? '0.000' : (Math.max(0, ctx.now.getTime() - started) / 1000).toFixed(3),
  };
};

/**
 * Advances the virtual clock `steps` steps (ARCHITECTURE §9). At each step k the virtual time becomes
 * start + k × interval and every candle that closes in (previous time, new time] is passed, pair by pair in
 * symbol order: the pending orders of its pair are walked along the candle's documented path (O→L→H→C when
 * close ≥ open, else O→H→L→C) and each order reached is offered to the live wallet decider as a `FillOrder` at the
 * price it was reached at — in the order they are reached along the path, ties in placement order. Then the
 * equity is valued at the closes. The fills precede the `BacktestStepped` event; the last step completes.
 * The decider's `StepBacktest`, as a generator pausing every `sliceSteps` steps (see `advanceSandboxSliced`): the
 * decider runs it to its end at once; the backtest worker threads resume it slice by slice so that many sessions'
 * batches share a thread fairly (issue 24 item 4). Same events whatever the slicing.
 */
export function* stepBacktestSliced(
  command: Extract<BacktestCommand, { type: 'StepBacktest' }>['data'],
  state: BacktestState,
  ctx: BacktestContext,
  sliceSteps = Number.POSITIVE_INFINITY,
): Generator<void, BacktestStreamEvent[], void> {
  const config = requireStatus(state, ['running'], 'step');
  if (!Number.isInteger(command.steps) || command.steps < 1 || command.steps > MAX_BATCH_STEPS) {
    throw new DomainError('VALIDATION_ERROR', `steps must be an integer from 1 to ${MAX_BATCH_STEPS}`, {
      field: 'steps',
    });
  }
  const market = requireMarket(ctx);
  const n = Math.min(command.steps, config.totalSteps - state.step);
  const advanced = yield* advanceSandboxSliced(
    {
      terms: config,
      market,
      startTime: config.startTime,
      fromStep: state.step,
      steps: n,
      wallet: state.wallet,
      newId: ctx.newId,
      packEquity: true,
    },
    sliceSteps,
  );
  const { events: walletEvents, equityUnits = '', lastEquity, fills, at } = advanced;
  const events: BacktestStreamEvent[] = [...walletEvents];
  const toStep = state.step + n;
  events.push({
    type: 'BacktestStepped',
    data: {
      session_id: config.sessionId,
      from_step: state.step,
      to_step: toStep,
      from_time: iso(state.virtualTime),
      to_time: iso(at),
      equity_units: equityUnits,
      equity_peak: equityPeakOf(equityUnits),
      fills,
    },
  });
  if (toStep === config.totalSteps) {
    // The final prices are every pair's: read them all (the step walked only the pairs the wallet needed).
    yield* residentAt(market, at);
    events.push({
      type: 'BacktestCompleted',
      data: ended(config, market, closedAt(market, at), lastEquity, toStep, state, ctx),
    });
  }
  return events;
}

// ---------------------------------------------------------------------------------------------------------
// The decider
// ---------------------------------------------------------------------------------------------------------

/**
 * Decides a backtest command (ARCHITECTURE §9; `docs/backtesting.md`):
 * - `CreateBacktest`: validates the configuration (interval one of the six, start < end with at least one step,
 *   starting balance, pairs known and with data in the range, or every pair with data for null, the range inside
 *   the data) → `BacktestCreated`;
 * - `StartBacktest` (created): `BacktestStarted` and the sandbox wallet's opening at `start_time`, or
 *   `BacktestFailed` when the candles could not be loaded;
 * - `StepBacktest` (running): see {@link stepSession}; completes on the last step;
 * - `PlaceSandboxOrder` / `CancelSandboxOrder` (running): the live wallet decider at virtual time;
 * - `CancelBacktest` (created or running): `BacktestCancelled` with the equity and prices at virtual time.
 * A session in another status answers `BACKTEST_INVALID_STATE`; an unknown one `BACKTEST_NOT_FOUND`.
 */
export const decideBacktest = (
  command: BacktestCommand,
  state: BacktestState,
  ctx: BacktestContext,
): BacktestStreamEvent[] => {
  switch (command.type) {
    case 'CreateBacktest':
      return create(command.data, state, ctx);
    case 'StartBacktest':
      return start(command.data, state, ctx);
    case 'StepBacktest':
      return runToEnd(stepBacktestSliced(command.data, state, ctx));
    case 'PlaceSandboxOrder': {
      const config = requireStatus(state, ['running'], 'trade');
      const market = requireMarket(ctx);
      return placeInSandbox(config, market, state.virtualTime, ctx.newId, state.wallet, {
        type: 'PlaceOrder',
        data: { owner: sandboxOwner(config), order: command.data.order },
      });
    }
    case 'CancelSandboxOrder': {
      const config = requireStatus(state, ['running'], 'cancel an order');
      const market = requireMarket(ctx);
      return walletDecider.decide(
        { type: 'CancelOrder', data: { orderId: command.data.orderId } },
        state.wallet,
        sandboxContext(config, market, state.virtualTime, ctx.newId),
      );
    }
    case 'CancelBacktest': {
      const config = requireStatus(state, ['created', 'running'], 'cancel');
      if (state.status === 'created') {
        // Never started: nothing was traded, the equity is the starting balance.
        const equity = config.startingBalance;
        return [
          {
            type: 'BacktestCancelled',
            data: ended(config, emptyMarket(config), new Int32Array(0), equity, state.step, state, ctx),
          },
        ];
      }
      const market = requireMarket(ctx);
      const closed = closedAt(market, state.virtualTime);
      const meter = new EquityMeter(market);
      meter.load(state.wallet);
      return [
        {
          type: 'BacktestCancelled',
          data: ended(config, market, closed, meter.at(closed), state.step, state, ctx),
        },
      ];
    }
  }
};

const emptyMarket = (config: BacktestConfig): SessionMarket => ({
  interval: config.interval,
  intervalMs: INTERVAL_MS[config.interval],
  series: [],
  bySymbol: new Map(),
});

/** The backtest decider (`backtest-{session_id}` streams). */
export const backtestDecider: Decider<BacktestState, BacktestCommand, BacktestStreamEvent, BacktestContext> =
  {
    initialState: initialBacktestState,
    evolve: evolveBacktest,
    decide: decideBacktest,
  };
