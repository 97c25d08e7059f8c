import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, keyHeader, registerAccount, startApp, type TestApp } from '../accounts/support';
import { priceTicker } from '../support/price-ticks';
import { settleTrading } from '../trading/log-head';

/**
 * The fill model through the real stack (issue 21): a new wallet fills `realistic` (`GET /account/fill-model`), a
 * resting limit buy fills over several trades at most 10 % of each (`partially_filled`, then `filled`, one fill each
 * with the model's record in `GET /trade/order/{id}`), cancelling a partly filled order releases exactly its
 * remaining lock, and `PUT /account/fill-model` switches the wallet to `instant` (fill in full) from the next fill.
 */

let t: TestApp;
const tick = priceTicker(() => t.app.services.market!);

beforeAll(async () => {
  t = await startApp({ env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT' } });
  tick('BTCUSDT', '40000', '10000');
});

afterAll(async () => {
  await t?.close();
});

const call = (
  key: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  payload?: Record<string, unknown>,
) => api(t.app, { method, url, headers: keyHeader(key), ...(payload === undefined ? {} : { payload }) });

/** A new account's API key (its wallet starts with 10,000 USDT and the `realistic` fill model). */
const newAccountKey = async () => (await registerAccount(t.app, {}, { plain: true })).apiKey;

/** Places an order with `key` and checks the 201; resolves to the response. */
const placeOk = async (key: string, payload: Record<string, unknown>) => {
  const res = await call(key, 'POST', '/trade/order', payload);
  expect(res.statusCode, res.body).toBe(201);
  return res;
};

describe('fill models over HTTP', () => {
  it('fills a resting limit buy in parts of 10 % of each trade, each fill with its record', async () => {
    const key = await newAccountKey();
    expect((await call(key, 'GET', '/account/fill-model')).json()).toEqual({
      fill_model: 'realistic',
      participation_pct: 10,
    });
    const placed = await placeOk(key, {
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'limit',
      quantity: '0.05',
      price: '39000',
    });
    const id = placed.json().order_id as string;
    const lock0 = placed.json().locked_amount as string;

    // A trade of 0.2 BTC at 38,990: 10 % of it, 0.02, fills.
    tick('BTCUSDT', '38990', '0.2');
    await settleTrading(t);
    const first = (await call(key, 'GET', `/trade/order/${id}`)).json();
    expect(first).toMatchObject({
      status: 'partially_filled',
      executed_qty: '0.02000000',
      executed_price: '39000.00000000',
    });
    expect(Number(first.locked_amount)).toBeLessThan(Number(lock0));
    expect(first.fills).toHaveLength(1);
    expect(first.fills[0]).toMatchObject({
      quantity: '0.02000000',
      price: '39000.00000000',
      reference_price: '38990.00000000',
      fill: {
        fill_model: 'realistic',
        fill_model_version: 2,
        liquidity: 'maker',
        volume_available: '0.20000000',
        participation_cap_pct: '10',
        remaining_quantity: '0.03000000',
        book_levels: null,
      },
    });
    // A price-only update (no trade) fills nothing.
    tick('BTCUSDT', '38980');
    await settleTrading(t);
    expect((await call(key, 'GET', `/trade/order/${id}`)).json().fills).toHaveLength(1);
    // Two more trades finish it: 0.02, then the last 0.01.
    tick('BTCUSDT', '38990', '0.2');
    await settleTrading(t);
    tick('BTCUSDT', '38995', '0.5');
    await settleTrading(t);
    const done = (await call(key, 'GET', `/trade/order/${id}`)).json();
    expect(done).toMatchObject({ status: 'filled', executed_qty: '0.05000000' });
    expect(done.fills.map((f: { quantity: string }) => f.quantity)).toEqual([
      '0.02000000',
      '0.02000000',
      '0.01000000',
    ]);
    const balance = (await call(key, 'GET', '/account/balance')).json();
    const usdt = balance.balances.find((b: { asset: string }) => b.asset === 'USDT');
    expect(usdt.locked).toBe('0.00000000');
  });

  it('cancelling a partly filled order releases exactly the remaining lock; instant fills in full', async () => {
    const key = await newAccountKey();
    /** A limit buy of 0.05 BTC at 38,000, then a trade of 0.1 BTC at 37,990 through it (settled); its order id. */
    const restThenTrade = async () => {
      // Above the limit: the order rests (a limit the price already reached would take liquidity at once).
      tick('BTCUSDT', '40000');
      const placed = await placeOk(key, {
        symbol: 'BTCUSDT',
        side: 'buy',
        type: 'limit',
        quantity: '0.05',
        price: '38000',
      });
      tick('BTCUSDT', '37990', '0.1');
      await settleTrading(t);
      return placed.json().order_id as string;
    };
    const id = await restThenTrade();
    const partly = (await call(key, 'GET', `/trade/order/${id}`)).json();
    expect(partly).toMatchObject({ status: 'partially_filled', executed_qty: '0.01000000' });
    const cancelled = await call(key, 'DELETE', `/trade/order/${id}`);
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json().unlocked_amount).toBe(partly.locked_amount);
    const usdt = (await call(key, 'GET', '/account/balance'))
      .json()
      .balances.find((b: { asset: string }) => b.asset === 'USDT');
    expect(usdt.locked).toBe('0.00000000');

    const set = await call(key, 'PUT', '/account/fill-model', { fill_model: 'instant' });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toEqual({ fill_model: 'instant', participation_pct: 10 });
    expect((await call(key, 'PUT', '/account/fill-model', { fill_model: 'best' })).statusCode).toBe(422);
    const wid = await restThenTrade();
    const filled = (await call(key, 'GET', `/trade/order/${wid}`)).json();
    expect(filled).toMatchObject({ status: 'filled', executed_qty: '0.05000000' });
    expect(filled.fills[0].fill).toMatchObject({ fill_model: 'instant', liquidity: 'maker' });
  });

  it('a market order larger than the book: the 201, the order, the lists and the fills agree (cancelled rest)', async () => {
    const key = await newAccountKey();
    // 50 ETH traded at 2,000: a 24h quote volume of 100,000 USDT, so each side of the book holds 1 %, 1,000 USDT.
    tick('ETHUSDT', '2000', '50');
    const placed = await call(key, 'POST', '/trade/order', {
      symbol: 'ETHUSDT',
      side: 'buy',
      type: 'market',
      quantity: '1',
    });
    const body = placed.json();
    expect(body).toMatchObject({
      status: 'cancelled',
      requested_quantity: '1.00000000',
      cancel_reason: 'unfilled',
    });
    const executed = Number(body.executed_quantity);
    expect(executed).toBeGreaterThan(0.4);
    expect(executed).toBeLessThan(0.6);
    const id = body.order_id as string;
    const order = (await call(key, 'GET', `/trade/order/${id}`)).json();
    expect(order).toMatchObject({
      status: 'cancelled',
      cancel_reason: 'unfilled',
      executed_qty: body.executed_quantity,
      executed_price: body.executed_price,
      fee: body.fee,
      total_cost: body.total_cost,
      cancelled_at: body.cancelled_at,
    });
    expect(order.fills).toHaveLength(1);
    expect(order.fills[0]).toMatchObject({
      quantity: body.executed_quantity,
      fill: { liquidity: 'taker', remaining_quantity: (1 - executed).toFixed(8) },
    });
    const listed = (await call(key, 'GET', '/trade/orders?status=cancelled')).json();
    expect(listed.orders.find((o: { order_id: string }) => o.order_id === id)).toMatchObject({
      status: 'cancelled',
      executed_qty: body.executed_quantity,
    });
    expect((await call(key, 'GET', '/trade/orders/open')).json().total).toBe(0);
    const history = (await call(key, 'GET', '/trade/history?symbol=ETHUSDT')).json();
    expect(
      history.trades.map((f: { order_id: string; quantity: string }) => [f.order_id, f.quantity]),
    ).toEqual([[id, body.executed_quantity]]);
    const balances = (await call(key, 'GET', '/account/balance')).json().balances;
    expect(balances.find((b: { asset: string }) => b.asset === 'ETH')).toMatchObject({
      total: body.executed_quantity,
      locked: '0.00000000',
    });
    expect(balances.find((b: { asset: string }) => b.asset === 'USDT').locked).toBe('0.00000000');
    // A cancelled order stays cancelled: not cancellable again.
    expect((await call(key, 'DELETE', `/trade/order/${id}`)).statusCode).toBe(409);
  });

  it('time_in_force over HTTP: an IOC remainder is cancelled, a FOK that cannot fill leaves nothing, GTC keeps the shape', async () => {
    const key = await newAccountKey();
    // 300 BNB traded at 300: 90,000 USDT of 24h volume, so each side of the book holds 900 USDT (about 3 BNB).
    tick('BNBUSDT', '300', '300');
    const bnbBuy = (order: Record<string, unknown>) => ({ symbol: 'BNBUSDT', side: 'buy', ...order });
    const ioc = await placeOk(
      key,
      bnbBuy({ type: 'limit', quantity: '5', price: '310', time_in_force: 'IOC' }),
    );
    const iocBody = ioc.json();
    expect(iocBody).toMatchObject({ status: 'cancelled', cancel_reason: 'unfilled', time_in_force: 'IOC' });
    expect(Number(iocBody.executed_quantity)).toBeGreaterThan(2);
    expect(Number(iocBody.executed_quantity)).toBeLessThan(5);
    expect(Number(iocBody.executed_price)).toBeLessThanOrEqual(310);
    const iocOrder = (await call(key, 'GET', `/trade/order/${iocBody.order_id}`)).json();
    expect(iocOrder).toMatchObject({
      status: 'cancelled',
      time_in_force: 'IOC',
      executed_qty: iocBody.executed_quantity,
      fee: iocBody.fee,
    });
    expect(iocOrder.fills).toHaveLength(1);
    const usdt = async () =>
      (await call(key, 'GET', '/account/balance'))
        .json()
        .balances.find((b: { asset: string }) => b.asset === 'USDT');
    expect((await usdt()).locked).toBe('0.00000000');
    expect((await usdt()).available).toBe((10000 - Number(iocBody.total_cost)).toFixed(8));

    const fok = await placeOk(key, bnbBuy({ type: 'market', quantity: '5', time_in_force: 'FOK' }));
    expect(fok.json()).toMatchObject({
      status: 'cancelled',
      cancel_reason: 'fill_or_kill',
      time_in_force: 'FOK',
    });
    const fokOrder = (await call(key, 'GET', `/trade/order/${fok.json().order_id}`)).json();
    expect(fokOrder).toMatchObject({ status: 'cancelled', executed_qty: null, fills: [] });
    expect((await usdt()).available).toBe((10000 - Number(iocBody.total_cost)).toFixed(8));

    const gtc = await placeOk(
      key,
      bnbBuy({ type: 'limit', quantity: '1', price: '250', time_in_force: 'GTC' }),
    );
    expect(gtc.json().status).toBe('pending');
    expect('time_in_force' in gtc.json()).toBe(false);
    expect('time_in_force' in (await call(key, 'GET', `/trade/order/${gtc.json().order_id}`)).json()).toBe(
      false,
    );
    const bad = await call(
      key,
      'POST',
      '/trade/order',
      bnbBuy({ type: 'limit', quantity: '1', price: '250', time_in_force: 'GTD' }),
    );
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error.code).toBe('VALIDATION_ERROR');
  });
});
