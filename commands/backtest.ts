import { createHash, randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { BacktestCatalog, BacktestCommand, BacktestRequest } from '../domain/backtest/commands';
import { backtestDecider } from '../domain/backtest/decide';
import {
  BACKTEST_STEPPED_VERSION,
  type BacktestStreamEvent,
  backtestStreamId,
  isBacktestEvent,
  SESSION_ID_PATTERN,
} from '../domain/backtest/events';
import type { SessionMarket } from '../domain/backtest/market';
import { SandboxLog } from '../domain/backtest/sandbox-log';
import type { BacktestState } from '../domain/backtest/state';
import { DEFAULT_PARTICIPATION_PCT, type FillModelName } from '../domain/fill-model/model';
import type { Interval } from '../domain/market/intervals';
import { DomainError, type ErrorCode } from '../domain/shared/errors';
import type { RiskProfile } from '../domain/shared/risk-profile';
import { clipEcho } from '../domain/shared/text';
import { canonicalId } from '../domain/shared/uuid';
import { ownerStatusError } from '../domain/trading/risk';
import type { OrderRequest } from '../domain/wallet/commands';
import type { EventStore, LogPosition } from '../ports/event-store';
import { onAppendConflict } from './append-conflict';
import { KeyedMutex } from './keyed-mutex';
import { type CommandMeta, withCommandMetadata } from './metadata';
import { rejectionError } from './wallet';

/**
 * The candles a market source `loaded` for a session or battle that is under way, checked against the fingerprint
 * recorded when it started (`null`: none recorded, nothing to check): a load error, or candles that changed since
 * (it could not continue deterministically), is a `DomainError` of `code` with `details`.
 */
export const checkedMarket = (
  loaded: ReturnType<BacktestMarketSource['load']>,
  fingerprint: string | null,
  code: ErrorCode,
  what: 'session' | 'battle',
  details: Record<string, unknown>,
): SessionMarket => {
  if ('error' in loaded) throw new DomainError(code, loaded.error, details);
  if (fingerprint !== null && loaded.fingerprint !== fingerprint) {
    throw new DomainError(
      code,
      `the market data of this ${what} changed since it started; it cannot continue deterministically`,
      details,
    );
  }
  return loaded.market;
};

/** Where a backtest's candles come from (adapted from `services.market` in `src/backtest`). */
export interface BacktestMarketSource {
  /** Pairs and their data ranges, for validating a new session. */
  catalog(): BacktestCatalog;
  /**
   * The session's candles at `interval` (every candle of each pair closed by `end`, history included), with a
   * fingerprint of what was loaded; or why they cannot be loaded.
   */
  load(
    pairs: readonly string[],
    interval: Interval,
    end: number,
  ): { market: SessionMarket; fingerprint: string } | { error: string };
}

/** The caller of a session endpoint: an account, optionally scoped to one of its agents. */
export interface Caller {
  accountId: string;
  agentId?: string | null;
}

/** The agent a session copies its risk profile from, as the accounts capability knows it. */
export interface AgentProfile {
  agentId: string;
  accountId: string;
  status: 'active' | 'suspended' | 'archived';
  riskProfile: RiskProfile;
  /** The agent wallet's fill model, copied into the session (absent: `realistic`, a new wallet's). */
  fillModel?: FillModelName | undefined;
  /** The agent wallet's participation share (%), copied into the session (absent: 10, a new wallet's). */
  participationPct?: number | undefined;
}

/**
 * The status of a session's agent and of its account as live trading reads them (`undefined`: the agent no longer
 * exists, or is not the account's).
 */
export interface AgentStanding {
  status: 'active' | 'suspended' | 'archived';
  accountStatus: 'active' | 'suspended' | 'archived';
}

/** A session in memory: its state (the fold of its stream), its sandbox log and, once loaded, its candles. */
export interface LoadedSession {
  id: string;
  state: BacktestState;
  revision: number;
  log: SandboxLog;
  market?: SessionMarket;
  /** `$all` position of the last event this process appended to it (read models wait for it). */
  position?: LogPosition;
}

/** What a command did. */
export interface BacktestOutcome {
  session: LoadedSession;
  events: BacktestStreamEvent[];
  /** `$all` position of the last new event (absent when nothing was recorded). */
  position?: LogPosition;
}

/** The backtest write side (ARCHITECTURE §4, §9). Every method checks that the caller owns the session. */
export interface BacktestCommands {
  create(
    caller: Caller,
    agentId: string,
    request: BacktestRequest,
    meta: CommandMeta,
  ): Promise<BacktestOutcome>;
  start(caller: Caller, id: string, meta: CommandMeta): Promise<BacktestOutcome>;
  step(caller: Caller, id: string, steps: number, meta: CommandMeta): Promise<BacktestOutcome>;
  cancel(caller: Caller, id: string, meta: CommandMeta): Promise<BacktestOutcome>;
  /** A sandbox order; a risk-chain rejection is recorded, then thrown with the rule named. */
  placeOrder(caller: Caller, id: string, order: OrderRequest, meta: CommandMeta): Promise<BacktestOutcome>;
  cancelOrder(caller: Caller, id: string, orderId: string, meta: CommandMeta): Promise<BacktestOutcome>;
  /** The session (owned by the caller), with its candles loaded when it has started. */
  session(caller: Caller, id: string, options?: { market?: boolean }): Promise<LoadedSession>;
  /** Drops every session from memory (tests: as after a restart). */
  clear(): void;
  /** Drops these sessions from memory (their streams were deleted: an agent's deletion). */
  forget(ids: readonly string[]): void;
}

/** What a {@link BacktestStepper} decides: one `StepBacktest` of a running session. */
export interface StepRequest {
  sessionId: string;
  /** The revision the decision's first event is appended at (the stream's + 1); its ids derive from it ({@link decisionIds}). */
  revision: number;
  state: BacktestState;
  steps: number;
  now: Date;
  market: SessionMarket;
}

/**
 * Where `StepBacktest` decisions run (issue 24 item 4): the same decider (`stepBacktestSliced`), off the request
 * thread — `src/backtest/stepper.ts` runs it on worker threads, slice by slice, so a long batch never holds the
 * event loop. Resolves to exactly the events the in-process decider would decide; rejects with the decider's
 * `DomainError` when it refuses. An event may come with its data already encoded (`dataText`, the canonical JSON
 * of its whole data: `NewEvent.dataText`), and its `data` then without the keys this thread never reads (a
 * `BacktestStepped`'s packed equity, `BACKTEST_STEPPED_ELIDED.key`): the fold and the step response read none of
 * them, and the append stores the bytes.
 */
export interface BacktestStepper {
  step(request: StepRequest): Promise<SteppedEvent[]>;
}

/** An event a {@link BacktestStepper} decided, possibly with its data already encoded (see there). */
export type SteppedEvent = BacktestStreamEvent & { dataText?: Uint8Array };

/** Dependencies of {@link createBacktestCommands}. */
export interface BacktestCommandDeps {
  store: EventStore;
  market: () => BacktestMarketSource | undefined;
  /** The agent's current profile (undefined: unknown, or not an agent of the account). */
  agentProfile: (accountId: string, agentId: string) => Promise<AgentProfile | undefined>;
  /**
   * The session's agent's standing now, asked before each start, step and new order (live trading's source: an
   * archive applies at once). Absent: not asked (every agent counts as active).
   */
  agentStanding?: (accountId: string, agentId: string) => Promise<AgentStanding | undefined>;
  /** Fee per fill as a fraction (decimal string), fixed per session at creation: the taker rate. */
  feeRate: string;
  /** The maker rate (decimal string), fixed per session at creation; absent: {@link feeRate}. */
  makerFeeRate?: string;
  /** Wall clock (default: `new Date()`). */
  now?: () => Date;
  /** Sessions kept in memory with their candles (default 16; least recently used dropped first). */
  cacheSize?: number;
  /** Attempts on a revision conflict with another process (default 4). */
  maxAttempts?: number;
  /** Runs `StepBacktest` decisions off the request thread (default: decided in process, on the caller's thread). */
  stepper?: BacktestStepper;
}

/**
 * Deterministic ids of a decision: UUIDs (version 8, RFC 9562 "custom") from SHA-256 of the session, the revision
 * the decision is appended at and a counter, so replaying the same commands gives the same order and trade ids.
 */
export const decisionIds = (sessionId: string, revision: number): (() => string) => {
  let n = 0;
  return () => {
    const h = createHash('sha256').update(`${sessionId}:${revision}:${n++}`).digest('hex');
    const variant = ((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  };
};

/** Business time of an event (metadata `occurred_at`): virtual time for everything after the creation. */
const occurredAt = (e: BacktestStreamEvent): string => {
  switch (e.type) {
    case 'BacktestCreated':
      return e.data.created_at;
    case 'BacktestStarted':
      return e.data.virtual_time;
    case 'BacktestStepped':
      return e.data.to_time;
    case 'BacktestCompleted':
    case 'BacktestCancelled':
      return e.data.virtual_time;
    case 'BacktestFailed':
      return e.data.failed_at;
    case 'WalletOpened':
      return e.data.opened_at;
    case 'SessionStarted':
      return e.data.started_at;
    case 'TradingDayOpened':
      return e.data.opened_at;
    case 'OrderPlaced':
      return e.data.placed_at;
    case 'OrderFilled':
      return e.data.filled_at;
    case 'OrderCancelled':
      return e.data.cancelled_at;
    case 'OrderRejected':
      return e.data.rejected_at;
    case 'WalletReset':
      return e.data.reset_at;
    case 'FillModelSet':
      return e.data.set_at;
    default: {
      const unknown: never = e;
      throw new Error(`unknown backtest stream event ${JSON.stringify(unknown)}`);
    }
  }
};

/** Longest session id echoed back by a `BACKTEST_NOT_FOUND` (a real one is 35 characters: `bt_` + 32 hex). */
const MAX_ECHOED_ID = 64;

/** `BACKTEST_NOT_FOUND` naming the id asked for (cut to {@link MAX_ECHOED_ID} characters): of a compare's ids, which. */
const notFound = (id: string) => {
  const shown = clipEcho(id, MAX_ECHOED_ID);
  return new DomainError('BACKTEST_NOT_FOUND', `no backtest session ${shown}`, { session_id: shown });
};

/**
 * The backtest command handler: sessions are loaded from their stream (through a bounded in-memory cache that also
 * holds each session's candles and sandbox log), decided by the pure backtest decider with deterministic ids and
 * the wall clock, and appended with the expected revision; commands of one session run one at a time in this
 * process, a conflict with another process reloads and decides again. After a restart a session is simply
 * folded from its stream again and its candles reloaded from the market store (refused if they changed since the
 * start: its fingerprint must match).
 */
export const createBacktestCommands = (deps: BacktestCommandDeps): BacktestCommands => {
  const cache = new LRUCache<string, LoadedSession>({ max: deps.cacheSize ?? 16 });
  const perSession = new KeyedMutex();
  const now = deps.now ?? (() => new Date());
  const maxAttempts = deps.maxAttempts ?? 4;

  const remember = (session: LoadedSession) => {
    cache.set(session.id, session);
  };

  const fold = (session: LoadedSession, events: readonly BacktestStreamEvent[]) => {
    let state = session.state;
    for (const e of events) {
      state = backtestDecider.evolve(state, e);
      if (!isBacktestEvent(e)) session.log.apply(e);
    }
    session.state = state;
  };

  const loadFresh = async (id: string): Promise<LoadedSession | undefined> => {
    const recorded = await deps.store.readStream(backtestStreamId(id));
    if (recorded.length === 0) return undefined;
    const session: LoadedSession = {
      id,
      state: backtestDecider.initialState(),
      revision: recorded[recorded.length - 1]!.revision,
      log: new SandboxLog(),
    };
    fold(
      session,
      recorded.map((e) => ({ type: e.type, data: e.data }) as BacktestStreamEvent),
    );
    return session;
  };

  const load = async (id: string): Promise<LoadedSession> => {
    if (!SESSION_ID_PATTERN.test(id)) throw notFound(id);
    const cached = cache.get(id);
    if (cached) {
      remember(cached);
      return cached;
    }
    const session = await loadFresh(id);
    if (!session?.state.config) throw notFound(id);
    remember(session);
    return session;
  };

  const authorize = (session: LoadedSession, caller: Caller) => {
    const config = session.state.config!;
    if (config.accountId !== caller.accountId || (caller.agentId && caller.agentId !== config.agentId)) {
      throw new DomainError(
        'PERMISSION_DENIED',
        'this backtest session belongs to another account or agent',
        {
          session_id: session.id,
        },
      );
    }
  };

  /** The session's candles (loaded once; checked against the fingerprint recorded at start). */
  const ensureMarket = (session: LoadedSession): SessionMarket => {
    if (session.market) return session.market;
    const config = session.state.config!;
    const source = deps.market();
    if (!source) throw new DomainError('BACKTEST_NO_DATA', 'market data is not available on this server');
    session.market = checkedMarket(
      source.load(config.pairs, config.interval, config.endTime),
      session.state.fingerprint,
      'BACKTEST_NO_DATA',
      'session',
      { session_id: session.id },
    );
    return session.market;
  };

  /**
   * Refuses a new trading request or step of a session whose agent is archived, as live trading's first risk rule
   * refuses the agent's orders whatever the credential (`ownerStatusFailure`: `PERMISSION_DENIED` 403,
   * `details.reason` `agent_archived`; the agent's account suspended: `ACCOUNT_SUSPENDED`), and one whose agent was
   * deleted (its sessions go with it: `BACKTEST_NOT_FOUND`, as once its stream is gone). Nothing is recorded.
   */
  const requireAgentActive = async (session: LoadedSession) => {
    if (!deps.agentStanding) return;
    const { accountId, agentId } = session.state.config!;
    const standing = await deps.agentStanding(accountId, agentId);
    if (!standing) throw notFound(session.id);
    const refused = ownerStatusError(
      { type: 'agent', ...standing },
      { agent_id: agentId, session_id: session.id },
    );
    if (refused) throw refused;
  };

  /**
   * Decides and appends one command on a loaded session (inside its mutex); `trading`: a start, a step or a new
   * order, refused for an archived or deleted agent ({@link requireAgentActive}).
   */
  const execute = async (
    id: string,
    caller: Caller,
    meta: CommandMeta,
    prepare: (session: LoadedSession) => { command: BacktestCommand; market?: SessionMarket },
    trading = false,
  ): Promise<BacktestOutcome> =>
    perSession.run(id, async () => {
      for (let attempt = 1; ; attempt++) {
        const session = await load(id);
        authorize(session, caller);
        if (trading) await requireAgentActive(session);
        const { command, market } = prepare(session);
        const at = now();
        const events =
          deps.stepper && market && command.type === 'StepBacktest' && session.state.status === 'running'
            ? await deps.stepper.step({
                sessionId: id,
                revision: session.revision + 1,
                state: session.state,
                steps: command.data.steps,
                now: at,
                market,
              })
            : backtestDecider.decide(command, session.state, {
                now: at,
                newId: decisionIds(id, session.revision + 1),
                ...(market ? { market } : {}),
              });
        if (events.length === 0) return { session, events };
        try {
          const append = await deps.store.append(
            backtestStreamId(id),
            withCommandMetadata(events, meta, occurredAt, (e) =>
              e.type === 'BacktestStepped' ? BACKTEST_STEPPED_VERSION : undefined,
            ),
            { expectedRevision: session.revision },
          );
          fold(session, events);
          session.revision = append.nextRevision;
          session.position = append.position;
          return { session, events, position: append.position };
        } catch (error) {
          onAppendConflict(error, attempt, maxAttempts, () => cache.delete(id));
        }
      }
    });

  /**
   * A command that needs the session's candles. Only a running session has them; on any other the decider
   * refuses the command, so the candles are not loaded just to be thrown away.
   */
  const withMarket =
    (command: BacktestCommand) =>
    (session: LoadedSession): { command: BacktestCommand; market?: SessionMarket } =>
      session.state.status === 'running' ? { command, market: ensureMarket(session) } : { command };

  /** The start: loads the candles now; a failure to load is decided as the session's failure. */
  const startCommand = (session: LoadedSession): { command: BacktestCommand; market?: SessionMarket } => {
    const config = session.state.config!;
    if (session.state.status !== 'created')
      return { command: { type: 'StartBacktest', data: { fingerprint: '' } } };
    const source = deps.market();
    const loaded = source
      ? source.load(config.pairs, config.interval, config.endTime)
      : { error: 'market data is not available on this server' };
    if ('error' in loaded) {
      return { command: { type: 'StartBacktest', data: { fingerprint: '', loadError: loaded.error } } };
    }
    session.market = loaded.market;
    return {
      command: { type: 'StartBacktest', data: { fingerprint: loaded.fingerprint } },
      market: loaded.market,
    };
  };

  return {
    async create(caller, requestedAgentId, request, meta) {
      // Either case names the agent; the session records (and ownership compares) the lower-case form.
      const agentId = canonicalId(requestedAgentId);
      if (caller.agentId && caller.agentId !== agentId) {
        throw new DomainError(
          'PERMISSION_DENIED',
          'an agent credential can only create backtests for its agent',
          {
            agent_id: agentId,
          },
        );
      }
      const agent = await deps.agentProfile(caller.accountId, agentId);
      if (!agent) {
        throw new DomainError('PERMISSION_DENIED', 'agent_id is not an agent of this account', {
          agent_id: agentId,
        });
      }
      if (agent.status === 'archived') {
        throw new DomainError('PERMISSION_DENIED', 'this agent is archived', {
          agent_id: agentId,
          reason: 'agent_archived',
        });
      }
      const source = deps.market();
      if (!source) throw new DomainError('BACKTEST_NO_DATA', 'market data is not available on this server');
      const id = `bt_${randomUUID().replaceAll('-', '')}`;
      const events = backtestDecider.decide(
        {
          type: 'CreateBacktest',
          data: {
            sessionId: id,
            accountId: caller.accountId,
            agentId,
            request,
            riskProfile: agent.riskProfile,
            feeRate: deps.feeRate,
            makerFeeRate: deps.makerFeeRate ?? deps.feeRate,
            fillModel: agent.fillModel ?? 'realistic',
            participationPct: agent.participationPct ?? DEFAULT_PARTICIPATION_PCT,
          },
        },
        backtestDecider.initialState(),
        { now: now(), newId: decisionIds(id, 0), catalog: source.catalog() },
      );
      const append = await deps.store.append(
        backtestStreamId(id),
        withCommandMetadata(events, meta, occurredAt),
        { expectedRevision: 'no_stream' },
      );
      const session: LoadedSession = {
        id,
        state: backtestDecider.initialState(),
        revision: append.nextRevision,
        log: new SandboxLog(),
        position: append.position,
      };
      fold(session, events);
      remember(session);
      return { session, events, position: append.position };
    },

    start: (caller, id, meta) => execute(id, caller, meta, startCommand, true),

    step: (caller, id, steps, meta) =>
      execute(id, caller, meta, withMarket({ type: 'StepBacktest', data: { steps } }), true),

    cancel: (caller, id, meta) =>
      execute(id, caller, meta, (session) => {
        const command: BacktestCommand = { type: 'CancelBacktest', data: {} };
        return withMarket(command)(session);
      }),

    async placeOrder(caller, id, order, meta) {
      const outcome = await execute(
        id,
        caller,
        meta,
        withMarket({ type: 'PlaceSandboxOrder', data: { order } }),
        true,
      );
      const rejected = outcome.events.find((e) => e.type === 'OrderRejected');
      if (rejected) throw rejectionError(rejected.data);
      return outcome;
    },

    async cancelOrder(caller, id, orderId, meta) {
      const session = await load(id);
      authorize(session, caller);
      const known = session.log.order(orderId);
      if (!known) throw new DomainError('ORDER_NOT_FOUND', 'order not found', { order_id: orderId });
      if (known.status !== 'pending' && known.status !== 'partially_filled') {
        throw new DomainError(
          'ORDER_NOT_CANCELLABLE',
          `the order is ${known.status} and can no longer be cancelled`,
          { order_id: orderId, status: known.status },
        );
      }
      return execute(id, caller, meta, withMarket({ type: 'CancelSandboxOrder', data: { orderId } }));
    },

    async session(caller, id, options = {}) {
      const session = await load(id);
      authorize(session, caller);
      if (options.market && session.state.status !== 'created' && session.state.status !== 'failed') {
        ensureMarket(session);
      }
      return session;
    },

    clear: () => cache.clear(),

    forget: (ids) => {
      for (const id of ids) cache.delete(id);
    },
  };
};
