import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { SessionMarket } from '../domain/backtest/market';
import type { AgentInfo, BattleCommand, ParticipantStart } from '../domain/battle/commands';
import { type BattleRequest, requestOf, validateBattleConfig } from '../domain/battle/config';
import { assertStartable, battleDecider, battleNotFound } from '../domain/battle/decide';
import {
  type BattleEvent,
  battleStreamId,
  type PerformanceSummaryEntry,
  type RankingEntry,
  type ReplayFill,
} from '../domain/battle/events';
import type { BattleState } from '../domain/battle/state';
import { DEFAULT_PARTICIPATION_PCT } from '../domain/fill-model/model';
import { DomainError, nestedUnder } from '../domain/shared/errors';
import { canonicalId, isUuid } from '../domain/shared/uuid';
import { ownerStatusError } from '../domain/trading/risk';
import type { OrderRequest } from '../domain/wallet/commands';
import type { EventStore, LogPosition } from '../ports/event-store';
import { onAppendConflict } from './append-conflict';
import { type AgentStanding, type BacktestMarketSource, checkedMarket, decisionIds } from './backtest';
import { agentBattleLock, battleStartLock } from './battle-locks';
import { KeyedMutex } from './keyed-mutex';
import { type CommandMeta, withCommandMetadata } from './metadata';
import { rejectionError } from './wallet';

/** A battle in memory: its state (the fold of its stream) and, for a started historical battle, its candles. */
export interface LoadedBattle {
  id: string;
  state: BattleState;
  revision: number;
  market?: SessionMarket;
  /** `$all` position of the last event this process appended to it. */
  position?: LogPosition;
}

/** What a command did. */
export interface BattleOutcome {
  battle: LoadedBattle;
  events: BattleEvent[];
  position?: LogPosition;
}

/** What the live mode needs from trading (wired in `src/battle/install.ts`). */
export interface LiveBattlePort {
  /**
   * Starts a fresh wallet session for the agent with `startingBalance` USDT (ARCHITECTURE §10: through the wallet
   * commands, history kept); returns the new session id and the wallet revision it starts after.
   */
  startSession(
    accountId: string,
    agentId: string,
    startingBalance: string,
    meta: CommandMeta,
  ): Promise<{ sessionId: string; revision: number }>;
  /** The running live battle (active or paused) the agent takes part in, if any. */
  runningBattleOf(agentId: string): Promise<string | undefined>;
  /** Ranks a live battle's participants now (equity at live prices, fills inside the battle window). */
  rank(battle: LoadedBattle): Promise<{ rankings: RankingEntry[]; summaries: PerformanceSummaryEntry[] }>;
}

/**
 * Decides a historical battle's `StepBattle` — in process or on a worker thread (`src/backtest/stepper.ts`,
 * issue 24 item 4); either way the battle decider's own events for the state, revision (ids derive from it) and
 * wall clock given.
 */
export interface BattleStepper {
  step(request: {
    battleId: string;
    /** The revision the decision's first event is appended at. */
    revision: number;
    state: BattleState;
    steps: number;
    now: Date;
    market: SessionMarket;
  }): Promise<BattleEvent[]>;
}

/** Dependencies of {@link createBattleCommands}. */
export interface BattleCommandDeps {
  /** Where historical battles' steps are decided (default: in process, by the decider). */
  stepper?: BattleStepper;
  store: EventStore;
  /** An agent of the account as the accounts capability knows it (undefined: unknown or another account's). */
  agentInfo: (accountId: string, agentId: string) => Promise<AgentInfo | undefined>;
  market: () => BacktestMarketSource | undefined;
  /**
   * A participant's standing now (as `BacktestCommandDeps.agentStanding`), asked before its new historical sandbox
   * order; absent: not asked.
   */
  agentStanding?: (accountId: string, agentId: string) => Promise<AgentStanding | undefined>;
  live: LiveBattlePort;
  /** Fee per fill as a fraction (decimal string), fixed per battle at creation (historical sandboxes): taker. */
  feeRate: string;
  /** The maker rate (decimal string), fixed per battle at creation; absent: {@link feeRate}. */
  makerFeeRate?: string;
  now?: () => Date;
  /** Battles kept in memory (default 32). */
  cacheSize?: number;
  maxAttempts?: number;
  /**
   * Runs `fn` while no other section of this or another process holds any of `names` (`src/db/exclusive.ts`;
   * default: just runs it). A battle's start runs under {@link battleStartLock} and the
   * {@link agentBattleLock} of each participant: a live start's wallet resets span streams, so two processes
   * starting one battle at once would otherwise both reset every participant's wallet, and an agent's deletion
   * could slip in (of either mode: a deletion refuses an agent of any running battle).
   */
  exclusive?: <T>(names: string | readonly string[], fn: () => Promise<T>) => Promise<T>;
  /** Waits until the read models include `position` (bounded); a live start holds its locks until then. */
  settled?: (position: LogPosition) => Promise<unknown>;
}

/** The participants of a battle changed between the locks being chosen and the start (the start retries). */
class ParticipantsChanged extends Error {}

/** How often a start retries when participants change under it before it gives up with a 409. */
const START_ATTEMPTS = 5;

/** The caller of a battle endpoint: an account (battles are JWT only, spec "Authentication" rule 3). */
export interface BattleCaller {
  accountId: string;
}

/** Config fields a `PUT /battles/{id}` may change (absent = unchanged). */
export type BattleChanges = Partial<BattleRequest>;

/** The battle write side (ARCHITECTURE §4, §10). Every method checks that the caller's account owns the battle. */
export interface BattleCommands {
  create(caller: BattleCaller, request: BattleRequest, meta: CommandMeta): Promise<BattleOutcome>;
  update(caller: BattleCaller, id: string, changes: BattleChanges, meta: CommandMeta): Promise<BattleOutcome>;
  addParticipant(
    caller: BattleCaller,
    id: string,
    agentId: string,
    meta: CommandMeta,
  ): Promise<BattleOutcome>;
  removeParticipant(
    caller: BattleCaller,
    id: string,
    agentId: string,
    meta: CommandMeta,
  ): Promise<BattleOutcome>;
  start(caller: BattleCaller, id: string, meta: CommandMeta): Promise<BattleOutcome>;
  pause(caller: BattleCaller, id: string, agentId: string, meta: CommandMeta): Promise<BattleOutcome>;
  resume(caller: BattleCaller, id: string, agentId: string, meta: CommandMeta): Promise<BattleOutcome>;
  stop(caller: BattleCaller, id: string, meta: CommandMeta): Promise<BattleOutcome>;
  /** `DELETE /battles/{id}`: deletes a draft, cancels an active or paused battle. */
  remove(caller: BattleCaller, id: string, meta: CommandMeta): Promise<BattleOutcome>;
  /**
   * `POST /battles/{id}/replay`: a new draft from a completed battle, with the fee rates the original recorded.
   * A configuration the overrides make invalid is `VALIDATION_ERROR` naming `override_config.<field>`.
   */
  replay(
    caller: BattleCaller,
    id: string,
    override: BattleChanges,
    agentIds: string[] | undefined,
    meta: CommandMeta,
  ): Promise<BattleOutcome>;
  step(caller: BattleCaller, id: string, steps: number, meta: CommandMeta): Promise<BattleOutcome>;
  /** A historical sandbox order; a risk-chain rejection is recorded, then thrown with the rule named. */
  placeOrder(
    caller: BattleCaller,
    id: string,
    agentId: string,
    order: OrderRequest,
    meta: CommandMeta,
  ): Promise<BattleOutcome>;
  /** Cancels an open historical sandbox order (whichever participant's it is); `ORDER_NOT_FOUND` when none. */
  cancelOrder(caller: BattleCaller, id: string, orderId: string, meta: CommandMeta): Promise<BattleOutcome>;
  /** System commands of the snapshot leader (no caller): a live snapshot, the end of `duration_minutes`. */
  recordSnapshot(
    id: string,
    participants: { agentId: string; equity: string }[],
    meta: CommandMeta,
  ): Promise<BattleOutcome>;
  expire(id: string, meta: CommandMeta): Promise<BattleOutcome>;
  /** The battle (owned by the caller), with its candles loaded when it is a started historical battle. */
  battle(caller: BattleCaller, id: string): Promise<LoadedBattle>;
  /** The battle without an ownership check (system readers: the snapshot leader). */
  load(id: string): Promise<LoadedBattle>;
  /**
   * The battle (owned by the caller: else `PERMISSION_DENIED`; unknown or deleted: `BATTLE_NOT_FOUND`) as its
   * stream folds it, without loading its candles (`LoadedBattle.market` is what an earlier command left, maybe
   * none): for readers that need none — the WebSocket channel's follower — so following a finished historical
   * battle works when its market data changed or this server has no market source.
   */
  state(caller: BattleCaller, id: string): Promise<LoadedBattle>;
  clear(): void;
}

const permissionDenied = (id: string) =>
  new DomainError('PERMISSION_DENIED', 'this battle belongs to another account', { battle_id: id });

/** Business time of a battle event: virtual time for a historical battle's steps and sandbox, else the wall clock. */
const occurredAt = (e: BattleEvent, fallback: string): string => {
  switch (e.type) {
    case 'BattleStepped':
      return e.data.to_time;
    case 'BattleSnapshotRecorded':
      return e.data.timestamp;
    default:
      return fallback;
  }
};

/**
 * The battle command handler: battles are loaded from their stream (a bounded cache), decided by the pure battle
 * decider with deterministic ids (`decisionIds`, as backtests) and the wall clock, and appended with the expected
 * revision; commands of one battle run one at a time in this process, a conflict with another process reloads
 * and decides again. Historical battles load their candles from the market store (checked against the fingerprint
 * recorded at start), so they survive restarts.
 */
export const createBattleCommands = (deps: BattleCommandDeps): BattleCommands => {
  const cache = new LRUCache<string, LoadedBattle>({ max: deps.cacheSize ?? 32 });
  const perBattle = new KeyedMutex();
  const now = deps.now ?? (() => new Date());
  const maxAttempts = deps.maxAttempts ?? 4;

  const remember = (battle: LoadedBattle) => {
    cache.set(battle.id, battle);
  };

  const load = async (raw: string): Promise<LoadedBattle> => {
    if (!isUuid(raw)) throw battleNotFound();
    const id = canonicalId(raw);
    const cached = cache.get(id);
    if (cached) {
      // Other processes append too (the snapshot leader, another API process): catch up with what they added.
      const newer = await deps.store.readStream(battleStreamId(id), { fromRevision: cached.revision + 1 });
      for (const e of newer) {
        cached.state = battleDecider.evolve(cached.state, { type: e.type, data: e.data } as BattleEvent);
        cached.revision = e.revision;
      }
      remember(cached);
      if (cached.state.deleted) throw battleNotFound();
      return cached;
    }
    const recorded = await deps.store.readStream(battleStreamId(id));
    if (recorded.length === 0) throw battleNotFound();
    let state = battleDecider.initialState();
    for (const e of recorded)
      state = battleDecider.evolve(state, { type: e.type, data: e.data } as BattleEvent);
    const battle: LoadedBattle = { id, state, revision: recorded[recorded.length - 1]!.revision };
    remember(battle);
    if (!state.config || state.deleted) throw battleNotFound();
    return battle;
  };

  const authorize = (battle: LoadedBattle, caller: BattleCaller | null) => {
    if (caller && battle.state.accountId !== caller.accountId) throw permissionDenied(battle.id);
  };

  const source = (): BacktestMarketSource => {
    const s = deps.market();
    if (!s) throw new DomainError('SERVICE_UNAVAILABLE', 'market data is not available on this server');
    return s;
  };

  /** A started historical battle's candles (loaded once, checked against the start's fingerprint). */
  const ensureMarket = (battle: LoadedBattle): SessionMarket | undefined => {
    if (battle.market) return battle.market;
    const { state } = battle;
    const bc = state.config?.backtest_config;
    if (!bc || state.status === 'draft') return undefined;
    battle.market = checkedMarket(
      source().load(bc.pairs, bc.candle_interval, Date.parse(bc.end_time)),
      state.fingerprint,
      'SERVICE_UNAVAILABLE',
      'battle',
      { battle_id: battle.id },
    );
    return battle.market;
  };

  const append = async (
    id: string,
    revision: number | 'no_stream',
    events: BattleEvent[],
    meta: CommandMeta,
  ) => {
    const at = now().toISOString();
    return deps.store.append(
      battleStreamId(id),
      withCommandMetadata(events, meta, (e) => occurredAt(e, at)),
      { expectedRevision: revision },
    );
  };

  /** Decides and appends one command on a battle (inside its mutex), retrying on a conflict with another process. */
  const execute = (
    raw: string,
    caller: BattleCaller | null,
    meta: CommandMeta,
    prepare: (battle: LoadedBattle) => Promise<BattleCommand> | BattleCommand,
  ): Promise<BattleOutcome> => {
    const id = canonicalId(raw);
    return perBattle.run(id, async () => {
      for (let attempt = 1; ; attempt++) {
        const battle = await load(id);
        authorize(battle, caller);
        const command = await prepare(battle);
        const market = ensureMarket(battle);
        const catalog = command.type === 'UpdateBattle' ? deps.market()?.catalog() : undefined;
        const at = now();
        const events =
          deps.stepper && market && command.type === 'StepBattle'
            ? await deps.stepper.step({
                battleId: id,
                revision: battle.revision + 1,
                state: battle.state,
                steps: command.data.steps,
                now: at,
                market,
              })
            : battleDecider.decide(command, battle.state, {
                now: at,
                newId: decisionIds(id, battle.revision + 1),
                ...(market ? { market } : {}),
                ...(catalog ? { catalog } : {}),
              });
        if (events.length === 0) return { battle, events };
        try {
          const result = await append(id, battle.revision, events, meta);
          let state = battle.state;
          for (const e of events) state = battleDecider.evolve(state, e);
          battle.state = state;
          battle.revision = result.nextRevision;
          battle.position = result.position;
          return { battle, events, position: result.position };
        } catch (error) {
          onAppendConflict(error, attempt, maxAttempts, () => cache.delete(id));
        }
      }
    });
  };

  const agentOf = async (caller: BattleCaller, raw: string): Promise<AgentInfo> => {
    const agentId = canonicalId(raw);
    const agent = await deps.agentInfo(caller.accountId, agentId);
    if (!agent) {
      throw new DomainError('PERMISSION_DENIED', 'agent_id is not an agent of this account', {
        agent_id: agentId,
      });
    }
    return agent;
  };

  /**
   * Refuses a participant's new sandbox order when the agent is archived, as live trading's first risk rule does
   * whatever the credential (`PERMISSION_DENIED` 403, `details.reason` `agent_archived`), or no longer exists
   * (`PERMISSION_DENIED`, as for an agent not of the account); nothing is recorded. Only a participant is asked:
   * the decider answers any other agent id. The battle's steps are not refused: they advance every participant,
   * and an archived participant's resting orders keep working, as a live archived agent's do.
   */
  const requireParticipantActive = async (battle: LoadedBattle, agentId: string) => {
    if (!deps.agentStanding || !battle.state.participants.some((p) => p.agentId === agentId)) return;
    const standing = await deps.agentStanding(battle.state.accountId!, agentId);
    if (!standing) {
      throw new DomainError('PERMISSION_DENIED', 'agent_id is not an agent of this account', {
        agent_id: agentId,
      });
    }
    const refused = ownerStatusError(
      { type: 'agent', ...standing },
      { agent_id: agentId, battle_id: battle.id },
    );
    if (refused) throw refused;
  };

  const createDraft = async (
    caller: BattleCaller,
    request: BattleRequest,
    participants: AgentInfo[],
    replayOf: string | null,
    meta: CommandMeta,
    /**
     * What a replay carries from its original: the fee rates it recorded and, historical, its participants' fill
     * settings; a new battle records the venue's rates in effect.
     */
    carried: { feeRate: string; makerFeeRate: string; replayFills?: ReplayFill[] } = {
      feeRate: deps.feeRate,
      makerFeeRate: deps.makerFeeRate ?? deps.feeRate,
    },
  ): Promise<BattleOutcome> => {
    const id = randomUUID();
    const historical = request.battleMode === 'historical';
    const events = battleDecider.decide(
      {
        type: 'CreateBattle',
        data: {
          battleId: id,
          accountId: caller.accountId,
          request,
          feeRate: carried.feeRate,
          makerFeeRate: carried.makerFeeRate,
          replayOf,
          ...(carried.replayFills ? { replayFills: carried.replayFills } : {}),
          participants,
        },
      },
      battleDecider.initialState(),
      { now: now(), newId: decisionIds(id, 0), ...(historical ? { catalog: source().catalog() } : {}) },
    );
    const result = await append(id, 'no_stream', events, meta);
    let state = battleDecider.initialState();
    for (const e of events) state = battleDecider.evolve(state, e);
    const battle: LoadedBattle = { id, state, revision: result.nextRevision, position: result.position };
    remember(battle);
    return { battle, events, position: result.position };
  };

  /**
   * A read of the battle: caught up with its stream in the battle's mutex, as commands are (the cached state is
   * advanced there); `caller` null skips the ownership check (system readers); `withMarket` loads a started
   * historical battle's candles.
   */
  const read = (id: string, caller: BattleCaller | null, withMarket: boolean) =>
    perBattle.run(canonicalId(id), async () => {
      const battle = await load(id);
      authorize(battle, caller);
      if (withMarket) ensureMarket(battle);
      return battle;
    });

  /** The current configuration with the client's changes; switching to live drops `backtest_config`. */
  const merged = (state: BattleState, changes: BattleChanges): BattleRequest => {
    const base = requestOf(state.config!);
    const out: BattleRequest = { ...base };
    for (const [k, v] of Object.entries(changes))
      if (v !== undefined) (out as unknown as Record<string, unknown>)[k] = v;
    if (changes.battleMode === 'live' && changes.backtestConfig === undefined) out.backtestConfig = null;
    if (changes.battleMode === 'historical' && changes.durationMinutes === undefined)
      out.durationMinutes = null;
    return out;
  };

  const exclusive = deps.exclusive ?? (<T>(_names: string | readonly string[], fn: () => Promise<T>) => fn());

  /**
   * Starts a battle (ARCHITECTURE §10): historical, with the candles of its sandboxes; live, after a fresh wallet
   * session for every participant. Runs under `exclusive` (see {@link BattleCommandDeps.exclusive}) with the
   * agent locks of `locked` (lower-case ids, live or historical); throws {@link ParticipantsChanged} when a
   * participant is not among them.
   */
  const startBattle = (
    caller: BattleCaller,
    id: string,
    meta: CommandMeta,
    locked: ReadonlySet<string>,
  ): Promise<BattleOutcome> =>
    execute(id, caller, meta, async (battle): Promise<BattleCommand> => {
      assertStartable(battle.state);
      if (battle.state.participants.some((p) => !locked.has(p.agentId.toLowerCase()))) {
        throw new ParticipantsChanged();
      }
      const config = battle.state.config!;
      const participants: ParticipantStart[] = [];
      const agents: AgentInfo[] = [];
      for (const p of battle.state.participants) agents.push(await agentOf(caller, p.agentId));
      for (const a of agents) {
        if (a.status === 'archived') {
          throw new DomainError('PERMISSION_DENIED', `agent ${a.agentId} is archived`, {
            agent_id: a.agentId,
            reason: 'agent_archived',
          });
        }
      }
      if (config.battle_mode === 'historical') {
        const bc = config.backtest_config!;
        const loaded = source().load(bc.pairs, bc.candle_interval, Date.parse(bc.end_time));
        if ('error' in loaded) throw new DomainError('SERVICE_UNAVAILABLE', loaded.error, { battle_id: id });
        battle.market = loaded.market;
        for (const a of agents) {
          // A replay's participant of the original fills as it did there (BattleCreated.replay_fills).
          const carried = battle.state.replayFills?.find((f) => f.agent_id === a.agentId);
          participants.push({
            agentId: a.agentId,
            riskProfile: a.riskProfile,
            fillModel: carried?.fill_model ?? a.fillModel ?? 'realistic',
            participationPct: carried?.participation_pct ?? a.participationPct ?? DEFAULT_PARTICIPATION_PCT,
            walletSessionId: null,
            walletRevision: null,
          });
        }
        return { type: 'StartBattle', data: { participants, fingerprint: loaded.fingerprint } };
      }
      // One wallet cannot hold two battles' sessions: an agent in another running live battle cannot start here.
      for (const a of agents) {
        const other = await deps.live.runningBattleOf(a.agentId);
        if (other && other !== id) {
          throw new DomainError(
            'BATTLE_INVALID_STATE',
            `agent ${a.agentId} is in the running live battle ${other}; stop or cancel it first`,
            { agent_id: a.agentId, battle_id: other, reason: 'agent_in_another_battle' },
          );
        }
      }
      // Live: every participant's wallet begins a fresh session with the battle's starting balance first
      // (ARCHITECTURE §10); the battle records where each session began.
      for (const a of agents) {
        const s = await deps.live.startSession(caller.accountId, a.agentId, config.starting_balance, meta);
        participants.push({
          agentId: a.agentId,
          riskProfile: a.riskProfile,
          walletSessionId: s.sessionId,
          walletRevision: s.revision,
        });
      }
      return { type: 'StartBattle', data: { participants, fingerprint: null } };
    });

  return {
    create: (caller, request, meta) => createDraft(caller, request, [], null, meta),

    update: (caller, id, changes, meta) =>
      execute(id, caller, meta, (b) => ({
        type: 'UpdateBattle',
        data: { request: merged(b.state, changes) },
      })),

    addParticipant: async (caller, id, agentId, meta) => {
      const agent = await agentOf(caller, agentId);
      return execute(id, caller, meta, () => ({ type: 'AddParticipant', data: { agent } }));
    },

    removeParticipant: (caller, id, agentId, meta) =>
      execute(id, caller, meta, () => ({
        type: 'RemoveParticipant',
        data: { agentId: canonicalId(agentId) },
      })),

    start: async (caller, id, meta) => {
      for (let attempt = 1; ; attempt++) {
        // Read like every command (one at a time per battle): `load` catches the cached state up in place.
        const planned = await perBattle.run(canonicalId(id), () => load(id));
        // Every participant's lock, live or historical: an agent's deletion (which refuses an agent of a running
        // battle of either mode) then cannot slip between the start's check of the agents and its `BattleStarted`.
        const agents = planned.state.participants.map((p) => p.agentId.toLowerCase());
        try {
          return await exclusive([battleStartLock(id), ...agents.map(agentBattleLock)], async () => {
            const outcome = await startBattle(caller, id, meta, new Set(agents));
            // Until the read models show the battle running, an agent's deletion checking them would pass.
            if (agents.length > 0 && outcome.position) await deps.settled?.(outcome.position);
            return outcome;
          });
        } catch (error) {
          if (!(error instanceof ParticipantsChanged)) throw error;
          if (attempt >= START_ATTEMPTS) {
            throw new DomainError('BATTLE_INVALID_STATE', 'the participants keep changing; start again', {
              battle_id: canonicalId(id),
              reason: 'participants_changed',
            });
          }
        }
      }
    },

    pause: (caller, id, agentId, meta) =>
      execute(id, caller, meta, () => ({ type: 'PauseAgent', data: { agentId: canonicalId(agentId) } })),
    resume: (caller, id, agentId, meta) =>
      execute(id, caller, meta, () => ({ type: 'ResumeAgent', data: { agentId: canonicalId(agentId) } })),

    stop: (caller, id, meta) =>
      execute(id, caller, meta, async (battle) => ({
        type: 'StopBattle',
        data: {
          reason: 'stopped',
          ...(battle.state.config?.battle_mode === 'live' &&
          ['active', 'paused'].includes(battle.state.status ?? '')
            ? { live: await deps.live.rank(battle) }
            : {}),
        },
      })),

    expire: (id, meta) =>
      execute(id, null, meta, async (battle) => ({
        type: 'StopBattle',
        data: {
          reason: 'duration_elapsed',
          ...(['active', 'paused'].includes(battle.state.status ?? '')
            ? { live: await deps.live.rank(battle) }
            : {}),
        },
      })),

    remove: (caller, id, meta) => execute(id, caller, meta, () => ({ type: 'DeleteBattle', data: {} })),

    async replay(caller, raw, override, agentIds, meta) {
      const id = canonicalId(raw);
      const original = await perBattle.run(id, () => load(id));
      authorize(original, caller);
      if (original.state.status !== 'completed') {
        throw new DomainError(
          'BATTLE_INVALID_STATE',
          `only a completed battle can be replayed: the battle is ${original.state.status}`,
          { status: original.state.status, allowed: ['completed'] },
        );
      }
      const ids = agentIds ?? original.state.participants.map((p) => p.agentId);
      const agents: AgentInfo[] = [];
      for (const agentId of ids) agents.push(await agentOf(caller, agentId));
      // A replay reproduces its original: the fee rates it recorded (taker and maker), not today's configuration,
      // and — historical — the fill model and participation share each participant's sandbox started with, not the
      // agent wallet's settings at the replay's start.
      const request = merged(original.state, override);
      const historical =
        original.state.config?.battle_mode === 'historical' && request.battleMode === 'historical';
      // The original's configuration was valid: what the draft's validation would refuse came from the overrides,
      // so it names the field under `override_config`, as the body's schema does (`name` → `override_config.name`).
      nestedUnder('override_config', () =>
        validateBattleConfig(request, request.battleMode === 'historical' ? source().catalog() : undefined),
      );
      return createDraft(caller, request, agents, id, meta, {
        feeRate: original.state.feeRate,
        makerFeeRate: original.state.makerFeeRate,
        ...(historical
          ? {
              replayFills: original.state.participants.map((p) => ({
                agent_id: p.agentId,
                fill_model: p.fillModel,
                participation_pct: p.participationPct,
              })),
            }
          : {}),
      });
    },

    step: (caller, id, steps, meta) =>
      execute(id, caller, meta, () => ({ type: 'StepBattle', data: { steps } })),

    async placeOrder(caller, id, agentId, order, meta) {
      const outcome = await execute(id, caller, meta, async (battle) => {
        await requireParticipantActive(battle, canonicalId(agentId));
        return { type: 'PlaceBattleOrder', data: { agentId: canonicalId(agentId), order } };
      });
      for (const e of outcome.events) {
        if (e.type === 'BattleSandboxEventRecorded' && e.data.event.type === 'OrderRejected') {
          throw rejectionError(e.data.event.data);
        }
      }
      return outcome;
    },

    cancelOrder: (caller, id, orderId, meta) =>
      execute(id, caller, meta, () => ({ type: 'CancelBattleOrder', data: { orderId } })),

    recordSnapshot: (id, participants, meta) =>
      execute(id, null, meta, () => ({ type: 'RecordSnapshot', data: { participants } })),

    battle: (caller, id) => read(id, caller, true),
    state: (caller, id) => read(id, caller, false),
    load: (id) => read(id, null, true),

    clear: () => cache.clear(),
  };
};
