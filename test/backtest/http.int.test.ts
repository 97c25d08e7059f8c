import { describe, expect, it } from 'vitest';
import { computePerformance } from '../../domain/metrics/performance';
import { keyHeader } from '../accounts/support';
import {
  call,
  fails,
  H,
  ok,
  performanceInputFromResults,
  rawCandles,
  readsAtClock,
  sandboxOrder,
  type Trader,
  useBacktestApp,
  useTrader,
} from './http-support';

/**
 * The backtest endpoints through the real stack (`inject`: routes, auth, commands, event store, projections) on
 * the real hourly BTCUSDT and ETHUSDT files, PGlite by default or PostgreSQL with DATABASE_URL.
 */
const t = useBacktestApp();
const alice = useTrader(t, { max_position_size_pct: 100 });
const bob = useTrader(t);

const START = '2022-01-01T00:00:00Z';
const END = '2022-01-11T00:00:00Z';
const T0 = Date.parse(START);
const BTC = rawCandles('BTCUSDT');

const create = (who: Trader, body: Record<string, unknown> = {}) =>
  call(t.app, who.headers, 'POST', '/backtest/create', {
    start_time: START,
    end_time: END,
    starting_balance: '10000',
    candle_interval: '1h',
    agent_id: who.agentId,
    strategy_label: 'http-test',
    pairs: ['btcusdt', 'ETHUSDT'],
    ...body,
  });

describe('create and start', () => {
  it('creates a session with its step count and pairs', async () => {
    const r = await create(alice);
    expect(r.status, r.raw).toBe(200);
    expect(r.body).toMatchObject({
      status: 'created',
      total_steps: 240,
      estimated_pairs: 2,
      pairs: ['BTCUSDT', 'ETHUSDT'],
    });
    expect(r.body.session_id).toMatch(/^bt_[0-9a-f]{32}$/);
  });

  it('validates the configuration with the documented codes', async () => {
    expect((await create(alice, { candle_interval: '2h' })).body.error.code).toBe('VALIDATION_ERROR');
    expect((await create(alice, { end_time: START })).body.error.code).toBe('VALIDATION_ERROR');
    expect((await create(alice, { pairs: ['NOPEUSDT'] })).body.error.code).toBe('INVALID_SYMBOL');
    const outside = await create(alice, {
      start_time: '2019-01-01T00:00:00Z',
      end_time: '2019-02-01T00:00:00Z',
    });
    expect([outside.status, outside.body.error.code]).toEqual([400, 'BACKTEST_NO_DATA']);
    const late = await create(alice, { end_time: '2024-06-01T00:00:00Z' });
    expect(late.body.error.code).toBe('BACKTEST_NO_DATA');
    const foreign = await create(alice, { agent_id: bob.agentId });
    expect([foreign.status, foreign.body.error.code]).toEqual([403, 'PERMISSION_DENIED']);
  });

  it('starts once (409 afterwards) with the virtual clock at start_time', async () => {
    const id = (await create(alice)).body.session_id;
    const started = await ok(t.app, alice.headers, 'POST', `/backtest/${id}/start`);
    expect(started).toMatchObject({
      status: 'running',
      total_steps: 240,
      virtual_time: '2022-01-01T00:00:00.000Z',
    });
    const again = await call(t.app, alice.headers, 'POST', `/backtest/${id}/start`);
    expect([again.status, again.body.error.code]).toEqual([409, 'BACKTEST_INVALID_STATE']);
    const status = await ok(t.app, alice.headers, 'GET', `/backtest/${id}/status`);
    expect(status).toMatchObject({ status: 'running', step: 0, progress_pct: 0, agent_id: alice.agentId });
  });
});

describe('no look-ahead', () => {
  it('never returns data from after virtual time, on any sandbox endpoint', async () => {
    const id = (await create(alice)).body.session_id;
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/start`);
    await sandboxOrder(t.app, alice.headers, id, {
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'market',
      quantity: '0.01',
    });
    for (const batch of [1, 5, 17, 40]) {
      const stepped = await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step/batch`, { steps: batch });
      const at = Date.parse(stepped.virtual_time);
      // The step's prices are the candle that closed at T (opened at T − 1h), exactly as in the raw file.
      expect(stepped.prices.BTCUSDT.time).toBe(new Date(at - H).toISOString());
      expect(Number(stepped.prices.BTCUSDT.close)).toBe(BTC.get(at - H)!.close);
      const reads = await readsAtClock(t.app, alice, id, stepped, [
        '/market/price/BTCUSDT',
        '/market/prices',
        '/market/ticker/ETHUSDT',
        '/market/candles/BTCUSDT?limit=1000',
        '/market/candles/BTCUSDT?interval=4h',
        '/market/candles/BTCUSDT?start_time=2022-01-01T00:00:00Z&end_time=2023-01-01T00:00:00Z',
      ]);
      const [price, , , candles, coarse] = reads;
      expect(price.price).toBe(BTC.get(at - H)!.closeText);
      const last = candles.candles.at(-1);
      expect(Date.parse(last.time) + H).toBeLessThanOrEqual(at);
      expect(Date.parse(last.time)).toBe(at - H);
      for (const c of coarse.candles) expect(Date.parse(c.time) + 4 * H).toBeLessThanOrEqual(at);
    }
    // `symbols` picks pairs; present but naming none is refused, as on /market/prices.
    const one = await ok(t.app, alice.headers, 'GET', `/backtest/${id}/market/prices?symbols=btcusdt,,`);
    expect([one.count, Object.keys(one.prices)]).toEqual([1, ['BTCUSDT']]);
    for (const empty of ['', '%2C']) {
      const error = await fails(
        t.app,
        alice.headers,
        'GET',
        `/backtest/${id}/market/prices?symbols=${empty}`,
        422,
        'VALIDATION_ERROR',
      );
      expect(error.details).toMatchObject({ issues: [{ field: 'symbols', location: 'querystring' }] });
    }
  });
});

describe('stepping', () => {
  it('fills a limit order in a batch on the candle where it is crossed, not later', async () => {
    const id = (await create(alice)).body.session_id;
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/start`);
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step/batch`, { steps: 10 });
    const at = T0 + 10 * H;
    // A level 1% under the current close: find independently the first later candle whose low reaches it.
    const level = Math.floor(BTC.get(at - H)!.close * 0.99 * 100) / 100;
    let crossing = at;
    while (BTC.get(crossing)!.low > level) crossing += H;
    const placed = await sandboxOrder(t.app, alice.headers, id, {
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'limit',
      quantity: '0.01',
      price: level.toFixed(2),
    });
    expect(placed).toMatchObject({ status: 'pending' });
    const batch = await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step/batch`, { steps: 200 });
    expect(batch.orders_filled).toHaveLength(1);
    expect(batch.orders_filled[0]).toMatchObject({
      order_id: placed.order_id,
      executed_price: Number(level).toFixed(8),
      candle_time: new Date(crossing).toISOString(),
      filled_at: new Date(crossing + H).toISOString(),
    });
    const order = (await ok(t.app, alice.headers, 'GET', `/backtest/${id}/trade/orders?status=filled`))
      .orders[0];
    expect(order).toMatchObject({
      order_id: placed.order_id,
      status: 'filled',
      filled_at: new Date(crossing + H).toISOString(),
    });
  });

  it('reports is_complete exactly on the last step, then refuses to step', async () => {
    const id = (await create(alice)).body.session_id;
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/start`);
    const before = await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step/batch`, { steps: 239 });
    expect(before).toMatchObject({ step: 239, is_complete: false, remaining_steps: 1, status: 'running' });
    // A single step takes no body: a `steps` field is refused (naming it) and steps nothing; `{}` is no body.
    const misplaced = await call(t.app, alice.headers, 'POST', `/backtest/${id}/step`, { steps: 5 });
    expect([misplaced.status, misplaced.body.error.code]).toEqual([422, 'VALIDATION_ERROR']);
    expect(misplaced.body.error.details.issues).toEqual([
      expect.objectContaining({ field: 'steps', location: 'body' }),
    ]);
    expect(await ok(t.app, alice.headers, 'GET', `/backtest/${id}/status`)).toMatchObject({ step: 239 });
    const last = await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step`, {});
    expect(last).toMatchObject({
      step: 240,
      is_complete: true,
      remaining_steps: 0,
      progress_pct: 100,
      virtual_time: '2022-01-11T00:00:00.000Z',
      status: 'completed',
    });
    const after = await call(t.app, alice.headers, 'POST', `/backtest/${id}/step`);
    expect([after.status, after.body.error.code]).toEqual([409, 'BACKTEST_INVALID_STATE']);
    const batchTooBig = await call(t.app, alice.headers, 'POST', `/backtest/${id}/step/batch`, {
      steps: 100_001,
    });
    expect(batchTooBig.status).toBe(422);
    const results = await ok(t.app, alice.headers, 'GET', `/backtest/${id}/results`);
    expect(results).toMatchObject({
      status: 'completed',
      summary: { final_equity: '10000.00000000', total_trades: 0 },
      metrics: { returns_count: 240 },
    });
    const curve = await ok(
      t.app,
      alice.headers,
      'GET',
      `/backtest/${id}/results/equity-curve?limit=100&offset=200`,
    );
    expect(curve.total).toBe(241);
    expect(curve.points).toHaveLength(41);
    expect(curve.points.at(-1)).toMatchObject({ step: 240, time: '2022-01-11T00:00:00.000Z' });
  });

  it('trades, completes and reports results, trades and by_pair that add up', async () => {
    const id = (await create(alice)).body.session_id;
    const h = alice.headers;
    await ok(t.app, h, 'POST', `/backtest/${id}/start`);
    await sandboxOrder(t.app, h, id, { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.05' });
    await sandboxOrder(t.app, h, id, { symbol: 'ETHUSDT', side: 'buy', type: 'market', quantity: '1' });
    await ok(t.app, h, 'POST', `/backtest/${id}/step/batch`, { steps: 48 });
    const rejected = await call(t.app, h, 'POST', `/backtest/${id}/trade/order`, {
      symbol: 'BTCUSDT',
      side: 'sell',
      type: 'market',
      quantity: '5',
    });
    expect([rejected.status, rejected.body.error.code, rejected.body.error.details.rule]).toEqual([
      400,
      'INSUFFICIENT_BALANCE',
      'balance',
    ]);
    expect(rejected.body.error.message).toMatch(/risk rule 8 \(balance\)/);
    await sandboxOrder(t.app, h, id, { symbol: 'BTCUSDT', side: 'sell', type: 'market', quantity: '0.05' });
    const end = await ok(t.app, h, 'POST', `/backtest/${id}/step/batch`, { steps: 1000 });
    expect(end.is_complete).toBe(true);
    const results = await ok(t.app, h, 'GET', `/backtest/${id}/results`);
    expect(results.summary.total_trades).toBe(3);
    expect(results.metrics.closed_trades).toBe(1);
    expect(results.summary.final_equity).toBe(end.portfolio.total_equity);
    const net = results.by_pair.reduce((s: number, p: { net_pnl: string }) => s + Number(p.net_pnl), 0);
    expect(net).toBeCloseTo(Number(results.summary.total_pnl), 6);
    const trades = await ok(t.app, h, 'GET', `/backtest/${id}/results/trades?limit=2`);
    expect(trades.total).toBe(3);
    expect(trades.trades.map((x: { side: string }) => x.side)).toEqual(['buy', 'buy']);
    const history = await ok(t.app, h, 'GET', `/backtest/${id}/trade/history`);
    expect(history.trades[0].side).toBe('sell');
    // The results are the documented formulas (docs/metrics.md) applied to the published equity curve and trade log.
    const curve = await ok(t.app, h, 'GET', `/backtest/${id}/results/equity-curve?limit=10000`);
    const log = await ok(t.app, h, 'GET', `/backtest/${id}/results/trades?limit=1000`);
    const recomputed = computePerformance(
      performanceInputFromResults({
        startingBalance: '10000',
        intervalMs: H,
        points: curve.points,
        trades: log.trades,
        prices: end.prices,
      }),
    );
    expect(results.metrics).toEqual(recomputed.metrics);
    expect(results.by_pair).toEqual(recomputed.by_pair);
    expect(results.summary).toMatchObject({
      ...recomputed.summary,
      duration_real_seconds: expect.any(String),
    });
    // Each point's drawdown below the running peak: the deepest is the reported maximum, and a page (which
    // starts from the peak before it) gives the same values as the whole curve.
    const drawdowns = curve.points.map((p: { drawdown_pct: string }) => p.drawdown_pct);
    const deepest = drawdowns.reduce((a: string, b: string) => (Number(b) > Number(a) ? b : a));
    expect(deepest).toBe(results.metrics.max_drawdown_pct);
    expect(Number(deepest)).toBeGreaterThan(0);
    expect(curve.points[0].drawdown_pct).toBe('0.00000000');
    const page = await ok(t.app, h, 'GET', `/backtest/${id}/results/equity-curve?limit=20&offset=30`);
    expect(page.points).toEqual(curve.points.slice(30, 50));
    const orders = await ok(t.app, h, 'GET', `/backtest/${id}/trade/orders`);
    expect(orders.orders.map((o: { status: string }) => o.status)).toEqual([
      'filled',
      'rejected',
      'filled',
      'filled',
    ]);
  });

  it('cancels a pending order, then the session with partial results', async () => {
    const id = (await create(alice)).body.session_id;
    const h = alice.headers;
    await ok(t.app, h, 'POST', `/backtest/${id}/start`);
    const pending = await sandboxOrder(t.app, h, id, {
      symbol: 'ETHUSDT',
      side: 'buy',
      type: 'limit',
      quantity: '0.1',
      price: '100',
    });
    expect((await ok(t.app, h, 'GET', `/backtest/${id}/trade/orders/open`)).total).toBe(1);
    // `symbol` filters the sandbox's open orders as it does the live ones.
    expect((await ok(t.app, h, 'GET', `/backtest/${id}/trade/orders/open?symbol=ethusdt`)).total).toBe(1);
    expect((await ok(t.app, h, 'GET', `/backtest/${id}/trade/orders/open?symbol=BTCUSDT`)).total).toBe(0);
    const cancelled = await ok(t.app, h, 'DELETE', `/backtest/${id}/trade/order/${pending.order_id}`);
    expect(cancelled).toMatchObject({ status: 'cancelled', unlocked_amount: pending.locked_amount });
    const twice = await call(t.app, h, 'DELETE', `/backtest/${id}/trade/order/${pending.order_id}`);
    expect([twice.status, twice.body.error.code]).toEqual([409, 'ORDER_NOT_CANCELLABLE']);
    await ok(t.app, h, 'POST', `/backtest/${id}/step/batch`, { steps: 30 });
    const cancel = await ok(t.app, h, 'POST', `/backtest/${id}/cancel`);
    expect(cancel).toMatchObject({
      status: 'cancelled',
      step: 30,
      summary: { final_equity: '10000.00000000' },
    });
    const results = await ok(t.app, h, 'GET', `/backtest/${id}/results`);
    expect(results).toMatchObject({ status: 'cancelled', metrics: { returns_count: 30 } });
    const again = await call(t.app, h, 'POST', `/backtest/${id}/cancel`);
    expect(again.status).toBe(409);
  });
});

describe('ownership', () => {
  it('lets no other account (or other agent) read or trade a session', async () => {
    const id = (await create(alice)).body.session_id;
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/start`);
    const urls: ['GET' | 'POST' | 'DELETE', string, unknown?][] = [
      ['POST', '/start'],
      ['POST', '/step'],
      ['POST', '/step/batch', { steps: 2 }],
      ['POST', '/cancel'],
      ['GET', '/status'],
      ['POST', '/trade/order', { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.01' }],
      ['GET', '/trade/orders'],
      ['GET', '/trade/orders/open'],
      ['DELETE', '/trade/order/00000000-0000-4000-8000-000000000000'],
      ['GET', '/trade/history'],
      ['GET', '/market/price/BTCUSDT'],
      ['GET', '/market/prices'],
      ['GET', '/market/ticker/BTCUSDT'],
      ['GET', '/market/candles/BTCUSDT'],
      ['GET', '/account/balance'],
      ['GET', '/account/positions'],
      ['GET', '/account/portfolio'],
      ['GET', '/results'],
      ['GET', '/results/equity-curve'],
      ['GET', '/results/trades'],
    ];
    const otherAgent = await ok(t.app, alice.headers, 'POST', '/agents', { display_name: 'second' }, 201);
    for (const [method, url, body] of urls) {
      for (const headers of [bob.headers, keyHeader(bob.agentKey), keyHeader(otherAgent.api_key)]) {
        const r = await call(t.app, headers, method, `/backtest/${id}${url}`, body);
        expect([r.status, r.body.error?.code], `${method} ${url}`).toEqual([403, 'PERMISSION_DENIED']);
      }
    }
    const compare = await call(t.app, bob.headers, 'GET', `/backtest/compare?sessions=${id}`);
    expect(compare.status).toBe(403);
    const unknown = await call(t.app, alice.headers, 'GET', `/backtest/bt_${'f'.repeat(32)}/status`);
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'BACKTEST_NOT_FOUND']);
    // The answer names the id it did not find: among the ids of a compare, the one that is unknown.
    expect(unknown.body.error.details).toEqual({ session_id: `bt_${'f'.repeat(32)}` });
    const compareUnknown = await call(
      t.app,
      alice.headers,
      'GET',
      `/backtest/compare?sessions=${id},bt_${'e'.repeat(32)}`,
    );
    expect([compareUnknown.status, compareUnknown.body.error.details]).toEqual([
      404,
      { session_id: `bt_${'e'.repeat(32)}` },
    ]);
    const junk = await call(t.app, alice.headers, 'GET', '/backtest/nope/status');
    expect([junk.status, junk.body.error.details]).toEqual([404, { session_id: 'nope' }]);
    const long = await call(t.app, alice.headers, 'GET', `/backtest/${'z'.repeat(90)}/status`);
    expect([long.status, long.body.error.details]).toEqual([404, { session_id: `${'z'.repeat(64)}…` }]);
    // The owning agent's own key works.
    expect((await call(t.app, keyHeader(alice.agentKey), 'GET', `/backtest/${id}/status`)).status).toBe(200);
    const list = await ok(t.app, bob.headers, 'GET', '/backtest/list');
    expect(list.backtests.map((b: { session_id: string }) => b.session_id)).not.toContain(id);
  });
});

describe('list, compare, best', () => {
  it('lists, compares and picks the best completed sessions of the caller', async () => {
    const h = bob.headers;
    const ids: string[] = [];
    for (const quantity of ['0.01', '0.05']) {
      const r = await create(bob, { strategy_label: 'cmp', pairs: ['BTCUSDT'] });
      const id = r.body.session_id;
      ids.push(id);
      await ok(t.app, h, 'POST', `/backtest/${id}/start`);
      await sandboxOrder(t.app, h, id, { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity });
      await ok(t.app, h, 'POST', `/backtest/${id}/step/batch`, { steps: 240 });
    }
    const list = await ok(
      t.app,
      h,
      'GET',
      '/backtest/list?strategy_label=cmp&sort_by=roi_pct&status=completed',
    );
    expect(list.backtests).toHaveLength(2);
    const rois = list.backtests.map((b: { roi_pct: string }) => Number(b.roi_pct));
    expect(rois[0]).toBeGreaterThanOrEqual(rois[1]);
    const compare = await ok(t.app, h, 'GET', `/backtest/compare?sessions=${ids.join(',')}`);
    expect(compare.comparisons).toHaveLength(2);
    expect(compare.best_by_roi).toBe(list.backtests[0].session_id);
    expect(typeof compare.recommendation).toBe('string');
    expect(compare.recommendation.length).toBeGreaterThan(20);
    const best = await ok(t.app, h, 'GET', '/backtest/best?metric=roi_pct&strategy_label=cmp');
    expect(best).toMatchObject({
      session_id: list.backtests[0].session_id,
      metric: 'roi_pct',
      value: list.backtests[0].roi_pct,
    });
    const none = await call(t.app, h, 'GET', '/backtest/best?metric=roi_pct&strategy_label=nothing');
    expect(none.status).toBe(404);
  });
});
