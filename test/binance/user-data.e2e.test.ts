import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { apiCall, useRealDataServer } from '../support/real-data-server';
import { useProBinance } from './pro-client';

/**
 * Issue 19, item 3: the user data stream. ccxt.pro's `watchOrders`, `watchBalance` and `watchMyTrades` (through the
 * WebSocket API's `userDataStream.subscribe.signature`, what ccxt uses for spot), and Binance's listen keys
 * (`POST/PUT/DELETE /binance/api/v3/userDataStream`, `/binance/ws/<listenKey>`), against the real server process on
 * the real market data. Every figure equals the REST door's (`/api/v1`).
 */
const venue = useRealDataServer('ptv-binance-user-');
let wsBase: string;
let apiKey: string;
const pro = useProBinance(venue, async () => {
  wsBase = venue.url.replace('http://', 'ws://');
  const account = (await apiCall(venue.url, 'POST', '/auth/register', {}, { display_name: 'ccxt pro' }))
    .body as { api_key: string; api_secret: string };
  apiKey = account.api_key;
  return { apiKey: account.api_key, secret: account.api_secret };
});

const SYMBOL = 'BTC/USDT';

const rest = async (path: string) => {
  const res = await fetch(`${venue.url}/api/v1${path}`, { headers: { 'x-api-key': apiKey } });
  expect(res.status, path).toBe(200);
  return (await res.json()) as any;
};

/** The REST door's balances by asset: [available, locked] as numbers. */
const restBalances = async (): Promise<Record<string, [number, number]>> =>
  Object.fromEntries(
    ((await rest('/account/balance')).balances as { asset: string; available: string; locked: string }[]).map(
      (b) => [b.asset, [Number(b.available), Number(b.locked)]],
    ),
  );

/** A listen-key request (security USER_STREAM: the key alone). */
const listenKeyRequest = async (method: 'POST' | 'PUT' | 'DELETE', listenKey?: string) => {
  const res = await fetch(
    `${venue.url}/binance/api/v3/userDataStream${listenKey ? `?listenKey=${listenKey}` : ''}`,
    { method, headers: { 'x-mbx-apikey': apiKey } },
  );
  return { status: res.status, body: (await res.json()) as any };
};

/** A socket on `/binance/ws/<listenKey>`, open, and the inbox of the events it receives (parsed), in order. */
const follow = async (listenKey: string) => {
  const ws = new WebSocket(`${wsBase}/binance/ws/${listenKey}`);
  const inbox: any[] = [];
  ws.on('message', (d) => inbox.push(JSON.parse(String(d))));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return { ws, inbox };
};

describe('ccxt.pro.binance user data against the venue', () => {
  it('watchOrders, watchMyTrades and watchBalance see the orders placed through the REST door', async () => {
    // The WebSocket API subscription first (what every user-data watch awaits), then the watches, then the orders.
    await (pro() as unknown as { authenticate(): Promise<void> }).authenticate();

    const balance = pro().watchBalance();
    const trades = pro().watchMyTrades(SYMBOL);
    const bought = await pro().createOrder(SYMBOL, 'market', 'buy', 0.002);
    const [mine, seenBalance] = await Promise.all([trades, balance]);
    const history = (await rest('/trade/history?limit=10')).trades as {
      trade_id: string;
      order_id: string;
      price: string;
      quantity: string;
      fee: string;
    }[];
    expect(mine.at(-1)).toMatchObject({
      id: history[0]!.trade_id,
      order: bought.id,
      price: Number(history[0]!.price),
      amount: Number(history[0]!.quantity),
      side: 'buy',
    });
    expect(mine.at(-1)!.fee?.cost).toBe(Number(history[0]!.fee));
    // The balances the stream pushed are those of the REST door after the order, to the last unit.
    let latest = seenBalance;
    const expected = await restBalances();
    while (latest['BTC']?.free !== expected['BTC']![0]) latest = await pro().watchBalance();
    for (const asset of ['USDT', 'BTC']) {
      expect([latest[asset]!.free, latest[asset]!.used]).toEqual(expected[asset]);
    }

    // A resting limit order: NEW, then CANCELED, each seen by watchOrders.
    const price = Number((await rest('/market/price/BTCUSDT')).price);
    const low = Number(pro().priceToPrecision(SYMBOL, price * 0.5));
    const opened = pro().watchOrders(SYMBOL);
    const resting = await pro().createOrder(SYMBOL, 'limit', 'buy', 0.001, low);
    let orders = await opened;
    while (!orders.some((o) => o.id === resting.id)) orders = await pro().watchOrders(SYMBOL);
    expect(orders.find((o) => o.id === resting.id)).toMatchObject({
      status: 'open',
      price: low,
      amount: 0.001,
      filled: 0,
      side: 'buy',
      type: 'limit',
    });
    const cancelled = pro().watchOrders(SYMBOL);
    await pro().cancelOrder(resting.id!, SYMBOL);
    orders = await cancelled;
    while (orders.find((o) => o.id === resting.id)?.status !== 'canceled')
      orders = await pro().watchOrders(SYMBOL);
    const lockedAfter = (await restBalances())['USDT']![1];
    expect(lockedAfter).toBe(0);
  }, 30_000);
});

describe('listen keys: POST/PUT/DELETE /binance/api/v3/userDataStream and /binance/ws/<listenKey>', () => {
  it('opens one key per owner, streams executionReport and outboundAccountPosition, ends with listenKeyExpired', async () => {
    const opened = await listenKeyRequest('POST');
    expect(opened.status).toBe(200);
    const listenKey = opened.body.listenKey as string;
    expect(listenKey).toMatch(/^[0-9a-f]{60}$/);
    expect((await listenKeyRequest('POST')).body.listenKey).toBe(listenKey);
    expect(await listenKeyRequest('PUT', listenKey)).toEqual({ status: 200, body: {} });

    // An order placed before the socket follows the key: its later cancel is reported from the order's row.
    const price = Number((await rest('/market/price/BTCUSDT')).price);
    const low = Number(pro().priceToPrecision(SYMBOL, price * 0.5));
    const earlier = await pro().createOrder(SYMBOL, 'limit', 'buy', 0.001, low);

    const { ws, inbox } = await follow(listenKey);
    const until = async (test: () => boolean) => {
      const deadline = Date.now() + 10_000;
      while (!test()) {
        if (Date.now() > deadline) throw new Error(`not seen: ${JSON.stringify(inbox).slice(0, 800)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };

    await pro().cancelOrder(earlier.id!, SYMBOL);
    await until(() => inbox.some((m) => m.e === 'executionReport' && m.i === earlier.id));
    expect(inbox.find((m) => m.e === 'executionReport' && m.i === earlier.id)).toMatchObject({
      x: 'CANCELED',
      X: 'CANCELED',
      S: 'BUY',
      o: 'LIMIT',
      q: '0.00100000',
      p: low.toFixed(8),
      z: '0.00000000',
    });

    const sold = await pro().createOrder(SYMBOL, 'market', 'sell', 0.001);
    await until(() => inbox.some((m) => m.e === 'executionReport' && m.i === sold.id && m.x === 'TRADE'));
    const reports = inbox.filter((m) => m.e === 'executionReport' && m.i === sold.id);
    expect(reports.map((m) => [m.x, m.X])).toEqual([
      ['NEW', 'NEW'],
      ['TRADE', 'FILLED'],
    ]);
    expect(reports[1]).toMatchObject({
      s: 'BTCUSDT',
      S: 'SELL',
      o: 'MARKET',
      q: '0.00100000',
      z: '0.00100000',
    });
    // One balance event each: the cancel, the sell's placement, its fill; the last is the wallet as it is now.
    await until(() => inbox.filter((m) => m.e === 'outboundAccountPosition').length >= 3);
    const position = inbox.filter((m) => m.e === 'outboundAccountPosition').at(-1);
    const expected = await restBalances();
    for (const line of position.B as { a: string; f: string; l: string }[]) {
      expect([Number(line.f), Number(line.l)]).toEqual(expected[line.a]);
    }

    // Deleting the key ends the socket with Binance's listenKeyExpired; the key is gone (-1125).
    const closed = new Promise((resolve) => ws.once('close', resolve));
    expect(await listenKeyRequest('DELETE', listenKey)).toEqual({ status: 200, body: {} });
    await closed;
    expect(inbox.at(-1)).toMatchObject({ e: 'listenKeyExpired', listenKey });
    expect(await listenKeyRequest('PUT', listenKey)).toMatchObject({ status: 400, body: { code: -1125 } });
    const refused = new WebSocket(`${wsBase}/binance/ws/${listenKey}`);
    const error = await new Promise<any>((resolve) =>
      refused.on('message', (d) => resolve(JSON.parse(String(d)))),
    );
    expect(error).toMatchObject({ error: { code: 2 } });
  }, 30_000);

  it("a new owner's first order (its wallet opens with it) streams the order's NEW, then one balance event: no balance event of the wallet's opening ahead of the order", async () => {
    // A wallet opens with its owner's first order (WalletOpened, SessionStarted 'opened', OrderPlaced in one append);
    // the balances it opens with are the ones every door showed before, so its opening is no balance change.
    const fresh = (await apiCall(venue.url, 'POST', '/auth/register', {}, { display_name: 'first order' }))
      .body as { api_key: string };
    const headers = { 'x-mbx-apikey': fresh.api_key };
    const listenKey = (
      (await (
        await fetch(`${venue.url}/binance/api/v3/userDataStream`, { method: 'POST', headers })
      ).json()) as { listenKey: string }
    ).listenKey;
    const { ws, inbox } = await follow(listenKey);
    const price = Number((await rest('/market/price/BTCUSDT')).price);
    const placed = await apiCall(
      venue.url,
      'POST',
      '/trade/order',
      { 'x-api-key': fresh.api_key },
      { symbol: 'BTCUSDT', side: 'buy', type: 'limit', quantity: '0.001', price: (price * 0.5).toFixed(2) },
    );
    expect(placed.status).toBe(201);
    const deadline = Date.now() + 10_000;
    while (!inbox.some((m) => m.e === 'outboundAccountPosition' && m.B.some((b: any) => b.a === 'BTC'))) {
      if (Date.now() > deadline) throw new Error(`not seen: ${JSON.stringify(inbox).slice(0, 800)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // Settle: anything the wallet's opening would send has been sent by now.
    await new Promise((r) => setTimeout(r, 500));
    ws.close();
    expect(inbox.map((m) => [m.e, m.x])).toEqual([
      ['executionReport', 'NEW'],
      ['outboundAccountPosition', undefined],
    ]);
  }, 30_000);

  it('needs an API key: none is -2014', async () => {
    const res = await fetch(`${venue.url}/binance/api/v3/userDataStream`, { method: 'POST' });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: number }).code).toBe(-2014);
  });
});
