import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Subject } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletCommands, type WalletCommands } from '../../commands/wallet';
import type { BacktestCommand, BacktestContext } from '../../domain/backtest/commands';
import { backtestDecider } from '../../domain/backtest/decide';
import { quoteVolume24h, type SessionMarket } from '../../domain/backtest/market';
import type { BattleCommand, BattleContext } from '../../domain/battle/commands';
import { battleDecider } from '../../domain/battle/decide';
import type { BattleEvent } from '../../domain/battle/events';
import type { BattleState } from '../../domain/battle/state';
import type { FillModelName } from '../../domain/fill-model/model';
import type { Candle } from '../../domain/market/candle';
import { toUnitsNumber } from '../../domain/market/decimal';
import { DEFAULT_RISK_PROFILE } from '../../domain/shared/risk-profile';
import { dec } from '../../domain/trading/decimal';
import type { OrderRequest } from '../../domain/wallet/commands';
import type { WalletEvent } from '../../domain/wallet/events';
import type { EventStore } from '../../ports/event-store';
import { ordersProjection } from '../../projections/orders';
import { ProjectionRunner } from '../../projections/runner';
import { createPostgresEventStore } from '../../src/eventstore/postgres';
import type { PriceTick } from '../../src/market/ticks';
import { MatchingEngine } from '../../src/matching/engine';
import { soleLeadership } from '../../src/matching/leader';
import { H, sequentialIds, T0, testCatalog, testMarket } from '../backtest/support';
import { createTestDatabase, type TestDatabase } from '../support/databases';
import { PAIRS } from '../trading/support';

/**
 * Same tape, same fills (issue 21, "Done when"): one tape of prints (flat candles: a price and a base volume each)
 * and one sequence of orders between them give the same decisions — every placement, rejection, fill (price,
 * quantity, fee, liquidity flag and every fill-model input) and cancel — whether they run
 *
 * - live: the wallet commands over the event store (PGlite) with the matching engine fed one tick per print (the
 *   print's volume as the tick's traded quantity), the market view answering the last tick and the tape's 24h
 *   quote volume at the tick's time;
 * - in a backtest: the backtest decider, one step per candle;
 * - in a historical battle: the battle decider, two participants sending the same orders.
 *
 * A flat candle (open = high = low = close) is the one kind of candle that is a single print both ways; richer
 * candles are walked along their path in a sandbox and have no one-tick counterpart. The volume can be 0 (a print
 * that moves the price without trading). Only what cannot be equal is left out of the comparison: ids, the wall
 * and virtual clocks' stamps of placement and fill, and the price source's name (`files` / `candle_*`).
 */

const SYMBOL = 'BTCUSDT';
const START_BALANCE = '100000.00000000';
const FEE = '0.001';
const RISK = { ...DEFAULT_RISK_PROFILE, max_order_size_pct: 100, max_position_size_pct: 100 };

interface Print {
  price: string;
  volume: string;
}

type Action = Pick<OrderRequest, 'side' | 'type' | 'quantity' | 'price' | 'triggerPrice' | 'list'>;

interface Scenario {
  model: FillModelName;
  history: Print;
  prints: Print[];
  /** `actions[k]`: the orders sent before print k. */
  actions: Action[][];
}

const price8 = (bp: number) => (40_000 * (1 + bp / 10_000)).toFixed(2);

const printArb = fc.record({
  price: fc.integer({ min: -300, max: 300 }).map(price8),
  volume: fc.oneof(
    fc.constant('0'),
    fc.integer({ min: 1, max: 400_000 }).map((n) => dec(n).shiftedBy(-5).toFixed(8)),
  ),
});

const quantityArb = fc.integer({ min: 1, max: 40_000 }).map((n) => dec(n).shiftedBy(-5).toFixed(5));

/**
 * A side, an order type of `types`, a quantity, a level (bp from 40,000, as `price8` reads it) and two
 * distances `a` and `b` (1–150 bp): what an order list is drawn from.
 */
const legsArb = <T extends string>(...types: T[]) =>
  fc.record({
    side: fc.constantFrom('buy' as const, 'sell' as const),
    type: fc.constantFrom(...types),
    quantity: quantityArb,
    level: fc.integer({ min: -250, max: 250 }),
    a: fc.integer({ min: 1, max: 150 }),
    b: fc.integer({ min: 1, max: 150 }),
  });

/** An OCO (docs/trading-rules.md, "Order lists"): its legs on the right sides of a level, `a` and `b` bp away. */
const ocoArb: fc.Arbitrary<Action> = legsArb('limit', 'take_profit').map(
  ({ side, type, quantity, level, a, b }) => {
    const tp = price8(side === 'sell' ? level + a : level - a);
    return {
      side,
      type,
      quantity,
      price: type === 'limit' ? tp : null,
      triggerPrice: type === 'take_profit' ? tp : null,
      list: { kind: 'oco', stopLoss: { triggerPrice: price8(side === 'sell' ? level - b : level + b) } },
    };
  },
);

/** A bracket: a market or limit entry (at `level`) with a take-profit `a` bp and a stop `b` bp on either side. */
const bracketArb: fc.Arbitrary<Action> = legsArb('market', 'limit').map(
  ({ side, type, quantity, level, a, b }) => ({
    side,
    type,
    quantity,
    price: type === 'limit' ? price8(level) : null,
    triggerPrice: null,
    list: {
      kind: 'bracket',
      takeProfit: { type: 'limit', price: price8(side === 'buy' ? level + a : level - a) },
      stopLoss: { triggerPrice: price8(side === 'buy' ? level - b : level + b) },
    },
  }),
);

const plainArb: fc.Arbitrary<Action> = fc
  .record({
    side: fc.constantFrom('buy' as const, 'sell' as const),
    type: fc.constantFrom('market' as const, 'limit' as const, 'stop_loss' as const, 'take_profit' as const),
    quantity: fc.integer({ min: 1, max: 40_000 }).map((n) => dec(n).shiftedBy(-5).toFixed(5)),
    level: fc.integer({ min: -300, max: 300 }).map(price8),
  })
  .map(({ side, type, quantity, level }) => ({
    side,
    type,
    quantity,
    price: type === 'limit' ? level : null,
    triggerPrice: type === 'stop_loss' || type === 'take_profit' ? level : null,
  }));

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { arbitrary: plainArb, weight: 4 },
  { arbitrary: ocoArb, weight: 1 },
  { arbitrary: bracketArb, weight: 1 },
);

const scenarioArb: fc.Arbitrary<Scenario> = fc.integer({ min: 2, max: 7 }).chain((n) =>
  fc.record({
    model: fc.constantFrom('realistic' as const, 'instant' as const),
    history: printArb.filter((p) => p.volume !== '0'),
    prints: fc.array(printArb, { minLength: n, maxLength: n }),
    actions: fc.array(fc.array(actionArb, { maxLength: 3 }), { minLength: n, maxLength: n }),
  }),
);

const flat = (openTime: number, p: Print): Candle => ({
  openTime,
  open: p.price,
  high: p.price,
  low: p.price,
  close: p.price,
  volume: dec(p.volume).toFixed(8),
  quoteVolume: null,
  tradeCount: null,
});

/** The tape as candles: the history print an hour before T0, then print k at T0 + k hours. */
const candlesOf = (s: Scenario): Candle[] => [
  flat(T0 - H, s.history),
  ...s.prints.map((p, k) => flat(T0 + k * H, p)),
];

const isoOf = (ms: number) => new Date(ms).toISOString();

/** A wallet event with what cannot match across the three runs taken out (see the file's comment). */
const comparable = (e: WalletEvent, ids: Map<string, string>) => {
  if (!['OrderPlaced', 'OrderRejected', 'OrderFilled', 'OrderCancelled'].includes(e.type)) return undefined;
  const data: Record<string, unknown> = { ...(e.data as unknown as Record<string, unknown>) };
  const id = data['order_id'] as string;
  if (!ids.has(id)) ids.set(id, `order-${ids.size + 1}`);
  data['order_id'] = ids.get(id);
  // An order list's id and a bracket exit's entry, numbered like the orders.
  for (const key of ['order_list_id', 'parent_order_id']) {
    const linked = data[key] as string | undefined;
    if (linked === undefined) continue;
    if (!ids.has(linked)) ids.set(linked, `${key}-${ids.size + 1}`);
    data[key] = ids.get(linked);
  }
  for (const key of Object.keys(data)) {
    if (key.endsWith('_at') || ['trade_id', 'session_id', 'price_source', 'request_hash'].includes(key)) {
      delete data[key];
    }
  }
  return { type: e.type, data };
};

const comparableAll = (events: readonly WalletEvent[]) => {
  const ids = new Map<string, string>();
  return events.flatMap((e) => comparable(e, ids) ?? []);
};

// ---------------------------------------------------------------------------------------------------------
// Backtest and historical battle: their deciders, one step per print
// ---------------------------------------------------------------------------------------------------------

const runBacktest = (s: Scenario, market: SessionMarket, candles: Candle[]): WalletEvent[] => {
  const ctx: BacktestContext = {
    now: new Date('2030-01-01T00:00:00Z'),
    newId: sequentialIds('bt'),
    market,
    catalog: testCatalog({ [SYMBOL]: candles }),
  };
  let state = backtestDecider.initialState();
  const out: WalletEvent[] = [];
  const decide = (c: BacktestCommand) => {
    for (const e of backtestDecider.decide(c, state, ctx)) {
      state = backtestDecider.evolve(state, e);
      if (!e.type.startsWith('Backtest')) out.push(e as WalletEvent);
    }
  };
  decide({
    type: 'CreateBacktest',
    data: {
      sessionId: `bt_${'0'.repeat(32)}`,
      accountId: 'acc',
      agentId: 'agent',
      request: {
        startTime: T0,
        endTime: T0 + s.prints.length * H,
        candleInterval: '1h',
        startingBalance: START_BALANCE,
        strategyLabel: null,
        pairs: [SYMBOL],
      },
      riskProfile: RISK,
      feeRate: FEE,
      fillModel: s.model,
    },
  } satisfies BacktestCommand);
  decide({ type: 'StartBacktest', data: { fingerprint: 'f' } });
  s.prints.forEach((_, k) => {
    for (const a of s.actions[k]!)
      decide({ type: 'PlaceSandboxOrder', data: { order: { symbol: SYMBOL, ...a } } });
    decide({ type: 'StepBacktest', data: { steps: 1 } });
  });
  return out;
};

const BATTLE = '00000000-0000-4000-8000-0000000000b1';
const AGENTS = ['agent-1', 'agent-2'];

const runBattle = (s: Scenario, market: SessionMarket, candles: Candle[]): Map<string, WalletEvent[]> => {
  const now = new Date('2030-01-01T00:00:00Z');
  const ctx: BattleContext = {
    now,
    newId: sequentialIds('b'),
    market,
    catalog: testCatalog({ [SYMBOL]: candles }),
  };
  const history: BattleEvent[] = [
    {
      type: 'BattleCreated',
      data: {
        battle_id: BATTLE,
        account_id: 'acc',
        name: 'Same tape',
        battle_mode: 'historical',
        starting_balance: START_BALANCE,
        duration_minutes: null,
        ranking_metric: 'roi_pct',
        backtest_config: {
          start_time: isoOf(T0),
          end_time: isoOf(T0 + s.prints.length * H),
          candle_interval: '1h',
          pairs_requested: [SYMBOL],
          pairs: [SYMBOL],
          total_steps: s.prints.length,
        },
        fee_rate: FEE,
        replay_of: null,
        created_at: now.toISOString(),
      },
    },
    ...AGENTS.map(
      (agentId): BattleEvent => ({
        type: 'BattleParticipantAdded',
        data: { battle_id: BATTLE, agent_id: agentId, agent_name: agentId, added_at: now.toISOString() },
      }),
    ),
  ];
  let state: BattleState = history.reduce(battleDecider.evolve, battleDecider.initialState());
  const out = new Map<string, WalletEvent[]>(AGENTS.map((a) => [a, []]));
  const decide = (c: BattleCommand) => {
    for (const e of battleDecider.decide(c, state, ctx)) {
      state = battleDecider.evolve(state, e);
      if (e.type === 'BattleSandboxEventRecorded') out.get(e.data.agent_id)!.push(e.data.event);
    }
  };
  decide({
    type: 'StartBattle',
    data: {
      participants: AGENTS.map((agentId) => ({
        agentId,
        riskProfile: RISK,
        fillModel: s.model,
        walletSessionId: null,
        walletRevision: null,
      })),
      fingerprint: 'f',
    },
  });
  s.prints.forEach((_, k) => {
    for (const a of s.actions[k]!) {
      for (const agentId of AGENTS) {
        decide({ type: 'PlaceBattleOrder', data: { agentId, order: { symbol: SYMBOL, ...a } } });
      }
    }
    decide({ type: 'StepBattle', data: { steps: 1 } });
  });
  return out;
};

// ---------------------------------------------------------------------------------------------------------
// Live: wallet commands on the event store, the matching engine fed one tick per print
// ---------------------------------------------------------------------------------------------------------

let db: TestDatabase;
let store: EventStore;
let runner: ProjectionRunner;
let engine: MatchingEngine;
let wallets: WalletCommands;
/** What the live market shows: the tape being replayed, its last tick, the virtual clock. */
const live = {
  market: undefined as SessionMarket | undefined,
  last: undefined as { price: string; time: number } | undefined,
  now: T0,
  model: 'realistic' as FillModelName,
};

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db);
  runner = new ProjectionRunner(store, db.db, [ordersProjection], { unwaitedFoldDelayMs: 0 });
  await runner.start();
  wallets = createWalletCommands({
    store,
    db: db.db,
    feeRate: dec(FEE),
    now: () => new Date(live.now),
    // The model a new wallet opens with: the scenario's (each scenario trades a new wallet).
    get fillModel() {
      return live.model;
    },
    profileOf: async (owner) => ({
      ownerType: 'agent',
      ownerId: owner.agentId!,
      accountId: owner.accountId,
      agentId: owner.agentId!,
      status: 'active',
      accountStatus: 'active',
      startingBalance: START_BALANCE,
      sessionId: `session-${owner.agentId}`,
      sessionStartedAt: isoOf(T0),
      riskProfile: RISK,
    }),
    market: () => ({
      price: (symbol) =>
        symbol === SYMBOL && live.last
          ? { price: live.last.price, timestamp: isoOf(live.last.time), source: 'files' }
          : undefined,
      pair: (symbol) => PAIRS[symbol],
      quoteVolume24h: (symbol) =>
        live.market ? quoteVolume24h(live.market, symbol, live.now)?.toFixed(8) : undefined,
    }),
    appended: (events) => engine.observeAppended(events),
  });
  engine = new MatchingEngine({
    store,
    wallets,
    ticks$: new Subject<PriceTick>(),
    lastTick: (symbol) =>
      symbol === SYMBOL && live.last
        ? {
            price: live.last.price,
            priceUnits: toUnitsNumber(live.last.price),
            time: live.last.time,
            source: 'files',
          }
        : undefined,
    leadership: soleLeadership(),
    folded: (listener) => runner.onFolded(listener),
  });
  await engine.start();
});

afterAll(async () => {
  await engine?.stop();
  await runner?.stop();
  await store?.close();
  await db?.close();
});

const runLive = async (s: Scenario, market: SessionMarket): Promise<WalletEvent[]> => {
  const agentId = randomUUID();
  const owner = { accountId: 'acc', agentId };
  live.market = market;
  live.model = s.model;
  // After the history print, at T0: what the backtest's virtual clock shows at its start.
  live.last = { price: dec(s.history.price).toFixed(8), time: T0 - H };
  live.now = T0;
  await wallets.sync(owner, { actor: 'test' });
  for (const [k, print] of s.prints.entries()) {
    for (const a of s.actions[k]!) {
      await wallets.placeOrder(owner, { symbol: SYMBOL, ...a }, { actor: 'test' });
      // The engine offers the last price to a new pending order at once; its fill runs before the next order.
      await engine.idle();
    }
    const time = T0 + k * H;
    live.now = time + H; // the print is complete: the clock a backtest step ends at
    live.last = { price: dec(print.price).toFixed(8), time };
    engine.onTick({
      symbol: SYMBOL,
      price: live.last.price,
      priceUnits: toUnitsNumber(live.last.price),
      time,
      source: 'files',
      quantity: dec(print.volume).toFixed(8),
      trade: true,
    });
    await engine.idle();
  }
  await wallets.cancelAll(owner, { actor: 'test' }); // leaves nothing for the next scenario's ticks to reach
  const recorded = await store.readStream(`wallet-${agentId}`);
  return recorded
    .map((e) => ({ type: e.type, data: e.data }) as WalletEvent)
    .filter((e) => !(e.type === 'OrderCancelled' && e.data.reason === 'cancel_all'));
};

describe('same tape, same fills', () => {
  it('live matching, a backtest and a historical battle decide the same fills from the same prints', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        const candles = candlesOf(s);
        const market = testMarket({ [SYMBOL]: candles });
        const backtest = comparableAll(runBacktest(s, market, candles));
        const battle = runBattle(s, market, candles);
        const liveEvents = comparableAll(await runLive(s, market));
        // Every order sent was decided (placed or rejected) in the backtest: the comparison is not of empty runs. An
        // order list (an OCO's legs, a bracket's entry and exits) is one order sent.
        const decided = backtest.filter((e) => e.type === 'OrderPlaced' || e.type === 'OrderRejected');
        const lists = new Set(
          decided.flatMap((e) => (e.data['order_list_id'] ? [e.data['order_list_id']] : [])),
        );
        expect(decided.filter((e) => !e.data['order_list_id']).length + lists.size).toBe(
          s.actions.flat().length,
        );
        expect(comparableAll(battle.get('agent-1')!)).toEqual(backtest);
        expect(comparableAll(battle.get('agent-2')!)).toEqual(backtest);
        expect(liveEvents).toEqual(backtest);
      }),
      { numRuns: 30 },
    );
  }, 120_000);
});
