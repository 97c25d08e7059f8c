import { describe, expect, it } from 'vitest';
import { api, keyHeader } from '../accounts/support';
import { useAccount, useTestApp } from '../support/test-app';
import { settleTrading } from './log-head';

/**
 * `client_order_id` through the REST door (issue 21; docs/trading-rules.md, "Client order ids"): echoed on the
 * placement and every order read, filterable, unique among open orders (409 `CONFLICT` in the spec's envelope),
 * absent from the responses of orders placed without one.
 */

const t = useTestApp({
  env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT', FILL_MODEL: 'instant' },
});

const account = useAccount(t, [['BTCUSDT', '40000', '10000']]);
const order = (payload: Record<string, unknown>) =>
  api(t.app, { method: 'POST', url: '/trade/order', headers: keyHeader(account.apiKey), payload });
const get = (url: string) => api(t.app, { method: 'GET', url, headers: keyHeader(account.apiKey) });
const limit = { symbol: 'BTCUSDT', side: 'buy', type: 'limit', quantity: '0.01', price: '30000' };

describe('client_order_id over REST', () => {
  it('is echoed, shown by the reads, filterable; a duplicate among open orders is 409 and changes nothing', async () => {
    const placed = await order({ ...limit, client_order_id: 'grid-1' });
    expect(placed.statusCode, placed.body).toBe(201);
    expect(placed.json()).toMatchObject({ status: 'pending', client_order_id: 'grid-1' });
    const id = placed.json().order_id as string;

    const plain = await order(limit);
    expect(plain.statusCode).toBe(201);
    expect(plain.json()).not.toHaveProperty('client_order_id');

    const dup = await order({ ...limit, price: '31000', client_order_id: 'grid-1' });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toMatchObject({
      error: { code: 'CONFLICT', details: { reason: 'duplicate_client_order_id', order_id: id } },
    });

    await settleTrading(t);
    const detail = await get(`/trade/order/${id}`);
    expect(detail.json()).toMatchObject({ order_id: id, client_order_id: 'grid-1' });
    const list = await get('/trade/orders?client_order_id=grid-1');
    expect(list.json()).toMatchObject({ total: 1, orders: [{ order_id: id, client_order_id: 'grid-1' }] });
    const open = await get('/trade/orders/open?client_order_id=grid-1');
    expect(open.json().orders.map((o: { order_id: string }) => o.order_id)).toEqual([id]);
    const all = await get('/trade/orders');
    expect(all.json().total).toBe(2);
    expect(all.json().orders.find((o: { order_id: string }) => o.order_id !== id)).not.toHaveProperty(
      'client_order_id',
    );

    // Once cancelled, the id is free again; the filter then lists both orders, newest first.
    expect(
      (await api(t.app, { method: 'DELETE', url: `/trade/order/${id}`, headers: keyHeader(account.apiKey) }))
        .statusCode,
    ).toBe(200);
    const again = await order({ ...limit, client_order_id: 'grid-1' });
    expect(again.statusCode, again.body).toBe(201);
    await settleTrading(t);
    const both = await get('/trade/orders?client_order_id=grid-1');
    expect(both.json()).toMatchObject({ total: 2 });
    expect(both.json().orders.map((o: { order_id: string }) => o.order_id)).toEqual([
      again.json().order_id,
      id,
    ]);
  });

  it('refuses a malformed id with VALIDATION_ERROR, in the body and in the filter', async () => {
    const bad = await order({ ...limit, client_order_id: 'has space' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error.code).toBe('VALIDATION_ERROR');
    const badFilter = await get(`/trade/orders?client_order_id=${'x'.repeat(37)}`);
    expect(badFilter.statusCode).toBe(422);
  });
});

describe('client order ids of an OCO over REST (Binance limitClientOrderId, stopClientOrderId, listClientOrderId)', () => {
  /** A buy OCO of 0.001 BTC around 40,000: take-profit limit at 35,000, stop at 45,000 (USDT locked once). */
  const oco = (ids: { tp?: string; sl?: string; list?: string } = {}) =>
    api(t.app, {
      method: 'POST',
      url: '/trade/order/oco',
      headers: keyHeader(account.apiKey),
      payload: {
        symbol: 'BTCUSDT',
        side: 'buy',
        quantity: '0.001',
        take_profit: { price: '35000', ...(ids.tp ? { client_order_id: ids.tp } : {}) },
        stop_loss: { trigger_price: '45000', ...(ids.sl ? { client_order_id: ids.sl } : {}) },
        ...(ids.list ? { list_client_order_id: ids.list } : {}),
      },
    });

  it('gives each leg its own id and the list its id: echoed, shown by the reads, filterable', async () => {
    const placed = await oco({ tp: 'oco-tp-1', sl: 'oco-sl-1', list: 'oco-1' });
    expect(placed.statusCode, placed.body).toBe(201);
    const body = placed.json();
    expect(body).toMatchObject({ list_kind: 'oco', list_client_order_id: 'oco-1' });
    expect(body.orders.map((o: any) => [o.list_role, o.client_order_id, o.list_client_order_id])).toEqual([
      ['take_profit', 'oco-tp-1', 'oco-1'],
      ['stop_loss', 'oco-sl-1', 'oco-1'],
    ]);
    await settleTrading(t);
    const stop = body.orders[1].order_id as string;
    expect((await get(`/trade/order/${stop}`)).json()).toMatchObject({
      order_id: stop,
      client_order_id: 'oco-sl-1',
      list_client_order_id: 'oco-1',
      order_list_id: body.order_list_id,
    });
    const listed = await get('/trade/orders/open?client_order_id=oco-sl-1');
    expect(listed.json().orders.map((o: { order_id: string }) => o.order_id)).toEqual([stop]);

    // Without ids the legs and the list keep the shapes they always had.
    const plain = await oco();
    expect(plain.statusCode, plain.body).toBe(201);
    expect(plain.json()).not.toHaveProperty('list_client_order_id');
    for (const o of plain.json().orders) {
      expect(o).not.toHaveProperty('client_order_id');
      expect(o).not.toHaveProperty('list_client_order_id');
    }
  });

  it('validates the ids as an order’s: malformed 422, one id for both legs 422, an open order’s id 409; nothing placed', async () => {
    await settleTrading(t);
    const before = (await get('/trade/orders/open?limit=200')).json().total;
    for (const ids of [{ sl: 'has space' }, { tp: 'x'.repeat(37) }, { list: 'bad/id' }]) {
      const bad = await oco(ids);
      expect(bad.statusCode, bad.body).toBe(422);
      expect(bad.json().error.code).toBe('VALIDATION_ERROR');
    }
    const same = await oco({ tp: 'same-id', sl: 'same-id' });
    expect(same.statusCode).toBe(422);
    expect(same.json().error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { issues: [{ field: 'stop_loss.client_order_id' }] },
    });
    const open = await order({ ...limit, quantity: '0.001', client_order_id: 'taken-1' });
    expect(open.statusCode, open.body).toBe(201);
    const dupStop = await oco({ sl: 'taken-1' });
    expect(dupStop.statusCode).toBe(409);
    expect(dupStop.json().error).toMatchObject({
      code: 'CONFLICT',
      details: { field: 'stop_loss.client_order_id', order_id: open.json().order_id },
    });
    const dupTakeProfit = await oco({ tp: 'taken-1' });
    expect(dupTakeProfit.statusCode).toBe(409);
    await settleTrading(t);
    expect((await get('/trade/orders/open?limit=200')).json().total).toBe(before + 1);
  });
});
