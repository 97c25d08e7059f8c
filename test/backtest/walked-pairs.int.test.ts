import { describe, expect, it, onTestFinished } from 'vitest';
import { decisionIds } from '../../commands/backtest';
import type { BacktestCommand, BacktestContext } from '../../domain/backtest/commands';
import { backtestDecider } from '../../domain/backtest/decide';
import { EquityMeter } from '../../domain/backtest/equity';
import { type BacktestStreamEvent, upcastBacktestStepped } from '../../domain/backtest/events';
import {
  buildSessionMarket,
  closedCount,
  lastClosed,
  type SessionMarket,
} from '../../domain/backtest/market';
import type { BacktestState } from '../../domain/backtest/state';
import { INTERVAL_MS, type Interval } from '../../domain/market/intervals';
import { unpackUnits } from '../../domain/metrics/equity-points';
import type { PairFilters } from '../../domain/trading/quantity';
import { backtestMarketSource, describePair, scanPair } from '../../src/backtest/market-source';
import { createPooledStepper } from '../../src/backtest/stepper';
import { useBacktestApp } from './http-support';
import { createBacktestCommand, H, sequentialIds, stored } from './support';

/**
 * Issue 24: a step walks only the pairs its wallet holds or has orders in, and `start` describes a pair's window
 * from the candle store's manifest instead of reading it. On the real hourly data of four pairs: the description
 * equals a scan of the candles (counts, first and last open times, gaps) at many ends; and a session's events and
 * every step's equity equal a valuation over every pair at every step (what each step computed before, reading
 * every pair), with the window in small chunks and whole.
 */
const PAIRS = ['BTCUSDT', 'ETHUSDT', 'SOLUSDT', 'XRPUSDT'];
const t = useBacktestApp(['exchangeInfo.json', ...PAIRS.map((s) => `klines/1h/${s}-1h.csv`)]);

const START = Date.UTC(2022, 4, 1);
const END = Date.UTC(2022, 6, 1); // 1,464 hourly steps

/** A session's commands: orders in three pairs (held, pending, none), batches large and small to the end. */
const sessionCommands = (fingerprint: string): BacktestCommand[] => {
  const order = (symbol: string, side: 'buy' | 'sell', type: string, quantity: string, price?: string) =>
    ({
      type: 'PlaceSandboxOrder',
      data: {
        order: {
          symbol,
          side,
          type,
          quantity,
          ...(type === 'limit' ? { price } : type !== 'market' ? { triggerPrice: price } : {}),
        },
      },
    }) as BacktestCommand;
  return [
    createBacktestCommand(`bt_${'1'.repeat(32)}`, {
      startTime: START,
      endTime: END,
      candleInterval: '1h',
      startingBalance: '100000',
      strategyLabel: 'walked',
      pairs: PAIRS,
    }),
    { type: 'StartBacktest', data: { fingerprint } },
    { type: 'StepBacktest', data: { steps: 3 } },
    // Held: BTC and SOL (the equity reads their closes); pending far from the price: an ETH limit buy and a BTC
    // stop (walked, never reached); XRP: nothing.
    order('BTCUSDT', 'buy', 'market', '0.5'),
    order('SOLUSDT', 'buy', 'market', '100'),
    order('ETHUSDT', 'buy', 'limit', '1', '10'),
    order('BTCUSDT', 'sell', 'stop_loss', '0.1', '100'),
    { type: 'StepBacktest', data: { steps: 1 } },
    { type: 'StepBacktest', data: { steps: 100 } },
    { type: 'StepBacktest', data: { steps: 400 } },
    // A limit that fills along the way: ETH joins the held pairs in the next batches.
    order('ETHUSDT', 'buy', 'limit', '2', '1500'),
    { type: 'StepBacktest', data: { steps: 10_000 } },
  ];
};

describe('a step walks the pairs its wallet needs; start reads no candles', () => {
  it('describes each window from the manifest exactly as a scan of its candles', () => {
    const candles = t.app.services.market!.data.candles;
    let gaps = 0;
    let described = 0;
    for (const symbol of PAIRS) {
      for (const interval of ['1h', '4h', '1d'] as Interval[]) {
        for (const end of [
          Date.UTC(2021, 0, 1),
          Date.UTC(2021, 5, 1, 7),
          Date.UTC(2022, 0, 1),
          Date.UTC(2022, 7, 15, 13),
          Date.UTC(2023, 11, 30),
          Date.UTC(2030, 0, 1),
        ]) {
          const endExclusive = end - INTERVAL_MS[interval] + 1;
          const fromManifest = describePair(candles, symbol, interval, endExclusive);
          expect(fromManifest).toEqual(scanPair(candles, symbol, interval, endExclusive));
          gaps += fromManifest.pair.gaps.length;
          if (interval === '1h' && candles.servedGaps(symbol, interval)) described++;
        }
      }
    }
    // The hourly series are described from the manifest (not scanned), and the real data has gaps to compare.
    expect(described).toBe(PAIRS.length * 6);
    expect(gaps).toBeGreaterThan(0);
  });

  it('answers each step as a valuation over every pair at every step, chunked or whole', () => {
    const services = t.app.services.market!;
    const source = backtestMarketSource(services, { chunkCandles: 24 });
    const loaded = source.load(PAIRS, '1h', END);
    if ('error' in loaded) throw new Error(loaded.error);
    const chunked = loaded.market;
    const whole = buildSessionMarket(
      '1h',
      PAIRS.map((symbol) => ({
        filters: services.pair(symbol) as PairFilters,
        candles: services.data.candles.query(symbol, '1h', { end: END - H, limit: 1_000_000 }),
      })),
    );

    const commands = sessionCommands(loaded.fingerprint);
    const run = (market: SessionMarket) => {
      const ctx: BacktestContext = {
        now: new Date('2030-01-01T00:00:00Z'),
        newId: sequentialIds(),
        market,
        catalog: source.catalog(),
      };
      let state: BacktestState = backtestDecider.initialState();
      const all: { before: BacktestState; events: BacktestStreamEvent[] }[] = [];
      for (const command of commands) {
        const events = backtestDecider.decide(command, state, ctx);
        all.push({ before: state, events });
        for (const e of events) state = backtestDecider.evolve(state, e);
      }
      return { all, state };
    };
    const a = run(chunked);
    const b = run(whole);
    expect(a.all.map((x) => x.events)).toEqual(b.all.map((x) => x.events));
    expect(a.state.status).toBe('completed');

    // Every step's equity as the whole market values it over every pair (a batch without fills keeps its wallet).
    let checked = 0;
    for (const { before, events } of b.all) {
      const stepped = events.find((e) => e.type === 'BacktestStepped');
      if (!stepped || stepped.data.fills > 0) continue;
      const meter = new EquityMeter(whole);
      meter.load(before.wallet);
      unpackUnits(upcastBacktestStepped(stepped.data).equity_units).forEach((equity, i) => {
        const at = START + (stepped.data.from_step + 1 + i) * H;
        const closed = Int32Array.from(whole.series, (s) => closedCount(s, H, at));
        expect(equity).toBe(meter.at(closed));
        checked++;
      });
    }
    expect(checked).toBeGreaterThan(500);
    const filled = a.all.flatMap((x) => x.events).filter((e) => e.type === 'OrderFilled');
    expect(filled.map((e) => e.data.symbol)).toEqual(['BTCUSDT', 'SOLUSDT', 'ETHUSDT']);
  });
});

describe('a stepping thread reads the chunks it steps through', () => {
  const SESSION = `bt_${'1'.repeat(32)}`;
  const NOW = new Date('2030-01-01T00:00:00Z');

  /** Calls of the request thread's candle reads (`queryColumns`: a point read is one), while counted. */
  let storeReads = 0;

  /**
   * The session's events, each batch stepped by `step` and every other command decided here, and after each batch
   * every pair's last candle as the step response shows it (`lastClosed`) with the store reads those took.
   */
  const session = async (
    market: SessionMarket,
    catalog: BacktestContext['catalog'],
    fingerprint: string,
    step: (state: BacktestState, revision: number, steps: number) => Promise<BacktestStreamEvent[]>,
  ) => {
    let state: BacktestState = backtestDecider.initialState();
    let revision = -1;
    const all: BacktestStreamEvent[][] = [];
    const prices: unknown[] = [];
    let priceReads = 0;
    for (const command of sessionCommands(fingerprint)) {
      const events =
        command.type === 'StepBacktest'
          ? await step(state, revision, command.data.steps)
          : backtestDecider.decide(command, state, {
              now: NOW,
              newId: decisionIds(SESSION, revision + 1),
              market,
              catalog,
            });
      all.push(events);
      for (const e of events) state = backtestDecider.evolve(state, e);
      revision += events.length;
      if (command.type === 'StepBacktest') {
        const before = storeReads;
        prices.push(PAIRS.map((symbol) => lastClosed(market, symbol, state.virtualTime)));
        priceReads += storeReads - before;
      }
    }
    return { all, prices, priceReads };
  };

  it('from the candle store itself, and asks the request thread only for a pair with live minutes', async () => {
    const services = t.app.services.market!;
    const candles = services.data.candles;
    const queryColumns = candles.queryColumns;
    candles.queryColumns = (...args) => {
      storeReads++;
      return queryColumns.apply(candles, args);
    };
    onTestFinished(() => {
      candles.queryColumns = queryColumns;
    });
    /** The events of the session through a fresh thread, and the candles the request thread read meanwhile. */
    const onThread = async () => {
      const source = backtestMarketSource(services, { chunkCandles: 24 });
      const loaded = source.load(PAIRS, '1h', END);
      if ('error' in loaded) throw new Error(loaded.error);
      const stepper = createPooledStepper({ threads: 1, inlineUpTo: 0 });
      let readHere = 0;
      try {
        const { all: events, ...read } = await session(
          loaded.market,
          source.catalog(),
          loaded.fingerprint,
          async (state, revision, steps) => {
            const before = source.residentCandles();
            const stepped = await stepper.step({
              sessionId: SESSION,
              revision: revision + 1,
              state,
              steps,
              now: NOW,
              market: loaded.market,
            });
            readHere += source.residentCandles() - before;
            return stepped;
          },
        );
        return { events, readHere, ...read, fingerprint: loaded.fingerprint };
      } finally {
        await stepper.close();
      }
    };
    const inProcess = async () => {
      const source = backtestMarketSource(services, { chunkCandles: 24 });
      const loaded = source.load(PAIRS, '1h', END);
      if ('error' in loaded) throw new Error(loaded.error);
      return session(loaded.market, source.catalog(), loaded.fingerprint, async (state, revision, steps) =>
        backtestDecider.decide({ type: 'StepBacktest', data: { steps } }, state, {
          now: NOW,
          newId: decisionIds(SESSION, revision + 1),
          market: loaded.market,
        }),
      );
    };
    const { all: expected, prices } = await inProcess();
    expect(expected.at(-1)!.some((e) => e.type === 'BacktestCompleted')).toBe(true);

    const direct = await onThread();
    // As stored: a thread's `BacktestStepped` crosses as its encoded text (`dataText`) without the packed equity.
    const want = expected.map(stored);
    expect(direct.events.map(stored)).toEqual(want);
    // ~60 chunks of three walked pairs, every pair's at the end: none read on the request thread; nor the last
    // candles the step responses show (the thread read them at the batch's end).
    expect(direct.readHere).toBe(0);
    expect(direct.prices).toEqual(prices);
    expect(direct.priceReads).toBe(0);

    // A live minute of BTCUSDT in memory (after the window: its candles are unchanged), which only the request
    // thread holds: the thread asks for that pair's chunks and reads the others itself.
    const last = services.data.candles.last('BTCUSDT', '1h')!;
    services.data.candles.merge('BTCUSDT', '1h', [{ ...last, openTime: Date.UTC(2029, 0, 1) }]);
    const asked = await onThread();
    expect(asked.fingerprint).toBe(direct.fingerprint);
    expect(asked.events.map(stored)).toEqual(want);
    expect(asked.readHere).toBeGreaterThan(40 * 24);
    expect(asked.prices).toEqual(prices);
  }, 120_000);
});
