import {
  advanceSandboxSliced,
  closedAt,
  placeInSandbox,
  runToEnd,
  sandboxContext,
} from '../backtest/advance';
import { MAX_BATCH_STEPS } from '../backtest/clock';
import { EquityMeter } from '../backtest/equity';
import { residentAt, type SessionMarket } from '../backtest/market';
import type { Decider } from '../shared/decider';
import { DomainError } from '../shared/errors';
import type { OwnerSnapshot } from '../wallet/commands';
import { walletDecider } from '../wallet/decide';
import type { WalletEvent } from '../wallet/events';
import type { AgentInfo, BattleCommand, BattleContext } from './commands';
import { validateBattleConfig } from './config';
import type { BattleEvent, PerformanceSummaryEntry, RankingEntry } from './events';
import { rankParticipants } from './rankings';
import {
  type BattleState,
  type BattleStatus,
  evolveBattle,
  initialBattleState,
  intervalMsOf,
  type Participant,
} from './state';

/** Most participants of one battle (a design bound; the spec gives none; the leaderboard shows at most 50). */
export const MAX_PARTICIPANTS = 50;

/** Fewest participants a battle starts with (spec "Limits": battle start). */
export const MIN_PARTICIPANTS = 2;

const iso = (ms: number): string => new Date(ms).toISOString();

/** `BATTLE_NOT_FOUND` 404 (ARCHITECTURE §14b): unknown, malformed or deleted. */
export const battleNotFound = () => new DomainError('BATTLE_NOT_FOUND', 'no battle with this id');

const requireStatus = (state: BattleState, allowed: readonly BattleStatus[], action: string) => {
  if (!state.config || !state.status || state.deleted) throw battleNotFound();
  if (!allowed.includes(state.status)) {
    throw new DomainError(
      'BATTLE_INVALID_STATE',
      `cannot ${action}: the battle is ${state.status} (needs ${allowed.join(' or ')})`,
      { status: state.status, allowed: [...allowed] },
    );
  }
  return state.config;
};

/**
 * Refuses an order command unless the battle trades in its own sandboxes: running (`active` or `paused`, else
 * {@link requireStatus}'s refusal for `action`) and `historical`. A live battle's agents trade with their own
 * credential through the live API, which `liveWay` names (`BATTLE_INVALID_STATE`, with `battle_mode`).
 */
const requireSandboxTrading = (state: BattleState, action: string, liveWay: string): void => {
  const config = requireStatus(state, ['active', 'paused'], action);
  if (config.battle_mode !== 'historical') {
    throw new DomainError('BATTLE_INVALID_STATE', `a live battle ${liveWay} with the agent credential`, {
      battle_mode: config.battle_mode,
    });
  }
};

const requireParticipant = (state: BattleState, agentId: string): Participant => {
  const p = state.participants.find((x) => x.agentId === agentId);
  if (!p) {
    throw new DomainError('VALIDATION_ERROR', `agent ${agentId} is not a participant of this battle`, {
      field: 'agent_id',
      agent_id: agentId,
    });
  }
  return p;
};

const requireMarket = (ctx: BattleContext): SessionMarket => {
  if (!ctx.market) throw new DomainError('INTERNAL_ERROR', 'the battle market is not loaded');
  return ctx.market;
};

/** An agent may join when it belongs to the battle's account and is not archived. */
const checkAgent = (state: { accountId: string | null }, agent: AgentInfo) => {
  if (agent.accountId !== state.accountId) {
    throw new DomainError('PERMISSION_DENIED', 'agent_id is not an agent of this account', {
      agent_id: agent.agentId,
    });
  }
  if (agent.status === 'archived') {
    throw new DomainError('PERMISSION_DENIED', 'this agent is archived', {
      agent_id: agent.agentId,
      reason: 'agent_archived',
    });
  }
};

/**
 * Refuses a start that cannot happen (spec "Battle start": at least 2 participants; only a `draft` starts): the
 * live handler calls it before it begins the participants' wallet sessions.
 */
export const assertStartable = (state: BattleState): void => {
  requireStatus(state, ['draft'], 'start');
  if (state.participants.length < MIN_PARTICIPANTS) {
    throw new DomainError(
      'BATTLE_INVALID_STATE',
      `a battle needs at least ${MIN_PARTICIPANTS} participants to start (it has ${state.participants.length})`,
      { participants: state.participants.length, minimum: MIN_PARTICIPANTS, reason: 'too_few_participants' },
    );
  }
};

/** The sandbox wallet's owner in a historical battle: the agent, in a session of the battle, always active. */
export const battleSandboxOwner = (state: BattleState, agentId: string): OwnerSnapshot => ({
  ownerId: agentId,
  ownerType: 'agent',
  accountId: state.accountId!,
  status: 'active',
  accountStatus: 'active',
  sessionId: state.battleId!,
  startingBalance: state.config!.starting_balance,
  fillModel: state.participants.find((p) => p.agentId === agentId)?.fillModel ?? 'instant',
  participationPct: state.participants.find((p) => p.agentId === agentId)?.participationPct,
});

const sandboxTerms = (state: BattleState, p: Participant) => ({
  riskProfile: p.riskProfile!,
  feeRate: state.feeRate,
  makerFeeRate: state.makerFeeRate,
});

const wrap = (state: BattleState, agentId: string, events: readonly WalletEvent[]): BattleEvent[] =>
  events.map((event) => ({
    type: 'BattleSandboxEventRecorded' as const,
    data: { battle_id: state.battleId!, agent_id: agentId, event },
  }));

/**
 * Rankings of a historical battle at its current virtual time (ARCHITECTURE §10, §11): each participant's equity at
 * every step (interval = the battle's), its sandbox fills, open positions marked at the last closes; the ranked
 * equity is the sandbox's equity now ({@link historicalEquity}), which includes orders placed since the last step.
 */
export const historicalRankings = (
  state: BattleState,
  market: SessionMarket,
): { rankings: RankingEntry[]; summaries: PerformanceSummaryEntry[] } => {
  const config = state.config!;
  const start = Date.parse(config.backtest_config!.start_time);
  const interval = intervalMsOf(state);
  const closed = closedAt(market, state.virtualTime ?? start);
  const marks: Record<string, string> = {};
  market.series.forEach((s, i) => {
    const n = closed[i]!;
    if (n > 0) marks[s.symbol] = s.candleAt(n - 1).close;
  });
  const now = historicalEquity(state, market);
  const { rankings, summaries } = rankParticipants(
    state.participants.map((p) => ({
      agentId: p.agentId,
      agentName: p.agentName,
      startingBalance: config.starting_balance,
      equity: p.equity.map((equity, step) => ({ time: start + step * interval, equity })),
      intervalMs: interval,
      fills: p.fills,
      marks,
      period: { start, end: state.virtualTime ?? start },
      finalEquity: now[p.agentId]!,
    })),
    config.ranking_metric,
  );
  return { rankings, summaries };
};

/** Equity of every participant's sandbox at the current virtual time. */
export const historicalEquity = (state: BattleState, market: SessionMarket): Record<string, string> => {
  const closed = closedAt(market, state.virtualTime ?? 0);
  const out: Record<string, string> = {};
  for (const p of state.participants) {
    const meter = new EquityMeter(market);
    meter.load(p.wallet);
    out[p.agentId] = meter.at(closed);
  }
  return out;
};

const completed = (
  state: BattleState,
  reason: 'stopped' | 'duration_elapsed' | 'last_step',
  ranked: { rankings: RankingEntry[]; summaries: PerformanceSummaryEntry[] },
  ctx: BattleContext,
): BattleEvent => ({
  type: 'BattleCompleted',
  data: {
    battle_id: state.battleId!,
    reason,
    completed_at: ctx.now.toISOString(),
    virtual_time: state.virtualTime === null ? null : iso(state.virtualTime),
    final_rankings: ranked.rankings,
    summaries: ranked.summaries,
  },
});

const start = (
  command: Extract<BattleCommand, { type: 'StartBattle' }>['data'],
  state: BattleState,
  ctx: BattleContext,
): BattleEvent[] => {
  assertStartable(state);
  const config = state.config!;
  const byAgent = new Map(command.participants.map((p) => [p.agentId, p]));
  for (const p of state.participants) {
    if (!byAgent.has(p.agentId)) {
      throw new DomainError('INTERNAL_ERROR', `no start data for participant ${p.agentId}`);
    }
  }
  const historical = config.battle_mode === 'historical';
  const startTime = historical ? Date.parse(config.backtest_config!.start_time) : null;
  const started: BattleEvent = {
    type: 'BattleStarted',
    data: {
      battle_id: state.battleId!,
      started_at: ctx.now.toISOString(),
      participants: state.participants.map((p) => {
        const s = byAgent.get(p.agentId)!;
        return {
          agent_id: p.agentId,
          risk_profile: s.riskProfile,
          ...(historical && s.fillModel ? { fill_model: s.fillModel } : {}),
          ...(historical && s.participationPct !== undefined
            ? { participation_pct: s.participationPct }
            : {}),
          wallet_session_id: historical ? null : s.walletSessionId,
          wallet_revision: historical ? null : s.walletRevision,
        };
      }),
      virtual_time: startTime === null ? null : iso(startTime),
      data_fingerprint: historical ? command.fingerprint : null,
    },
  };
  if (!historical) return [started];
  const market = requireMarket(ctx);
  const after = evolveBattle(state, started);
  const opened = after.participants.flatMap((p) =>
    wrap(
      after,
      p.agentId,
      walletDecider.decide(
        { type: 'OpenWallet', data: { owner: battleSandboxOwner(after, p.agentId) } },
        p.wallet,
        sandboxContext(sandboxTerms(after, p), market, startTime!, ctx.newId),
      ),
    ),
  );
  return [started, ...opened];
};

/**
 * Advances the shared virtual clock of a historical battle (ARCHITECTURE §9, §10): every participant's sandbox is
 * advanced by the same steps along the documented intra-candle path (`advanceSandboxSliced`, shared with backtests),
 * participants in the order they joined; their fills precede one `BattleStepped` with every participant's equity at
 * every step. The last step ranks and completes the battle.
 * A generator pausing every `sliceSteps` steps of a participant (see `advanceSandboxSliced`): the decider runs it to
 * its end at once; the backtest worker threads resume it slice by slice (issue 24 item 4). Same events whatever
 * the slicing.
 */
export function* stepBattleSliced(
  command: Extract<BattleCommand, { type: 'StepBattle' }>['data'],
  state: BattleState,
  ctx: BattleContext,
  sliceSteps = Number.POSITIVE_INFINITY,
): Generator<void, BattleEvent[], void> {
  const config = requireStatus(state, ['active', 'paused'], 'step');
  if (config.battle_mode !== 'historical') {
    throw new DomainError('BATTLE_INVALID_STATE', 'only a historical battle is stepped', {
      battle_mode: config.battle_mode,
    });
  }
  if (!Number.isInteger(command.steps) || command.steps < 1 || command.steps > MAX_BATCH_STEPS) {
    throw new DomainError('VALIDATION_ERROR', `steps must be an integer from 1 to ${MAX_BATCH_STEPS}`, {
      field: 'steps',
    });
  }
  const market = requireMarket(ctx);
  const total = config.backtest_config!.total_steps;
  const n = Math.min(command.steps, total - state.step);
  const startTime = Date.parse(config.backtest_config!.start_time);
  const events: BattleEvent[] = [];
  const equity: Record<string, string[]> = {};
  let fills = 0;
  let at = state.virtualTime ?? startTime;
  for (const p of state.participants) {
    const advanced = yield* advanceSandboxSliced(
      {
        terms: sandboxTerms(state, p),
        market,
        startTime,
        fromStep: state.step,
        steps: n,
        wallet: p.wallet,
        newId: ctx.newId,
      },
      sliceSteps,
    );
    events.push(...wrap(state, p.agentId, advanced.events));
    equity[p.agentId] = advanced.equity;
    fills += advanced.fills;
    at = advanced.at;
  }
  const stepped: BattleEvent = {
    type: 'BattleStepped',
    data: {
      battle_id: state.battleId!,
      from_step: state.step,
      to_step: state.step + n,
      from_time: iso(state.virtualTime ?? startTime),
      to_time: iso(at),
      equity,
      fills,
    },
  };
  events.push(stepped);
  if (state.step + n === total) {
    // The rankings mark every pair: read them all (the steps walked only the pairs the sandboxes needed).
    yield* residentAt(market, at);
    let after = state;
    for (const e of events) after = evolveBattle(after, e);
    events.push(completed(after, 'last_step', historicalRankings(after, market), ctx));
  }
  return events;
}

const placeOrder = (
  command: Extract<BattleCommand, { type: 'PlaceBattleOrder' }>['data'],
  state: BattleState,
  ctx: BattleContext,
): BattleEvent[] => {
  requireSandboxTrading(state, 'trade', 'trades through POST /trade/order');
  const p = requireParticipant(state, command.agentId);
  if (p.paused) {
    throw new DomainError('BATTLE_INVALID_STATE', `agent ${p.agentId} is paused in this battle`, {
      agent_id: p.agentId,
      reason: 'agent_paused',
    });
  }
  const market = requireMarket(ctx);
  return wrap(
    state,
    p.agentId,
    placeInSandbox(sandboxTerms(state, p), market, state.virtualTime!, ctx.newId, p.wallet, {
      type: 'PlaceOrder',
      data: { owner: battleSandboxOwner(state, p.agentId), order: command.order },
    }),
  );
};

/**
 * Cancels an open order of a participant's sandbox in a historical battle (as `DELETE /backtest/{id}/trade/order`
 * does in a backtest): the live wallet decider's `CancelOrder` at virtual time, its remaining lock released. The
 * participant is the one whose sandbox holds the order open (order ids are UUIDs); a paused agent may cancel.
 * `ORDER_NOT_FOUND` when no sandbox of the battle holds it open.
 */
const cancelOrder = (
  command: Extract<BattleCommand, { type: 'CancelBattleOrder' }>['data'],
  state: BattleState,
  ctx: BattleContext,
): BattleEvent[] => {
  requireSandboxTrading(state, 'cancel an order', 'cancels through DELETE /trade/order/{id}');
  const p = state.participants.find((x) => x.wallet.openOrders[command.orderId] !== undefined);
  if (!p) {
    throw new DomainError('ORDER_NOT_FOUND', 'no open order with this id in this battle', {
      order_id: command.orderId,
    });
  }
  const market = requireMarket(ctx);
  return wrap(
    state,
    p.agentId,
    walletDecider.decide(
      { type: 'CancelOrder', data: { orderId: command.orderId } },
      p.wallet,
      sandboxContext(sandboxTerms(state, p), market, state.virtualTime!, ctx.newId),
    ),
  );
};

/**
 * Decides a battle command (spec "States and transitions / Battle", "Battle endpoints"; ARCHITECTURE §10, §14b):
 * - `CreateBattle` → `BattleCreated` (+ `BattleParticipantAdded` for a replay's agents); `UpdateBattle`,
 *   `AddParticipant`, `RemoveParticipant`: `draft` only;
 * - `StartBattle`: `draft` with ≥ 2 participants → `BattleStarted` (historical: every sandbox opens at
 *   `start_time`);
 * - `PauseAgent` / `ResumeAgent`: `active` or `paused`; the battle is `paused` while any agent is;
 * - `StopBattle`: `active` or `paused` → `BattleCompleted` with `final_rankings`;
 * - `DeleteBattle`: `draft` → `BattleDeleted`; `active`/`paused` → `BattleCancelled`; else `BATTLE_INVALID_STATE`;
 * - `RecordSnapshot` (live), `StepBattle`, `PlaceBattleOrder` and `CancelBattleOrder` (historical): `active` or
 *   `paused`.
 * Unknown or deleted battles: `BATTLE_NOT_FOUND`; wrong state: `BATTLE_INVALID_STATE` 409.
 */
export const decideBattle = (
  command: BattleCommand,
  state: BattleState,
  ctx: BattleContext,
): BattleEvent[] => {
  const now = ctx.now.toISOString();
  switch (command.type) {
    case 'CreateBattle': {
      if (state.config) throw new DomainError('CONFLICT', 'a battle with this id exists');
      const d = command.data;
      const config = validateBattleConfig(d.request, ctx.catalog);
      const owner = { accountId: d.accountId };
      const seen = new Set<string>();
      for (const agent of d.participants) {
        checkAgent(owner, agent);
        if (seen.has(agent.agentId)) {
          throw new DomainError('VALIDATION_ERROR', `agent ${agent.agentId} is listed twice`, {
            field: 'agent_ids',
          });
        }
        seen.add(agent.agentId);
      }
      if (d.participants.length > MAX_PARTICIPANTS) {
        throw new DomainError('VALIDATION_ERROR', `a battle has at most ${MAX_PARTICIPANTS} participants`, {
          field: 'agent_ids',
        });
      }
      return [
        {
          type: 'BattleCreated',
          data: {
            battle_id: d.battleId,
            account_id: d.accountId,
            ...config,
            fee_rate: d.feeRate,
            ...(d.makerFeeRate ? { maker_fee_rate: d.makerFeeRate } : {}),
            replay_of: d.replayOf,
            ...(d.replayFills?.length ? { replay_fills: d.replayFills } : {}),
            created_at: now,
          },
        },
        ...d.participants.map(
          (agent): BattleEvent => ({
            type: 'BattleParticipantAdded',
            data: { battle_id: d.battleId, agent_id: agent.agentId, agent_name: agent.name, added_at: now },
          }),
        ),
      ];
    }
    case 'UpdateBattle': {
      requireStatus(state, ['draft'], 'update the configuration');
      const config = validateBattleConfig(command.data.request, ctx.catalog);
      return [
        { type: 'BattleConfigUpdated', data: { battle_id: state.battleId!, ...config, updated_at: now } },
      ];
    }
    case 'AddParticipant': {
      requireStatus(state, ['draft'], 'add a participant');
      const agent = command.data.agent;
      checkAgent(state, agent);
      if (state.participants.some((p) => p.agentId === agent.agentId)) {
        throw new DomainError('VALIDATION_ERROR', `agent ${agent.agentId} is already a participant`, {
          field: 'agent_id',
          agent_id: agent.agentId,
        });
      }
      if (state.participants.length >= MAX_PARTICIPANTS) {
        throw new DomainError('VALIDATION_ERROR', `a battle has at most ${MAX_PARTICIPANTS} participants`, {
          field: 'agent_id',
        });
      }
      return [
        {
          type: 'BattleParticipantAdded',
          data: {
            battle_id: state.battleId!,
            agent_id: agent.agentId,
            agent_name: agent.name,
            added_at: now,
          },
        },
      ];
    }
    case 'RemoveParticipant': {
      requireStatus(state, ['draft'], 'remove a participant');
      requireParticipant(state, command.data.agentId);
      return [
        {
          type: 'BattleParticipantRemoved',
          data: { battle_id: state.battleId!, agent_id: command.data.agentId, removed_at: now },
        },
      ];
    }
    case 'StartBattle':
      return start(command.data, state, ctx);
    case 'PauseAgent':
    case 'ResumeAgent': {
      const pause = command.type === 'PauseAgent';
      requireStatus(state, ['active', 'paused'], pause ? 'pause an agent' : 'resume an agent');
      const p = requireParticipant(state, command.data.agentId);
      if (p.paused === pause) {
        throw new DomainError(
          'BATTLE_INVALID_STATE',
          `agent ${p.agentId} is ${pause ? 'already paused' : 'not paused'}`,
          { agent_id: p.agentId, paused: p.paused },
        );
      }
      const pausedAfter = state.participants.filter((x) =>
        x.agentId === p.agentId ? pause : x.paused,
      ).length;
      return [
        {
          type: pause ? 'BattleAgentPaused' : 'BattleAgentResumed',
          data: {
            battle_id: state.battleId!,
            agent_id: p.agentId,
            status: pausedAfter > 0 ? 'paused' : 'active',
            at: now,
          },
        },
      ];
    }
    case 'RecordSnapshot': {
      const config = requireStatus(state, ['active', 'paused'], 'record a snapshot');
      if (config.battle_mode !== 'live') {
        throw new DomainError('BATTLE_INVALID_STATE', 'snapshots are recorded for live battles', {
          battle_mode: config.battle_mode,
        });
      }
      const known = new Set(state.participants.map((p) => p.agentId));
      return [
        {
          type: 'BattleSnapshotRecorded',
          data: {
            battle_id: state.battleId!,
            timestamp: now,
            participants: command.data.participants
              .filter((p) => known.has(p.agentId))
              .map((p) => ({ agent_id: p.agentId, equity: p.equity })),
          },
        },
      ];
    }
    case 'StopBattle': {
      const config = requireStatus(state, ['active', 'paused'], 'stop');
      if (config.battle_mode === 'historical') {
        return [completed(state, command.data.reason, historicalRankings(state, requireMarket(ctx)), ctx)];
      }
      if (!command.data.live) throw new DomainError('INTERNAL_ERROR', 'a live stop needs its rankings');
      return [completed(state, command.data.reason, command.data.live, ctx)];
    }
    case 'DeleteBattle': {
      if (!state.config || !state.status || state.deleted) throw battleNotFound();
      if (state.status === 'draft' || state.status === 'pending') {
        return [{ type: 'BattleDeleted', data: { battle_id: state.battleId!, deleted_at: now } }];
      }
      if (state.status === 'active' || state.status === 'paused') {
        return [
          {
            type: 'BattleCancelled',
            data: { battle_id: state.battleId!, previous_status: state.status, cancelled_at: now },
          },
        ];
      }
      throw new DomainError(
        'BATTLE_INVALID_STATE',
        `cannot delete or cancel: the battle is ${state.status}`,
        { status: state.status, allowed: ['draft', 'active', 'paused'] },
      );
    }
    case 'StepBattle':
      return runToEnd(stepBattleSliced(command.data, state, ctx));
    case 'PlaceBattleOrder':
      return placeOrder(command.data, state, ctx);
    case 'CancelBattleOrder':
      return cancelOrder(command.data, state, ctx);
  }
};

/** The battle decider (`battle-{battle_id}` streams). */
export const battleDecider: Decider<BattleState, BattleCommand, BattleEvent, BattleContext> = {
  initialState: initialBattleState,
  evolve: evolveBattle,
  decide: decideBattle,
};
