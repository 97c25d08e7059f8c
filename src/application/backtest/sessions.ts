import type { BacktestOutcome, Caller, LoadedSession } from '../../../commands/backtest';
import type { BacktestEndedData } from '../../../domain/backtest/events';
import type { PairSeries } from '../../../domain/backtest/market';
import { type Gap, gapOut, gapsWithin, groupGaps, type SharedGap } from '../../../domain/market/gaps';
import type { Interval } from '../../../domain/market/intervals';
import { parseIsoTime } from '../../../domain/market/time';
import { DomainError } from '../../../domain/shared/errors';
import { assertAgentActive } from '../../auth/principal';
import { backtest } from '../../backtest/install';
import { executionTermsOut, statusOut, stepOut, summaryOut } from '../../backtest/present';
import { type Call, timed } from '../call';
import { commandMeta } from '../caller';
import { awaitReadModels } from '../read-your-writes';

/**
 * Backtest session use cases (spec "Backtest endpoints"; ARCHITECTURE §9, §14b): create, start, step, cancel,
 * status. Sessions are event-sourced (`backtest-{id}` streams, `commands/backtest.ts`). Every session call checks
 * that the caller owns the session: unknown → `BACKTEST_NOT_FOUND` 404, another account's (or, with an agent
 * credential, another agent's) → `PERMISSION_DENIED` 403. Views are the spec's shapes (`src/backtest/present.ts`),
 * computed at the session's virtual time.
 */

/** Who a backtest call acts for: the account, or the agent of an agent credential. */
export const backtestCaller = (call: Call): Caller => ({
  accountId: call.caller.accountId,
  agentId: call.caller.agentId ?? null,
});

/** The backtest commands of the call's runtime. */
export const backtestCommands = (call: Call) => backtest(call.services).commands;

const iso = (v: Date | string | number): string => new Date(v).toISOString();

/** An ISO 8601 time of the configuration (a day that does not exist is refused, not rolled over). */
const parseTime = (value: string, field: string): number => {
  const ms = parseIsoTime(value);
  if (ms === undefined) {
    throw new DomainError('VALIDATION_ERROR', `${field} must be an ISO 8601 timestamp`, { field });
  }
  return ms;
};

/** A backtest configuration as a client sends it (times ISO 8601, balance a decimal string or number). */
export interface BacktestRequest {
  startTime: string;
  endTime: string;
  candleInterval: string;
  startingBalance: string | number;
  strategyLabel: string | null;
  pairs: string[] | null;
  /**
   * The agent whose risk profile the sandbox copies (an agent of the caller). Absent: the caller's own agent
   * when it calls with an agent credential (the original clients omit it, docs/compatibility.md); with an
   * account credential it is required (`VALIDATION_ERROR` naming `agent_id`).
   */
  agentId?: string;
}

/** The agent a backtest runs for: the one named, else the agent of an agent credential. */
const backtestAgentOf = (call: Call, input: BacktestRequest): string => {
  const agentId = input.agentId ?? call.caller.agentId;
  if (agentId === undefined || agentId === null) {
    throw new DomainError(
      'VALIDATION_ERROR',
      "agent_id is required (an agent of the caller), unless the call is made with that agent's key",
      { field: 'agent_id' },
    );
  }
  return agentId;
};

/**
 * The `data_gaps` of a session's window `[start, end)` (ms) for `pairs` at `interval`, in the wire form: what a
 * session over that window will not trade on (issue 24, item 6). `gaps` are the known gaps (at create the venue's
 * candle index, its stored native series; at start the session's own series at its interval); to them are added
 * the holes between the stored months of each pair's series at the session's interval (`servedHoles`: a pair
 * served there from two sources, e.g. BTCUSDT's 2020 minutes and its hourly candles from 2021, which neither
 * source's gaps show), so create and start list the same hole; each gap once.
 */
const windowGaps = (
  call: Call,
  gaps: readonly SharedGap[],
  pairs: readonly string[],
  interval: Interval,
  start: number,
  end: number,
) => {
  const perSymbol = new Map<string, Map<string, Gap>>();
  const add = (symbol: string, g: Gap) => {
    const own = perSymbol.get(symbol) ?? new Map<string, Gap>();
    own.set(`${g.interval}|${g.start}|${g.end}`, {
      interval: g.interval,
      start: g.start,
      end: g.end,
      missingCandles: g.missingCandles,
    });
    perSymbol.set(symbol, own);
  };
  for (const g of gapsWithin(gaps, pairs, start, end)) for (const symbol of g.symbols) add(symbol, g);
  const candles = call.services.market?.data.candles;
  for (const symbol of pairs)
    for (const hole of candles?.servedHoles(symbol, interval) ?? []) add(symbol, hole);
  const grouped = groupGaps(new Map([...perSymbol].map(([symbol, own]) => [symbol, [...own.values()]])));
  return gapsWithin(grouped, pairs, start, end).map(gapOut);
};

/** The gaps of a started session's own series, at its interval (see `findGapsInTimes`), per pair. */
const seriesGaps = (series: readonly PairSeries[]): SharedGap[] =>
  groupGaps(new Map(series.map((s) => [s.symbol, [...s.gaps]])));

/**
 * Creates a session (status `created`) after validating the configuration against the market data:
 * `VALIDATION_ERROR` 422, `INVALID_SYMBOL` 400, `BACKTEST_NO_DATA` 400, `PERMISSION_DENIED` 403.
 */
export const createBacktest = async (call: Call, input: BacktestRequest) => {
  assertAgentActive(call.caller);
  const outcome = await backtestCommands(call).create(
    backtestCaller(call),
    backtestAgentOf(call, input),
    {
      startTime: parseTime(input.startTime, 'start_time'),
      endTime: parseTime(input.endTime, 'end_time'),
      candleInterval: input.candleInterval,
      startingBalance: input.startingBalance,
      strategyLabel: input.strategyLabel,
      pairs: input.pairs,
    },
    commandMeta(call),
  );
  // Its batches and results will need the worker threads: they start now, while the session is created and started.
  call.services.backtest?.warm();
  await awaitReadModels(call, outcome.position);
  const c = outcome.session.state.config!;
  return {
    session_id: outcome.session.id,
    status: 'created' as const,
    total_steps: c.totalSteps,
    estimated_pairs: c.pairs.length,
    pairs: c.pairs,
    candle_interval: c.interval,
    start_time: iso(c.startTime),
    end_time: iso(c.endTime),
    starting_balance: c.startingBalance,
    agent_id: c.agentId,
    strategy_label: c.strategyLabel,
    ...executionTermsOut(c),
    created_at: c.createdAt,
    data_gaps: windowGaps(
      call,
      call.services.market?.data.candles.gaps() ?? [],
      c.pairs,
      c.interval,
      c.startTime,
      c.endTime,
    ),
  };
};

/**
 * Loads the candles and starts the virtual clock at `start_time` (status `running`). Data that cannot be loaded
 * records the session `failed` and answers `BACKTEST_NO_DATA` 400; a session not `created`:
 * `BACKTEST_INVALID_STATE` 409; a session of an archived agent, whatever the credential: `PERMISSION_DENIED` 403
 * `agent_archived` (the command handler asks, as it does for a step and an order).
 */
export const startBacktest = async (call: Call, id: string) => {
  const outcome = await backtestCommands(call).start(backtestCaller(call), id, commandMeta(call));
  await awaitReadModels(call, outcome.position);
  const s = outcome.session;
  if (s.state.status === 'failed') {
    throw new DomainError('BACKTEST_NO_DATA', s.state.failure ?? 'the session data could not be loaded', {
      session_id: s.id,
      status: 'failed',
    });
  }
  return {
    session_id: s.id,
    status: s.state.status!,
    total_steps: s.state.config!.totalSteps,
    virtual_time: iso(s.state.virtualTime),
    pairs: (s.market?.series ?? []).map((x) => ({ symbol: x.symbol, candles: x.length })),
    failure_reason: s.state.failure,
    data_gaps: s.market
      ? windowGaps(
          call,
          seriesGaps(s.market.series),
          s.state.config!.pairs,
          s.state.config!.interval,
          s.state.config!.startTime,
          s.state.config!.endTime,
        )
      : [],
  };
};

/** Records where a session's last write is (sandbox reads come from the in-memory session, not read models). */
export const recordSessionWrite = (call: Call, outcome: Pick<BacktestOutcome, 'position'>): void => {
  if (outcome.position) call.receipt.position = outcome.position;
};

/**
 * Advances `steps` candles (clamped at the last step): pending orders are checked against each candle passed
 * along its path; the step view holds every fill of the batch. Only the completing step waits for the read models
 * (results, list); other steps answer as soon as the step is durable.
 */
export const stepBacktest = async (call: Call, id: string, steps: number) => {
  const outcome = await timed(call, 'command', () =>
    backtestCommands(call).step(backtestCaller(call), id, steps, commandMeta(call)),
  );
  const session = outcome.session;
  if (session.state.status === 'completed') await awaitReadModels(call, outcome.position);
  else recordSessionWrite(call, outcome);
  return stepOut(session, session.market!, outcome.events);
};

/**
 * Aborts a created or running session; partial results are saved. Allowed for an archived agent's session (an end,
 * not a new trading request: as live, its owner can always stop what runs).
 */
export const cancelBacktest = async (call: Call, id: string) => {
  const outcome = await backtestCommands(call).cancel(backtestCaller(call), id, commandMeta(call));
  await awaitReadModels(call, outcome.position);
  const ended = outcome.events.find((e) => e.type === 'BacktestCancelled')!.data as BacktestEndedData;
  return {
    session_id: outcome.session.id,
    status: 'cancelled' as const,
    step: ended.step,
    virtual_time: ended.virtual_time,
    summary: summaryOut(outcome.session, ended.final_equity, ended.duration_real_seconds),
  };
};

/** A session of the caller (`options.market`: with its candles in memory, for reads at virtual time). */
export const ownedSession = (
  call: Call,
  id: string,
  options?: { market?: boolean },
): Promise<LoadedSession> => backtestCommands(call).session(backtestCaller(call), id, options);

/** Progress and state of a session. */
export const backtestStatus = async (call: Call, id: string) => statusOut(await ownedSession(call, id));
