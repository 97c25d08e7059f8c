import { createHmac } from 'node:crypto';
import ccxt, { type Exchange } from 'ccxt';
import { beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { dec } from '../../domain/trading/decimal';
import type * as market from '../../src/contract/market';
import type * as trading from '../../src/contract/trading';
import { apiCall, useRealDataServer } from '../support/real-data-server';
import { until } from '../support/until';

/**
 * Issue 19, "Done when": the real `ccxt` client's `binance` class, with its URLs pointed at the venue's
 * `/binance/api/v3`, against the real server process on the real market data. It reads the market, trades
 * (market and limit, buy and sell), reads its orders, balances and trades, and every figure it sees equals the
 * REST door's (`/api/v1`) to the last unit. Tampered signatures, stale timestamps, unknown symbols, too small
 * quantities and over-selling answer Binance's error codes and change nothing in the wallet.
 */
// A maker rate apart from the taker rate, so a fee read through the door cannot swap them unnoticed.
const venue = useRealDataServer('ptv-binance-', { MAKER_FEE_RATE: '0.00075' });
let apiKey: string;
let secret: string;
let token: string;
let binance: Exchange;

const SYMBOL = 'BTC/USDT';
const SYMBOL_ID = 'BTCUSDT';

/** A ccxt binance client of `key` pointed at the venue, spot only (the options docs/binance-compatibility.md gives). */
const client = (key: string, keySecret: string): Exchange =>
  new ccxt.binance({
    apiKey: key,
    secret: keySecret,
    enableRateLimit: false,
    urls: { api: { public: `${venue.url}/binance/api/v3`, private: `${venue.url}/binance/api/v3` } },
    options: { fetchMarkets: { types: ['spot'] }, fetchCurrencies: false, fetchMargins: false },
  });

/**
 * Every URL of ccxt's binance class moved under `<base>/binance` (`https://api.binance.com/sapi/v1` →
 * `<base>/binance/sapi/v1`), as docs/binance-compatibility.md sets a client up: no call goes to Binance itself.
 */
const venueUrls = (base: string): Record<string, string> =>
  Object.fromEntries(
    Object.entries(new ccxt.binance().urls.api as Record<string, string>).map(([name, url]) => [
      name,
      url.replace(/^https:\/\/[^/]+/, `${base}/binance`),
    ]),
  );

/** A ccxt binance client of `key` with every URL at the venue (the setup docs/binance-compatibility.md gives). */
const everywhereClient = (key: string, keySecret: string): Exchange =>
  new ccxt.binance({
    apiKey: key,
    secret: keySecret,
    enableRateLimit: false,
    urls: { api: venueUrls(venue.url) },
    options: { fetchMarkets: { types: ['spot'] }, fetchMargins: false },
  });

/**
 * A REST request of the venue's own API with the account's key; its 200 body typed as `T` (by default untyped),
 * e.g. `z.output` of the response schema the route serialises with (`src/contract/*`), so no shape is copied here.
 */
const rest = async <T = any>(path: string, headers: Record<string, string> = { 'x-api-key': apiKey }) => {
  const res = await fetch(`${venue.url}/api/v1${path}`, { headers });
  expect(res.status, `${path}: ${res.status}`).toBe(200);
  return (await res.json()) as T;
};

type Balances = z.output<typeof trading.balanceResponse>;

/** The wallet as the REST door shows it: balances by asset (available, locked) and the open orders. */
const wallet = async () => {
  const balance = await rest<Balances>('/account/balance');
  const open = await rest<z.output<typeof trading.orderListResponse>>('/trade/orders/open?limit=100');
  return {
    balances: Object.fromEntries(
      balance.balances.map((b) => [b.asset, { available: b.available, locked: b.locked }]),
    ),
    open: open.orders.map((o) => o.order_id).sort(),
  };
};

/** A signed Binance request sent by hand (to tamper with it), with `timestamp` unless given. */
const signed = async (
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  params: Record<string, string>,
  options: { tamper?: (query: string) => string; secret?: string; api?: string } = {},
) => {
  const query = new URLSearchParams({ timestamp: String(Date.now()), ...params }).toString();
  const signature = createHmac('sha256', options.secret ?? secret)
    .update(query)
    .digest('hex');
  const text = `${options.tamper ? options.tamper(query) : query}&signature=${signature}`;
  const url = `${venue.url}/binance/${options.api ?? 'api/v3'}/${path}`;
  const res =
    method === 'POST'
      ? await fetch(url, {
          method,
          headers: { 'x-mbx-apikey': apiKey, 'content-type': 'application/x-www-form-urlencoded' },
          body: text,
        })
      : await fetch(`${url}?${text}`, { method, headers: { 'x-mbx-apikey': apiKey } });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
};

beforeAll(async () => {
  const account = (await apiCall(venue.url, 'POST', '/auth/register', {}, { display_name: 'ccxt' })).body as {
    api_key: string;
    api_secret: string;
  };
  apiKey = account.api_key;
  secret = account.api_secret;
  const login = await fetch(`${venue.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(account),
  });
  token = ((await login.json()) as { token: string }).token;
  binance = client(apiKey, secret);
}, 180_000);

describe('ccxt.binance against the venue', () => {
  it('loadMarkets: the pairs with their filters and exactly the order types the door maps', async () => {
    const markets = await binance.loadMarkets();
    const { pairs } = await rest<z.output<typeof market.pairsResponse>>('/market/pairs');
    expect(Object.keys(markets).length).toBe(pairs.length);
    const btc = markets[SYMBOL]!;
    const pair = pairs.find((p) => p.symbol === 'BTCUSDT')!;
    expect(btc).toMatchObject({ id: 'BTCUSDT', spot: true, base: 'BTC', quote: 'USDT', active: true });
    expect(btc.limits.amount?.min).toBe(Number(pair.min_qty));
    expect(btc.limits.cost?.min).toBe(Number(pair.min_notional));
    expect(btc.precision.amount).toBe(Number(pair.step_size));
    // The price rule every door enforces: up to 8 places below 10^15, not the pair's exchange tick (tick_size).
    expect(Number(pair.tick_size)).toBeGreaterThan(0.00000001);
    expect(btc.precision.price).toBe(0.00000001);
    expect(btc.limits.price?.min).toBe(0.00000001);
    // The maxima as ccxt reads them (numbers) are below 10^15, which the ledger refuses (checked below).
    expect(btc.limits.price?.max).toBeLessThan(1e15);
    expect(btc.limits.amount?.max).toBeLessThan(1e15);
    expect(btc.info.filters[0]).toMatchObject({
      filterType: 'PRICE_FILTER',
      maxPrice: '999999999999999.87500000',
    });
    expect(btc.info.filters[1]).toMatchObject({ filterType: 'LOT_SIZE', maxQty: '999999999999999.87500000' });
    expect(btc.info.orderTypes).toEqual(['LIMIT', 'MARKET', 'STOP_LOSS', 'TAKE_PROFIT']);
    // What the filters state is what the ledger takes: a limit price off the pair's tick, on the 8-place grid
    // (placed by a wallet of its own, so the account's order history the next tests read stays theirs).
    const other = (await apiCall(venue.url, 'POST', '/auth/register', {}, { display_name: 'ticks' }))
      .body as {
      api_key: string;
      api_secret: string;
    };
    const ticks = client(other.api_key, other.api_secret);
    await ticks.loadMarkets();
    const price = Number((await rest('/market/price/BTCUSDT')).price);
    const offTick = String(ticks.priceToPrecision(SYMBOL, price / 2 + 0.00000123));
    expect(dec(offTick).mod(pair.tick_size).isZero()).toBe(false);
    // An order at ccxt's limits.price.max or limits.amount.max passes the filters: the wallet's own rules refuse it
    // (-2010: its balance or risk profile), not the filters (-1013, as 10^15 is).
    for (const [amount, limitPrice] of [
      [btc.limits.amount!.min!, btc.limits.price!.max!],
      [btc.limits.amount!.max!, btc.limits.price!.min!],
    ] as const) {
      await expect(ticks.createOrder(SYMBOL, 'limit', 'buy', amount, limitPrice)).rejects.toThrow(
        /"code":-2010,/,
      );
    }
    const resting = await ticks.createOrder(SYMBOL, 'limit', 'buy', 0.001, Number(offTick));
    expect([resting.status, resting.price]).toEqual(['open', Number(offTick)]);
    // Outside the stated filters is refused, never rounded, as Binance refuses it: -1013 "Filter failure: <filter>"
    // (ccxt: InvalidOrder, not the BadRequest of -1100): a price finer than the tick or not below maxPrice, a stop
    // price finer than the tick, a quantity finer than the step.
    const limit = { symbol: SYMBOL_ID, side: 'BUY', type: 'LIMIT', quantity: '0.001', price: offTick };
    const stop = { symbol: SYMBOL_ID, side: 'SELL', type: 'STOP_LOSS', quantity: '0.001' };
    for (const [params, filter] of [
      [{ ...limit, price: `${offTick}1` }, 'PRICE_FILTER'],
      [{ ...limit, price: '1000000000000000' }, 'PRICE_FILTER'],
      [{ ...stop, stopPrice: `${offTick}1` }, 'PRICE_FILTER'],
      [{ ...limit, quantity: '0.001000001' }, 'LOT_SIZE'],
    ] as const) {
      const refused = ticks.privatePostOrder(params);
      await expect(refused, JSON.stringify(params)).rejects.toBeInstanceOf(ccxt.InvalidOrder);
      await expect(refused).rejects.toThrow(new RegExp(`"code":-1013,"msg":"Filter failure: ${filter}\\.`));
    }
  });

  it('fetchTicker, fetchTickers, fetchOHLCV, fetchOrderBook, fetchTrades: the venue’s market data', async () => {
    const ticker = await binance.fetchTicker(SYMBOL);
    const price = Number((await rest('/market/price/BTCUSDT')).price);
    expect(ticker.symbol).toBe(SYMBOL);
    expect(Math.abs(ticker.last! - price) / price).toBeLessThan(0.02);
    const tickers = await binance.fetchTickers([SYMBOL, 'ETH/USDT']);
    expect(Object.keys(tickers).sort()).toEqual(['BTC/USDT', 'ETH/USDT']);

    const candles = await binance.fetchOHLCV(SYMBOL, '1h', undefined, 5);
    const restCandles = (
      await rest<z.output<typeof market.candlesResponse>>('/market/candles/BTCUSDT?interval=1h&limit=5')
    ).candles;
    expect(candles).toEqual(
      restCandles.map((c) => [
        Date.parse(c.time),
        Number(c.open),
        Number(c.high),
        Number(c.low),
        Number(c.close),
        Number(c.volume),
      ]),
    );

    const book = await binance.fetchOrderBook(SYMBOL, 10);
    expect(book.bids.length).toBe(10);
    expect(book.asks.length).toBe(10);
    expect(book.bids[0]![0]!).toBeLessThan(book.asks[0]![0]!);

    const trades = await binance.fetchTrades(SYMBOL, undefined, 20);
    for (const t of trades) {
      expect(t.symbol).toBe(SYMBOL);
      expect(t.price).toBeGreaterThan(0);
      expect(t.amount).toBeGreaterThan(0);
    }
  });

  it('createOrder market and limit, buy and sell; fetchOrder, fetchOpenOrders, cancelOrder, cancelAllOrders, fetchMyTrades, fetchClosedOrders, fetchOrders', async () => {
    const start = await binance.fetchBalance();
    expect(start['USDT']).toMatchObject({ free: 10000, used: 0, total: 10000 });

    // Market buy: filled at once, and the very next read sees it (read your writes).
    const bought = await binance.createOrder(SYMBOL, 'market', 'buy', 0.002);
    expect(bought).toMatchObject({
      status: 'closed',
      side: 'buy',
      type: 'market',
      amount: 0.002,
      filled: 0.002,
    });
    expect(bought.trades).toHaveLength(1);
    expect(bought.fee?.currency).toBe('USDT');
    expect((await binance.fetchBalance())['BTC']).toMatchObject({ free: 0.002, used: 0, total: 0.002 });

    // Limit buy far below the price: open, visible at once, then cancelled.
    const price = Number((await rest('/market/price/BTCUSDT')).price);
    const low = Number(binance.priceToPrecision(SYMBOL, price * 0.5));
    const resting = await binance.createOrder(SYMBOL, 'limit', 'buy', 0.001, low);
    expect(resting).toMatchObject({ status: 'open', price: low, amount: 0.001, filled: 0 });
    expect((await binance.fetchOpenOrders(SYMBOL)).map((o) => o.id)).toEqual([resting.id]);
    expect(await binance.fetchOrder(resting.id!, SYMBOL)).toMatchObject({ id: resting.id, status: 'open' });
    expect((await binance.fetchBalance())['USDT']!.used).toBeGreaterThan(0);
    const cancelled = await binance.cancelOrder(resting.id!, SYMBOL);
    expect(cancelled).toMatchObject({ id: resting.id, status: 'canceled' });
    expect(await binance.fetchOpenOrders(SYMBOL)).toEqual([]);
    expect((await binance.fetchBalance())['USDT']!.used).toBe(0);

    // Limit sell far above, a market sell, then cancel all on the symbol.
    const high = Number(binance.priceToPrecision(SYMBOL, price * 1.5));
    const ask = await binance.createOrder(SYMBOL, 'limit', 'sell', 0.001, high);
    expect(ask).toMatchObject({ status: 'open', side: 'sell' });
    const sold = await binance.createOrder(SYMBOL, 'market', 'sell', 0.001);
    expect(sold).toMatchObject({ status: 'closed', filled: 0.001 });
    const bid = await binance.createOrder(SYMBOL, 'limit', 'buy', 0.001, low);
    const all = await binance.cancelAllOrders(SYMBOL);
    expect(all.map((o) => o.id).sort()).toEqual([ask.id, bid.id].sort());
    expect(await binance.fetchOpenOrders(SYMBOL)).toEqual([]);

    // Own trades: the two fills, as the REST history has them.
    const mine = await binance.fetchMyTrades(SYMBOL);
    const history = (await rest<z.output<typeof trading.historyResponse>>('/trade/history?limit=100')).trades;
    expect(mine.map((t) => t.id).sort()).toEqual(history.map((t) => t.trade_id).sort());
    for (const t of mine) {
      const h = history.find((x) => x.trade_id === t.id)!;
      expect([t.price, t.amount, t.fee?.cost]).toEqual([Number(h.price), Number(h.quantity), Number(h.fee)]);
    }
    expect(mine.map((t) => t.order).sort()).toEqual([bought.id, sold.id].sort());

    // Closed orders (ccxt: the filled ones) and every order (allOrders) with its status.
    const closed = await binance.fetchClosedOrders(SYMBOL);
    expect(closed.map((o) => o.id).sort()).toEqual([bought.id, sold.id].sort());
    const every = await binance.fetchOrders(SYMBOL);
    expect(Object.fromEntries(every.map((o) => [o.id, o.status]))).toEqual({
      [bought.id!]: 'closed',
      [sold.id!]: 'closed',
      [resting.id!]: 'canceled',
      [ask.id!]: 'canceled',
      [bid.id!]: 'canceled',
    });
  });

  it('balances seen through ccxt equal /api/v1/account/balance to the last unit', async () => {
    const balance = await binance.fetchBalance();
    const restBalance = (await rest<Balances>('/account/balance')).balances;
    const raw = (balance.info as { balances: { asset: string; free: string; locked: string }[] }).balances;
    expect(raw).toEqual(restBalance.map((b) => ({ asset: b.asset, free: b.available, locked: b.locked })));
    for (const b of restBalance) {
      expect(balance[b.asset]).toMatchObject({ free: Number(b.available), used: Number(b.locked) });
    }
  });

  it('an agent key trades its own wallet with the api_secret it was created with', async () => {
    const res = await fetch(`${venue.url}/api/v1/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ display_name: 'ccxt agent', starting_balance: '5000' }),
    });
    const agent = (await res.json()) as { api_key: string; api_secret: string };
    const agentClient = client(agent.api_key, agent.api_secret);
    await agentClient.loadMarkets();
    expect((await agentClient.fetchBalance())['USDT']).toMatchObject({ free: 5000, total: 5000 });
    const order = await agentClient.createOrder(SYMBOL, 'market', 'buy', 0.001);
    expect(order.status).toBe('closed');
    const agentRest = await rest('/account/balance', { 'x-api-key': agent.api_key });
    const raw = ((await agentClient.fetchBalance()).info as { balances: { asset: string; free: string }[] })
      .balances;
    expect(raw.map((b) => [b.asset, b.free])).toEqual(
      (agentRest.balances as { asset: string; available: string }[]).map((b) => [b.asset, b.available]),
    );
  });

  it('newClientOrderId is the client order id: unique among open orders (-2010), reusable once filled, queryable', async () => {
    const before = await wallet();
    const market = {
      symbol: 'BTCUSDT',
      side: 'BUY',
      type: 'MARKET',
      quantity: '0.001',
      newClientOrderId: 'mkt-1',
    };
    const first = await signed('POST', 'order', market);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ clientOrderId: 'mkt-1', status: 'FILLED' });
    // As on Binance, the id of an order no longer open is free: the same id places a new order.
    const second = await signed('POST', 'order', market);
    expect(second.status).toBe(200);
    expect(second.body.orderId).not.toBe(first.body.orderId);
    const found = await signed('GET', 'order', { symbol: 'BTCUSDT', origClientOrderId: 'mkt-1' });
    expect(found.body).toMatchObject({
      orderId: second.body.orderId,
      clientOrderId: 'mkt-1',
      status: 'FILLED',
    });
    const after = await wallet();
    expect(Number(after.balances['BTC']!.available)).toBeCloseTo(
      Number(before.balances['BTC']!.available) + 0.002,
      8,
    );

    const limit = {
      symbol: 'BTCUSDT',
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'GTC',
      quantity: '0.01',
      price: '1000',
      newClientOrderId: 'rest-1',
    };
    const resting = await signed('POST', 'order', limit);
    expect(resting.body).toMatchObject({ clientOrderId: 'rest-1', status: 'NEW' });
    const duplicate = await signed('POST', 'order', { ...limit, price: '1001' });
    expect(duplicate).toMatchObject({ status: 400, body: { code: -2010 } });
    expect(duplicate.body.msg).toMatch(/^Duplicate order sent\./);
    const open = await signed('GET', 'openOrders', { symbol: 'BTCUSDT' });
    expect(open.body.filter((o: { clientOrderId: string }) => o.clientOrderId === 'rest-1')).toHaveLength(1);
    // The REST door shows the same id.
    const rested = await rest(`/trade/order/${resting.body.orderId}`);
    expect(rested.client_order_id).toBe('rest-1');
    const cancelled = await signed('DELETE', 'order', { symbol: 'BTCUSDT', origClientOrderId: 'rest-1' });
    expect(cancelled.body).toMatchObject({
      status: 'CANCELED',
      clientOrderId: 'rest-1',
      origClientOrderId: 'rest-1',
    });
  });

  it('a marketable limit order takes liquidity: its fill is a taker in myTrades (isMaker false)', async () => {
    const price = Number((await rest('/market/price/BTCUSDT')).price);
    const above = Number(binance.priceToPrecision(SYMBOL, price * 1.1));
    const order = await binance.createOrder(SYMBOL, 'limit', 'buy', 0.001, above);
    // The matching engine fills it at the next tick, at the market (never beyond its limit), as a taker.
    let trade: Awaited<ReturnType<Exchange['fetchMyTrades']>>[number] | undefined;
    await until(
      async () => {
        trade = (await binance.fetchMyTrades(SYMBOL)).find((t) => t.order === order.id);
        return trade !== undefined;
      },
      { what: 'the marketable limit order fills' },
    );
    expect(trade).toMatchObject({ takerOrMaker: 'taker', info: { isMaker: false } });
    expect(trade!.price).toBeLessThanOrEqual(above);
    const fill = (await rest(`/trade/order/${order.id}`)).fills[0] as { fill: { liquidity: string } };
    expect(fill.fill.liquidity).toBe('taker');
  });

  it('refusals answer Binance codes and change nothing in the wallet', async () => {
    const before = await wallet();
    const order = { symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.001' };

    const tampered = await signed('POST', 'order', order, { tamper: (q) => q.replace('0.001', '0.002') });
    expect(tampered).toMatchObject({ status: 400, body: { code: -1022 } });
    const wrongSecret = await signed('GET', 'account', {}, { secret: `${secret}x` });
    expect(wrongSecret).toMatchObject({ status: 400, body: { code: -1022 } });

    const stale = await signed('POST', 'order', { ...order, timestamp: String(Date.now() - 60_000) });
    expect(stale).toMatchObject({ status: 400, body: { code: -1021 } });
    const ahead = await signed('POST', 'order', { ...order, timestamp: String(Date.now() + 10_000) });
    expect(ahead).toMatchObject({ status: 400, body: { code: -1021 } });

    const unknown = await signed('POST', 'order', { ...order, symbol: 'NOPEUSDT' });
    expect(unknown).toMatchObject({ status: 400, body: { code: -1121 } });
    const tooSmall = await signed('POST', 'order', { ...order, quantity: '0.00000001' });
    expect(tooSmall).toMatchObject({ status: 400, body: { code: -1013 } });
    expect(tooSmall.body.msg).toMatch(/^Filter failure: (LOT_SIZE|NOTIONAL)/);
    const overSell = await signed('POST', 'order', { ...order, side: 'SELL', quantity: '5' });
    expect(overSell.status).toBe(400);
    expect(overSell.body.code).toBe(-2010);
    const unserved = await signed('POST', 'order', { ...order, type: 'STOP_LOSS_LIMIT' });
    expect(unserved).toMatchObject({ status: 400, body: { code: -1116 } });
    const unknownOrder = await signed('DELETE', 'order', {
      symbol: 'BTCUSDT',
      orderId: '00000000-0000-4000-8000-000000000000',
    });
    expect(unknownOrder).toMatchObject({ status: 400, body: { code: -2011, msg: 'Unknown order sent.' } });
    const noKey = await fetch(`${venue.url}/binance/api/v3/account?timestamp=1&signature=00`);
    expect(noKey.status).toBe(401);
    expect(((await noKey.json()) as { code: number }).code).toBe(-2014);

    // Through ccxt: its own exception classes for the same refusals.
    await expect(binance.createOrder(SYMBOL, 'market', 'sell', 5)).rejects.toBeInstanceOf(
      ccxt.InsufficientFunds,
    );
    await expect(binance.fetchOrder('00000000-0000-4000-8000-000000000000', SYMBOL)).rejects.toBeInstanceOf(
      ccxt.OrderNotFound,
    );
    // Below the minimum notional: -1013 NOTIONAL, which ccxt raises as BadRequest (only LOT_SIZE and PRICE_FILTER
    // are InvalidOrder in ccxt's binance class), as it does against Binance: the docs say so.
    const notional = binance.createOrder(SYMBOL, 'limit', 'buy', 0.001, 1);
    await expect(notional).rejects.toBeInstanceOf(ccxt.BadRequest);
    await expect(notional).rejects.toThrow(/"code":-1013,"msg":"Filter failure: NOTIONAL\./);

    expect(await wallet()).toEqual(before);
  });

  it('a listed pair without a price yet: 503 with Retry-After as through /api/v1 (ccxt: OperationFailed), the log has a warning and no internal error', async () => {
    const { pairs } = await rest<z.output<typeof market.pairsResponse>>('/market/pairs?status=active');
    const { prices } = await rest<z.output<typeof market.pricesResponse>>('/market/prices');
    const unpriced = pairs.find((p) => !(p.symbol in prices))!;
    // ccxt's class for "the operation failed, it may succeed later" (-1000), not an ExchangeError.
    await expect(binance.fetchTicker(`${unpriced.base_asset}/USDT`)).rejects.toBeInstanceOf(
      ccxt.OperationFailed,
    );
    for (const path of [`ticker/price?symbol=${unpriced.symbol}`, `depth?symbol=${unpriced.symbol}`]) {
      const res = await fetch(`${venue.url}/binance/api/v3/${path}`);
      expect(res.status, path).toBe(503);
      expect(res.headers.get('retry-after'), path).toBe('1');
      expect(((await res.json()) as { code: number }).code).toBe(-1000);
    }
    const restAnswer = await fetch(`${venue.url}/api/v1/market/price/${unpriced.symbol}`);
    expect([restAnswer.status, restAnswer.headers.get('retry-after')]).toEqual([503, '1']);
    // An expected refusal is a warning, as the REST door logs it: no "internal error" with a stack. The lines of a
    // request carry its reqId (an internal error's line names no symbol), so the check follows the reqIds of the four
    // requests above; the server's log reaches the test through a pipe, so a line may arrive after the answer.
    const entries = () =>
      venue.server
        .output()
        .split('\n')
        .flatMap((l) => {
          try {
            return [JSON.parse(l) as { level: number; reqId?: string; msg?: string; req?: { url?: string } }];
          } catch {
            return [];
          }
        });
    const requestIds = () =>
      entries()
        .filter((e) => e.msg === 'incoming request' && e.req?.url?.includes(unpriced.symbol))
        .map((e) => e.reqId);
    await until(() => requestIds().length >= 4, {
      what: `the four requests of ${unpriced.symbol} in the log`,
    });
    const reqIds = requestIds();
    expect(reqIds).toHaveLength(4);
    const severe = (reqId: string | undefined) => entries().filter((e) => e.reqId === reqId && e.level >= 40);
    await until(() => reqIds.every((id) => severe(id).length > 0), {
      what: `a warning of each of ${unpriced.symbol}'s refusals in the server's log`,
    });
    for (const id of reqIds)
      expect(
        severe(id).map((e) => e.level),
        String(id),
      ).toEqual([40]);
  });

  it('a market order on a listed pair without a price yet: -1000 503 as /api/v1 answers PRICE_NOT_AVAILABLE 503 (ccxt: OperationFailed, worth retrying), not a -2010 rejection; nothing recorded', async () => {
    const { pairs } = await rest<z.output<typeof market.pairsResponse>>('/market/pairs?status=active');
    const { prices } = await rest<z.output<typeof market.pricesResponse>>('/market/prices');
    const unpriced = pairs.find((p) => !(p.symbol in prices))!;
    const order = { symbol: unpriced.symbol, side: 'BUY', type: 'MARKET', quantity: unpriced.min_qty };
    const restOrder = await apiCall(
      venue.url,
      'POST',
      '/trade/order',
      { 'x-api-key': apiKey },
      { symbol: unpriced.symbol, side: 'buy', type: 'market', quantity: unpriced.min_qty },
    );
    expect([restOrder.status, (restOrder.body as any).error.code]).toEqual([503, 'PRICE_NOT_AVAILABLE']);
    const before = await wallet();
    // (No request names the pair in its URL: the test above counts those in the log.)
    const history = (await rest('/trade/orders?limit=200')).total;
    for (const path of ['order', 'order/test']) {
      const answer = await signed('POST', path, order);
      expect([path, answer.status, answer.body.code]).toEqual([path, 503, -1000]);
    }
    await expect(
      binance.createOrder(`${unpriced.base_asset}/USDT`, 'market', 'buy', Number(unpriced.min_qty)),
    ).rejects.toBeInstanceOf(ccxt.OperationFailed);
    expect(await wallet()).toEqual(before);
    expect((await rest('/trade/orders?limit=200')).total).toBe(history);
  });

  it('an endpoint of Binance the venue does not serve is -1020 "This operation is not supported." (ccxt: BadRequest, not a failure to retry)', async () => {
    const before = await wallet();
    // ccxt's editOrder is Binance's POST /order/cancelReplace.
    const edit = binance.editOrder(
      '00000000-0000-4000-8000-000000000000',
      SYMBOL,
      'limit',
      'buy',
      0.001,
      1000,
    );
    await expect(edit).rejects.toBeInstanceOf(ccxt.BadRequest);
    await expect(
      binance.privateGetMyPreventedMatches({ symbol: SYMBOL_ID, preventedMatchId: '1' }),
    ).rejects.toBeInstanceOf(ccxt.BadRequest);
    const res = await signed('POST', 'order/cancelReplace', {
      symbol: SYMBOL_ID,
      side: 'BUY',
      type: 'MARKET',
    });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe(-1020);
    expect(res.body.msg).toMatch(
      /^This operation is not supported\. POST \/binance\/api\/v3\/order\/cancelReplace/,
    );
    expect(await wallet()).toEqual(before);
  });

  it("a client pointed at the venue for every URL (the docs' setup): fetchTradingFees, fetchTradingFee and fetchStatus, which ccxt sends to sapi, are the venue's; any other sapi path is -1020 (ccxt: BadRequest) and never reaches Binance", async () => {
    const everywhere = everywhereClient(apiKey, secret);
    expect(
      Object.values(everywhere.urls.api as Record<string, string>).every((u) => u.startsWith(venue.url)),
    ).toBe(true);
    const markets = await everywhere.loadMarkets();
    const info = await rest<{ fee_rate: string; maker_fee_rate: string }>('/account/info');
    const rates = { maker: Number(info.maker_fee_rate), taker: Number(info.fee_rate) };
    expect(rates.maker).not.toBe(rates.taker);
    const fees = await everywhere.fetchTradingFees();
    expect(Object.keys(fees).sort()).toEqual(Object.keys(markets).sort());
    for (const fee of Object.values(fees)) expect(fee).toMatchObject(rates);
    expect(fees[SYMBOL]!.info).toEqual({
      symbol: SYMBOL_ID,
      makerCommission: info.maker_fee_rate,
      takerCommission: info.fee_rate,
    });
    expect(await everywhere.fetchTradingFee(SYMBOL)).toMatchObject({ symbol: SYMBOL, ...rates });
    expect(await everywhere.sapiGetAssetTradeFee({ symbol: SYMBOL_ID })).toEqual([fees[SYMBOL]!.info]);
    await expect(everywhere.sapiGetAssetTradeFee({ symbol: 'NOPEUSDT' })).rejects.toBeInstanceOf(
      ccxt.BadSymbol,
    );
    await expect(everywhereClient(apiKey, `${secret}x`).fetchTradingFees()).rejects.toBeInstanceOf(
      ccxt.AuthenticationError,
    );
    const status = await everywhere.fetchStatus();
    expect(status.status).toBe('ok');
    expect(status.info).toEqual({ status: 0, msg: 'normal' });

    await expect(everywhere.sapiGetAccountSnapshot({ type: 'SPOT' })).rejects.toBeInstanceOf(ccxt.BadRequest);
    for (const path of ['sapi/v1/asset/dust', 'sapi/v1/asset/tradeFeeX', 'fapi/v1/ping']) {
      const res = await fetch(`${venue.url}/binance/${path}`);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { code: number }).code, path).toBe(-1020);
    }
    // The served API still answers through the same client.
    expect((await everywhere.fetchTicker(SYMBOL)).symbol).toBe(SYMBOL);
  });

  it('GET /sapi/v1/asset/tradeFee of an agent key: the rates its own /account/info shows', async () => {
    const res = await fetch(`${venue.url}/api/v1/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ display_name: 'ccxt fee agent', starting_balance: '1000' }),
    });
    const agent = (await res.json()) as { api_key: string; api_secret: string };
    const info = await rest<{ agent_id: string | null; fee_rate: string; maker_fee_rate: string }>(
      '/account/info',
      { 'x-api-key': agent.api_key },
    );
    expect(info.agent_id).not.toBeNull();
    const fee = await everywhereClient(agent.api_key, agent.api_secret).fetchTradingFee(SYMBOL);
    expect(fee).toMatchObject({
      symbol: SYMBOL,
      maker: Number(info.maker_fee_rate),
      taker: Number(info.fee_rate),
    });
  });

  it("GET /api/v3/account/commission: the rates /account/info shows, in Binance's shape; a missing or unknown symbol is -1102 / -1121", async () => {
    const info = await rest<{ fee_rate: string; maker_fee_rate: string }>('/account/info');
    const zero = { maker: '0.00000000', taker: '0.00000000', buyer: '0.00000000', seller: '0.00000000' };
    expect(await binance.privateGetAccountCommission({ symbol: SYMBOL_ID })).toEqual({
      symbol: SYMBOL_ID,
      standardCommission: {
        maker: info.maker_fee_rate,
        taker: info.fee_rate,
        buyer: '0.00000000',
        seller: '0.00000000',
      },
      specialCommission: zero,
      taxCommission: zero,
      discount: {
        enabledForAccount: false,
        enabledForSymbol: false,
        discountAsset: 'BNB',
        discount: '0.00000000',
      },
    });
    const missing = await signed('GET', 'account/commission', {});
    expect([missing.status, missing.body.code]).toEqual([400, -1102]);
    const unknown = await signed('GET', 'account/commission', { symbol: 'NOPEUSDT' });
    expect([unknown.status, unknown.body.code]).toEqual([400, -1121]);
  });

  it("fetchCurrencies (GET /sapi/v1/capital/config/getall, which loadMarkets calls): the listed assets with the caller's free/locked, no deposits or withdrawals", async () => {
    // ccxt's defaults but margins (no margin API here): loadMarkets fetches the currencies too.
    const full = everywhereClient(apiKey, secret);
    const markets = await full.loadMarkets();
    const assets = new Set(['USDT', ...Object.values(markets).map((m) => m!.base)]);
    const currencies = await full.fetchCurrencies();
    expect(Object.keys(currencies).sort()).toEqual([...assets].sort());
    // loadMarkets kept them (ccxt adds its own BNFCR, Binance's futures credit, to any binance client's).
    expect(Object.keys(full.currencies)).toEqual(expect.arrayContaining([...assets]));
    expect(full.currencies.BTC!.info).toEqual(currencies.BTC!.info);
    const { balances } = await rest<Balances>('/account/balance');
    for (const b of balances) {
      expect(currencies[b.asset]!.info, b.asset).toMatchObject({
        coin: b.asset,
        free: b.available,
        locked: b.locked,
      });
    }
    const held = new Set(balances.map((b) => b.asset));
    const unheld = [...assets].find((a) => !held.has(a))!;
    expect(currencies[unheld]!.info).toMatchObject({ free: '0.00000000', locked: '0.00000000' });
    expect(currencies.USDT).toMatchObject({ id: 'USDT', code: 'USDT', active: true });
    expect(currencies.BTC!.info).toMatchObject({
      depositAllEnable: false,
      withdrawAllEnable: false,
      trading: true,
    });
    // ccxt takes deposit/withdraw, precision and limits only from the networks: the one nominal network gives them.
    for (const code of ['BTC', 'USDT']) {
      expect(currencies[code], code).toMatchObject({
        deposit: false,
        withdraw: false,
        precision: 1e-8,
        fee: 0,
      });
      expect(currencies[code]!.limits, code).toMatchObject({
        withdraw: { min: 0, max: 0 },
        deposit: { min: 0 },
      });
      expect(Object.keys(currencies[code]!.networks), code).toHaveLength(1);
    }
    expect(full.currencyToPrecision('BTC', 0.123456789123)).toBe('0.12345678');
    expect(full.currencies.BTC!.limits.withdraw?.max).toBe(0);
    // Trading through the client that loaded the currencies works as through the others.
    const order = await full.createOrder(SYMBOL, 'market', 'buy', 0.001);
    expect(order.status).toBe('closed');
    const after = await signed('GET', 'capital/config/getall', {}, { api: 'sapi/v1' });
    expect(after.status).toBe(200);
    const btc = after.body.find((c: { coin: string }) => c.coin === 'BTC');
    const { balances: now } = await rest<Balances>('/account/balance');
    expect(btc).toMatchObject({ free: now.find((b) => b.asset === 'BTC')!.available });
    const bad = await signed('GET', 'capital/config/getall', {}, { api: 'sapi/v1', secret: `${secret}x` });
    expect([bad.status, bad.body.code]).toEqual([400, -1022]);
  });

  it('fetchDeposits, fetchWithdrawals: a paper wallet has none (empty lists); malformed parameters are Binance errors', async () => {
    const everywhere = everywhereClient(apiKey, secret);
    await everywhere.loadMarkets();
    expect(await everywhere.fetchDeposits()).toEqual([]);
    expect(await everywhere.fetchWithdrawals('USDT', Date.now() - 86_400_000, 10)).toEqual([]);
    for (const path of ['capital/deposit/hisrec', 'capital/withdraw/history']) {
      const ok = await signed('GET', path, { coin: 'USDT', limit: '1000', offset: '0' }, { api: 'sapi/v1' });
      expect([ok.status, ok.body], path).toEqual([200, []]);
      // status is a filter of Binance's listed values, with no range it refuses: any integer, nothing found.
      const anyStatus = await signed('GET', path, { status: '11' }, { api: 'sapi/v1' });
      expect([anyStatus.status, anyStatus.body], path).toEqual([200, []]);
      for (const [params, code] of [
        [{ limit: '0' }, -1130],
        [{ limit: '1001' }, -1130],
        [{ limit: 'ten' }, -1100],
        [{ status: 'one' }, -1100],
        [{ offset: '-1' }, -1130],
        [{ startTime: '2000', endTime: '1000' }, -1130],
      ] as const) {
        const res = await signed('GET', path, params, { api: 'sapi/v1' });
        expect([res.status, res.body.code], `${path} ${JSON.stringify(params)}`).toEqual([400, code]);
        expect(typeof res.body.msg).toBe('string');
      }
    }
  });

  it('POST /order/oco (legacy OCO): a LIMIT leg and a STOP_LOSS leg of one list, one lock; cancelling a leg cancels both', async () => {
    const bought = await signed('POST', 'order', {
      symbol: SYMBOL_ID,
      side: 'BUY',
      type: 'MARKET',
      quantity: '0.002',
    });
    expect(bought.status, JSON.stringify(bought.body)).toBe(200);
    const before = await wallet();
    const price = Number((await rest('/market/price/BTCUSDT')).price);
    // The legs of each list: the limit at 1.5 times the price, the stop at half of it.
    const legs = {
      symbol: SYMBOL_ID,
      side: 'SELL',
      price: String(binance.priceToPrecision(SYMBOL, price * 1.5)),
      stopPrice: String(binance.priceToPrecision(SYMBOL, price * 0.5)),
    };
    const oco = await signed('POST', 'order/oco', {
      ...legs,
      quantity: '0.002',
      limitClientOrderId: 'tp-leg-1',
      stopClientOrderId: 'sl-leg-1',
    });
    expect(oco.status, JSON.stringify(oco.body)).toBe(200);
    expect(oco.body).toMatchObject({
      contingencyType: 'OCO',
      listStatusType: 'EXEC_STARTED',
      listOrderStatus: 'EXECUTING',
      symbol: SYMBOL_ID,
    });
    expect(oco.body.orders.map((o: any) => o.clientOrderId)).toEqual(['sl-leg-1', 'tp-leg-1']);
    expect(oco.body.orderReports.map((r: any) => [r.type, r.status, r.orderListId])).toEqual([
      ['STOP_LOSS', 'NEW', oco.body.orderListId],
      ['LIMIT', 'NEW', oco.body.orderListId],
    ]);
    const during = await wallet();
    // The 0.002 BTC is locked once for both legs.
    expect(dec(during.balances['BTC']!.locked).minus(before.balances['BTC']!.locked).toFixed()).toBe('0.002');
    const shown = await signed('GET', 'order', { symbol: SYMBOL_ID, origClientOrderId: 'sl-leg-1' });
    expect(shown.body).toMatchObject({ orderListId: oco.body.orderListId, type: 'STOP_LOSS', status: 'NEW' });
    // A stop-limit leg is not served.
    const stopLimit = await signed('POST', 'order/oco', {
      ...legs,
      quantity: '0.001',
      stopLimitPrice: String(binance.priceToPrecision(SYMBOL, price * 0.49)),
    });
    expect(stopLimit.status).toBe(400);
    const cancelled = await signed('DELETE', 'order', { symbol: SYMBOL_ID, origClientOrderId: 'tp-leg-1' });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(
      (await signed('GET', 'order', { symbol: SYMBOL_ID, origClientOrderId: 'sl-leg-1' })).body.status,
    ).toBe('CANCELED');
    expect(await wallet()).toEqual(before);
  });

  it('presents the rate limiter as X-MBX-USED-WEIGHT-1M and X-MBX-ORDER-COUNT-1M', async () => {
    const read = await signed('GET', 'account', {});
    expect(Number(read.headers.get('x-mbx-used-weight-1m'))).toBeGreaterThan(0);
    const order = await signed('POST', 'order', {
      symbol: 'BTCUSDT',
      side: 'SELL',
      type: 'MARKET',
      quantity: '0.001',
    });
    expect(order.status).toBe(200);
    expect(Number(order.headers.get('x-mbx-order-count-1m'))).toBeGreaterThan(0);
  });
});

describe('exchangeInfo rateLimits: the venue’s one limiter, shared by both doors', () => {
  it('REQUEST_WEIGHT as stated: X-MBX-USED-WEIGHT-1M of signed reads climbs to exactly the stated limit, then -1003', async () => {
    const info = (await (await fetch(`${venue.url}/binance/api/v3/exchangeInfo?symbol=BTCUSDT`)).json()) as {
      rateLimits: { rateLimitType: string; limit: number }[];
    };
    const stated = info.rateLimits.find((r) => r.rateLimitType === 'REQUEST_WEIGHT')!.limit;
    const reg = await fetch(`${venue.url}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ display_name: 'weights' }),
    });
    const own = (await reg.json()) as { api_key: string; api_secret: string };
    const account = () => {
      const query = `timestamp=${Date.now()}`;
      const signature = createHmac('sha256', own.api_secret).update(query).digest('hex');
      return fetch(`${venue.url}/binance/api/v3/account?${query}&signature=${signature}`, {
        headers: { 'x-mbx-apikey': own.api_key },
      });
    };
    // A client pacing itself on the header against the stated limit: it is refused only once the header said so.
    const weights: number[] = [];
    let refused: Response | undefined;
    for (let i = 0; i <= stated && !refused; i++) {
      const res = await account();
      if (res.status === 429) refused = res;
      else {
        expect(res.status).toBe(200);
        weights.push(Number(res.headers.get('x-mbx-used-weight-1m')));
      }
    }
    expect(refused, 'a signed read is refused within the stated weight').toBeDefined();
    expect(weights.at(-1)).toBe(stated);
    expect(weights.every((w, i) => i === 0 || w > weights[i - 1]!)).toBe(true);
    expect(((await refused!.json()) as { code: number }).code).toBe(-1003);
    expect(refused!.headers.get('x-mbx-used-weight-1m')).toBe(String(stated));
  }, 60_000);

  it('ORDERS as stated: orders through /api/v1 and the Binance door count together; the next is -1015 with Retry-After', async () => {
    const info = (await (await fetch(`${venue.url}/binance/api/v3/exchangeInfo?symbol=BTCUSDT`)).json()) as {
      rateLimits: { rateLimitType: string; interval: string; intervalNum: number; limit: number }[];
    };
    const orders = info.rateLimits.find((r) => r.rateLimitType === 'ORDERS')!;
    expect(orders).toMatchObject({ interval: 'MINUTE', intervalNum: 1 });

    // A fresh account, so that the count starts at zero.
    const reg = await fetch(`${venue.url}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ display_name: 'limits' }),
    });
    const account = (await reg.json()) as { api_key: string; api_secret: string };
    const own = { apiKey: account.api_key, secret: account.api_secret };
    const binanceOrder = (side: 'BUY' | 'SELL') => {
      const query = new URLSearchParams({
        symbol: 'BTCUSDT',
        side,
        type: 'MARKET',
        quantity: '0.001',
        timestamp: String(Date.now()),
      }).toString();
      const signature = createHmac('sha256', own.secret).update(query).digest('hex');
      return fetch(`${venue.url}/binance/api/v3/order`, {
        method: 'POST',
        headers: { 'x-mbx-apikey': own.apiKey, 'content-type': 'application/x-www-form-urlencoded' },
        body: `${query}&signature=${signature}`,
      });
    };
    const restOrder = (side: 'buy' | 'sell') =>
      fetch(`${venue.url}/api/v1/trade/order`, {
        method: 'POST',
        headers: { 'x-api-key': own.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ symbol: 'BTCUSDT', side, type: 'market', quantity: '0.001' }),
      });
    const count = async () => {
      const query = `timestamp=${Date.now()}`;
      const signature = createHmac('sha256', own.secret).update(query).digest('hex');
      const res = await fetch(`${venue.url}/binance/api/v3/rateLimit/order?${query}&signature=${signature}`, {
        headers: { 'x-mbx-apikey': own.apiKey },
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { rateLimitType: string; limit: number; count: number }[])[0]!;
    };

    // Buy through one door, sell through the other, until the stated limit is used up.
    for (let i = 0; i < orders.limit; i++) {
      const res = i % 2 === 0 ? await restOrder('buy') : await binanceOrder('SELL');
      expect(res.status, `order ${i + 1}`).toBe(i % 2 === 0 ? 201 : 200);
      if (i === 9)
        expect(await count()).toMatchObject({ rateLimitType: 'ORDERS', limit: orders.limit, count: 10 });
    }
    expect((await count()).count).toBe(orders.limit);
    const balance = await rest('/account/balance', { 'x-api-key': own.apiKey });

    const refused = await binanceOrder('BUY');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await refused.json()) as { code: number }).code).toBe(-1015);
    expect(refused.headers.get('x-mbx-order-count-1m')).toBe(String(orders.limit));
    expect((await restOrder('buy')).status).toBe(429);
    // ccxt's binance class reads the 429 status before the code: DDoSProtection (a NetworkError, retryable).
    const bot = client(own.apiKey, own.secret);
    await bot.loadMarkets();
    await expect(bot.createOrder(SYMBOL, 'market', 'buy', 0.001)).rejects.toBeInstanceOf(ccxt.DDoSProtection);
    // Refused orders reach no use case: the wallet is as it was.
    expect(await rest('/account/balance', { 'x-api-key': own.apiKey })).toEqual(balance);
  }, 60_000);
});
