import { describe, expect, it } from 'vitest';
import { fails } from '../support/api-calls';
import { ok, sessionBody, useBacktestApp, useTrader } from './http-support';

/**
 * Gaps handled honestly (issue 24, item 6) on the real hourly data: Binance has no candles for 2021-04-20
 * 02:00 and 03:00 UTC (every pair). A backtest over that window says so when created and started, refuses a
 * market order while its virtual clock is inside the gap (the last close would be a fabricated price), and
 * trades again once a real candle has closed.
 */
const t = useBacktestApp();
const alice = useTrader(t);

const GAP = {
  interval: '1h',
  start: '2021-04-20T02:00:00.000Z',
  end: '2021-04-20T04:00:00.000Z',
  missing_candles: 2,
  symbols: ['BTCUSDT'],
};

const BUY = { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.01' };

/** Creates a BTCUSDT session of 10,000 USDT from `start` to `end` (ISO): its create answer. */
const createSession = (start: string, end: string) =>
  ok(t.app, alice.headers, 'POST', '/backtest/create', {
    ...sessionBody(alice, start, end, ['BTCUSDT']),
    starting_balance: 10000,
  });

/** A market buy of 0.01 BTC in session `id`, refused with 503 `PRICE_NOT_AVAILABLE`: the error. */
const refusedBuy = (id: string) =>
  fails(t.app, alice.headers, 'POST', `/backtest/${id}/trade/order`, 503, 'PRICE_NOT_AVAILABLE', BUY);

describe('a backtest over missing candles', () => {
  it('lists the gap and never fills a market order on the forward-filled price inside it', async () => {
    const created = await createSession('2021-04-19T22:00:00Z', '2021-04-20T08:00:00Z');
    expect(created.data_gaps).toEqual([GAP]);
    const id = created.session_id as string;
    const started = await ok(t.app, alice.headers, 'POST', `/backtest/${id}/start`);
    expect(started.data_gaps).toEqual([GAP]);

    // 02:00: the 01:00 candle has just closed; a real price.
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step/batch`, { steps: 4 });
    const before = await ok(t.app, alice.headers, 'POST', `/backtest/${id}/trade/order`, BUY, 201);
    expect(before.status).toBe('filled');

    // 03:00 and 04:00: inside the gap.
    for (const step of [1, 1]) {
      const at = await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step/batch`, { steps: step });
      const refused = await refusedBuy(id);
      expect(refused.message, at.virtual_time).toMatch(/stale/);
      expect(refused.details).toMatchObject({ symbol: 'BTCUSDT', last_price_at: '2021-04-20T02:00:00.000Z' });
    }
    const orders = await ok(t.app, alice.headers, 'GET', `/backtest/${id}/trade/orders`);
    expect(orders.orders ?? orders).toHaveLength(1);

    // 05:00: the 04:00 candle closed; trading resumes at its close.
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step/batch`, { steps: 1 });
    const after = await ok(t.app, alice.headers, 'POST', `/backtest/${id}/trade/order`, BUY, 201);
    expect(after.status).toBe('filled');
  });

  it('before the first closed candle: a market order is PRICE_NOT_AVAILABLE 503 and records nothing, a limit rests', async () => {
    // 2021-04-04 20:00 is the test data's first BTCUSDT candle: at step 0 none has closed.
    const created = await createSession('2021-04-04T20:00:00Z', '2021-04-05T02:00:00Z');
    const id = created.session_id as string;
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/start`);
    const balance = () => ok(t.app, alice.headers, 'GET', `/backtest/${id}/account/balance`);
    const cash = await balance();
    const refused = await refusedBuy(id);
    expect(refused.details).toMatchObject({ symbol: 'BTCUSDT' });
    expect(await balance()).toEqual(cash);
    const limit = { symbol: 'BTCUSDT', side: 'buy', type: 'limit', quantity: '0.01', price: '5000' };
    const rests = await ok(t.app, alice.headers, 'POST', `/backtest/${id}/trade/order`, limit, 201);
    expect(rests.status).toBe('pending');
    // One step closes the first candle: the market order is placed again and fills at its close.
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step`);
    const filled = await ok(t.app, alice.headers, 'POST', `/backtest/${id}/trade/order`, BUY, 201);
    expect(filled.status).toBe('filled');
    const orders = await ok(t.app, alice.headers, 'GET', `/backtest/${id}/trade/orders`);
    expect((orders.orders ?? orders).map((o: { type: string }) => o.type).sort()).toEqual([
      'limit',
      'market',
    ]);
  });

  it('lists no gap for a window without one', async () => {
    const body = sessionBody(alice, '2022-01-01T00:00:00Z', '2022-01-02T00:00:00Z', ['BTCUSDT', 'ETHUSDT']);
    const created = await ok(t.app, alice.headers, 'POST', '/backtest/create', {
      ...body,
      starting_balance: 10000,
    });
    expect(created.data_gaps).toEqual([]);
  });
});
