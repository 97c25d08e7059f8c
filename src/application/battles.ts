import type { BattleCaller, BattleChanges, BattleOutcome, LoadedBattle } from '../../commands/battle';
import type { CommandMeta } from '../../commands/metadata';
import { closedAt } from '../../domain/backtest/advance';
import { progressPct } from '../../domain/backtest/clock';
import type { BattleRequest } from '../../domain/battle/config';
import { historicalEquity, historicalRankings } from '../../domain/battle/decide';
import { BATTLE_PRESETS } from '../../domain/battle/presets';
import { intervalMsOf } from '../../domain/battle/state';
import { normalizeSymbol } from '../../domain/market/pair';
import { DomainError } from '../../domain/shared/errors';
import { dec, fmt } from '../../domain/trading/decimal';
import type { OrderCancelledData, WalletEvent } from '../../domain/wallet/events';
import { type BattleStatusFilter, battleSnapshots, listBattles as readBattles } from '../../queries/battles';
import { battle as battleServices } from '../battle/install';
import { battleOut, battleRowOut, rankingOut } from '../battle/present';
import { ocoPlacementOut } from '../trading/present';
import type { Call } from './call';
import { commandMeta } from './caller';
import { awaitReadModels, settleOwnWrites } from './read-your-writes';
import { outsideSandboxPairs, type SandboxPlacement, sandboxPlacement } from './sandbox-orders';
import { type OrderInput, orderIdOf } from './trading';

/**
 * Battle use cases (spec "Battle endpoints"; ARCHITECTURE §10, §14b; docs/battles.md), for the account the call
 * authenticates (JWT only on REST). Battles are event-sourced (`battle-{id}` streams, `commands/battle.ts`);
 * commands and the detail answer from the battle's state, the list and the live snapshots from the `battles` read
 * models. An unknown id is `BATTLE_NOT_FOUND` 404, another account's battle `PERMISSION_DENIED` 403. Answers are
 * the battle views of `src/battle/present.ts`.
 */

const iso = (ms: number): string => new Date(ms).toISOString();
const callerOf = (call: Call): BattleCaller => ({ accountId: call.caller.accountId });
const commands = (call: Call) => battleServices(call.services).commands;

/**
 * Runs one battle command of the caller (`command` is given the battle commands, the caller and the call's command
 * metadata) and answers the battle view once the read models include it.
 */
const answered = async (
  call: Call,
  command: (
    battles: ReturnType<typeof commands>,
    caller: BattleCaller,
    meta: CommandMeta,
  ) => Promise<BattleOutcome>,
) => {
  const outcome = await command(commands(call), callerOf(call), commandMeta(call));
  await awaitReadModels(call, outcome.position);
  return battleOut(outcome.battle);
};

const invalidState = (battle: LoadedBattle, action: string, allowed: string[]) =>
  new DomainError('BATTLE_INVALID_STATE', `cannot ${action}: the battle is ${battle.state.status}`, {
    status: battle.state.status,
    allowed,
  });

/** Creates a draft battle (defaults: live, 10,000 USDT, `roi_pct`, no time limit). */
export const createBattle = async (call: Call, request: BattleRequest) =>
  answered(call, (c, caller, meta) => c.create(caller, request, meta));

/** The caller's battles, newest first (filter by status), with the total count. */
export const listBattles = async (
  call: Call,
  query: { status?: BattleStatusFilter | undefined; limit: number; offset: number },
) => {
  await settleOwnWrites(call, ['battles']);
  const { battles, total } = await readBattles(call.services.database.db, call.caller.accountId, {
    ...(query.status ? { status: query.status } : {}),
    limit: query.limit,
    offset: query.offset,
  });
  return { battles: battles.map((b) => battleRowOut(b.row, b.participants)), total };
};

/** The built-in presets (spec table), keyed by preset key. */
export const battlePresets = () => BATTLE_PRESETS;

/** A battle with its participants. */
export const getBattle = async (call: Call, id: string) =>
  battleOut(await commands(call).battle(callerOf(call), id));

/** Updates the configuration of a draft (absent fields keep their value; switching to `live` drops the backtest config). */
export const updateBattle = async (call: Call, id: string, changes: BattleChanges) =>
  answered(call, (c, caller, meta) => c.update(caller, id, changes, meta));

/** Deletes a draft, or cancels an active or paused battle; completed or cancelled: `BATTLE_INVALID_STATE` 409. */
export const deleteBattle = async (call: Call, id: string) => {
  const outcome = await commands(call).remove(callerOf(call), id, commandMeta(call));
  await awaitReadModels(call, outcome.position);
  return {
    battle_id: outcome.battle.id,
    status: outcome.battle.state.deleted ? ('deleted' as const) : ('cancelled' as const),
  };
};

/** Adds an agent of the caller to a draft. */
export const addParticipant = async (call: Call, id: string, agentId: string) =>
  answered(call, (c, caller, meta) => c.addParticipant(caller, id, agentId, meta));

/** Removes an agent from a draft. */
export const removeParticipant = async (call: Call, id: string, agentId: string) =>
  answered(call, (c, caller, meta) => c.removeParticipant(caller, id, agentId, meta));

/**
 * Locks the configuration and begins (at least 2 participants): live, every participant's wallet starts a fresh
 * session; historical, the virtual clock starts with one sandbox wallet per participant.
 */
export const startBattle = async (call: Call, id: string) =>
  answered(call, (c, caller, meta) => c.start(caller, id, meta));

/** Pauses one agent (it cannot place orders in this battle until resumed) or resumes it. */
export const pauseOrResumeAgent = async (
  call: Call,
  id: string,
  agentId: string,
  action: 'pause' | 'resume',
) => answered(call, (c, caller, meta) => c[action](caller, id, agentId, meta));

/** Ranks and completes an active or paused battle (`final_rankings`). */
export const stopBattle = async (call: Call, id: string) =>
  answered(call, (c, caller, meta) => c.stop(caller, id, meta));

/** A new draft from a completed battle, its configuration overridden and its agents replaced where given. */
export const replayBattle = async (
  call: Call,
  id: string,
  overrides: BattleChanges,
  agentIds: string[] | undefined,
) => answered(call, (c, caller, meta) => c.replay(caller, id, overrides, agentIds, meta));

/** Start and end (ms) of the window a battle's elapsed time is measured over: virtual for historical ones. */
const elapsedWindow = (b: LoadedBattle): { start: number; end: number } => {
  const s = b.state;
  const historical = s.config!.battle_mode === 'historical';
  const start = historical ? Date.parse(s.config!.backtest_config!.start_time) : Date.parse(s.startedAt!);
  const end = historical ? s.virtualTime! : s.endedAt ? Date.parse(s.endedAt) : Date.now();
  return { start, end };
};

const elapsedSeconds = (b: LoadedBattle): number => {
  const { start, end } = elapsedWindow(b);
  return Math.max(0, Math.floor((end - start) / 1000));
};

/**
 * Rankings now: live battles at live prices (activity inside the battle window only), historical ones at virtual
 * time, a completed battle its final rankings. A draft or cancelled battle: `BATTLE_INVALID_STATE` 409.
 */
export const liveRankings = async (call: Call, id: string) => {
  const b = await commands(call).battle(callerOf(call), id);
  const s = b.state;
  if (!['active', 'paused', 'completed'].includes(s.status!)) {
    throw invalidState(b, 'rank', ['active', 'paused', 'completed']);
  }
  const rankings =
    s.status === 'completed'
      ? s.finalRankings!.map(rankingOut)
      : s.config!.battle_mode === 'historical'
        ? historicalRankings(s, b.market!).rankings
        : (await battleServices(call.services).live.rank(b)).rankings;
  return { battle_id: b.id, status: s.status!, elapsed_seconds: elapsedSeconds(b), rankings };
};

/** Final results of a completed battle: rankings, completion, per-agent performance summaries. */
export const battleResults = async (call: Call, id: string) => {
  const b = await commands(call).battle(callerOf(call), id);
  const s = b.state;
  if (s.status !== 'completed') throw invalidState(b, 'read results', ['completed']);
  const names = new Map(s.participants.map((p) => [p.agentId, p.agentName]));
  return {
    battle_id: b.id,
    status: s.status,
    elapsed_seconds: elapsedSeconds(b),
    rankings: s.finalRankings!.map(rankingOut),
    completed_at: s.endedAt!,
    completion_reason: s.completionReason,
    performance: (s.summaries ?? []).map((x) => ({ ...x, agent_name: names.get(x.agent_id) ?? '' })),
  };
};

/**
 * Equity snapshots, oldest first: a historical battle's at every step of its virtual clock (from its state, so
 * it includes the step just answered), a live battle's every 5 s (the leader's snapshots from the read model),
 * participants in the order they joined.
 */
export const battleReplay = async (call: Call, id: string) => {
  const b = await commands(call).battle(callerOf(call), id);
  const s = b.state;
  if (s.config?.battle_mode === 'historical') {
    if (s.virtualTime === null) return { battle_id: b.id, snapshots: [] };
    const start = Date.parse(s.config.backtest_config!.start_time);
    const interval = intervalMsOf(s);
    return {
      battle_id: b.id,
      snapshots: Array.from({ length: s.step + 1 }, (_, step) => ({
        timestamp: iso(start + step * interval),
        participants: s.participants.map((p) => ({
          agent_id: p.agentId,
          agent_name: p.agentName,
          equity: p.equity[step] ?? s.config!.starting_balance,
        })),
      })),
    };
  }
  await settleOwnWrites(call, ['battles']);
  const names = new Map(s.participants.map((p) => [p.agentId, p.agentName]));
  const seq = new Map(s.participants.map((p, i) => [p.agentId, i]));
  const order = (agentId: string) => seq.get(agentId) ?? Number.MAX_SAFE_INTEGER;
  const rows = await battleSnapshots(call.services.database.db, b.id);
  return {
    battle_id: b.id,
    snapshots: rows.map((r) => ({
      timestamp: new Date(r.time).toISOString(),
      participants: [...r.participants]
        .sort((x, y) => order(x.agent_id) - order(y.agent_id))
        .map((x) => ({ agent_id: x.agent_id, agent_name: names.get(x.agent_id) ?? '', equity: x.equity })),
    })),
  };
};

/** Prices of every pair of a historical battle at its virtual time: the last close (no look-ahead). */
const pricesAt = (b: LoadedBattle): Record<string, string> => {
  if (b.state.config?.battle_mode !== 'historical') {
    throw new DomainError('BATTLE_INVALID_STATE', 'cannot read prices: this is a live battle', {
      battle_mode: 'live',
    });
  }
  const market = b.market;
  // Every started battle has a clock (a cancelled one was started: a draft is deleted, not cancelled).
  if (!market) throw invalidState(b, 'read prices', ['active', 'paused', 'completed', 'cancelled']);
  const closed = closedAt(market, b.state.virtualTime!);
  const prices: Record<string, string> = {};
  market.series.forEach((series, i) => {
    const n = closed[i]!;
    if (n > 0) prices[series.symbol] = series.candleAt(n - 1).close;
  });
  return prices;
};

/**
 * Advances a historical battle `steps` candles (clamped at the last): every participant's pending orders are
 * checked along each candle's path; the last step ranks and completes it. Only the completing step waits for the
 * read models (the list); others answer once durable.
 */
export const stepBattle = async (call: Call, id: string, steps: number) => {
  const outcome = await commands(call).step(callerOf(call), id, steps, commandMeta(call));
  const b = outcome.battle;
  const s = b.state;
  if (s.status === 'completed') await awaitReadModels(call, outcome.position);
  else if (outcome.position) call.receipt.position = outcome.position;
  const stepped = outcome.events.find((e) => e.type === 'BattleStepped');
  const total = s.config!.backtest_config!.total_steps;
  const equity = historicalEquity(s, b.market!);
  const startingBalance = dec(s.config!.starting_balance);
  return {
    battle_id: b.id,
    status: s.status!,
    virtual_time: iso(s.virtualTime!),
    step: s.step,
    total_steps: total,
    progress_pct: progressPct(s.step, total).toFixed(2),
    is_complete: s.step === total,
    prices: pricesAt(b),
    participants: s.participants.map((p) => ({
      agent_id: p.agentId,
      equity: equity[p.agentId]!,
      pnl: fmt(dec(equity[p.agentId]!).minus(startingBalance)),
      trade_count: p.fills.length,
    })),
    fills: stepped ? (stepped.data as { fills: number }).fills : 0,
  };
};

/**
 * An order of a participant's sandbox in a historical battle: the live order rules at virtual time, the live
 * placement's answer. A paused agent: `BATTLE_INVALID_STATE` 409; a rejection is recorded and thrown.
 */
export const placeBattleOrder = async (
  call: Call,
  id: string,
  agentId: string,
  order: OrderInput,
): Promise<SandboxPlacement> =>
  sandboxPlacement(await placeInBattle(call, id, agentId, order), 'the battle order');

/**
 * An OCO of a participant's sandbox in a historical battle (`order.list.kind === 'oco'`; docs/trading-rules.md,
 * "Order lists: OCO and bracket"): placed as {@link placeBattleOrder} through the same battle command and wallet
 * decider, answered as `POST /trade/order/oco` answers (the list and both legs); its legs fill on the candles of
 * later steps, the first cancelling the other.
 */
export const placeBattleOco = async (call: Call, id: string, agentId: string, order: OrderInput) =>
  ocoPlacementOut((await placeInBattle(call, id, agentId, order)) as WalletEvent[]);

/** Places an order (or a list) in a participant's sandbox; the wallet events it recorded. */
const placeInBattle = async (call: Call, id: string, agentId: string, order: OrderInput) => {
  const symbol = normalizeSymbol(order.symbol);
  const outcome = await commands(call)
    .placeOrder(callerOf(call), id, agentId, { ...order, symbol }, commandMeta(call))
    .catch(
      outsideSandboxPairs(
        call,
        symbol,
        'this battle (see its pairs in GET /battles/{id}, backtest_config.resolved_pairs)',
      ),
    );
  return outcome.events.flatMap((e) => (e.type === 'BattleSandboxEventRecorded' ? [e.data.event] : []));
};

/**
 * Cancels an open order of a participant's sandbox in a historical battle (the backtest sandbox's cancel, at the
 * battle's virtual time): its remaining lock is released. `ORDER_NOT_FOUND` when no sandbox of the battle holds the
 * order open (unknown, or already filled or cancelled); a live battle: `BATTLE_INVALID_STATE` 409.
 */
export const cancelBattleOrder = async (
  call: Call,
  id: string,
  orderId: string,
): Promise<OrderCancelledData> => {
  const outcome = await commands(call).cancelOrder(callerOf(call), id, orderIdOf(orderId), commandMeta(call));
  for (const e of outcome.events) {
    if (e.type === 'BattleSandboxEventRecorded' && e.data.event.type === 'OrderCancelled') {
      return e.data.event.data;
    }
  }
  throw new DomainError('INTERNAL_ERROR', 'nothing was cancelled');
};

/** Prices of a historical battle at its virtual time. */
export const battlePrices = async (call: Call, id: string) => {
  const b = await commands(call).battle(callerOf(call), id);
  const prices = pricesAt(b);
  return { battle_id: b.id, virtual_time: iso(b.state.virtualTime!), prices };
};
