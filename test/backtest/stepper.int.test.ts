import { afterAll, describe, expect, it } from 'vitest';
import { decisionIds } from '../../commands/backtest';
import type { BacktestCommand } from '../../domain/backtest/commands';
import { backtestDecider } from '../../domain/backtest/decide';
import { BACKTEST_STEPPED_ELIDED, type BacktestStreamEvent } from '../../domain/backtest/events';
import type { BacktestState } from '../../domain/backtest/state';
import type { BattleCommand } from '../../domain/battle/commands';
import { battleDecider } from '../../domain/battle/decide';
import type { BattleEvent } from '../../domain/battle/events';
import type { BattleState } from '../../domain/battle/state';
import type { Candle } from '../../domain/market/candle';
import { DomainError } from '../../domain/shared/errors';
import { DEFAULT_RISK_PROFILE } from '../../domain/shared/risk-profile';
import { createPooledStepper } from '../../src/backtest/stepper';
import { until } from '../support/until';
import { createBacktestCommand, H, series, stored, T0, testCatalog, testMarket } from './support';
import { unsendableChunksMarket, unsendableMarket } from './unsendable-chunks';

/**
 * Issue 24 item 4: a batch decided on a worker thread (slice by slice, interleaved with other batches) gives the
 * events the in-process decider gives, byte for byte, and the decider's refusals keep their code.
 */

const SESSION = `bt_${'1'.repeat(32)}`;
const HOURS = 3000;

/** A deterministic random walk (hourly OHLC), with a gap of 5 hours in ETH. */
const walk = (seed: number, start: number, gapAt?: number): Candle[] => {
  let x = seed;
  const rnd = () => {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    return x / 2_147_483_648;
  };
  let price = 100;
  const ohlc: ([number, number, number, number] | null)[] = [];
  for (let i = 0; i < HOURS; i++) {
    const open = price;
    const close = Math.max(1, Math.round(open * (1 + (rnd() - 0.5) * 0.04) * 100) / 100);
    const high = Math.round(Math.max(open, close) * (1 + rnd() * 0.01) * 100) / 100;
    const low = Math.round(Math.min(open, close) * (1 - rnd() * 0.01) * 100) / 100;
    price = close;
    ohlc.push(gapAt !== undefined && i >= gapAt && i < gapAt + 5 ? null : [open, high, low, close]);
  }
  return series(start, ohlc);
};

const CANDLES = { BTCUSDT: walk(7, T0 - 10 * H), ETHUSDT: walk(11, T0 - 10 * H, 1200) };
const market = testMarket(CANDLES);
const NOW = new Date('2030-01-01T00:00:00Z');

/** A started session with a grid of pending orders (they fill along the way: fills, gaps and cancels happen). */
const startedSession = (): { state: BacktestState; revision: number } => {
  let state = backtestDecider.initialState();
  let revision = -1;
  const apply = (command: BacktestCommand) => {
    const events = backtestDecider.decide(command, state, {
      now: NOW,
      newId: decisionIds(SESSION, revision + 1),
      market,
      catalog: testCatalog(CANDLES),
    });
    for (const e of events) state = backtestDecider.evolve(state, e);
    revision += events.length;
  };
  apply(
    createBacktestCommand(SESSION, {
      startTime: T0,
      endTime: T0 + (HOURS - 20) * H,
      candleInterval: '1h',
      startingBalance: '100000',
      strategyLabel: null,
      pairs: null,
    }),
  );
  apply({ type: 'StartBacktest', data: { fingerprint: 'f' } });
  for (const [symbol, price] of [
    ['BTCUSDT', '95'],
    ['BTCUSDT', '90'],
    ['ETHUSDT', '97'],
    ['ETHUSDT', '85'],
  ] as const) {
    apply({
      type: 'PlaceSandboxOrder',
      data: { order: { symbol, side: 'buy', type: 'limit', quantity: '10', price } },
    });
  }
  return { state, revision };
};

const inline = (state: BacktestState, revision: number, steps: number): BacktestStreamEvent[] =>
  backtestDecider.decide({ type: 'StepBacktest', data: { steps } }, state, {
    now: NOW,
    newId: decisionIds(SESSION, revision + 1),
    market,
  });

/**
 * Steps `start` by each batch of `batches` twice: in process with `decide` (the reference) and with `step` (the
 * worker), each from its own state and revision as a command handler would, and expects every batch's events to be
 * byte for byte the same. Returns the worker side's final state and the events of each batch.
 */
const stepAlongside = async <S, E>(
  evolve: (state: S, event: E) => S,
  start: { state: S; revision: number },
  batches: readonly number[],
  decide: (state: S, revision: number, steps: number) => E[],
  step: (state: S, revision: number, steps: number) => Promise<E[]>,
): Promise<{ state: S; batches: E[][] }> => {
  let { state, revision } = start;
  let reference = state;
  let referenceRevision = revision;
  const stepped: E[][] = [];
  for (const steps of batches) {
    const want = decide(reference, referenceRevision, steps);
    for (const e of want) reference = evolve(reference, e);
    referenceRevision += want.length;
    const got = await step(state, revision, steps);
    expect(stored(got)).toBe(stored(want));
    stepped.push(got);
    for (const e of got) state = evolve(state, e);
    revision += got.length;
  }
  return { state, batches: stepped };
};

const stepper = createPooledStepper({ threads: 1, sliceMs: 1, inlineUpTo: 0 });
afterAll(() => stepper.close());

/** `steps` of the session at `state` (after `revision`) on the stepping thread, over `m`. */
const stepOnThread = (state: BacktestState, revision: number, steps: number, m = market) =>
  stepper.step({ sessionId: SESSION, revision: revision + 1, state, steps, now: NOW, market: m });

describe('backtest stepping on worker threads', () => {
  it('decides the events of the in-process decider, byte for byte, with batches interleaved', async () => {
    const { state, revision } = startedSession();
    const expected = [500, 1000, 2980].map((steps) => stored(inline(state, revision, steps)));
    expect(expected[2]).toContain('"OrderFilled"');
    expect(expected[2]).toContain('"BacktestCompleted"');
    // Four batches at once on one thread: they run slice by slice, interleaved.
    const got = await Promise.all(
      [500, 1000, 2980, 2980].map((steps) =>
        stepper.step({ sessionId: SESSION, revision: revision + 1, state, steps, now: NOW, market }),
      ),
    );
    expect(got.map((e) => stored(e))).toEqual([...expected, expected[2]]);
    // The packed equity crossed as the encoded bytes only, not as a string in the event.
    for (const batch of got) {
      const stepped = batch.find((e) => e.type === 'BacktestStepped')!;
      expect(stepped.dataText).toBeInstanceOf(Uint8Array);
      expect(stepped.data).not.toHaveProperty(BACKTEST_STEPPED_ELIDED.key);
    }
  }, 60_000);

  it('continues a session across batches as the decider does', async () => {
    const { state } = await stepAlongside(
      backtestDecider.evolve,
      startedSession(),
      [700, 1, 900, 5000],
      inline,
      (state, revision, steps) =>
        stepper.step({ sessionId: SESSION, revision: revision + 1, state, steps, now: NOW, market }),
    );
    expect(state.status).toBe('completed');
  }, 60_000);

  it("answers the decider's refusal with its code", async () => {
    const { state, revision } = startedSession();
    const done = { ...state, status: 'completed' as const };
    const error = await stepper
      .step({ sessionId: SESSION, revision: revision + 1, state: done, steps: 1000, now: NOW, market })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('BACKTEST_INVALID_STATE');
  }, 60_000);

  it('a task that throws (not a refusal) fails its batch once with its message: an internal error, not a dead thread', async () => {
    const { state, revision } = startedSession();
    // The thread has the market: the failing batch below is one task unless it is run again.
    await stepOnThread(state, revision, 50);
    const before = stepper.tasksRun();
    // A bad input the decider does not refuse but trips over (as a bug would): a running session with no wallet.
    const broken = { ...state, wallet: null } as unknown as typeof state;
    const error = await stepOnThread(broken, revision, 1000).catch((e: unknown) => e);
    // Run exactly once: a `failed` answer is not retried.
    expect(stepper.tasksRun() - before).toBe(1);
    // Not SERVICE_UNAVAILABLE (a thread that died twice): the error handler answers it 500 INTERNAL_ERROR.
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(DomainError);
    const message = (error as Error).message;
    expect(message).toMatch(/^backtest stepping failed: TypeError: .*null/);
    // The task's own stack, from the thread, for the log line: the message once, then the thread's frames.
    const stack = (error as Error).stack!;
    expect(stack).toMatch(/domain\/(backtest|wallet|trading|fill-model)\//);
    expect(stack.startsWith(`Error: ${message}\n    at `)).toBe(true);
    expect(stack.split(message.slice('backtest stepping failed: TypeError: '.length)).length).toBe(2);
    // The thread is still there and steps the next batch.
    expect(stored(await stepOnThread(state, revision, 500))).toBe(stored(inline(state, revision, 500)));
  }, 60_000);
});

describe('a task that cannot be posted to a stepping thread', () => {
  it('fails its batch once (500: the same value would fail again), not as a dead thread (503)', async () => {
    // A market whose transfer the structured clone refuses: posting the task with it throws a DataCloneError.
    const unsendable = unsendableMarket(CANDLES, 'unsendable-market');
    const { state, revision } = startedSession();
    const before = stepper.tasksRun();
    const error = await stepOnThread(state, revision, 100, unsendable).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(DomainError);
    expect((error as Error).message).toMatch(/could not be cloned/);
    // The task without the market (the thread lacks it), then with it: refused, not run once more.
    expect(stepper.tasksRun() - before).toBe(2);
    expect(stored(await stepOnThread(state, revision, 50))).toBe(stored(inline(state, revision, 50)));
  }, 60_000);
});

describe('closing the stepper', () => {
  it('fails a running batch with SERVICE_UNAVAILABLE and starts no thread again, nor for a later batch', async () => {
    const closing = createPooledStepper({ threads: 1, sliceMs: 1, inlineUpTo: 0 });
    const { state, revision } = startedSession();
    const request = { sessionId: SESSION, revision: revision + 1, state, now: NOW, market };
    try {
      closing.warm();
      await until(() => closing.threadsStarted() === 1, { what: 'a started thread' });
      const batch = closing.step({ ...request, steps: HOURS - 20 }).catch((e: unknown) => e);
      await closing.close();
      const error = await batch;
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe('SERVICE_UNAVAILABLE');
      expect((error as DomainError).details).toEqual({ retry_after_seconds: 1 });
      // Not run again on a fresh pool: no thread started after close() resolved.
      expect(closing.threadsStarted()).toBe(0);
      const later = await closing.step({ ...request, steps: 500 }).catch((e: unknown) => e);
      expect((later as DomainError).code).toBe('SERVICE_UNAVAILABLE');
      closing.warm();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(closing.threadsStarted()).toBe(0);
    } finally {
      await closing.close();
    }
  }, 60_000);
});

describe('a stepping thread that cannot start (its module fails to load)', () => {
  it('fails the batch as a death: run once more on a fresh pool, then 503 with Retry-After, logged; no hang', async () => {
    // Piscina reports such a thread on the pool (its `error` event), not on a task: unheard, it would end the
    // venue (an uncaught exception) and the batch would wait forever.
    const logged: { level: string; fields: Record<string, unknown>; message: string }[] = [];
    const log = {
      warn: (fields: Record<string, unknown>, message: string) =>
        logged.push({ level: 'warn', fields, message }),
      error: (fields: Record<string, unknown>, message: string) =>
        logged.push({ level: 'error', fields, message }),
    };
    const failing = createPooledStepper({
      threads: 1,
      sliceMs: 1,
      inlineUpTo: 0,
      log,
      taskModule: new URL('../workers/fixtures/failing-at-load.ts', import.meta.url),
    });
    const { state, revision } = startedSession();
    try {
      // A batch, then a later one: each answered 503 after two tries, none waiting forever.
      for (let batch = 1; batch <= 2; batch++) {
        const before = failing.tasksRun();
        const error = await failing
          .step({ sessionId: SESSION, revision: revision + 1, state, steps: 500, now: NOW, market })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DomainError);
        expect((error as DomainError).code).toBe('SERVICE_UNAVAILABLE');
        expect((error as DomainError).message).toBe('backtest stepping is unavailable; retry shortly');
        expect((error as DomainError).details).toEqual({ retry_after_seconds: 1 });
        expect(failing.tasksRun() - before).toBe(2);
      }
      // Each thread's failure logged at error with its error; each batch's 503 at warn.
      const errors = logged.filter((l) => l.level === 'error');
      expect(errors).toHaveLength(4);
      for (const e of errors)
        expect(String((e.fields.err as Error).message)).toMatch(/failing-at-load\.ts|fails to load/);
      expect(logged.filter((l) => l.level === 'warn')).toHaveLength(2);
    } finally {
      await failing.close();
    }
  }, 60_000);
});

describe('a chunk the request thread cannot send to a stepping thread', () => {
  it('fails that batch with the reason (the chunk request is answered as an error), not the venue', async () => {
    // A market the thread reads in chunks, each asked of the request thread (no candle store named), whose reader
    // answers a value the structured clone refuses: posting it throws in the request thread's message handler,
    // which would be an uncaught exception of the venue and leave the batch waiting forever.
    const chunkedOnly = unsendableChunksMarket(CANDLES, 'unsendable-chunks');
    const { state, revision } = startedSession();
    const error = await stepOnThread(state, revision, 100, chunkedOnly).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/^backtest stepping failed: .*could not be cloned/);
    // The thread still steps the next batch.
    expect(stored(await stepOnThread(state, revision, 50))).toBe(stored(inline(state, revision, 50)));
  }, 60_000);
});

/** A historical battle of two agents on the same market, started, each with a grid of limit orders. */
const BATTLE = '00000000-0000-4000-8000-0000000000b7';
const BATTLE_STEPS = 1_000;
const startedBattle = (): { state: BattleState; revision: number } => {
  let state = battleDecider.initialState();
  let revision = -1;
  const fold = (events: BattleEvent[]) => {
    for (const e of events) state = battleDecider.evolve(state, e);
    revision += events.length;
  };
  fold([
    {
      type: 'BattleCreated',
      data: {
        battle_id: BATTLE,
        account_id: 'acc',
        name: 'Duel',
        battle_mode: 'historical',
        starting_balance: '100000.00000000',
        duration_minutes: null,
        ranking_metric: 'roi_pct',
        backtest_config: {
          start_time: new Date(T0).toISOString(),
          end_time: new Date(T0 + BATTLE_STEPS * H).toISOString(),
          candle_interval: '1h',
          pairs_requested: null,
          pairs: ['BTCUSDT', 'ETHUSDT'],
          total_steps: BATTLE_STEPS,
        },
        fee_rate: '0.001',
        replay_of: null,
        created_at: NOW.toISOString(),
      },
    },
    ...[1, 2].map(
      (n): BattleEvent => ({
        type: 'BattleParticipantAdded',
        data: {
          battle_id: BATTLE,
          agent_id: `agent-${n}`,
          agent_name: `Agent ${n}`,
          added_at: NOW.toISOString(),
        },
      }),
    ),
  ]);
  const apply = (command: BattleCommand) =>
    fold(
      battleDecider.decide(command, state, { now: NOW, newId: decisionIds(BATTLE, revision + 1), market }),
    );
  apply({
    type: 'StartBattle',
    data: {
      participants: [1, 2].map((n) => ({
        agentId: `agent-${n}`,
        riskProfile: { ...DEFAULT_RISK_PROFILE, max_order_size_pct: 100, max_position_size_pct: 100 },
        walletSessionId: null,
        walletRevision: null,
      })),
      fingerprint: 'f',
    },
  });
  for (const [agentId, symbol, price] of [
    ['agent-1', 'BTCUSDT', '95'],
    ['agent-1', 'ETHUSDT', '90'],
    ['agent-2', 'BTCUSDT', '92'],
    ['agent-2', 'ETHUSDT', '97'],
  ] as const) {
    apply({
      type: 'PlaceBattleOrder',
      data: { agentId, order: { symbol, side: 'buy', type: 'limit', quantity: '10', price } },
    });
  }
  return { state, revision };
};

describe('starting the stepping threads before the first batch', () => {
  it('warm() starts the threads without a batch, at most `threads`, and a batch then runs on them', async () => {
    const warmed = createPooledStepper({ threads: 1, sliceMs: 1, inlineUpTo: 0 });
    try {
      expect(warmed.threadsStarted()).toBe(0);
      warmed.warm();
      warmed.warm();
      await until(() => warmed.threadsStarted() === 1, { what: 'a started thread' });
      const { state, revision } = startedSession();
      const events = await warmed.step({
        sessionId: SESSION,
        revision: revision + 1,
        state,
        steps: 500,
        now: NOW,
        market,
      });
      expect(stored(events)).toBe(stored(inline(state, revision, 500)));
      expect(warmed.threadsStarted()).toBe(1);
    } finally {
      await warmed.close();
    }
  });
});

describe('historical battle stepping on worker threads', () => {
  it('decides the events of the in-process battle decider, byte for byte, across batches', async () => {
    const { state, batches } = await stepAlongside(
      battleDecider.evolve,
      startedBattle(),
      [300, 1, 5000],
      (state, revision, steps) =>
        battleDecider.decide({ type: 'StepBattle', data: { steps } }, state, {
          now: NOW,
          newId: decisionIds(BATTLE, revision + 1),
          market,
        }),
      (state, revision, steps) =>
        stepper.battles.step({ battleId: BATTLE, revision: revision + 1, state, steps, now: NOW, market }),
    );
    const filled = batches.some((got) => JSON.stringify(got).includes('"OrderFilled"'));
    expect(filled).toBe(true);
    expect(state.status).toBe('completed');
  }, 120_000);
});
