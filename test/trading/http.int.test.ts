import { beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../domain/trading/decimal';
import type { MatchingEngine } from '../../src/matching/engine';
import { api, bearer, createAgent, registerAccount, type TestAccount } from '../accounts/support';
import { useTestApp } from '../support/test-app';
import { keyCalls, orderBody } from './key-calls';
import { committedHead, settleTrading } from './log-head';

/**
 * The trading endpoints through the real stack (`app.inject`): routes, auth, risk chain, event store, projections
 * and the matching engine, on PGlite (or PostgreSQL with DATABASE_URL). Prices are driven by ticks ingested into
 * the market feed, exactly as a market source would publish them; the synthetic source only walks SOLUSDT here,
 * so BTCUSDT and ETHUSDT move only when a test says so.
 */

// The spec's figures (slippage table, fill in full on touch): wallets open `instant` explicitly; the realistic
// model has its own tests (test/fill-model).
const t = useTestApp({
  env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT', FILL_MODEL: 'instant' },
});
let engine: MatchingEngine;
const { tick } = t;

const settle = () => settleTrading(t);

const { order, get, send, cancel } = keyCalls(() => t.app);

beforeAll(async () => {
  engine = t.app.services.trading!.engine!;
  expect(engine).toBeDefined();
  // 24h quote volumes of 400M and 100M USDT: small orders pay the minimum slippage (0.01%).
  tick('BTCUSDT', '40000', '10000');
  tick('ETHUSDT', '2000', '50000');
});

describe('POST /trade/order and the account views', () => {
  let account: TestAccount;
  beforeAll(async () => {
    account = await registerAccount(t.app, {}, { plain: true });
  });

  it('fills a market buy at once with slippage and fee, in the spec shape', async () => {
    const res = await order(account.apiKey, orderBody('btcusdt', 'buy', 'market', '0.05'));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['x-log-position']).toBeDefined();
    // Where the server's time went (W3C Server-Timing, ms): before the handler, the command. The read models
    // are waited for by the owner's next request (READ_YOUR_WRITES=on-read, the default).
    expect(String(res.headers['server-timing'])).toMatch(/^handler;dur=\d+\.\d\d, command;dur=\d+\.\d\d$/);
    expect(res.json()).toMatchObject({
      status: 'filled',
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'market',
      requested_quantity: '0.05000000',
      executed_quantity: '0.05000000',
      executed_price: '40004.00000000',
      slippage_pct: '0.01000000',
      fee: '2.00020000',
      total_cost: '2002.20020000',
      reference_price: '40000.00000000',
      price_source: 'synthetic',
    });
    const one = await get(account.apiKey, `/trade/order/${res.json().order_id}`);
    expect(one.json()).toMatchObject({
      status: 'filled',
      executed_qty: '0.05000000',
      price: null,
      rejection: null,
    });
  });

  it('shows balances, positions at live prices, portfolio and PnL that satisfy the spec identities', async () => {
    tick('BTCUSDT', '42000');
    const sell = await order(account.apiKey, orderBody('BTCUSDT', 'sell', 'market', '0.01'));
    expect(sell.statusCode, sell.body).toBe(201);
    const balance = (await get(account.apiKey, '/account/balance')).json();
    expect(balance.balances).toEqual([
      { asset: 'USDT', available: expect.any(String), locked: '0.00000000', total: expect.any(String) },
      { asset: 'BTC', available: '0.04000000', locked: '0.00000000', total: '0.04000000' },
    ]);
    const positions = (await get(account.apiKey, '/account/positions')).json();
    expect(positions.positions).toHaveLength(1);
    expect(positions.positions[0]).toMatchObject({
      symbol: 'BTCUSDT',
      asset: 'BTC',
      quantity: '0.04000000',
      avg_entry_price: '40004.00000000',
      current_price: '42000.00000000',
      market_value: '1680.00000000',
      unrealized_pnl: '79.84000000', // 1,680 − 0.04 × 40,004
    });
    const p = (await get(account.apiKey, '/account/portfolio')).json();
    const n = (v: string) => dec(v);
    expect(n(p.total_equity).toFixed()).toBe(
      n(p.available_cash).plus(p.locked_cash).plus(p.total_position_value).toFixed(),
    );
    expect(n(p.total_equity).toFixed()).toBe(n(balance.total_equity_usdt).toFixed());
    expect(n(p.roi_pct).toFixed(8)).toBe(
      n(p.total_equity).minus(p.starting_balance).div(p.starting_balance).times(100).toFixed(8),
    );
    expect(n(p.net_pnl).toFixed()).toBe(n(p.total_pnl).minus(p.fees_paid).toFixed());
    expect(n(p.total_pnl).toFixed()).toBe(n(p.realized_pnl).plus(p.unrealized_pnl).toFixed());
    // total equity = starting balance + net PnL (conservation)
    expect(n(p.total_equity).toFixed()).toBe(n(p.starting_balance).plus(p.net_pnl).toFixed());
    const pnl = (await get(account.apiKey, '/account/pnl?period=1d')).json();
    expect(pnl).toMatchObject({
      period: '1d',
      winning_trades: 1,
      losing_trades: 0,
      win_rate: '100.00000000',
    });
    expect(pnl.realized_pnl).toBe(p.realized_pnl);
    expect(n(pnl.net_pnl).toFixed()).toBe(n(pnl.total_pnl).minus(pnl.fees_paid).toFixed());
    const history = (await get(account.apiKey, '/trade/history?side=sell')).json();
    expect(history).toMatchObject({ total: 1, limit: 50, offset: 0 });
    expect(history.trades[0]).toMatchObject({ side: 'sell', quantity: '0.01000000', trigger: 'market' });
  });

  it('answers the rejections of the risk chain with the rule named, and records them', async () => {
    // Each refusal: the order, its status and its error (the rule and the risk chain's step named).
    const refusals: [Record<string, unknown>, number, Record<string, unknown>][] = [
      [
        orderBody('NOPEUSDT', 'buy', 'market', '1'),
        404,
        { code: 'INVALID_SYMBOL', details: { rule: 'symbol_and_quantity', step: 3 } },
      ],
      [orderBody('ETHUSDT', 'buy', 'market', '0.00001'), 400, { code: 'INVALID_QUANTITY' }],
      [
        orderBody('ETHUSDT', 'buy', 'market', '0.001'),
        400,
        {
          code: 'ORDER_REJECTED',
          details: { rule: 'min_notional', step: 4 },
          message: expect.stringMatching(/min_notional/),
        },
      ],
      [
        orderBody('ETHUSDT', 'buy', 'market', '2'),
        400,
        { code: 'POSITION_LIMIT_EXCEEDED', details: { rule: 'position_size_limit' } },
      ],
      [
        orderBody('ETHUSDT', 'sell', 'market', '1'),
        400,
        { code: 'INSUFFICIENT_BALANCE', details: { asset: 'ETH' } },
      ],
    ];
    for (const [body, status, error] of refusals) {
      const res = await order(account.apiKey, body);
      expect([res.statusCode, res.json().error], res.body).toMatchObject([status, error]);
    }
    const rejected = (await get(account.apiKey, '/trade/orders?status=rejected')).json();
    expect(rejected.total).toBe(5);
    expect(rejected.orders[0]).toMatchObject({
      status: 'rejected',
      rejection: { code: 'INSUFFICIENT_BALANCE', step: 8 },
    });
    // Schema validation: 422, nothing recorded.
    const noPrice = await order(account.apiKey, orderBody('ETHUSDT', 'buy', 'limit', '0.01'));
    expect(noPrice.statusCode).toBe(422);
    expect(noPrice.json().error.code).toBe('VALIDATION_ERROR');
    const bogus = await order(account.apiKey, orderBody('ETHUSDT', 'hold', 'market', '0.01'));
    expect(bogus.statusCode).toBe(422);
    expect((await get(account.apiKey, '/trade/orders?status=rejected')).json().total).toBe(5);
  });

  it('honours Idempotency-Key: same key and body → the original answer; another body → 409', async () => {
    const body = orderBody('ETHUSDT', 'buy', 'market', '0.01');
    const first = await order(account.apiKey, body, { 'idempotency-key': 'abc-1' });
    expect(first.statusCode).toBe(201);
    const again = await order(account.apiKey, body, { 'idempotency-key': 'abc-1' });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    const other = await order(account.apiKey, { ...body, quantity: '0.02' }, { 'idempotency-key': 'abc-1' });
    expect(other.statusCode).toBe(409);
    expect(other.json().error.code).toBe('CONFLICT');
    // The key is scoped to the wallet: the same retry with the account's JWT is the same order, not a second one.
    const viaJwt = await api(t.app, {
      method: 'POST',
      url: '/trade/order',
      headers: { ...bearer(account), 'idempotency-key': 'abc-1' },
      payload: body,
    });
    expect(viaJwt.statusCode, viaJwt.body).toBe(201);
    expect(viaJwt.headers['idempotent-replayed']).toBe('true');
    expect(viaJwt.json().order_id).toBe(first.json().order_id);
    const fills = (await get(account.apiKey, '/trade/history?symbol=ETHUSDT')).json();
    expect(fills.total).toBe(1);
  });
});

describe('pending orders, matching and cancels', () => {
  let account: TestAccount;
  beforeAll(async () => {
    account = await registerAccount(t.app, {}, { plain: true });
    tick('ETHUSDT', '2000');
  });

  it('places a limit buy with its lock, fills it when the price crosses, releases the rest', async () => {
    const res = await order(account.apiKey, orderBody('ETHUSDT', 'buy', 'limit', '0.5', { price: '1990' }));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      status: 'pending',
      quantity: '0.50000000',
      price: '1990.00000000',
      locked_amount: '995.99500000', // 0.5 × 1,990 × 1.001
    });
    const id = res.json().order_id;
    let balance = (await get(account.apiKey, '/account/balance')).json();
    expect(balance.balances[0]).toMatchObject({
      asset: 'USDT',
      available: '9004.00500000',
      locked: '995.99500000',
    });
    expect((await get(account.apiKey, '/trade/orders/open')).json().total).toBe(1);
    tick('ETHUSDT', '1995');
    await settle();
    expect((await get(account.apiKey, `/trade/order/${id}`)).json().status).toBe('pending');
    tick('ETHUSDT', '1989.5');
    await settle();
    const filled = (await get(account.apiKey, `/trade/order/${id}`)).json();
    expect(filled).toMatchObject({
      status: 'filled',
      executed_price: '1990.00000000',
      slippage_pct: '0.00000000',
    });
    balance = (await get(account.apiKey, '/account/balance')).json();
    expect(balance.balances[0]).toMatchObject({ locked: '0.00000000' });
    expect((await get(account.apiKey, '/trade/orders/open')).json().total).toBe(0);
  });

  it('triggers a sell stop-loss when the price falls to it, at the price with slippage', async () => {
    const res = await order(
      account.apiKey,
      orderBody('ETHUSDT', 'sell', 'stop_loss', '0.5', { trigger_price: '1900' }),
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      status: 'pending',
      trigger_price: '1900.00000000',
      locked_amount: '0.50000000',
    });
    const balance = (await get(account.apiKey, '/account/balance')).json();
    expect(balance.balances.find((b: { asset: string }) => b.asset === 'ETH')).toMatchObject({
      available: '0.00000000',
      locked: '0.50000000',
    });
    tick('ETHUSDT', '1950');
    await settle();
    expect((await get(account.apiKey, `/trade/order/${res.json().order_id}`)).json().status).toBe('pending');
    tick('ETHUSDT', '1890');
    await settle();
    const filled = (await get(account.apiKey, `/trade/order/${res.json().order_id}`)).json();
    expect(filled).toMatchObject({ status: 'filled', executed_price: '1889.81100000' }); // 1,890 × (1 − 0.01%)
    expect((await get(account.apiKey, '/account/positions')).json().positions).toEqual([]);
  });

  it('cancels one order (unlocked amount), refuses finished and foreign orders, cancels all atomically', async () => {
    tick('ETHUSDT', '2000');
    const a = await order(account.apiKey, orderBody('ETHUSDT', 'buy', 'limit', '0.1', { price: '1500' }));
    const b = await order(
      account.apiKey,
      orderBody('BTCUSDT', 'buy', 'take_profit', '0.001', { trigger_price: '30000' }),
    );
    const c = await order(
      account.apiKey,
      orderBody('ETHUSDT', 'buy', 'stop_loss', '0.1', { trigger_price: '2500' }),
    );
    for (const r of [a, b, c]) expect(r.statusCode, r.body).toBe(201);
    const openBtc = (await get(account.apiKey, '/trade/orders/open?symbol=BTCUSDT')).json();
    expect(openBtc.orders.map((o: { order_id: string }) => o.order_id)).toEqual([b.json().order_id]);
    expect((await get(account.apiKey, '/trade/orders/open?symbol=ethusdt')).json().total).toBe(2);
    // The cancels take no query: a parameter is refused by name and cancels nothing, rather than ignored (a
    // cancel-all "for ETHUSDT" would otherwise cancel the BTCUSDT order too).
    for (const url of [
      '/trade/orders/open?symbol=ETHUSDT',
      `/trade/order/${a.json().order_id}?symbol=ETHUSDT`,
    ]) {
      const refused = await send(account.apiKey, 'DELETE', url);
      expect(refused.statusCode, url).toBe(422);
      expect(refused.json().error.code).toBe('VALIDATION_ERROR');
      expect(refused.json().error.details.issues).toEqual([
        expect.objectContaining({ field: 'symbol', location: 'querystring' }),
      ]);
    }
    expect((await get(account.apiKey, '/trade/orders/open')).json().total).toBe(3);
    const cancelled = await cancel(account.apiKey, a.json().order_id);
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json()).toMatchObject({
      status: 'cancelled',
      unlocked_amount: '150.15000000',
      unlocked_asset: 'USDT',
    });
    const again = await cancel(account.apiKey, a.json().order_id);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('ORDER_NOT_CANCELLABLE');
    const stranger = await registerAccount(t.app, {}, { plain: true });
    const foreign = await cancel(stranger.apiKey, b.json().order_id);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('ORDER_NOT_FOUND');
    expect((await get(stranger.apiKey, `/trade/order/${b.json().order_id}`)).statusCode).toBe(404);
    const all = await send(account.apiKey, 'DELETE', '/trade/orders/open');
    expect(all.statusCode).toBe(200);
    // 0.001 × 30,000 × 1.006 + 0.1 × 2,500 × 1.006
    expect(all.json()).toMatchObject({ cancelled_count: 2, total_unlocked: '281.68000000' });
    const balance = (await get(account.apiKey, '/account/balance')).json();
    expect(balance.balances[0].locked).toBe('0.00000000');
    expect((await get(account.apiKey, '/trade/orders?status=cancelled')).json().total).toBe(3);
  });

  it('fills a marketable limit buy (above the price) like a market order, not at its limit; numbers read to 8 places', async () => {
    tick('ETHUSDT', '2000');
    // 0.1 * 3 in JavaScript: a JSON number is read as the nearest 8-place decimal, 0.3.
    const res = await order(account.apiKey, orderBody('ETHUSDT', 'buy', 'limit', 0.1 * 3, { price: 2100 }));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      status: 'pending', // the spec's state: limit orders are placed pending and matched in the background
      quantity: '0.30000000',
      price: '2100.00000000',
      locked_amount: '630.63000000', // 0.3 × 2,100 × 1.001
    });
    await settle();
    const filled = (await get(account.apiKey, `/trade/order/${res.json().order_id}`)).json();
    expect(filled).toMatchObject({
      status: 'filled',
      executed_price: '2000.20000000', // 2,000 × (1 + 0.01%), not the limit 2,100
      slippage_pct: '0.01000000',
      total_cost: '600.66006000',
    });
    const balance = (await get(account.apiKey, '/account/balance')).json();
    expect(balance.balances[0].locked).toBe('0.00000000');
  });
});

describe('reset, the daily loss breaker and the auditor views', () => {
  it('needs confirm; closes positions at market, cancels orders, starts a new session, keeps history', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    tick('BTCUSDT', '40000');
    await order(account.apiKey, orderBody('BTCUSDT', 'buy', 'market', '0.01'));
    await order(account.apiKey, orderBody('BTCUSDT', 'buy', 'limit', '0.01', { price: '30000' }));
    const missing = await send(account.apiKey, 'POST', '/account/reset', {});
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error.code).toBe('VALIDATION_ERROR');
    const no = await send(account.apiKey, 'POST', '/account/reset', { confirm: false });
    expect(no.statusCode).toBe(400);
    const res = await send(account.apiKey, 'POST', '/account/reset', {
      confirm: true,
      new_starting_balance: '5000',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      previous_session: {
        session_id: expect.any(String),
        ending_equity: expect.any(String),
        total_pnl: expect.any(String),
      },
      new_session: { session_id: expect.any(String), starting_balance: '5000.00000000' },
    });
    // The account now trades in the new session, with its new starting balance.
    const info = (await get(account.apiKey, '/account/info')).json();
    expect(info.current_session).toEqual({
      session_id: res.json().new_session.session_id,
      started_at: res.json().new_session.started_at,
    });
    expect(info.starting_balance).toBe('5000.00000000');
    const balance = (await get(account.apiKey, '/account/balance')).json();
    expect(balance).toEqual({
      balances: [{ asset: 'USDT', available: '5000.00000000', locked: '0.00000000', total: '5000.00000000' }],
      total_equity_usdt: '5000.00000000',
    });
    const history = (await get(account.apiKey, '/trade/history')).json();
    expect(history.trades.map((x: { trigger: string }) => x.trigger)).toEqual(['reset', 'market']);
    const orders = (await get(account.apiKey, '/trade/orders?status=cancelled')).json();
    expect(orders.orders[0].cancel_reason).toBe('reset');
    const portfolio = (await get(account.apiKey, '/account/portfolio')).json();
    expect(portfolio).toMatchObject({
      starting_balance: '5000.00000000',
      total_equity: '5000.00000000',
      roi_pct: '0.00000000',
    });
  });

  it('trips the daily loss breaker (403 on new orders, reads still work)', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const profile = await send(account.apiKey, 'PUT', '/account/risk-profile', {
      max_position_size_pct: 25,
      daily_loss_limit_pct: 1,
      max_open_orders: 50,
    });
    expect(profile.statusCode).toBe(200);
    tick('BTCUSDT', '40000');
    expect((await order(account.apiKey, orderBody('BTCUSDT', 'buy', 'market', '0.05'))).statusCode).toBe(201);
    tick('BTCUSDT', '30000'); // −500 USDT > 1% of 10,000
    const refused = await order(account.apiKey, orderBody('BTCUSDT', 'sell', 'market', '0.01'));
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error).toMatchObject({
      code: 'DAILY_LOSS_LIMIT',
      details: { rule: 'daily_loss_limit', step: 2 },
    });
    expect((await get(account.apiKey, '/account/balance')).statusCode).toBe(200);
    expect((await get(account.apiKey, '/account/positions')).statusCode).toBe(200);
    tick('BTCUSDT', '40000');
  });

  it('applies a risk-profile change to the very next order (no stale profile in any cache)', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    tick('BTCUSDT', '40000');
    const limitBuy = (price: string) =>
      order(account.apiKey, { symbol: 'BTCUSDT', side: 'buy', type: 'limit', quantity: '0.001', price });
    expect((await limitBuy('30000')).statusCode).toBe(201);
    expect((await limitBuy('30001')).statusCode).toBe(201);
    const put = (max_open_orders: number) =>
      send(account.apiKey, 'PUT', '/account/risk-profile', {
        max_position_size_pct: 25,
        daily_loss_limit_pct: 20,
        max_open_orders,
      });
    expect((await put(2)).statusCode).toBe(200);
    const refused = await limitBuy('30002');
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({
      code: 'ORDER_REJECTED',
      details: { rule: 'max_open_orders' },
    });
    expect((await put(3)).statusCode).toBe(200);
    expect((await limitBuy('30003')).statusCode).toBe(201);
  });

  it('enforces a max_order_size_pct set over HTTP on the next order (risk step 5, ARCHITECTURE §14b)', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    tick('BTCUSDT', '40000');
    const put = (max_order_size_pct?: number) =>
      send(account.apiKey, 'PUT', '/account/risk-profile', {
        max_position_size_pct: 100,
        daily_loss_limit_pct: 20,
        max_open_orders: 50,
        max_order_size_pct,
      });
    const put10 = await put(10);
    expect([put10.statusCode, put10.json().max_order_size_pct]).toEqual([200, 10]);
    // 0.03 BTC at 40,000 ≈ 1,200 USDT > 10 % of 10,000 available.
    const buy = () => order(account.apiKey, orderBody('BTCUSDT', 'buy', 'market', '0.03'));
    const refused = await buy();
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({
      code: 'ORDER_REJECTED',
      details: { rule: 'max_order_size', step: 5, max_order_size_pct: 10 },
    });
    expect((await put()).json().max_order_size_pct).toBe(10); // omitted: kept
    expect((await buy()).statusCode).toBe(400);
    expect((await put(20)).statusCode).toBe(200);
    expect((await buy()).statusCode).toBe(201);
  });

  it("shows the owner's current session in /account/portfolio before the first trade, as /account/info does", async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const agent = await createAgent(t.app, account, { starting_balance: '700' });
    for (const [key, start] of [
      [account.apiKey, '10000.00000000'],
      [agent.apiKey, '700.00000000'],
    ] as const) {
      const info = (await get(key, '/account/info')).json();
      const portfolio = (await get(key, '/account/portfolio')).json();
      expect(info.current_session.session_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(portfolio).toMatchObject({
        session_id: info.current_session.session_id,
        starting_balance: start,
        total_equity: start,
        revision: -1,
      });
    }
    // After the first trade the wallet's session is the same one.
    tick('BTCUSDT', '40000');
    const before = (await get(account.apiKey, '/account/info')).json().current_session.session_id;
    const buy = await order(account.apiKey, orderBody('BTCUSDT', 'buy', 'market', '0.001'));
    expect(buy.statusCode).toBe(201);
    expect((await get(account.apiKey, '/account/portfolio')).json().session_id).toBe(before);
    expect((await get(account.apiKey, '/account/info')).json().current_session.session_id).toBe(before);
  });

  it('reads and switches the primary mode', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const before = (await get(account.apiKey, '/account/mode')).json();
    expect(before).toMatchObject({
      mode: 'live',
      live_session: { current_equity: '10000.00000000', strategy_label: null },
      active_backtests: 0,
    });
    const set = await send(account.apiKey, 'POST', '/account/mode', {
      mode: 'backtest',
      strategy_label: 'momentum-v2',
    });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ mode: 'backtest', strategy_label: 'momentum-v2' });
    expect((await get(account.apiKey, '/account/mode')).json()).toMatchObject({
      mode: 'backtest',
      live_session: { strategy_label: 'momentum-v2' },
    });
    const bad = await send(account.apiKey, 'POST', '/account/mode', { mode: 'paper' });
    expect(bad.statusCode).toBe(422);
  });

  it('serves the wallet events with revisions and hashes, and the portfolio as of a past time', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    tick('BTCUSDT', '40000');
    await order(account.apiKey, orderBody('BTCUSDT', 'buy', 'market', '0.01'));
    const between = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    await order(account.apiKey, orderBody('BTCUSDT', 'buy', 'market', '0.02'));
    const page1 = (await get(account.apiKey, '/account/events?limit=3')).json();
    expect(page1.events.map((e: { type: string }) => e.type)).toEqual([
      'WalletOpened',
      'SessionStarted',
      'TradingDayOpened',
    ]);
    expect(page1).toMatchObject({ has_more: true, next_after: 2 });
    expect(page1.events[1].prev_hash).toBe(page1.events[0].hash);
    const page2 = (await get(account.apiKey, `/account/events?after=${page1.next_after}&limit=100`)).json();
    expect(page2.events.map((e: { type: string }) => e.type)).toEqual([
      'OrderPlaced',
      'OrderFilled',
      'OrderPlaced',
      'OrderFilled',
    ]);
    expect(page2.has_more).toBe(false);
    const then = (
      await get(account.apiKey, `/account/portfolio?as_of=${encodeURIComponent(between)}`)
    ).json();
    expect(then).toMatchObject({ as_of: between, revision: 4 });
    expect(then.positions[0]).toMatchObject({ quantity: '0.01000000', price_source: 'last_fill' });
    const now = (await get(account.apiKey, '/account/portfolio')).json();
    expect(now.positions[0].quantity).toBe('0.03000000');
    // A date alone means 00:00 UTC of that day; a day that does not exist is refused.
    const day = (offsetDays: number) =>
      new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
    const before = (await get(account.apiKey, `/account/portfolio?as_of=${day(-1)}`)).json();
    expect(before).toMatchObject({ as_of: `${day(-1)}T00:00:00.000Z`, revision: -1, positions: [] });
    const after = (await get(account.apiKey, `/account/portfolio?as_of=${day(1)}`)).json();
    expect(after.revision).toBe(now.revision);
    expect((await get(account.apiKey, '/account/portfolio?as_of=2026-02-30')).statusCode).toBe(422);
    // The refusal says what as_of takes (zod's bare "Invalid input" of a union told the caller nothing); the MCP
    // door's get_portfolio validates with the same schema.
    const refused = (await get(account.apiKey, '/account/portfolio?as_of=yesterday')).json();
    expect(refused.error.details.issues).toEqual([
      {
        field: 'as_of',
        location: 'querystring',
        message: 'expected an ISO 8601 date-time (with Z or an offset) or a date (YYYY-MM-DD)',
      },
    ]);
  });
});

describe('agents and concurrency', () => {
  /** Given a new account with an agent of `startingBalance` USDT, and BTCUSDT at 40,000. */
  const accountWithAgent = async (startingBalance: string) => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const agent = await createAgent(t.app, account, { starting_balance: startingBalance });
    tick('BTCUSDT', '40000');
    return { account, agent };
  };

  it('scopes to the agent (agent key, or JWT with X-Agent-Id)', async () => {
    const { account, agent } = await accountWithAgent('2000');
    const res = await order(agent.apiKey, orderBody('BTCUSDT', 'buy', 'market', '0.001'));
    expect(res.statusCode, res.body).toBe(201);
    const viaJwt = await api(t.app, {
      method: 'GET',
      url: '/account/balance',
      headers: { ...bearer(account), 'x-agent-id': agent.agentId },
    });
    expect(viaJwt.json().balances[1]).toMatchObject({ asset: 'BTC', total: '0.00100000' });
    const accountView = (await get(account.apiKey, '/account/balance')).json();
    expect(accountView.balances).toHaveLength(1);
    expect(accountView.total_equity_usdt).toBe('10000.00000000');
    // The agent's order is not the account's: the 404 says which wallet was searched and where the order is.
    const fromAccount = await get(account.apiKey, `/trade/order/${res.json().order_id}`);
    expect(fromAccount.statusCode).toBe(404);
    expect(fromAccount.json().error).toMatchObject({
      code: 'ORDER_NOT_FOUND',
      message: expect.stringContaining('X-Agent-Id'),
      details: { order_id: res.json().order_id },
    });
    const cancelFromAccount = await cancel(account.apiKey, res.json().order_id);
    expect(cancelFromAccount.statusCode).toBe(404);
    expect(cancelFromAccount.json().error.message).toContain("account's own wallet");
  });

  it("archived: the agent's key places nothing, its resting orders stay live and fill, and it can still cancel", async () => {
    // Spec "Agent" states: an archive stops new trading requests; it does not cancel orders (only a reset does),
    // so an owner can still pull an archived agent's orders with its key (docs/events.md, `AgentArchived`).
    const { account, agent } = await accountWithAgent('10000');
    const kept = await order(agent.apiKey, orderBody('BTCUSDT', 'buy', 'limit', '0.01', { price: '39000' }));
    const pulled = await order(
      agent.apiKey,
      orderBody('BTCUSDT', 'buy', 'limit', '0.01', { price: '38000' }),
    );
    expect([kept.statusCode, pulled.statusCode]).toEqual([201, 201]);
    const archived = await api(t.app, {
      method: 'POST',
      url: `/agents/${agent.agentId}/archive`,
      headers: bearer(account),
    });
    expect(archived.json().status).toBe('archived');
    const refused = await order(agent.apiKey, orderBody('BTCUSDT', 'buy', 'market', '0.001'));
    expect([refused.statusCode, refused.json().error.code, refused.json().error.details?.reason]).toEqual([
      403,
      'PERMISSION_DENIED',
      'agent_archived',
    ]);
    expect((await get(agent.apiKey, '/trade/orders/open')).json().total).toBe(2);
    tick('BTCUSDT', '38999');
    await settle();
    expect((await get(agent.apiKey, `/trade/order/${kept.json().order_id}`)).json().status).toBe('filled');
    const cancelled = await cancel(agent.apiKey, pulled.json().order_id);
    expect([cancelled.statusCode, cancelled.json().status]).toEqual([200, 'cancelled']);
    expect((await get(agent.apiKey, '/trade/orders/open')).json().total).toBe(0);
    const balance = (await get(agent.apiKey, '/account/balance')).json();
    expect(balance.balances[0]).toMatchObject({ asset: 'USDT', locked: '0.00000000' });
    tick('BTCUSDT', '40000');
  });

  it('fills exactly the affordable ones of 50 simultaneous orders; the rest get INSUFFICIENT_BALANCE; nothing overspent', async () => {
    const { agent } = await accountWithAgent('10000');
    // The agent holds 0.025 BTC: enough for 10 sells of 0.0025.
    const buy = await order(agent.apiKey, orderBody('BTCUSDT', 'buy', 'market', '0.025'));
    expect(buy.statusCode, buy.body).toBe(201);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => order(agent.apiKey, orderBody('BTCUSDT', 'sell', 'market', '0.0025'))),
    );
    const filled = results.filter((r) => r.statusCode === 201);
    const refused = results.filter((r) => r.statusCode !== 201);
    expect(filled).toHaveLength(10);
    expect(refused).toHaveLength(40);
    for (const r of refused) expect(r.json().error.code).toBe('INSUFFICIENT_BALANCE');
    await settle();
    const balance = (await get(agent.apiKey, '/account/balance')).json();
    expect(balance.balances.map((b: { asset: string }) => b.asset)).toEqual(['USDT']);
    const { state } = await t.app.services.trading!.wallets.load(agent.agentId);
    expect(state.holdings).toEqual({});
    expect(state.cash.gte(0)).toBe(true);
  });

  it('never overspends cash under 50 simultaneous buys that the balance covers 10 of', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const { agent } = await t.app.services.agents!.create(
      account.accountId,
      {
        displayName: 'Spender',
        startingBalance: '1001.2',
        riskProfile: { max_position_size_pct: 100, max_order_size_pct: 100 },
      },
      { actor: account.accountId },
    );
    const key = (await t.app.services.agents!.revealKey(account.accountId, agent.agentId)).apiKey;
    await t.runtime.services.projections.waitFor(await committedHead(t.database.all), 10_000);
    tick('BTCUSDT', '40000');
    // each costs 0.0025 × 40,004 + fee = 100.11001; 10 of them cost 1,001.1001 ≤ 1,001.2
    const results = await Promise.all(
      Array.from({ length: 50 }, () => order(key, orderBody('BTCUSDT', 'buy', 'market', '0.0025'))),
    );
    const filled = results.filter((r) => r.statusCode === 201);
    expect(filled).toHaveLength(10);
    for (const r of results.filter((x) => x.statusCode !== 201)) {
      // the order-size rule (5) sees the order exceed the remaining cash before the balance rule (8) does
      expect(['INSUFFICIENT_BALANCE', 'ORDER_REJECTED']).toContain(r.json().error.code);
    }
    await settle();
    const usdt = (await get(key, '/account/balance')).json().balances[0];
    expect(usdt.available).toBe('0.09990000');
    expect((await get(key, '/account/positions')).json().positions[0].quantity).toBe('0.02500000');
  });
});
