import { beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../domain/trading/decimal';
import { floorToStep } from '../../domain/trading/quantity';
import { useRealDataServer } from '../support/real-data-server';
import { operatorHeaders } from '../support/server-process';
import { orderBody } from './key-calls';

/**
 * The real server process (`src/main.ts serve`) on the real data set (`MARKET_DATA_DIR=../shared/market-data`)
 * over HTTP: market buys and sells at replayed real prices, a limit order and a stop-loss filled by the matching
 * engine when the replayed price crosses them, cancel-all, reset, and the portfolio identities of the spec.
 * Embedded PGlite in a temporary DATA_DIR, or a fresh database on DATABASE_URL's server when that is set.
 */
const server = useRealDataServer('ptv-trading-e2e-');
let key = '';

beforeAll(async () => {
  const reg = await call('POST', '/auth/register', { display_name: 'E2E trader' });
  expect(reg.status).toBe(201);
  key = reg.body.api_key;
}, 120_000);

const call = async (method: string, url: string, body?: unknown) => {
  const r = await fetch(`${server.url}/api/v1${url}`, {
    method,
    headers: {
      ...(key ? { 'x-api-key': key } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: r.status, body: (await r.json()) as any };
};

const pairs = new Map<string, { minQty: string; stepSize: string; minNotional: string; tickSize: string }>();
/** The 16 pairs of the data set with hourly candles (replayed by the files source). */
const REPLAYED = [
  'BTCUSDT',
  'ETHUSDT',
  'BNBUSDT',
  'XRPUSDT',
  'ADAUSDT',
  'SOLUSDT',
  'DOGEUSDT',
  'DOTUSDT',
  'MATICUSDT',
  'LTCUSDT',
  'LINKUSDT',
  'AVAXUSDT',
  'TRXUSDT',
  'ATOMUSDT',
  'UNIUSDT',
  'BCHUSDT',
];
const quantityFor = (symbol: string, price: string, notional: number): string => {
  const pair = pairs.get(symbol)!;
  const qty = floorToStep(dec(notional).div(price), dec(pair.stepSize));
  return qty.toFixed();
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const checkPortfolio = (p: any) => {
  const n = (v: string) => dec(v);
  expect(n(p.total_equity).toFixed()).toBe(
    n(p.available_cash).plus(p.locked_cash).plus(p.total_position_value).toFixed(),
  );
  expect(n(p.roi_pct).toFixed(8)).toBe(
    n(p.total_equity).minus(p.starting_balance).div(p.starting_balance).times(100).toFixed(8),
  );
  expect(n(p.net_pnl).toFixed()).toBe(n(p.total_pnl).minus(p.fees_paid).toFixed());
  expect(n(p.total_pnl).toFixed()).toBe(n(p.realized_pnl).plus(p.unrealized_pnl).toFixed());
  expect(n(p.total_equity).minus(p.starting_balance).minus(p.net_pnl).abs().lte('0.00000002')).toBe(true);
};

describe('trading on the real server with replayed real prices', () => {
  it('buys and sells at market at the replayed price with slippage and fees', async () => {
    for (const p of (await call('GET', '/market/pairs?status=active')).body.pairs) {
      pairs.set(p.symbol, {
        minQty: p.min_qty,
        stepSize: p.step_size,
        minNotional: p.min_notional,
        tickSize: p.tick_size,
      });
    }
    const price = (await call('GET', '/market/price/BTCUSDT')).body.price as string;
    const qty = quantityFor('BTCUSDT', price, 1000);
    const buy = await call('POST', '/trade/order', orderBody('BTCUSDT', 'buy', 'market', qty));
    expect(buy.status, JSON.stringify(buy.body)).toBe(201);
    expect(buy.body).toMatchObject({
      status: 'filled',
      price_source: 'files',
      executed_quantity: dec(qty).toFixed(8),
    });
    // The replayed price moves a little each second: the reference is the price of the moment.
    expect(dec(buy.body.reference_price).minus(price).abs().div(price).lt('0.01')).toBe(true);
    expect(dec(buy.body.executed_price).gt(buy.body.reference_price)).toBe(true);
    expect(dec(buy.body.fee).toFixed(8)).toBe(
      dec(buy.body.executed_price).times(qty).times('0.001').decimalPlaces(8, 1).toFixed(8),
    );
    const half = floorToStep(dec(qty).div(2), dec(pairs.get('BTCUSDT')!.stepSize)).toFixed();
    const sell = await call('POST', '/trade/order', orderBody('BTCUSDT', 'sell', 'market', half));
    expect(sell.status, JSON.stringify(sell.body)).toBe(201);
    expect(dec(sell.body.executed_price).lt(sell.body.reference_price)).toBe(true);
    const positions = (await call('GET', '/account/positions')).body.positions;
    expect(positions).toHaveLength(1);
    expect(positions[0]).toMatchObject({ symbol: 'BTCUSDT', quantity: dec(qty).minus(half).toFixed(8) });
    checkPortfolio((await call('GET', '/account/portfolio')).body);
  });

  it('fills limit buys and sell stop-losses when the replayed price crosses them', async () => {
    // The replay walks each real candle's path second by second, with small moves both ways. For each of the
    // replayed pairs: hold a little, then place a buy limit and a sell stop-loss one price tick below the current
    // price; the engine must fill them when a later tick reaches that level (at least one pair of each type).
    const symbols = [...REPLAYED].filter((s) => pairs.has(s));
    const prices = (await call('GET', `/market/prices?symbols=${symbols.join(',')}`)).body.prices as Record<
      string,
      string
    >;
    const placed: { symbol: string; level: string; limit: string; stop: string }[] = [];
    for (const symbol of symbols) {
      const price = prices[symbol];
      if (!price) continue;
      const qty = quantityFor(symbol, price, 120);
      const held = await call('POST', '/trade/order', { symbol, side: 'buy', type: 'market', quantity: qty });
      expect(held.status, JSON.stringify(held.body)).toBe(201);
      const level = dec(price).minus(pairs.get(symbol)!.tickSize).toFixed();
      const limit = await call('POST', '/trade/order', {
        symbol,
        side: 'buy',
        type: 'limit',
        quantity: qty,
        price: level,
      });
      expect(limit.status, JSON.stringify(limit.body)).toBe(201);
      const stop = await call('POST', '/trade/order', {
        symbol,
        side: 'sell',
        type: 'stop_loss',
        quantity: qty,
        trigger_price: level,
      });
      expect(stop.status, JSON.stringify(stop.body)).toBe(201);
      placed.push({ symbol, level, limit: limit.body.order_id, stop: stop.body.order_id });
    }
    expect(placed.length).toBeGreaterThan(5);
    let limits: any[] = [];
    let stops: any[] = [];
    for (let i = 0; i < 60; i++) {
      const orders = (await call('GET', '/trade/orders?status=filled&limit=500')).body.orders as any[];
      limits = orders.filter((o) => o.type === 'limit');
      stops = orders.filter((o) => o.type === 'stop_loss');
      if (limits.length > 0 && stops.length > 0) break;
      await sleep(500);
    }
    expect(limits.length, 'a limit buy filled').toBeGreaterThan(0);
    expect(stops.length, 'a sell stop-loss filled').toBeGreaterThan(0);
    const history = (await call('GET', '/trade/history?limit=500')).body.trades as any[];
    for (const o of limits) {
      const p = placed.find((x) => x.limit === o.order_id)!;
      const fill = history.find((t) => t.order_id === o.order_id);
      // A resting limit fills at its limit; one the price had already reached when it was placed (the replay
      // moved between reading the price and placing) fills like a market order, below its limit.
      expect(dec(fill.reference_price).lte(p.level)).toBe(true);
      expect(dec(o.executed_price).lte(p.level), `${o.executed_price} ≤ ${p.level}`).toBe(true);
    }
    for (const o of stops) {
      const p = placed.find((x) => x.stop === o.order_id)!;
      const fill = history.find((t) => t.order_id === o.order_id);
      // it fired at a replayed price at or below its trigger, and sold below that price (slippage)
      expect(dec(fill.reference_price).lte(p.level)).toBe(true);
      expect(dec(fill.price).lt(fill.reference_price)).toBe(true);
    }
    checkPortfolio((await call('GET', '/account/portfolio')).body);
    const cleared = await call('DELETE', '/trade/orders/open');
    expect(cleared.status).toBe(200);
    const balance = (await call('GET', '/account/balance')).body;
    expect(balance.balances[0]).toMatchObject({ asset: 'USDT', locked: '0.00000000' });
  }, 60_000);

  it('cancels all open orders at once, then resets to a new session', async () => {
    // Orders the previous test left open (it clears them at its end, unless it failed) are not this test's.
    expect((await call('DELETE', '/trade/orders/open')).status).toBe(200);
    const price = (await call('GET', '/market/price/ETHUSDT')).body.price as string;
    const qty = quantityFor('ETHUSDT', price, 100);
    const far = dec(price).div(2).decimalPlaces(2).toFixed();
    for (let i = 0; i < 2; i++) {
      const r = await call('POST', '/trade/order', {
        symbol: 'ETHUSDT',
        side: 'buy',
        type: 'limit',
        quantity: qty,
        price: far,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
    const all = await call('DELETE', '/trade/orders/open');
    expect(all.status).toBe(200);
    expect(all.body.cancelled_count).toBe(2);
    expect(dec(all.body.total_unlocked).gt(0)).toBe(true);
    expect((await call('GET', '/trade/orders/open')).body.total).toBe(0);
    const refused = await call('POST', '/account/reset', {});
    expect(refused.status).toBe(400);
    const reset = await call('POST', '/account/reset', { confirm: true });
    expect(reset.status, JSON.stringify(reset.body)).toBe(200);
    expect(reset.body.new_session.starting_balance).toBe('10000.00000000');
    const balance = (await call('GET', '/account/balance')).body;
    expect(balance.balances).toEqual([
      { asset: 'USDT', available: '10000.00000000', locked: '0.00000000', total: '10000.00000000' },
    ]);
    expect((await call('GET', '/trade/history')).body.total).toBeGreaterThan(4); // history kept
    const p = (await call('GET', '/account/portfolio')).body;
    checkPortfolio(p);
    expect(p.roi_pct).toBe('0.00000000');
    const health = await fetch(`${server.url}/health`, { headers: operatorHeaders }).then(
      (r) => r.json() as Promise<any>,
    );
    expect(JSON.stringify(health)).toContain('matching_engine');
  });
});
