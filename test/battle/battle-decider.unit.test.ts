import { describe, expect, it } from 'vitest';
import type { AgentInfo, BattleCommand, BattleContext } from '../../domain/battle/commands';
import { battleDecider, MAX_PARTICIPANTS } from '../../domain/battle/decide';
import type { BattleEvent, RankingEntry } from '../../domain/battle/events';
import { BATTLE_PRESETS } from '../../domain/battle/presets';
import { rankParticipants } from '../../domain/battle/rankings';
import { DEFAULT_RISK_PROFILE } from '../../domain/shared/risk-profile';
import type { OrderFilledData } from '../../domain/wallet/events';
import { H, sequentialIds, series, T0, testCatalog, testMarket } from '../backtest/support';
import { deciderSpec } from '../support/decider-spec';

const BATTLE = '00000000-0000-4000-8000-0000000000b1';
const ACCOUNT = 'acct-1';
const NOW = new Date('2030-01-01T00:00:00Z');

/** BTC: hourly candles from T0 − 1h; ETH flat. */
const BTC = series(T0 - H, [
  [100, 101, 99, 100], // -1h
  [100, 102, 98, 101], // 0h
  [101, 105, 95, 104], // 1h: up candle, path O→L(95)→H(105)→C
  [104, 104, 96, 97], // 2h
  [97, 99, 94, 98], // 3h
]);
const ETH = series(T0 - H, [
  [10, 10, 10, 10],
  [10, 10, 10, 10],
  [10, 10, 10, 10],
  [10, 10, 10, 10],
  [10, 10, 10, 10],
]);
const CANDLES = { BTCUSDT: BTC, ETHUSDT: ETH };
const market = testMarket(CANDLES);

const ctx = (over: Partial<BattleContext> = {}): BattleContext => ({
  now: NOW,
  newId: sequentialIds(),
  catalog: testCatalog(CANDLES),
  market,
  ...over,
});

const agent = (n: number, over: Partial<AgentInfo> = {}): AgentInfo => ({
  agentId: `agent-${n}`,
  accountId: ACCOUNT,
  name: `Agent ${n}`,
  status: 'active',
  riskProfile: DEFAULT_RISK_PROFILE,
  ...over,
});

const spec = deciderSpec(battleDecider);

const created = (
  over: Partial<Extract<BattleEvent, { type: 'BattleCreated' }>['data']> = {},
): BattleEvent => ({
  type: 'BattleCreated',
  data: {
    battle_id: BATTLE,
    account_id: ACCOUNT,
    name: 'Duel',
    battle_mode: 'live',
    starting_balance: '10000.00000000',
    duration_minutes: null,
    ranking_metric: 'roi_pct',
    backtest_config: null,
    fee_rate: '0.001',
    replay_of: null,
    created_at: NOW.toISOString(),
    ...over,
  },
});

const historicalCreated = (): BattleEvent =>
  created({
    battle_mode: 'historical',
    backtest_config: {
      start_time: new Date(T0).toISOString(),
      end_time: new Date(T0 + 3 * H).toISOString(),
      candle_interval: '1h',
      pairs_requested: ['BTCUSDT'],
      pairs: ['BTCUSDT'],
      total_steps: 3,
    },
  });

const added = (n: number): BattleEvent => ({
  type: 'BattleParticipantAdded',
  data: { battle_id: BATTLE, agent_id: `agent-${n}`, agent_name: `Agent ${n}`, added_at: NOW.toISOString() },
});

const started = (...agents: number[]): BattleEvent => ({
  type: 'BattleStarted',
  data: {
    battle_id: BATTLE,
    started_at: NOW.toISOString(),
    participants: agents.map((n) => ({
      agent_id: `agent-${n}`,
      risk_profile: DEFAULT_RISK_PROFILE,
      wallet_session_id: `s-${n}`,
      wallet_revision: 3,
    })),
    virtual_time: null,
    data_fingerprint: null,
  },
});

const paused = (n: number, status: 'active' | 'paused' = 'paused'): BattleEvent => ({
  type: 'BattleAgentPaused',
  data: { battle_id: BATTLE, agent_id: `agent-${n}`, status, at: NOW.toISOString() },
});

const startLive = (...agents: number[]): BattleCommand => ({
  type: 'StartBattle',
  data: {
    participants: agents.map((n) => ({
      agentId: `agent-${n}`,
      riskProfile: DEFAULT_RISK_PROFILE,
      walletSessionId: `s-${n}`,
      walletRevision: 3,
    })),
    fingerprint: null,
  },
});

const createCommand = (
  request: Partial<Extract<BattleCommand, { type: 'CreateBattle' }>['data']['request']> = {},
  participants: AgentInfo[] = [],
): BattleCommand => ({
  type: 'CreateBattle',
  data: {
    battleId: BATTLE,
    accountId: ACCOUNT,
    request: { name: 'Duel', ...request },
    feeRate: '0.001',
    replayOf: null,
    participants,
  },
});

const ranking = (agentId: string, rank: number): RankingEntry => ({
  rank,
  agent_id: agentId,
  agent_name: agentId,
  equity: '10000.00000000',
  roi_pct: '0.00000000',
  total_pnl: '0.00000000',
  trade_count: 0,
  win_rate: null,
  sharpe_ratio: null,
  profit_factor: null,
});

describe('battle decider: create and configure (draft)', () => {
  it('given nothing, when a battle is created with only a name, then a live draft with the spec defaults', () => {
    spec.given([]).when(createCommand(), ctx()).thenEmits([created()]);
  });

  it('validates the body: name, starting balance, duration, ranking metric', () => {
    spec
      .given([])
      .when(createCommand({ name: '  ' }), ctx())
      .thenThrows('VALIDATION_ERROR', { field: 'name' });
    spec
      .given([])
      .when(createCommand({ startingBalance: '-5' }), ctx())
      .thenThrows('VALIDATION_ERROR', { field: 'starting_balance' });
    spec
      .given([])
      .when(createCommand({ durationMinutes: 0 }), ctx())
      .thenThrows('VALIDATION_ERROR', { field: 'duration_minutes' });
    spec
      .given([])
      .when(createCommand({ rankingMetric: 'luck' as never }), ctx())
      .thenThrows('VALIDATION_ERROR', { field: 'ranking_metric' });
    spec
      .given([])
      .when(
        createCommand({
          backtestConfig: { startTime: T0, endTime: T0 + H, candleInterval: '1h', pairs: null },
        }),
        ctx(),
      )
      .thenThrows('VALIDATION_ERROR', { field: 'backtest_config' });
  });

  it('a historical battle needs backtest_config with start < end inside the data, an allowed interval, pairs or null', () => {
    const historical = (bc: object | null) =>
      createCommand({ battleMode: 'historical', backtestConfig: bc as never });
    spec.given([]).when(historical(null), ctx()).thenThrows('VALIDATION_ERROR', { field: 'backtest_config' });
    spec
      .given([])
      .when(historical({ startTime: T0 + H, endTime: T0, candleInterval: '1h', pairs: null }), ctx())
      .thenThrows('VALIDATION_ERROR', { field: 'backtest_config.start_time' });
    spec
      .given([])
      .when(historical({ startTime: T0, endTime: T0 + H, candleInterval: '15m', pairs: null }), ctx())
      .thenThrows('VALIDATION_ERROR', { field: 'backtest_config.candle_interval' });
    spec
      .given([])
      .when(historical({ startTime: T0 - 5 * H, endTime: T0 + H, candleInterval: '1h', pairs: null }), ctx())
      .thenThrows('VALIDATION_ERROR', { field: 'backtest_config' });
    spec
      .given([])
      .when(historical({ startTime: T0, endTime: T0 + H, candleInterval: '1h', pairs: ['DOGEUSDT'] }), ctx())
      .thenThrows('INVALID_SYMBOL');
    spec
      .given([])
      .when(historical({ startTime: T0, endTime: T0 + 3 * H, candleInterval: '1h', pairs: null }), ctx())
      .thenAssert((events) => {
        const d = events[0]!.data as Extract<BattleEvent, { type: 'BattleCreated' }>['data'];
        expect(d.backtest_config).toEqual({
          start_time: new Date(T0).toISOString(),
          end_time: new Date(T0 + 3 * H).toISOString(),
          candle_interval: '1h',
          pairs_requested: null,
          pairs: ['BTCUSDT', 'ETHUSDT'],
          total_steps: 3,
        });
        expect(d.duration_minutes).toBeNull();
      });
  });

  it('updates the configuration of a draft only', () => {
    spec
      .given([created()])
      .when({ type: 'UpdateBattle', data: { request: { name: 'Renamed', durationMinutes: 60 } } }, ctx())
      .thenAssert((events, state) => {
        expect(events[0]!.type).toBe('BattleConfigUpdated');
        expect(state.config?.name).toBe('Renamed');
        expect(state.config?.duration_minutes).toBe(60);
      });
    spec
      .given([created(), added(1), added(2), started(1, 2)])
      .when({ type: 'UpdateBattle', data: { request: { name: 'Renamed' } } }, ctx())
      .thenThrows('BATTLE_INVALID_STATE', { status: 'active' });
  });

  it('adds and removes participants of the caller in a draft', () => {
    spec
      .given([created()])
      .when({ type: 'AddParticipant', data: { agent: agent(1) } }, ctx())
      .thenEmits([added(1)]);
    spec
      .given([created(), added(1)])
      .when({ type: 'AddParticipant', data: { agent: agent(1) } }, ctx())
      .thenThrows('VALIDATION_ERROR', { field: 'agent_id' });
    spec
      .given([created()])
      .when({ type: 'AddParticipant', data: { agent: agent(9, { accountId: 'someone-else' }) } }, ctx())
      .thenThrows('PERMISSION_DENIED');
    spec
      .given([created()])
      .when({ type: 'AddParticipant', data: { agent: agent(1, { status: 'archived' }) } }, ctx())
      .thenThrows('PERMISSION_DENIED', { reason: 'agent_archived' });
    spec
      .given([created(), added(1)])
      .when({ type: 'RemoveParticipant', data: { agentId: 'agent-1' } }, ctx())
      .thenAssert((events, state) => {
        expect(events[0]!.type).toBe('BattleParticipantRemoved');
        expect(state.participants).toEqual([]);
      });
    spec
      .given([created()])
      .when({ type: 'RemoveParticipant', data: { agentId: 'agent-1' } }, ctx())
      .thenThrows('VALIDATION_ERROR', { field: 'agent_id' });
    spec
      .given([created(), added(1), added(2), started(1, 2)])
      .when({ type: 'AddParticipant', data: { agent: agent(3) } }, ctx())
      .thenThrows('BATTLE_INVALID_STATE');
    spec
      .given([created(), added(1), added(2), started(1, 2)])
      .when({ type: 'RemoveParticipant', data: { agentId: 'agent-1' } }, ctx())
      .thenThrows('BATTLE_INVALID_STATE');
  });

  it(`refuses more than ${MAX_PARTICIPANTS} participants`, () => {
    const many = Array.from({ length: MAX_PARTICIPANTS }, (_, i) => added(i + 1));
    spec
      .given([created(), ...many])
      .when({ type: 'AddParticipant', data: { agent: agent(999) } }, ctx())
      .thenThrows('VALIDATION_ERROR');
  });

  it('an unknown or deleted battle is BATTLE_NOT_FOUND', () => {
    spec
      .given([])
      .when({ type: 'StartBattle', data: { participants: [], fingerprint: null } }, ctx())
      .thenThrows('BATTLE_NOT_FOUND');
    spec
      .given([
        created(),
        { type: 'BattleDeleted', data: { battle_id: BATTLE, deleted_at: NOW.toISOString() } },
      ])
      .when({ type: 'AddParticipant', data: { agent: agent(1) } }, ctx())
      .thenThrows('BATTLE_NOT_FOUND');
  });
});

describe('battle decider: start, pause, resume, stop', () => {
  it('starts a draft with at least 2 participants, recording each wallet session', () => {
    spec
      .given([created(), added(1), added(2)])
      .when(startLive(1, 2), ctx())
      .thenAssert((events, state) => {
        expect(events).toEqual([started(1, 2)]);
        expect(state.status).toBe('active');
        expect(state.participants.map((p) => p.walletSessionId)).toEqual(['s-1', 's-2']);
      });
  });

  it('refuses to start with fewer than 2 participants, or twice', () => {
    spec
      .given([created(), added(1)])
      .when(startLive(1), ctx())
      .thenThrows('BATTLE_INVALID_STATE', { reason: 'too_few_participants', participants: 1 });
    spec
      .given([created(), added(1), added(2), started(1, 2)])
      .when(startLive(1, 2), ctx())
      .thenThrows('BATTLE_INVALID_STATE', { status: 'active' });
  });

  it('pauses one agent (battle paused), resumes it (battle active again); no double pause or resume', () => {
    const base = [created(), added(1), added(2), started(1, 2)];
    spec
      .given(base)
      .when({ type: 'PauseAgent', data: { agentId: 'agent-1' } }, ctx())
      .thenAssert((events, state) => {
        expect(events).toEqual([paused(1)]);
        expect(state.status).toBe('paused');
      });
    spec
      .given([...base, paused(1)])
      .when({ type: 'PauseAgent', data: { agentId: 'agent-1' } }, ctx())
      .thenThrows('BATTLE_INVALID_STATE', { paused: true });
    spec
      .given([...base, paused(1), paused(2)])
      .when({ type: 'ResumeAgent', data: { agentId: 'agent-1' } }, ctx())
      .thenAssert((events, state) => {
        expect((events[0]!.data as { status: string }).status).toBe('paused');
        expect(state.participants.find((p) => p.agentId === 'agent-1')!.paused).toBe(false);
      });
    spec
      .given([...base, paused(1)])
      .when({ type: 'ResumeAgent', data: { agentId: 'agent-1' } }, ctx())
      .thenAssert((_events, state) => expect(state.status).toBe('active'));
    spec
      .given(base)
      .when({ type: 'ResumeAgent', data: { agentId: 'agent-2' } }, ctx())
      .thenThrows('BATTLE_INVALID_STATE', { paused: false });
    spec
      .given(base)
      .when({ type: 'PauseAgent', data: { agentId: 'agent-7' } }, ctx())
      .thenThrows('VALIDATION_ERROR', { field: 'agent_id' });
    spec
      .given([created(), added(1), added(2)])
      .when({ type: 'PauseAgent', data: { agentId: 'agent-1' } }, ctx())
      .thenThrows('BATTLE_INVALID_STATE', { status: 'draft' });
  });

  it('stops an active or paused live battle with the rankings given, status completed', () => {
    const rankings = [ranking('agent-2', 1), ranking('agent-1', 2)];
    for (const given of [
      [created(), added(1), added(2), started(1, 2)],
      [created(), added(1), added(2), started(1, 2), paused(1)],
    ]) {
      spec
        .given(given)
        .when({ type: 'StopBattle', data: { reason: 'stopped', live: { rankings, summaries: [] } } }, ctx())
        .thenAssert((events, state) => {
          expect(events[0]!.type).toBe('BattleCompleted');
          expect(state.status).toBe('completed');
          expect(state.finalRankings).toEqual(rankings);
        });
    }
    spec
      .given([created(), added(1), added(2)])
      .when({ type: 'StopBattle', data: { reason: 'stopped', live: { rankings, summaries: [] } } }, ctx())
      .thenThrows('BATTLE_INVALID_STATE', { status: 'draft' });
  });
});

describe('battle decider: delete versus cancel (ARCHITECTURE §14b)', () => {
  const stop: BattleCommand = {
    type: 'StopBattle',
    data: { reason: 'stopped', live: { rankings: [], summaries: [] } },
  };
  const del: BattleCommand = { type: 'DeleteBattle', data: {} };
  it('deletes a draft', () => {
    spec
      .given([created()])
      .when(del, ctx())
      .thenAssert((events, state) => {
        expect(events).toEqual([
          { type: 'BattleDeleted', data: { battle_id: BATTLE, deleted_at: NOW.toISOString() } },
        ]);
        expect(state.deleted).toBe(true);
      });
  });
  it('cancels an active or paused battle (kept, cancelled)', () => {
    spec
      .given([created(), added(1), added(2), started(1, 2), paused(2)])
      .when(del, ctx())
      .thenAssert((events, state) => {
        expect(events[0]).toEqual({
          type: 'BattleCancelled',
          data: { battle_id: BATTLE, previous_status: 'paused', cancelled_at: NOW.toISOString() },
        });
        expect(state.status).toBe('cancelled');
      });
  });
  it('refuses a completed or cancelled battle', () => {
    let events: BattleEvent[] = [created(), added(1), added(2), started(1, 2)];
    events = [
      ...events,
      ...battleDecider.decide(stop, events.reduce(battleDecider.evolve, battleDecider.initialState()), ctx()),
    ];
    spec.given(events).when(del, ctx()).thenThrows('BATTLE_INVALID_STATE', { status: 'completed' });
    const cancelled: BattleEvent = {
      type: 'BattleCancelled',
      data: { battle_id: BATTLE, previous_status: 'active', cancelled_at: NOW.toISOString() },
    };
    spec
      .given([created(), added(1), added(2), started(1, 2), cancelled])
      .when(del, ctx())
      .thenThrows('BATTLE_INVALID_STATE', { status: 'cancelled' });
  });
});

describe('battle decider: replay into a new draft', () => {
  it('creates the draft with its participants in one decision; refuses foreign or duplicate agents', () => {
    spec
      .given([])
      .when(createCommand({}, [agent(1), agent(2)]), ctx())
      .thenAssert((events, state) => {
        expect(events.map((e) => e.type)).toEqual([
          'BattleCreated',
          'BattleParticipantAdded',
          'BattleParticipantAdded',
        ]);
        expect(state.participants.map((p) => p.agentId)).toEqual(['agent-1', 'agent-2']);
      });
    spec
      .given([])
      .when(createCommand({}, [agent(1), agent(1)]), ctx())
      .thenThrows('VALIDATION_ERROR');
    spec
      .given([])
      .when(createCommand({}, [agent(1, { accountId: 'other' })]), ctx())
      .thenThrows('PERMISSION_DENIED');
  });
});

describe('battle decider: historical mode on one virtual clock', () => {
  const startHistorical: BattleCommand = {
    type: 'StartBattle',
    data: {
      participants: [1, 2].map((n) => ({
        agentId: `agent-${n}`,
        riskProfile: DEFAULT_RISK_PROFILE,
        walletSessionId: null,
        walletRevision: null,
      })),
      fingerprint: 'fp',
    },
  };
  const run = (commands: BattleCommand[]) => {
    let state = [historicalCreated(), added(1), added(2)].reduce(
      battleDecider.evolve,
      battleDecider.initialState(),
    );
    const all: BattleEvent[] = [];
    for (const c of commands) {
      const events = battleDecider.decide(c, state, ctx({ newId: sequentialIds(`r${all.length}`) }));
      for (const e of events) state = battleDecider.evolve(state, e);
      all.push(...events);
    }
    return { state, events: all };
  };
  const order = (agentId: string, o: object): BattleCommand => ({
    type: 'PlaceBattleOrder',
    data: {
      agentId,
      order: { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '1', ...o } as never,
    },
  });

  it('opens one sandbox wallet per participant at start_time with the starting balance', () => {
    const { state, events } = run([startHistorical]);
    expect(state.virtualTime).toBe(T0);
    expect(events.filter((e) => e.type === 'BattleSandboxEventRecorded')).toHaveLength(4); // opened + session × 2
    for (const p of state.participants) expect(p.wallet.cash.toFixed(8)).toBe('10000.00000000');
  });

  it('fills a market order at the last close before virtual time (no look-ahead), per agent', () => {
    const { state } = run([startHistorical, order('agent-1', {})]);
    const a1 = state.participants.find((p) => p.agentId === 'agent-1')!;
    const a2 = state.participants.find((p) => p.agentId === 'agent-2')!;
    // at T0 the last closed candle is the −1h one: close 100 (plus slippage and fee).
    expect(a1.fills).toHaveLength(1);
    expect(Number(a1.fills[0]!.price)).toBeGreaterThanOrEqual(100);
    expect(Number(a1.fills[0]!.price)).toBeLessThan(100.6);
    expect(a2.fills).toHaveLength(0);
    expect(a2.wallet.cash.toFixed(8)).toBe('10000.00000000');
  });

  it('fills a pending limit order on the candle whose path crosses it, in a batch', () => {
    const { state, events } = run([
      startHistorical,
      order('agent-2', { type: 'limit', price: '96' }),
      { type: 'StepBattle', data: { steps: 2 } },
    ]);
    const fill = events.find(
      (e) => e.type === 'BattleSandboxEventRecorded' && e.data.event.type === 'OrderFilled',
    ) as Extract<BattleEvent, { type: 'BattleSandboxEventRecorded' }> | undefined;
    const d = fill!.data.event.data as OrderFilledData;
    expect(fill!.data.agent_id).toBe('agent-2');
    expect(d.executed_price).toBe('96.00000000');
    // reached on the 1h candle (open T0 + 1h), stamped with the step's virtual time T0 + 2h.
    expect(d.reference_time).toBe(new Date(T0 + H).toISOString());
    expect(d.filled_at).toBe(new Date(T0 + 2 * H).toISOString());
    expect(state.step).toBe(2);
    expect(state.participants.map((p) => p.equity.length)).toEqual([3, 3]);
  });

  it('completes on the last step with rankings, and is deterministic', () => {
    const commands: BattleCommand[] = [
      startHistorical,
      order('agent-1', {}),
      { type: 'StepBattle', data: { steps: 1 } },
      { type: 'StepBattle', data: { steps: 100 } },
    ];
    const a = run(commands);
    const b = run(commands);
    expect(a.events).toEqual(b.events);
    expect(a.state.status).toBe('completed');
    const done = a.events.at(-1)!;
    expect(done.type).toBe('BattleCompleted');
    const rankings = (done.data as { final_rankings: RankingEntry[] }).final_rankings;
    // agent-1 bought at ~100 and BTC closed at 97 at T0 + 3h: agent-2 (cash only) ranks first.
    expect(rankings.map((r) => r.agent_id)).toEqual(['agent-2', 'agent-1']);
    expect(rankings[0]!.roi_pct).toBe('0.00000000');
    expect(Number(rankings[1]!.roi_pct)).toBeLessThan(0);
    expect(rankings[1]!.trade_count).toBe(1);
    expect(() => battleDecider.decide({ type: 'StepBattle', data: { steps: 1 } }, a.state, ctx())).toThrow(
      /completed/,
    );
  });

  it('refuses orders of a paused agent and of a non-participant; steps only historical battles', () => {
    const { state } = run([startHistorical, { type: 'PauseAgent', data: { agentId: 'agent-1' } }]);
    expect(() => battleDecider.decide(order('agent-1', {}), state, ctx())).toThrow(/paused/);
    expect(() => battleDecider.decide(order('agent-9', {}), state, ctx())).toThrow(/not a participant/);
    expect(battleDecider.decide(order('agent-2', {}), state, ctx())[0]!.type).toBe(
      'BattleSandboxEventRecorded',
    );
    spec
      .given([created(), added(1), added(2), started(1, 2)])
      .when({ type: 'StepBattle', data: { steps: 1 } }, ctx())
      .thenThrows('BATTLE_INVALID_STATE');
    spec
      .given([created(), added(1), added(2), started(1, 2)])
      .when(order('agent-1', {}), ctx())
      .thenThrows('BATTLE_INVALID_STATE');
  });

  it('refuses a batch outside 1 … 100,000 steps', () => {
    const { state } = run([startHistorical]);
    expect(() => battleDecider.decide({ type: 'StepBattle', data: { steps: 0 } }, state, ctx())).toThrow(
      /steps/,
    );
    expect(() =>
      battleDecider.decide({ type: 'StepBattle', data: { steps: 100_001 } }, state, ctx()),
    ).toThrow(/steps/);
  });
});

describe('rankings', () => {
  const record = (agentId: string, final: string, fills = 0) => ({
    agentId,
    agentName: agentId,
    startingBalance: '1000',
    equity: [
      { time: 0, equity: '1000' },
      { time: 5000, equity: final },
    ],
    intervalMs: 5000,
    fills: Array.from({ length: fills }, () => ({
      symbol: 'BTCUSDT',
      side: 'sell' as const,
      quantity: '1',
      price: '1',
      fee: '0',
      realizedPnl: '1',
      time: 1,
    })),
    period: { start: 0, end: 5000 },
  });
  it('orders by the metric descending (nulls last), ties by ROI then agent id; sharpe null with few returns', () => {
    const { rankings } = rankParticipants(
      [record('b', '1100'), record('a', '1100'), record('c', '900')],
      'roi_pct',
    );
    expect(rankings.map((r) => [r.rank, r.agent_id, r.roi_pct])).toEqual([
      [1, 'a', '10.00000000'],
      [2, 'b', '10.00000000'],
      [3, 'c', '-10.00000000'],
    ]);
    expect(rankings[0]!.sharpe_ratio).toBeNull();
    expect(rankings[0]!.total_pnl).toBe('100.00000000');
    const byWin = rankParticipants([record('x', '900', 2), record('y', '1200')], 'win_rate').rankings;
    expect(byWin.map((r) => [r.agent_id, r.win_rate])).toEqual([
      ['x', '100.00000000'],
      ['y', null],
    ]);
  });
});

describe('presets', () => {
  it('are exactly the spec table', () => {
    expect(
      Object.fromEntries(
        Object.entries(BATTLE_PRESETS).map(([k, p]) => [
          k,
          [p.name, p.duration_minutes, p.historical_days, p.starting_balance, p.candle_interval],
        ]),
      ),
    ).toEqual({
      quick_1h: ['Quick Sprint', 60, null, '10000.00', null],
      day_trader: ['Day Trader', 1440, null, '10000.00', null],
      marathon: ['Marathon', 10080, null, '10000.00', null],
      scalper_duel: ['Scalper Duel', 240, null, '5000.00', null],
      survival: ['Survival Mode', null, null, '10000.00', null],
      historical_day: ['Historical Day', null, 1, '10000.00', '1m'],
      historical_week: ['Historical Week', null, 7, '10000.00', '5m'],
      historical_month: ['Historical Month', null, 30, '10000.00', '1h'],
    });
  });
});
