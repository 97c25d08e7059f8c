import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { totalSteps, virtualTimeAt } from '../../domain/backtest/clock';
import type { BacktestCommand, BacktestContext } from '../../domain/backtest/commands';
import { backtestDecider } from '../../domain/backtest/decide';
import { EquityMeter } from '../../domain/backtest/equity';
import type { BacktestSteppedData, BacktestStreamEvent } from '../../domain/backtest/events';
import type { SessionMarket } from '../../domain/backtest/market';
import { closedCount, lastClosed, quoteVolume24h } from '../../domain/backtest/market';
import { firstCrossing, pathPoints } from '../../domain/backtest/path';
import type { BacktestState } from '../../domain/backtest/state';
import { unpackUnits } from '../../domain/metrics/equity-points';
import { dec, roundHalfEven8 } from '../../domain/trading/decimal';
import type { OrderFilledData } from '../../domain/wallet/events';
import { type Holding, type WalletState, walletEquity } from '../../domain/wallet/state';
import { deciderSpec } from '../support/decider-spec';
import { createBacktestCommand, H, sequentialIds, series, T0, testCatalog, testMarket } from './support';

const SESSION = `bt_${'0'.repeat(32)}`;

/** BTC: 10 hourly candles from T0; ETH: the same hours with a gap at hour 3. */
const BTC = series(T0 - 2 * H, [
  [100, 101, 99, 100], // -2h (history before the start)
  [100, 102, 98, 101], // -1h
  [101, 105, 100, 104], // 0h: up candle, path O→L→H→C
  [104, 104, 95, 96], // 1h: down candle, path O→H→L→C, low 95
  [96, 99, 94, 98], // 2h
  [98, 100, 97, 99], // 3h
  [99, 110, 99, 109], // 4h
  [109, 109, 90, 91], // 5h
  [91, 92, 85, 86], // 6h: gap below? (open 91)
  [80, 82, 79, 81], // 7h: opens at 80 (gap from 86)
]);
const ETH = series(T0 - 2 * H, [
  [10, 10, 10, 10],
  [10, 11, 9, 10],
  [10, 11, 9, 10],
  [10, 11, 9, 10],
  [10, 11, 9, 10],
  null,
  [10, 11, 9, 10],
  [10, 11, 9, 10],
  [10, 11, 9, 10],
  [10, 11, 9, 10],
]);
const CANDLES = { BTCUSDT: BTC, ETHUSDT: ETH };
const market = testMarket(CANDLES);

const context = (over: Partial<BacktestContext> = {}): BacktestContext => ({
  now: new Date('2030-01-01T00:00:00Z'),
  newId: sequentialIds(),
  market,
  catalog: testCatalog(CANDLES),
  ...over,
});

const createCommand = (
  over: Partial<Extract<BacktestCommand, { type: 'CreateBacktest' }>['data']['request']> = {},
) =>
  createBacktestCommand(SESSION, {
    startTime: T0,
    endTime: T0 + 8 * H,
    candleInterval: '1h',
    startingBalance: '10000',
    strategyLabel: 'test',
    pairs: null,
    ...over,
  });

/** Runs commands in order from nothing; returns all events and the state. */
const run = (commands: BacktestCommand[], ctx: BacktestContext = context()) => {
  let state: BacktestState = backtestDecider.initialState();
  const events: BacktestStreamEvent[] = [];
  const produced: BacktestStreamEvent[][] = [];
  for (const c of commands) {
    const out = backtestDecider.decide(c, state, ctx);
    produced.push(out);
    for (const e of out) {
      events.push(e);
      state = backtestDecider.evolve(state, e);
    }
  }
  return { state, events, produced, last: produced[produced.length - 1] ?? [] };
};

const START: BacktestCommand = { type: 'StartBacktest', data: { fingerprint: 'f' } };
const step = (steps = 1): BacktestCommand => ({ type: 'StepBacktest', data: { steps } });
const order = (o: Record<string, string>): BacktestCommand => ({
  type: 'PlaceSandboxOrder',
  data: { order: { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '1', ...o } as never },
});
const fillsOf = (events: BacktestStreamEvent[]) =>
  events.filter((e) => e.type === 'OrderFilled').map((e) => e.data as OrderFilledData);

describe('virtual clock and visibility', () => {
  it('counts floor((end − start) / interval) steps at start + k × interval', () => {
    expect(totalSteps(T0, T0 + 8 * H, '1h')).toBe(8);
    expect(totalSteps(T0, T0 + 8 * H + 59 * 60_000, '1h')).toBe(8);
    expect(totalSteps(T0, T0 + 59 * 60_000, '1h')).toBe(0);
    expect(virtualTimeAt(T0, '1h', 3)).toBe(T0 + 3 * H);
  });

  it('sees only candles closed by T, forward-filled across gaps', () => {
    // At T0 the candle opening at T0 is not closed: the price is the close of the −1h candle.
    expect(lastClosed(market, 'BTCUSDT', T0)?.close).toBe('101.00000000');
    expect(lastClosed(market, 'BTCUSDT', T0 + H - 1)?.close).toBe('101.00000000');
    expect(lastClosed(market, 'BTCUSDT', T0 + H)?.close).toBe('104.00000000');
    // ETH has no candle opening at 3h: at 4h its price is still the 2h candle's close (forward fill).
    expect(lastClosed(market, 'ETHUSDT', T0 + 4 * H)?.openTime).toBe(T0 + 2 * H);
    expect(closedCount(market.bySymbol.get('BTCUSDT')!, H, T0 - 2 * H)).toBe(0);
  });

  it('sums the 24h quote volume of closed candles only (volume × close without a quote column)', () => {
    // At T0: the −2h and −1h candles, volume 1,000,000 each, closes 100 and 101.
    expect(quoteVolume24h(market, 'BTCUSDT', T0)?.toFixed()).toBe('201000000');
  });
});

describe('the intra-candle path', () => {
  it('walks O→L→H→C when close ≥ open, else O→H→L→C', () => {
    expect(pathPoints(101, 105, 100, 104)).toEqual([101, 100, 105, 104]);
    expect(pathPoints(104, 104, 95, 96)).toEqual([104, 104, 95, 96]);
  });

  it('reaches a level inside a segment at the level, a gapped one at the open', () => {
    expect(firstCrossing([101, 100, 105, 104], 1, 103)).toEqual({ position: 1 + 3 / 5, price: 103 });
    expect(firstCrossing([101, 100, 105, 104], -1, 100.5)).toEqual({ position: 0.5, price: 100.5 });
    expect(firstCrossing([80, 79, 82, 81], -1, 85)).toEqual({ position: 0, price: 80 });
    expect(firstCrossing([101, 100, 105, 104], -1, 99)).toBeUndefined();
  });
});

describe('the backtest decider', () => {
  const spec = deciderSpec(backtestDecider);

  it('creates a session with the pairs that have data (null = all) and its step count', () => {
    spec
      .given([])
      .when(createCommand(), context())
      .thenAssert(([created], state) => {
        expect(created).toMatchObject({
          type: 'BacktestCreated',
          data: {
            pairs: ['BTCUSDT', 'ETHUSDT'],
            pairs_requested: null,
            total_steps: 8,
            starting_balance: '10000.00000000',
          },
        });
        expect(state.status).toBe('created');
      });
  });

  it('refuses a bad configuration with the documented codes', () => {
    const given = spec.given([]);
    given
      .when(createCommand({ candleInterval: '2h' }), context())
      .thenThrows('VALIDATION_ERROR', { field: 'candle_interval' });
    given.when(createCommand({ endTime: T0 }), context()).thenThrows('VALIDATION_ERROR');
    given
      .when(createCommand({ endTime: T0 + 30 * 60_000 }), context())
      .thenThrows('VALIDATION_ERROR', { field: 'end_time' });
    given.when(createCommand({ pairs: ['DOGEUSDT'] }), context()).thenThrows('INVALID_SYMBOL');
    given.when(createCommand({ pairs: ['LUNAUSDT'] }), context()).thenThrows('BACKTEST_NO_DATA');
    given.when(createCommand({ endTime: T0 + 9 * H }), context()).thenThrows('BACKTEST_NO_DATA');
    given.when(createCommand({ startTime: T0 - 3 * H }), context()).thenThrows('BACKTEST_NO_DATA');
    // A window inside a hole of the data: the pairs' ranges span it, but no candle opens in it.
    const hole = context({ catalog: { ...testCatalog(CANDLES), candleCount: () => 0 } });
    // Every pair: the answer still says where the data is (as for one named pair), whichever door asked.
    given.when(createCommand(), hole).thenThrows('BACKTEST_NO_DATA', {
      candle_interval: '1h',
      earliest: new Date(T0 - 2 * H).toISOString(),
      latest: new Date(T0 + 8 * H).toISOString(),
    });
    const empty = context({ catalog: { ...testCatalog({}) } });
    given
      .when(createCommand(), empty)
      .thenThrows('BACKTEST_NO_DATA', { candle_interval: '1h', earliest: null, latest: null });
    given
      .when(createCommand({ pairs: ['BTCUSDT'] }), hole)
      .thenThrows('BACKTEST_NO_DATA', { symbol: 'BTCUSDT' });
  });

  it('starts at start_time with the sandbox wallet opened in virtual time, and refuses a second start', () => {
    const { events, state } = run([createCommand(), START]);
    expect(events.map((e) => e.type)).toEqual([
      'BacktestCreated',
      'BacktestStarted',
      'WalletOpened',
      'SessionStarted',
    ]);
    expect(events[2]).toMatchObject({ data: { opened_at: '2024-01-01T00:00:00.000Z' } });
    expect(state.wallet.cash.toFixed()).toBe('10000');
    spec.given(events).when(START, context()).thenThrows('BACKTEST_INVALID_STATE');
  });

  it('fails the start when the candles cannot be loaded', () => {
    const { last, state } = run([
      createCommand(),
      { type: 'StartBacktest', data: { fingerprint: '', loadError: 'gone' } },
    ]);
    expect(last).toMatchObject([{ type: 'BacktestFailed', data: { reason: 'gone' } }]);
    expect(state.status).toBe('failed');
  });

  it('fills a market order at the last close, stamped with virtual time', () => {
    const { last } = run([createCommand(), START, step(), order({ quantity: '1' })]);
    const fill = fillsOf(last)[0]!;
    expect(fill).toMatchObject({
      reference_price: '104.00000000', // the close of the 0h candle (closed at 1h), stamped with its candle
      reference_time: '2024-01-01T00:00:00.000Z',
      price_source: 'candle_close',
      filled_at: '2024-01-01T01:00:00.000Z',
    });
  });

  it('fills a buy limit in a batch on the candle that crosses it, at the limit', () => {
    // Placed at 1h (after one step): the 1h candle (low 95) is the first to reach 97.
    const { last, state } = run([
      createCommand(),
      START,
      step(),
      order({ type: 'limit', price: '97' }),
      step(5),
    ]);
    const [fill] = fillsOf(last);
    expect(fill).toMatchObject({
      executed_price: '97.00000000',
      reference_price: '97.00000000',
      filled_at: '2024-01-01T02:00:00.000Z',
      reference_time: '2024-01-01T01:00:00.000Z',
      price_source: 'candle_path',
    });
    expect(last.map((e) => e.type)).toEqual(['OrderFilled', 'BacktestStepped']);
    expect(state.step).toBe(6);
  });

  it('fills a sell stop that gaps through its trigger at the open', () => {
    const { last } = run([
      createCommand(),
      START,
      order({ quantity: '10' }),
      order({ side: 'sell', type: 'stop_loss', quantity: '10', triggerPrice: '85' }),
      step(8),
    ]);
    const [fill] = fillsOf(last);
    // 6h candle: low 85 reaches 85 exactly → triggered at 85 (sell stop fills at the trigger minus slippage).
    expect(fill).toMatchObject({
      side: 'sell',
      reference_price: '85.00000000',
      filled_at: '2024-01-01T07:00:00.000Z',
    });
  });

  it('values every step at the closes, completes exactly on the last step', () => {
    const { produced, state } = run([
      createCommand(),
      START,
      order({ quantity: '10' }),
      step(3),
      step(4),
      step(1),
    ]);
    const stepped = produced
      .slice(3)
      .map((p) => p.filter((e) => e.type === 'BacktestStepped')[0]!.data as BacktestSteppedData);
    expect(stepped.map((s) => s.to_step)).toEqual([3, 7, 8]);
    expect(produced[4]!.some((e) => e.type === 'BacktestCompleted')).toBe(false);
    expect(produced[5]!.at(-1)).toMatchObject({ type: 'BacktestCompleted', data: { step: 8 } });
    expect(state.status).toBe('completed');
    // Equity at step 1 (1h): cash + 10 × close of the 0h candle (104).
    const cash = state.wallet.cash;
    expect(unpackUnits(stepped[0]!.equity_units)[0]).toBe(
      roundHalfEven8(cash.plus(dec(10).times(104))).toFixed(8),
    );
    spec
      .given(run([createCommand(), START, step(8)]).events)
      .when(step(), context())
      .thenThrows('BACKTEST_INVALID_STATE');
  });

  it('clamps a batch at the last step', () => {
    const { state, last } = run([createCommand(), START, step(100)]);
    expect(state.step).toBe(8);
    expect(last.map((e) => e.type)).toEqual(['BacktestStepped', 'BacktestCompleted']);
  });

  it('refuses steps outside 1 … 100,000', () => {
    const { events } = run([createCommand(), START]);
    spec.given(events).when(step(0), context()).thenThrows('VALIDATION_ERROR');
    spec.given(events).when(step(100_001), context()).thenThrows('VALIDATION_ERROR');
  });

  it('rejects a sandbox order with the violated rule, recorded as OrderRejected', () => {
    const { last } = run([createCommand(), START, order({ quantity: '1000' })]);
    expect(last.at(-1)).toMatchObject({
      type: 'OrderRejected',
      data: { rule: 'max_order_size', code: 'ORDER_REJECTED', step: 5 },
    });
  });

  it('cancels with the equity at virtual time', () => {
    const { last, state } = run([createCommand(), START, step(2), { type: 'CancelBacktest', data: {} }]);
    expect(last).toMatchObject([
      {
        type: 'BacktestCancelled',
        data: { step: 2, final_equity: '10000.00000000', virtual_time: '2024-01-01T02:00:00.000Z' },
      },
    ]);
    expect(state.status).toBe('cancelled');
  });

  it('gives the same events for the same commands (deterministic)', () => {
    const commands = [
      createCommand(),
      START,
      step(),
      order({ type: 'limit', price: '97' }),
      order({ quantity: '5' }),
      step(7),
    ];
    expect(JSON.stringify(run(commands, context()).events)).toBe(
      JSON.stringify(run(commands, context()).events),
    );
  });

  it('values equity like the wallet domain (EquityMeter = roundHalfEven8(walletEquity))', () => {
    const { state } = run([
      createCommand(),
      START,
      step(2),
      order({ quantity: '3.33333' }),
      order({ symbol: 'ETHUSDT', quantity: '7.1234' }),
    ]);
    const meter = new EquityMeter(market);
    meter.load(state.wallet);
    const at = T0 + 5 * H;
    const closed = new Int32Array(market.series.map((s) => closedCount(s, H, at)));
    const expected = roundHalfEven8(
      walletEquity(state.wallet, (symbol) => dec(lastClosed(market, symbol, at)!.close)),
    );
    expect(meter.at(closed)).toBe(expected.toFixed(8));
  });

  it('values equity in numbers exactly as in bigints, at any size (the meter falls back where numbers are not exact)', () => {
    // Closes and quantities from a few units to beyond 2⁵³ − 1 (the number path's bound), holdings without a price
    // (counted at cost), and sums whose remainder is exactly half a unit (rounded half to even).
    const units = fc.oneof(
      // 0.5 × 0.00000001 and 1.5 × 0.00000003: half a unit left over, rounded to the even neighbour.
      fc.constantFrom(1n, 3n, 50_000_000n, 150_000_000n),
      fc.bigInt({ min: 0n, max: 10_000n }),
      fc.bigInt({ min: 0n, max: 10n ** 12n }),
      fc.bigInt({ min: 2n ** 53n - 3n, max: 2n ** 53n + 3n }),
      fc.bigInt({ min: 0n, max: 10n ** 17n }),
    );
    const asDecimal = (u: bigint) => `${u / 100_000_000n}.${(u % 100_000_000n).toString().padStart(8, '0')}`;
    const symbols = ['AAAUSDT', 'BBBUSDT', 'CCCUSDT'];
    fc.assert(
      fc.property(
        units,
        units,
        fc.array(fc.tuple(units, units, units, fc.boolean()), { minLength: 3, maxLength: 3 }),
        fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
        (cash, locked, pairs, held) => {
          const closes = pairs.map(([, , close]) => Number(close));
          const fake = {
            interval: '1m',
            intervalMs: 60_000,
            series: symbols.map((symbol, i) => ({ symbol, close: [closes[i]!] })),
            bySymbol: new Map(),
          } as unknown as SessionMarket;
          const holdings: Record<string, Holding> = {};
          symbols.forEach((symbol, i) => {
            if (!held[i]) return;
            const [quantity, cost] = pairs[i]!;
            const asset = symbol.slice(0, 3);
            holdings[asset] = {
              asset,
              symbol,
              quantity: dec(asDecimal(quantity)),
              locked: dec(0),
              cost: dec(asDecimal(cost)),
            } as Holding;
          });
          const wallet = {
            cash: dec(asDecimal(cash)),
            lockedCash: dec(asDecimal(locked)),
            holdings,
          } as WalletState;
          const meter = new EquityMeter(fake);
          meter.load(wallet);
          // A pair with no candle closed yet has no price: its holding counts at cost.
          const closed = new Int32Array(pairs.map(([, , , priced]) => (priced ? 1 : 0)));
          const expected = roundHalfEven8(
            walletEquity(wallet, (symbol) => {
              const i = symbols.indexOf(symbol);
              return closed[i] ? dec(asDecimal(BigInt(closes[i]!))) : undefined;
            }),
          );
          expect(meter.at(closed)).toBe(expected.toFixed(8));
          expect(BigInt(meter.atUnits(closed))).toBe(BigInt(expected.times(100_000_000).toFixed(0)));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('fee rates fixed at creation', () => {
  const withRates = (rates: { feeRate: string; makerFeeRate?: string }) => {
    const c = createCommand();
    return { ...c, data: { ...c.data, ...rates } } satisfies BacktestCommand;
  };

  it('records the maker and taker rates and fills with them: resting limits at the maker rate, takers at the taker rate', () => {
    const { events, state } = run([
      withRates({ feeRate: '0.002', makerFeeRate: '0.0005' }),
      START,
      order({ type: 'limit', price: '97', quantity: '1' }),
      order({ quantity: '1' }),
      step(2),
    ]);
    expect(events[0]).toMatchObject({
      type: 'BacktestCreated',
      data: { fee_rate: '0.002', maker_fee_rate: '0.0005' },
    });
    expect(state.config).toMatchObject({ feeRate: '0.002', makerFeeRate: '0.0005' });
    const fills = fillsOf(events);
    expect(fills.map((f) => [f.trigger, f.liquidity, f.fee_rate])).toEqual([
      ['market', 'taker', '0.002'],
      ['limit', 'maker', '0.0005'],
    ]);
  });

  it('a session recorded without a maker rate (before it existed) charges the taker rate on every fill', () => {
    const created = run([withRates({ feeRate: '0.002' })]).events[0]!;
    expect(created.data).not.toHaveProperty('maker_fee_rate');
    let state = backtestDecider.evolve(backtestDecider.initialState(), created);
    expect(state.config?.makerFeeRate).toBe('0.002');
    for (const c of [START, order({ type: 'limit', price: '97', quantity: '1' }), step(2)]) {
      for (const e of backtestDecider.decide(c, state, context())) state = backtestDecider.evolve(state, e);
    }
    expect(state.wallet.feesPaid.toFixed()).toBe('0.194');
  });
});

describe('participation share fixed at creation', () => {
  const created = (participationPct?: number) => {
    const c = createCommand();
    return {
      ...c,
      data: {
        ...c.data,
        fillModel: 'realistic' as const,
        ...(participationPct !== undefined ? { participationPct } : {}),
      },
    } satisfies BacktestCommand;
  };
  // Candles of 100 BTC each, so a share of their volume is below what the order asks.
  const thin = { BTCUSDT: BTC.map((c) => ({ ...c, volume: '100.00000000' })), ETHUSDT: ETH };
  const firstMakerFill = (participationPct?: number) => {
    const { events, state } = run(
      [created(participationPct), START, order({ type: 'limit', price: '97', quantity: '50' }), step(2)],
      context({ market: testMarket(thin), catalog: testCatalog(thin) }),
    );
    return { events, state, fill: fillsOf(events).find((f) => f.liquidity === 'maker')! };
  };

  it("records the agent's share and its sandbox's resting orders take at most that share of a candle's volume", () => {
    const { events, state, fill } = firstMakerFill(25);
    expect(events[0]).toMatchObject({ type: 'BacktestCreated', data: { participation_pct: 25 } });
    expect(state.config?.participationPct).toBe(25);
    expect(events.find((e) => e.type === 'WalletOpened')?.data).toMatchObject({ participation_pct: 25 });
    // 25 % of the candle's 100 BTC.
    expect(fill).toMatchObject({ quantity: '25.00000000', participation_cap_pct: '25' });
  });

  it('a session recorded without one (before it was carried) fills with the default 10 %', () => {
    const { events, state, fill } = firstMakerFill();
    expect(events[0]!.data).not.toHaveProperty('participation_pct');
    expect(state.config?.participationPct).toBe(10);
    expect(fill).toMatchObject({ quantity: '10.00000000', participation_cap_pct: '10' });
  });
});
