import { beforeAll, describe, expect, it } from 'vitest';
import { api, keyHeader, registerAccount, type TestAccount } from '../accounts/support';
import { useTestApp } from '../support/test-app';
import { orderBody } from './key-calls';

/**
 * `POST /trade/order/preview` through the real stack (`app.inject`, PGlite): the answer is the fill the same order
 * then gets from `POST /trade/order` (same decider, risk chain, price, fee), a refusal is the order's own error
 * envelope, and nothing is recorded (no order, no balance change, the wallet stream unchanged).
 */

const t = useTestApp({ env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT' } });
let account: TestAccount;
const { tick } = t;
const post = (url: string, payload: Record<string, unknown>) =>
  api(t.app, { method: 'POST', url, headers: keyHeader(account.apiKey), payload });
const get = (url: string) => api(t.app, { method: 'GET', url, headers: keyHeader(account.apiKey) });

beforeAll(async () => {
  tick('BTCUSDT', '40000', '10000');
  account = await registerAccount(t.app, {}, { plain: true });
});

describe('POST /trade/order/preview', () => {
  it('answers the fill a market order then gets, and records nothing', async () => {
    const body = orderBody('btcusdt', 'buy', 'market', '0.05');
    const preview = await post('/trade/order/preview', body);
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json()).toMatchObject({
      preview: true,
      status: 'filled',
      would_fill: true,
      symbol: 'BTCUSDT',
      executed_quantity: '0.05000000',
      // A new wallet fills `realistic`: 0.05 BTC takes the book's best ask, one half-spread above the mid (at 400 M
      // USDT a day, 5 / √400 = 0.25 bp: 40,001), not the table's flat 0.01 % (40,004) of `instant`.
      executed_price: '40001.00000000',
      slippage_pct: '0.00250000',
      notional: '2000.05000000',
      fee: '2.00005000',
      total_cost: '2002.05005000',
      reference_price: '40000.00000000',
      locked_amount: '0.00000000',
    });
    // Under each model: the wallet's (`realistic`) as above, and `instant`'s slippage table (0.01 %: 40,004).
    expect(preview.json().fill_model).toBe('realistic');
    expect(preview.json().models.realistic).toMatchObject({
      status: 'filled',
      executed_price: '40001.00000000',
      executed_quantity: '0.05000000',
      unfilled_quantity: '0.00000000',
      liquidity: 'taker',
      fee_rate: '0.001',
      book_levels: [['40001.00000000', '0.05000000']],
      error: null,
    });
    expect(preview.json().models.instant).toMatchObject({
      status: 'filled',
      executed_price: '40004.00000000',
      slippage_pct: '0.01000000',
      total_cost: '2002.20020000',
      book_levels: null,
      error: null,
    });
    expect((await get('/trade/orders')).json().total).toBe(0);
    expect((await get('/account/balance')).json().balances).toEqual([
      expect.objectContaining({ asset: 'USDT', available: '10000.00000000' }),
    ]);

    const placed = await post('/trade/order', body);
    expect(placed.statusCode, placed.body).toBe(201);
    const p = preview.json();
    expect(placed.json()).toMatchObject({
      executed_price: p.executed_price,
      executed_quantity: p.executed_quantity,
      fee: p.fee,
      total_cost: p.total_cost,
      slippage_pct: p.slippage_pct,
    });
  });

  // A resting limit (30,000) with its lock: later, at its limit as a maker, at most 10 % of each print under
  // `realistic`, whole under `instant`. A limit the price already reaches (41,000): the matching engine offers a
  // new order the last price at once, so it fills there, never beyond its limit, walking the book (`realistic`) or
  // at the table's slippage (`instant`).
  const limitPreviews = [
    {
      name: 'a resting limit order with its lock',
      price: '30000',
      preview: {
        status: 'pending',
        would_fill: false,
        marketable: false,
        price: '30000.00000000',
        locked_amount: '300.30000000',
        lock_asset: 'USDT',
        executed_price: null,
        fee: null,
        models: {
          realistic: {
            status: 'pending',
            liquidity: 'maker',
            participation_cap_pct: 10,
            executed_price: null,
          },
          instant: { status: 'pending', liquidity: 'maker', participation_cap_pct: null },
        },
      },
    },
    {
      name: 'the fill a limit order the price already reaches would get at once, as a taker, under each model',
      price: '41000',
      preview: {
        status: 'filled',
        would_fill: true,
        marketable: true,
        executed_price: '40001.00000000',
        locked_amount: '410.41000000',
        models: {
          realistic: { status: 'filled', executed_price: '40001.00000000', liquidity: 'taker' },
          instant: { status: 'filled', executed_price: '40004.00000000', liquidity: 'taker' },
        },
      },
    },
  ];
  for (const { name, price, preview } of limitPreviews) {
    it(`answers ${name}`, async () => {
      const res = await post('/trade/order/preview', orderBody('BTCUSDT', 'buy', 'limit', '0.01', { price }));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject(preview);
      expect((await get('/trade/orders/open')).json().total).toBe(0);
    });
  }

  it('answers the error the order would get, without recording a rejection', async () => {
    const body = orderBody('BTCUSDT', 'buy', 'market', '100');
    const preview = await post('/trade/order/preview', body);
    const placed = await post('/trade/order', body);
    expect(placed.statusCode).toBeGreaterThanOrEqual(400);
    expect(preview.statusCode).toBe(placed.statusCode);
    const { order_id: _id, ...placedDetails } = placed.json().error.details;
    expect(preview.json().error).toEqual({ ...placed.json().error, details: placedDetails });
    // The order's rejection is recorded; the preview's is not.
    expect((await get('/trade/orders?status=rejected')).json().total).toBe(1);

    const unknown = await post('/trade/order/preview', { ...body, symbol: 'NOPEUSDT', quantity: '1' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('INVALID_SYMBOL');
    const negative = await post('/trade/order/preview', { ...body, quantity: '-1' });
    expect(negative.statusCode).toBeGreaterThanOrEqual(400);
    expect(negative.statusCode).toBeLessThan(500);
    const missing = await post('/trade/order/preview', { symbol: 'BTCUSDT', side: 'buy', type: 'market' });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().error.code).toBe('VALIDATION_ERROR');
    expect((await get('/trade/orders?status=rejected')).json().total).toBe(1);
  });

  it('answers an IOC or FOK limit the price does not reach as cancelled now (its time in force), not pending', async () => {
    const before = (await get('/trade/orders')).json().total;
    for (const [tif, reason] of [
      ['IOC', 'unfilled'],
      ['FOK', 'fill_or_kill'],
    ] as const) {
      const body = {
        symbol: 'BTCUSDT',
        side: 'buy',
        type: 'limit',
        quantity: '0.01',
        price: '39000',
        time_in_force: tif,
      };
      const preview = await post('/trade/order/preview', body);
      expect(preview.statusCode, preview.body).toBe(200);
      expect(preview.json()).toMatchObject({ status: 'cancelled', cancel_reason: reason, would_fill: false });
      for (const model of ['realistic', 'instant']) {
        expect(preview.json().models[model]).toMatchObject({
          status: 'cancelled',
          cancel_reason: reason,
          would_fill: false,
          liquidity: null,
          participation_cap_pct: null,
        });
      }
      // The order itself then ends the same way.
      const placed = await post('/trade/order', body);
      expect(placed.json()).toMatchObject({ status: 'cancelled', cancel_reason: reason });
    }
    // A GTC limit at the same price rests, as before.
    const gtc = await post(
      '/trade/order/preview',
      orderBody('BTCUSDT', 'buy', 'limit', '0.01', { price: '39000' }),
    );
    expect(gtc.json()).toMatchObject({ status: 'pending' });
    expect(gtc.json()).not.toHaveProperty('cancel_reason');
    expect(gtc.json().models.realistic).toMatchObject({ status: 'pending', cancel_reason: null });
    expect((await get('/trade/orders')).json().total).toBe(before + 2);
  });
});
