import { beforeAll, describe, expect, it } from 'vitest';
import { fails } from '../support/api-calls';
import {
  call,
  ok,
  sandboxOrder,
  sessionBody,
  type Trader,
  trader,
  useBacktestApp,
  useTrader,
} from './http-support';

/**
 * Regressions of the interface audit of the backtest endpoints, through the real stack (`inject`: routes, auth,
 * commands, event store, projections) on the real hourly BTCUSDT and ETHUSDT files:
 * - the sandbox's market and account reads of a session whose clock never started answered 200 with an empty
 *   wallet (equity 0, ROI −100 %) once its candles were in memory (after a refused step, or for a session
 *   cancelled before its start);
 * - sandbox candles of another interval than the session's with `end_time` and no `start_time` came back
 *   empty (the window was counted back from the virtual time, not from `end_time`);
 * - sandbox candles answered an unsupported interval with `VALIDATION_ERROR` 422 and a start after the end with
 *   an empty 200, where `GET /market/candles` answers `INVALID_SYMBOL` 400 and `VALIDATION_ERROR` 422, and
 *   refused the epoch-millisecond times the live endpoint takes;
 * - a day that does not exist (`2022-02-30`) was rolled over into March instead of refused;
 * - a symbol longer than 30 characters was a `VALIDATION_ERROR` instead of the spec's `INVALID_SYMBOL`;
 * - (second audit) `POST /backtest/create` trims `strategy_label`, but the `strategy_label` filters of
 *   `GET /backtest/list` and `GET /backtest/best` compared the raw query value, so a client filtering by the very
 *   label it sent found nothing.
 * - (third audit) a session cancelled after orders placed at its virtual time (after its last step) answered the
 *   cancel with the equity those orders left, but its results, list and compare showed the equity of the last
 *   step: `final_equity`, `total_pnl` and `roi_pct` without the fills' fees and slippage, disagreeing with the
 *   cancel's own answer, `total_fees` and `by_pair.net_pnl`;
 * - (third audit) a sandbox order id in upper case was `ORDER_NOT_FOUND` on `GET` and `DELETE
 *   /backtest/{id}/trade/order/{order_id}`, where the live order endpoints and the battle sandbox's cancel take
 *   either case of the UUID;
 * - (third audit) `POST /backtest/create` recorded an upper-case `agent_id` as sent: the agent's own key (and a JWT
 *   with `X-Agent-Id`) was then refused its session with `PERMISSION_DENIED`, and with the agent's key the
 *   upper-case form of its own id was refused at create.
 * - (fourth audit) the query filters took a looser grammar than the live endpoints': `symbol=` (empty) on
 *   `trade/orders`, `trade/history` and `results/trades` answered every symbol and a symbol holding a control
 *   character answered nothing, where `GET /trade/orders` and `/trade/history` (and the sandbox's own
 *   `trade/orders/open`) refuse both with 422; `strategy_label=` (empty) on list and best matched nothing (a label
 *   is 1 to 100 characters at create) instead of being refused like every other empty filter.
 */
const t = useBacktestApp();
const alice = useTrader(t);

const START = '2022-01-01T00:00:00Z';
const END = '2022-01-03T00:00:00Z';

const create = async (body: Record<string, unknown> = {}) =>
  (
    await ok(t.app, alice.headers, 'POST', '/backtest/create', {
      start_time: START,
      end_time: END,
      starting_balance: '10000',
      candle_interval: '1h',
      agent_id: alice.agentId,
      pairs: ['BTCUSDT', 'ETHUSDT'],
      ...body,
    })
  ).session_id as string;

const SANDBOX_READS = [
  'market/price/BTCUSDT',
  'market/prices',
  'market/ticker/BTCUSDT',
  'market/candles/BTCUSDT',
  'account/balance',
  'account/positions',
  'account/portfolio',
];

/** Every sandbox read of session `id` is refused with BACKTEST_INVALID_STATE 409, its details naming `status`. */
const sandboxReadsRefused = async (id: string, status: string) => {
  for (const read of SANDBOX_READS) {
    const e = await fails(
      t.app,
      alice.headers,
      'GET',
      `/backtest/${id}/${read}`,
      409,
      'BACKTEST_INVALID_STATE',
    );
    expect(e.details, read).toMatchObject({ status });
  }
};

describe('sandbox reads need a started clock', () => {
  it('answers BACKTEST_INVALID_STATE 409 for a created session, also after a refused step or order', async () => {
    const id = await create();
    // These load the session's candles before the decider refuses them: the reads must still refuse.
    await fails(t.app, alice.headers, 'POST', `/backtest/${id}/step`, 409, 'BACKTEST_INVALID_STATE');
    await fails(t.app, alice.headers, 'POST', `/backtest/${id}/trade/order`, 409, 'BACKTEST_INVALID_STATE', {
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'market',
      quantity: '0.01',
    });
    await sandboxReadsRefused(id, 'created');
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/start`);
    const portfolio = await ok(t.app, alice.headers, 'GET', `/backtest/${id}/account/portfolio`);
    expect(portfolio).toMatchObject({ total_equity: '10000.00000000', roi_pct: '0.00000000' });
  });

  it('answers BACKTEST_INVALID_STATE 409 for a session cancelled before its start; results still work', async () => {
    const id = await create();
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/cancel`);
    await sandboxReadsRefused(id, 'cancelled');
    const results = await ok(t.app, alice.headers, 'GET', `/backtest/${id}/results`);
    expect(results.summary).toMatchObject({ final_equity: '10000.00000000', roi_pct: '0.00000000' });
  });

  it('keeps serving the reads of a session cancelled after its start', async () => {
    const id = await create();
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/start`);
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step`);
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/cancel`);
    for (const read of SANDBOX_READS) await ok(t.app, alice.headers, 'GET', `/backtest/${id}/${read}`);
  });
});

describe('sandbox candles follow GET /market/candles', () => {
  let id = '';
  beforeAll(async () => {
    id = await create();
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/start`);
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step/batch`, { steps: 25 });
  });

  const sandbox = (query: string) =>
    ok(t.app, alice.headers, 'GET', `/backtest/${id}/market/candles/BTCUSDT?${query}`);
  const live = (query: string) => ok(t.app, {}, 'GET', `/market/candles/BTCUSDT?${query}`);
  /** The sandbox candles refused with `status` and `code` (the error's answer). */
  const refused = (query: string, status: number, code: string) =>
    fails(t.app, alice.headers, 'GET', `/backtest/${id}/market/candles/BTCUSDT?${query}`, status, code);

  it('pages another interval up to end_time like the live endpoint (newest `limit` candles)', async () => {
    for (const query of [
      'interval=4h&limit=2&end_time=2021-12-31T00:00:00Z',
      'interval=1d&limit=3&end_time=2021-12-20T00:00:00Z',
      'interval=4h&limit=5&start_time=2021-12-30T00:00:00Z&end_time=2021-12-31T00:00:00Z',
      'interval=4h&limit=3&start_time=2021-12-31T00:00:00Z',
    ]) {
      const s = await sandbox(query);
      const l = await live(query);
      expect(s.count, query).toBeGreaterThan(0);
      expect(s.candles, query).toEqual(l.candles);
    }
  });

  it('never returns another interval’s candle still open at virtual time', async () => {
    const s = await sandbox('interval=4h&limit=10');
    const virtual = Date.parse(s.virtual_time);
    expect(s.virtual_time).toBe('2022-01-02T01:00:00.000Z');
    for (const c of s.candles) expect(Date.parse(c.time) + 4 * 3_600_000).toBeLessThanOrEqual(virtual);
    expect(s.candles.at(-1).time).toBe('2022-01-01T20:00:00.000Z');
    // An end after the virtual time changes nothing; a start after the last closed candle gives nothing.
    expect((await sandbox('interval=4h&limit=10&end_time=2023-01-01T00:00:00Z')).candles).toEqual(s.candles);
    expect((await sandbox('interval=4h&start_time=2022-01-01T22:00:00Z')).count).toBe(0);
  });

  it('answers an unsupported interval with INVALID_SYMBOL 400 and a start after the end with 422', async () => {
    // '60' is an interval now (seconds, the original clients' form: docs/compatibility.md); 61 seconds is none.
    for (const interval of ['1w', '2h', '1H', '61']) {
      const e = await refused(`interval=${interval}`, 400, 'INVALID_SYMBOL');
      expect(e.details).toMatchObject({ interval });
    }
    await refused('start_time=2022-01-02T00:00:00Z&end_time=2022-01-01T00:00:00Z', 422, 'VALIDATION_ERROR');
  });

  it('takes epoch milliseconds and refuses a day that does not exist', async () => {
    const ms = await sandbox(`start_time=${Date.parse('2021-12-31T10:00:00Z')}&limit=2`);
    expect(ms.candles.map((c: { time: string }) => c.time)).toEqual([
      '2021-12-31T10:00:00.000Z',
      '2021-12-31T11:00:00.000Z',
    ]);
    for (const bad of ['2021-02-30T00:00:00Z', '2021-04-31', 'yesterday']) {
      const e = await refused(`start_time=${bad}`, 422, 'VALIDATION_ERROR');
      expect(e.details?.['issues']).toEqual([expect.objectContaining({ field: 'start_time' })]);
    }
  });

  it('answers any unknown symbol, however long, with INVALID_SYMBOL 400', async () => {
    const long = 'X'.repeat(60);
    for (const read of ['market/price', 'market/ticker', 'market/candles']) {
      await fails(t.app, alice.headers, 'GET', `/backtest/${id}/${read}/${long}`, 400, 'INVALID_SYMBOL');
    }
  });
});

describe('create', () => {
  it('refuses a start or end on a day that does not exist instead of rolling it over', async () => {
    for (const [start, end] of [
      ['2022-02-30T00:00:00Z', '2022-03-05T00:00:00Z'],
      ['2022-01-01T00:00:00Z', '2022-02-29T00:00:00Z'],
      ['2022-13-01T00:00:00Z', '2022-03-05T00:00:00Z'],
    ]) {
      const r = await call(t.app, alice.headers, 'POST', '/backtest/create', {
        start_time: start,
        end_time: end,
        starting_balance: 10000,
        candle_interval: '1h',
        agent_id: alice.agentId,
      });
      expect([r.status, r.body.error?.code], r.raw).toEqual([422, 'VALIDATION_ERROR']);
    }
    // A real leap day is fine.
    const leap = await call(t.app, alice.headers, 'POST', '/backtest/create', {
      start_time: '2024-02-29T00:00:00Z',
      end_time: '2024-03-01T00:00:00Z',
      starting_balance: 10000,
      candle_interval: '1h',
      agent_id: alice.agentId,
    });
    // (outside the data set: the date parses, the range is refused for want of data)
    expect([leap.status, leap.body.error?.code]).toEqual([400, 'BACKTEST_NO_DATA']);
  });
});

describe('create in a hole of the data', () => {
  // BTCUSDT 1h from the 2020-01-01..03 minute files and the hourly file from 2021-04: June 2020 has none.
  const h = useBacktestApp([
    'exchangeInfo.json',
    'klines/1h/BTCUSDT-1h.csv',
    'klines/1m/BTCUSDT-1m-2020-01-01.csv',
    'klines/1m/BTCUSDT-1m-2020-01-02.csv',
    'klines/1m/BTCUSDT-1m-2020-01-03.csv',
  ]);
  let bob: Trader;
  beforeAll(async () => {
    bob = await trader(h.app);
  });

  it('refuses a window with no candles although the pair has data before and after it', async () => {
    // It used to be accepted and traded at the 2020-01-03 close.
    const body = {
      start_time: '2020-06-01T00:00:00Z',
      end_time: '2020-06-08T00:00:00Z',
      starting_balance: '10000',
      candle_interval: '1h',
      agent_id: bob.agentId,
    };
    const one = await fails(h.app, bob.headers, 'POST', '/backtest/create', 400, 'BACKTEST_NO_DATA', {
      ...body,
      pairs: ['BTCUSDT'],
    });
    expect(one.details).toMatchObject({ symbol: 'BTCUSDT', candle_interval: '1h' });
    await fails(h.app, bob.headers, 'POST', '/backtest/create', 400, 'BACKTEST_NO_DATA', {
      ...body,
      pairs: null,
    });
    // Either side of the hole still works.
    for (const [start, end] of [
      ['2020-01-03T00:00:00Z', '2020-01-03T06:00:00Z'],
      ['2021-05-01T00:00:00Z', '2021-05-02T00:00:00Z'],
    ]) {
      await ok(h.app, bob.headers, 'POST', '/backtest/create', {
        ...body,
        start_time: start,
        end_time: end,
        pairs: ['BTCUSDT'],
      });
    }
  });
});

describe('strategy_label filters match the label as create stores it', () => {
  it('list and best find a session by the label sent at create, surrounding spaces included', async () => {
    const body = sessionBody(alice, '2022-01-01T00:00:00Z', '2022-01-01T03:00:00Z', ['BTCUSDT']);
    const created = await ok(t.app, alice.headers, 'POST', '/backtest/create', {
      ...body,
      strategy_label: '  swing  ',
    });
    expect(created.strategy_label).toBe('swing');
    const id = created.session_id as string;
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/start`);
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step/batch`, { steps: 3 });

    for (const label of ['swing', '  swing  ', 'swing ']) {
      const list = await ok(
        t.app,
        alice.headers,
        'GET',
        `/backtest/list?strategy_label=${encodeURIComponent(label)}`,
      );
      expect(list.total, `list strategy_label=${JSON.stringify(label)}`).toBe(1);
      expect(list.backtests[0].session_id).toBe(id);
      const best = await ok(
        t.app,
        alice.headers,
        'GET',
        `/backtest/best?metric=roi_pct&strategy_label=${encodeURIComponent(label)}`,
      );
      expect(best.session_id, `best strategy_label=${JSON.stringify(label)}`).toBe(id);
    }
    const none = await ok(t.app, alice.headers, 'GET', '/backtest/list?strategy_label=swin');
    expect(none.total).toBe(0);
  });
});

describe('a cancelled session’s results include the orders placed after its last step', () => {
  it('final_equity, total_pnl and roi_pct agree with the cancel’s answer, total_fees and by_pair in every read', async () => {
    const id = await create({ pairs: ['BTCUSDT'] });
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/start`);
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step`);
    // Placed at the virtual time of step 1: no step records the equity it leaves (fee and slippage paid).
    await sandboxOrder(t.app, alice.headers, id, {
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'market',
      quantity: '0.01',
    });
    const portfolio = await ok(t.app, alice.headers, 'GET', `/backtest/${id}/account/portfolio`);
    const cancelled = await ok(t.app, alice.headers, 'POST', `/backtest/${id}/cancel`);
    expect(cancelled.summary.final_equity).toBe(portfolio.total_equity);
    expect(cancelled.summary.final_equity).not.toBe('10000.00000000');

    const results = await ok(t.app, alice.headers, 'GET', `/backtest/${id}/results`);
    const { final_equity, total_pnl, roi_pct } = cancelled.summary;
    expect(results.summary).toMatchObject({ final_equity, total_pnl, roi_pct });
    expect(results.by_pair[0].net_pnl).toBe(total_pnl);
    const list = await ok(t.app, alice.headers, 'GET', '/backtest/list?status=cancelled');
    expect(list.backtests.find((b: { session_id: string }) => b.session_id === id)).toMatchObject({
      final_equity,
      roi_pct,
    });
    const compare = await ok(t.app, alice.headers, 'GET', `/backtest/compare?sessions=${id}`);
    expect(compare.comparisons[0]).toMatchObject({ final_equity, roi_pct });
  });
});

describe('sandbox order ids are UUIDs: either case names the same order', () => {
  it('reads and cancels an order by its upper-case id, as the live endpoints do', async () => {
    const id = await create({ pairs: ['BTCUSDT'] });
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/start`);
    const placed = await sandboxOrder(t.app, alice.headers, id, {
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'limit',
      quantity: '0.01',
      price: '30000',
    });
    const upper = (placed.order_id as string).toUpperCase();
    expect(upper).not.toBe(placed.order_id);
    const read = await ok(t.app, alice.headers, 'GET', `/backtest/${id}/trade/order/${upper}`);
    expect(read).toMatchObject({ order_id: placed.order_id, status: 'pending' });
    const cancelled = await ok(t.app, alice.headers, 'DELETE', `/backtest/${id}/trade/order/${upper}`);
    expect(cancelled).toMatchObject({ order_id: placed.order_id, status: 'cancelled' });
    // An unknown id is refused naming it in lower case, as the live order endpoints do.
    const unknown = 'ABCDEF01-2345-4678-89AB-CDEF01234567';
    const missing = await fails(
      t.app,
      alice.headers,
      'GET',
      `/backtest/${id}/trade/order/${unknown}`,
      404,
      'ORDER_NOT_FOUND',
    );
    expect(missing.details).toEqual({ order_id: unknown.toLowerCase() });
  });
});

describe('create takes the agent id in either case', () => {
  it('records the lower-case id, so the agent’s own credentials reach the session', async () => {
    const upper = alice.agentId.toUpperCase();
    expect(upper).not.toBe(alice.agentId);
    const id = await create({ agent_id: upper });
    const status = await ok(t.app, alice.headers, 'GET', `/backtest/${id}/status`);
    expect(status.agent_id).toBe(alice.agentId);
    const agent = { 'x-api-key': alice.agentKey };
    await ok(t.app, agent, 'GET', `/backtest/${id}/status`);
    await ok(t.app, { ...alice.headers, 'x-agent-id': alice.agentId }, 'GET', `/backtest/${id}/status`);
    const own = await ok(
      t.app,
      agent,
      'POST',
      '/backtest/create',
      sessionBody(alice, START, END, ['BTCUSDT'], { agent_id: upper }),
    );
    expect(own.agent_id).toBe(alice.agentId);
  });
});

describe('sandbox query filters take the live grammar', () => {
  it('refuses an empty or control-character symbol and an empty strategy_label with 422, as the live lists do', async () => {
    const id = await create({ pairs: ['BTCUSDT'] });
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/start`);
    await sandboxOrder(t.app, alice.headers, id, {
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'market',
      quantity: '0.001',
    });
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/cancel`);
    for (const path of ['trade/orders', 'trade/history', 'results/trades', 'trade/orders/open']) {
      for (const symbol of ['', '%20%20', '%01BTCUSDT']) {
        const e = await fails(
          t.app,
          alice.headers,
          'GET',
          `/backtest/${id}/${path}?symbol=${symbol}`,
          422,
          'VALIDATION_ERROR',
        );
        expect(e.details?.['issues'], `${path}?symbol=${symbol}`).toEqual([
          expect.objectContaining({ field: 'symbol', location: 'querystring' }),
        ]);
      }
      // The filter itself still works, in either case.
      const page = await ok(t.app, alice.headers, 'GET', `/backtest/${id}/${path}?symbol=btcusdt`);
      expect(page.total, path).toBe(path === 'trade/orders/open' ? 0 : 1);
    }
    for (const path of [
      '/backtest/list?strategy_label=',
      '/backtest/best?metric=roi_pct&strategy_label=%20',
    ]) {
      const e = await fails(t.app, alice.headers, 'GET', path, 422, 'VALIDATION_ERROR');
      expect(e.details?.['issues'], path).toEqual([
        expect.objectContaining({ field: 'strategy_label', location: 'querystring' }),
      ]);
    }
  });
});
