import { describe, expect, it } from 'vitest';
import { decisionIds } from '../../commands/backtest';
import type { BacktestCommand } from '../../domain/backtest/commands';
import { backtestDecider } from '../../domain/backtest/decide';
import type { BacktestState } from '../../domain/backtest/state';
import { backtestMarketSource } from '../../src/backtest/market-source';
import { createPooledStepper } from '../../src/backtest/stepper';
import { useBacktestApp } from './http-support';
import { createBacktestCommand, stored } from './support';

/**
 * Two batches over one chunked market on one stepping thread at once (issue 24: the thread reads a pair's chunks
 * from the candle store itself, or asks the request thread for those of a pair with live minutes). Which pairs a
 * batch asks for is decided when it is sent, so two batches sent on either side of a pair's first live minute
 * differ; each must keep its own, whatever the other's, and decide what the decider decides in process.
 */
const PAIRS = ['BTCUSDT', 'ETHUSDT'];
const t = useBacktestApp(['exchangeInfo.json', ...PAIRS.map((s) => `klines/1h/${s}-1h.csv`)]);

const START = Date.UTC(2022, 4, 1);
const END = Date.UTC(2022, 6, 1); // 1,464 hourly steps
const SESSION = `bt_${'2'.repeat(32)}`;
const NOW = new Date('2030-01-01T00:00:00Z');

describe('concurrent batches on one stepping thread', () => {
  it('each reads the chunks as it was sent to, although another batch over the market was sent otherwise', async () => {
    const services = t.app.services.market!;
    const source = backtestMarketSource(services, { chunkCandles: 24 });
    const loaded = source.load(PAIRS, '1h', END);
    if ('error' in loaded) throw new Error(loaded.error);
    const { market } = loaded;
    // A session holding BTC (every step values it, so its chunks are walked to the end).
    const commands: BacktestCommand[] = [
      createBacktestCommand(SESSION, {
        startTime: START,
        endTime: END,
        candleInterval: '1h',
        startingBalance: '100000',
        strategyLabel: 'two batches',
        pairs: PAIRS,
      }),
      { type: 'StartBacktest', data: { fingerprint: loaded.fingerprint } },
      {
        type: 'PlaceSandboxOrder',
        data: { order: { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.5' } },
      },
    ];
    let state: BacktestState = backtestDecider.initialState();
    let revision = -1;
    for (const command of commands) {
      const ctx = { now: NOW, newId: decisionIds(SESSION, revision + 1), market, catalog: source.catalog() };
      const events = backtestDecider.decide(command, state, ctx);
      for (const e of events) state = backtestDecider.evolve(state, e);
      revision += events.length;
    }
    const request = { sessionId: SESSION, revision: revision + 1, state, steps: 10_000, now: NOW, market };
    const expected = backtestDecider.decide({ type: 'StepBacktest', data: { steps: 10_000 } }, state, {
      now: NOW,
      newId: decisionIds(SESSION, revision + 1),
      market,
    });
    expect(expected.some((e) => e.type === 'BacktestCompleted')).toBe(true);

    const stepper = createPooledStepper({ threads: 1, inlineUpTo: 0 });
    try {
      // Sent before BTCUSDT has a live minute: the thread reads every pair's chunks itself.
      const first = stepper.step(request);
      // A live minute of BTCUSDT (after the window: the session's candles are unchanged), then the same batch
      // again: it asks the request thread for BTCUSDT's chunks. Both run on the one thread at once.
      const last = services.data.candles.last('BTCUSDT', '1h')!;
      services.data.candles.merge('BTCUSDT', '1h', [{ ...last, openTime: Date.UTC(2029, 0, 1) }]);
      const second = stepper.step(request);
      const [a, b] = await Promise.allSettled([first, second]);
      const want = stored(expected);
      expect(a.status === 'fulfilled' ? stored(a.value) : a.reason).toBe(want);
      expect(b.status === 'fulfilled' ? stored(b.value) : b.reason).toBe(want);
    } finally {
      await stepper.close();
    }
  }, 300_000);
});
