import { describe, expect, it } from 'vitest';
import { ok, sessionBody, useBacktestApp, useTrader } from './http-support';

/**
 * A hole between a pair's stored candles of two sources at the session's interval (sweep of the interface
 * contract, helper sweepb): the data set's BTCUSDT has three days of minutes in 2020 (served at 1h as well) and
 * hourly candles from 2021-04-04 20:00, so at 1h nothing exists from 2020-01-04 00:00 to 2021-04-04 20:00. Neither
 * native series has a gap there, so the create answer of a session over that hole listed no gap, while the start
 * answer of the same session listed it (its window read the candles on both sides), and a session running from
 * the minutes into the hole listed nothing at create or at start, though its clock then steps 24 hours without a
 * BTCUSDT candle. docs/backtesting.md: create and start list the window's gaps "so a strategy knows before its
 * first step which hours it cannot trade".
 */
const t = useBacktestApp([
  'exchangeInfo.json',
  'klines/1h/BTCUSDT-1h.csv',
  'klines/1m/BTCUSDT-1m-2020-01-01.csv',
  'klines/1m/BTCUSDT-1m-2020-01-02.csv',
  'klines/1m/BTCUSDT-1m-2020-01-03.csv',
]);
const alice = useTrader(t);

const HOLE = {
  interval: '1h',
  start: '2020-01-04T00:00:00.000Z',
  end: '2021-04-04T20:00:00.000Z',
  missing_candles: 10964,
  symbols: ['BTCUSDT'],
};

/** Creates a BTCUSDT 1h session from `start` to `end` and starts it: both answers. */
const createAndStart = async (start: string, end: string) => {
  const created = await ok(t.app, alice.headers, 'POST', '/backtest/create', {
    ...sessionBody(alice, start, end, ['BTCUSDT']),
    starting_balance: 10000,
  });
  const started = await ok(t.app, alice.headers, 'POST', `/backtest/${created.session_id as string}/start`);
  return { created, started };
};

describe('a backtest window over a hole between two sources of a pair', () => {
  it('lists the hole when created and when started, as the start already did', async () => {
    const { created, started } = await createAndStart('2021-04-04T00:00:00Z', '2021-04-05T00:00:00Z');
    expect(started.data_gaps).toEqual([HOLE]);
    expect(created.data_gaps).toEqual([HOLE]);
  });

  it('lists the hole a window runs into after its last candle', async () => {
    const { created, started } = await createAndStart('2020-01-03T00:00:00Z', '2020-01-05T00:00:00Z');
    expect(created.data_gaps).toEqual([HOLE]);
    expect(started.data_gaps).toEqual([HOLE]);
  });
});
