import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, keyHeader, registerAccount, type TestAccount } from '../accounts/support';
import { useTestApp } from '../support/test-app';

/**
 * The Binance door's order-list endpoints (issue 21; docs/binance-compatibility.md, "Order lists") over real HTTP:
 * `GET /orderList` by `orderListId` or the list's client order id, `allOrderList`, `openOrderList` and
 * `DELETE /orderList`, in Binance's shapes, over the OCO the wallet decider places; exchangeInfo's `ocoAllowed`.
 * Requests are signed by hand as Binance's "SIGNED endpoint security" says (HMAC-SHA256 of the query string).
 */

const t = useTestApp({
  env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT', FILL_MODEL: 'instant' },
});

let base = '';
let account: TestAccount;
let secret = '';

const signed = async (method: 'GET' | 'POST' | 'DELETE', path: string, params: Record<string, string>) => {
  const query = new URLSearchParams({ timestamp: String(Date.now()), ...params }).toString();
  const signature = createHmac('sha256', secret).update(query).digest('hex');
  const res = await fetch(`${base}/binance/api/v3/${path}?${query}&signature=${signature}`, {
    method,
    headers: { 'x-mbx-apikey': account.apiKey },
  });
  return { status: res.status, body: (await res.json()) as any };
};

/** The REST door's balance of an asset: [available, locked]. */
const balance = async (asset: string) => {
  const res = await api(t.app, {
    method: 'GET',
    url: '/account/balance',
    headers: keyHeader(account.apiKey),
  });
  const line = (res.json().balances as { asset: string; available: string; locked: string }[]).find(
    (b) => b.asset === asset,
  );
  return [line?.available ?? '0', line?.locked ?? '0'];
};

/** A sell OCO of 0.01 BTC around 40,000: take-profit 44,000, stop 36,000. */
const oco = (ids: Record<string, string> = {}) =>
  signed('POST', 'order/oco', {
    symbol: 'BTCUSDT',
    side: 'SELL',
    quantity: '0.01',
    price: '44000',
    stopPrice: '36000',
    ...ids,
  });

beforeAll(async () => {
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  t.tick('BTCUSDT', '40000', '10000');
  account = await registerAccount(t.app, {}, { plain: true });
  secret = account.apiSecret;
  const bought = await signed('POST', 'order', {
    symbol: 'BTCUSDT',
    side: 'BUY',
    type: 'MARKET',
    quantity: '0.05',
  });
  expect(bought.status, JSON.stringify(bought.body)).toBe(200);
});

describe('Binance order lists', () => {
  it('exchangeInfo says OCO lists are allowed (and OTO lists are not placed at this door)', async () => {
    const info = await fetch(`${base}/binance/api/v3/exchangeInfo?symbol=BTCUSDT`);
    const body = (await info.json()) as { symbols: { ocoAllowed: boolean; otoAllowed: boolean }[] };
    expect(body.symbols[0]).toMatchObject({ ocoAllowed: true, otoAllowed: false });
  });

  it('GET /orderList by orderListId and by listClientOrderId, openOrderList and allOrderList show the OCO', async () => {
    const placed = await oco({
      listClientOrderId: 'list-a',
      limitClientOrderId: 'a-tp',
      stopClientOrderId: 'a-sl',
    });
    expect(placed.status, JSON.stringify(placed.body)).toBe(200);
    const listId = placed.body.orderListId as string;
    const expected = {
      orderListId: listId,
      contingencyType: 'OCO',
      listStatusType: 'EXEC_STARTED',
      listOrderStatus: 'EXECUTING',
      listClientOrderId: 'list-a',
      symbol: 'BTCUSDT',
      orders: [
        { symbol: 'BTCUSDT', orderId: placed.body.orders[0].orderId, clientOrderId: 'a-sl' },
        { symbol: 'BTCUSDT', orderId: placed.body.orders[1].orderId, clientOrderId: 'a-tp' },
      ],
    };
    const byId = await signed('GET', 'orderList', { orderListId: listId });
    expect(byId.status, JSON.stringify(byId.body)).toBe(200);
    expect(byId.body).toEqual({ ...expected, transactionTime: expect.any(Number) });
    const byClientId = await signed('GET', 'orderList', { origClientOrderId: 'list-a' });
    expect(byClientId.body).toEqual(byId.body);

    const open = await signed('GET', 'openOrderList', {});
    expect(open.status).toBe(200);
    expect(open.body.map((l: any) => l.orderListId)).toContain(listId);
    const all = await signed('GET', 'allOrderList', {});
    expect(all.body.find((l: any) => l.orderListId === listId)).toEqual(byId.body);
  });

  it('DELETE /orderList cancels both legs, releases the one lock and answers orderReports; then the list is done', async () => {
    const [, lockedBefore] = await balance('BTC');
    const placed = await oco({ listClientOrderId: 'list-b' });
    expect(placed.status).toBe(200);
    const listId = placed.body.orderListId as string;
    const [, lockedDuring] = await balance('BTC');
    expect(Number(lockedDuring) - Number(lockedBefore)).toBeCloseTo(0.01, 8);

    const cancelled = await signed('DELETE', 'orderList', { symbol: 'BTCUSDT', listClientOrderId: 'list-b' });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({
      orderListId: listId,
      contingencyType: 'OCO',
      listStatusType: 'ALL_DONE',
      listOrderStatus: 'ALL_DONE',
      listClientOrderId: 'list-b',
    });
    expect(cancelled.body.orderReports.map((r: any) => [r.type, r.status, r.orderListId])).toEqual([
      ['STOP_LOSS', 'CANCELED', listId],
      ['LIMIT', 'CANCELED', listId],
    ]);
    expect((await balance('BTC'))[1]).toBe(lockedBefore);

    const after = await signed('GET', 'orderList', { orderListId: listId });
    expect(after.body).toMatchObject({ listStatusType: 'ALL_DONE', listOrderStatus: 'ALL_DONE' });
    const open = await signed('GET', 'openOrderList', {});
    expect(open.body.map((l: any) => l.orderListId)).not.toContain(listId);
    const all = await signed('GET', 'allOrderList', { fromId: listId });
    expect(all.body[0]).toMatchObject({ orderListId: listId, listOrderStatus: 'ALL_DONE' });

    // A done list cannot be cancelled again: Binance's -2011.
    const again = await signed('DELETE', 'orderList', { symbol: 'BTCUSDT', orderListId: listId });
    expect(again).toEqual({ status: 400, body: { code: -2011, msg: 'Unknown order list sent.' } });
  });

  it('answers Binance errors for missing, unknown and other-symbol lists, and changes nothing', async () => {
    const placed = await oco({ listClientOrderId: 'list-c' });
    const listId = placed.body.orderListId as string;
    expect(await signed('GET', 'orderList', {})).toMatchObject({ status: 400, body: { code: -1102 } });
    expect(await signed('GET', 'orderList', { orderListId: 'not-a-list' })).toEqual({
      status: 400,
      body: { code: -2013, msg: 'Order list does not exist.' },
    });
    expect(await signed('GET', 'orderList', { origClientOrderId: 'no-such-list' })).toMatchObject({
      body: { code: -2013 },
    });
    expect(await signed('DELETE', 'orderList', { symbol: 'ETHUSDT', orderListId: listId })).toEqual({
      status: 400,
      body: { code: -2011, msg: 'Unknown order list sent.' },
    });
    expect(await signed('DELETE', 'orderList', { orderListId: listId })).toMatchObject({
      status: 400,
      body: { code: -1102 },
    });
    expect((await signed('GET', 'orderList', { orderListId: listId })).body.listOrderStatus).toBe(
      'EXECUTING',
    );

    // Another wallet does not see it.
    const other = await registerAccount(t.app, {}, { plain: true });
    const me = account;
    account = other;
    secret = other.apiSecret;
    try {
      expect((await signed('GET', 'orderList', { orderListId: listId })).body).toMatchObject({ code: -2013 });
      expect(await signed('GET', 'openOrderList', {})).toEqual({ status: 200, body: [] });
    } finally {
      account = me;
      secret = me.apiSecret;
    }
  });

  it('names orders and lists by ids in either case and with spaces around, as /api/v1 does (orderIdOf)', async () => {
    const placed = await oco({ listClientOrderId: 'list-case' });
    const listId = placed.body.orderListId as string;
    const legId = placed.body.orders[0].orderId as string;
    /** The id as a client might have copied it: upper case, with a space either side. */
    const copied = (id: string) => ` ${id.toUpperCase()} `;
    // The REST door reads the copied form as the same order.
    const rest = await api(t.app, {
      method: 'GET',
      url: `/trade/order/${encodeURIComponent(copied(legId))}`,
      headers: keyHeader(account.apiKey),
    });
    expect([rest.statusCode, rest.json().order_id]).toEqual([200, legId]);

    const order = await signed('GET', 'order', { symbol: 'BTCUSDT', orderId: copied(legId) });
    expect([order.status, order.body.orderId]).toEqual([200, legId]);
    const list = await signed('GET', 'orderList', { orderListId: copied(listId) });
    expect([list.status, list.body.orderListId]).toEqual([200, listId]);
    const lists = await signed('GET', 'allOrderList', { fromId: copied(listId) });
    expect(lists.body[0]?.orderListId).toBe(listId);
    const orders = await signed('GET', 'allOrders', { symbol: 'BTCUSDT', orderId: copied(legId) });
    expect(orders.body[0]?.orderId).toBe(legId);

    const bought = await signed('POST', 'order', {
      symbol: 'BTCUSDT',
      side: 'BUY',
      type: 'MARKET',
      quantity: '0.001',
    });
    const boughtId = bought.body.orderId as string;
    const trades = await signed('GET', 'myTrades', { symbol: 'BTCUSDT', orderId: copied(boughtId) });
    expect(trades.body.map((f: { orderId: string }) => f.orderId)).toEqual([boughtId]);

    const cancelled = await signed('DELETE', 'orderList', { symbol: 'BTCUSDT', orderListId: copied(listId) });
    expect([cancelled.status, cancelled.body.orderListId]).toEqual([200, listId]);

    // An id of spaces only is no id: the missing parameter (-1102), as when it is not sent, not -2013.
    const blank = await signed('GET', 'order', { symbol: 'BTCUSDT', orderId: '   ' });
    expect([blank.status, blank.body.code]).toEqual([400, -1102]);
  });
});
