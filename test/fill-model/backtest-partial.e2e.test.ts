import { beforeAll, describe, expect, it } from 'vitest';
import { type Dec, dec, roundDown8, ZERO } from '../../domain/trading/decimal';
import { feeFor } from '../../domain/trading/fees';
import { lockFor } from '../../domain/trading/orders';
import { floorToStep } from '../../domain/trading/quantity';
import { csvRows } from '../market/support';
import { apiCall, useRealDataServer, useRegisteredTrader } from '../support/real-data-server';

/**
 * Partial fills end to end (issue 21, "Done when"): the real server process on the real data set, over HTTP. In a
 * backtest of BCHUSDT hourly candles, a resting limit buy larger than one candle's participation share (10 % of
 * the candle's traded volume under the `realistic` model a new agent's wallet opens with) fills in three parts on
 * three candles: `partially_filled` after the first two, `filled` after the third, one fill per part on the order
 * (`GET /backtest/{id}/trade/order/{order_id}`) each with its fill-model record, and after every step the sandbox
 * balances exact to the last unit: USDT locked = the lock of what remains, available = starting balance − Σ fill
 * totals − that lock, BCH = Σ filled. A second session cancels the order after its first part: exactly the
 * remaining lock comes back. The window is found in the data files: three consecutive hours whose lows all reach
 * a limit just under the close before them. A third session sends an IOC limit buy far larger than the book holds
 * within its limit: it takes what the book holds (never beyond the limit, as a taker), the rest is cancelled at
 * once (`unfilled`), and its whole unused lock comes back.
 */

const SYMBOL = 'BCHUSDT';
const H = 3_600_000;
const START_BALANCE = dec('10000000');
const FEE = dec('0.001');
const SHARE_PCT = 10;

const server = useRealDataServer('ptv-partial-e2e-');
const trader = useRegisteredTrader(server, 'Partial fills', 'Big bidder');

const call = (method: string, url: string, body?: unknown, auth: 'key' | 'jwt' = 'key') =>
  apiCall(
    server.url,
    method,
    url,
    auth === 'key' ? { 'x-api-key': trader.apiKey } : { authorization: `Bearer ${trader.token}` },
    body,
  );

interface Kline {
  openTime: number;
  close: Dec;
  low: Dec;
  volume: Dec;
}

const klines = (): Kline[] =>
  csvRows(`klines/1h/${SYMBOL}-1h.csv`).map(([openTime, , , low, close, volume]) => ({
    openTime: Number(openTime),
    close: dec(close!),
    low: dec(low!),
    volume: dec(volume!),
  }));

/** What a candle's print gives a resting order under `realistic`: 10 % of its volume, down to the step. */
const shareOf = (k: Kline, step: Dec) => floorToStep(roundDown8(k.volume.times(SHARE_PCT).div(100)), step);

interface Window {
  /** Open time of the first candle that reaches the order (the backtest starts there). */
  start: number;
  limit: Dec;
  quantity: Dec;
  /** The three parts it fills in, in order. */
  parts: Dec[];
}

/** Three consecutive candles whose lows reach a limit just under the close before them, sized to fill in three parts. */
const findWindow = (tick: Dec, step: Dec): Window => {
  const all = klines();
  for (let i = 48; i + 3 < all.length; i++) {
    const before = all[i]!;
    const next = [all[i + 1]!, all[i + 2]!, all[i + 3]!];
    if (next.some((k, j) => k.openTime !== before.openTime + (j + 1) * H)) continue;
    const limit = floorToStep(before.close.times('0.9995'), tick);
    if (!limit.lt(before.close) || next.some((k) => k.low.gt(limit))) continue;
    const [s1, s2, s3] = next.map((k) => shareOf(k, step)) as [Dec, Dec, Dec];
    const last = floorToStep(s3.div(2), step);
    if (s1.isZero() || s2.isZero() || last.isZero()) continue;
    const quantity = s1.plus(s2).plus(last);
    if (quantity.times(limit).gt(START_BALANCE.times('0.5'))) continue;
    return { start: next[0]!.openTime, limit, quantity, parts: [s1, s2, last] };
  }
  throw new Error(`no window of ${SYMBOL} fits the test`);
};

let window: Window;
let step: Dec;

beforeAll(async () => {
  const pairs = (await call('GET', '/market/pairs?status=active')).body.pairs as any[];
  const pair = pairs.find((p) => p.symbol === SYMBOL)!;
  step = dec(pair.step_size);
  window = findWindow(dec(pair.tick_size), step);
}, 150_000);

/** A started BCHUSDT session over the window's four hours; its id. */
const startSession = async (label: string): Promise<string> => {
  const created = await call('POST', '/backtest/create', {
    start_time: new Date(window.start).toISOString(),
    end_time: new Date(window.start + 4 * H).toISOString(),
    starting_balance: START_BALANCE.toFixed(),
    candle_interval: '1h',
    agent_id: trader.agentId,
    strategy_label: label,
    pairs: [SYMBOL],
  });
  expect(created.status).toBe(200);
  const id = created.body.session_id as string;
  expect((await call('POST', `/backtest/${id}/start`)).status).toBe(200);
  return id;
};

/** A started session holding the window's limit buy; the session's and the order's ids. */
const createSession = async () => {
  const id = await startSession('partial fills');
  const placed = await call('POST', `/backtest/${id}/trade/order`, {
    symbol: SYMBOL,
    side: 'buy',
    type: 'limit',
    quantity: window.quantity.toFixed(),
    price: window.limit.toFixed(),
  });
  expect(placed.status).toBe(201);
  expect(placed.body.status).toBe('pending');
  return { id, orderId: placed.body.order_id as string };
};

const lockOf = (remaining: Dec) =>
  lockFor({ side: 'buy', type: 'limit', level: window.limit }, remaining, FEE);

/** The sandbox's balances: USDT available and locked, BCH held. */
const balances = async (id: string) => {
  const r = await call('GET', `/backtest/${id}/account/balance`);
  expect(r.status).toBe(200);
  const usdt = r.body.balances.find((b: any) => b.asset === 'USDT');
  const bch = r.body.balances.find((b: any) => b.asset === 'BCH');
  return { available: usdt.available, locked: usdt.locked, bch: bch?.total ?? '0.00000000' };
};

describe('partial fills in a backtest on the real data', () => {
  it('fills a limit order larger than a candle’s share in parts, with exact balances and locks after each', async () => {
    const { id, orderId } = await createSession();
    expect(await balances(id)).toEqual({
      available: START_BALANCE.minus(lockOf(window.quantity)).toFixed(8),
      locked: lockOf(window.quantity).toFixed(8),
      bch: '0.00000000',
    });

    let filled = ZERO;
    let paid = ZERO;
    for (const [k, part] of window.parts.entries()) {
      const stepped = await call('POST', `/backtest/${id}/step`);
      expect(stepped.status).toBe(200);
      expect(stepped.body.orders_filled).toHaveLength(1);
      filled = filled.plus(part);
      const notional = part.times(window.limit);
      paid = paid.plus(notional).plus(feeFor(notional, FEE));
      const remaining = window.quantity.minus(filled);
      const open = remaining.gt(0);

      const order = await call('GET', `/backtest/${id}/trade/order/${orderId}`);
      expect(order.status).toBe(200);
      expect(order.body).toMatchObject({
        status: open ? 'partially_filled' : 'filled',
        executed_qty: filled.toFixed(8),
        executed_price: window.limit.toFixed(8),
      });
      expect(order.body.fills).toHaveLength(k + 1);
      const fill = order.body.fills[k];
      expect(fill).toMatchObject({
        quantity: part.toFixed(8),
        price: window.limit.toFixed(8),
        fee: feeFor(notional, FEE).toFixed(8),
        reference_time: new Date(window.start + k * H).toISOString(),
        fill: {
          fill_model: 'realistic',
          liquidity: 'maker',
          fee_rate: '0.001',
          participation_cap_pct: String(SHARE_PCT),
          remaining_quantity: remaining.toFixed(8),
        },
      });
      // The print's volume is the candle's, and this order is the wallet's only resting order on it.
      expect(dec(fill.fill.volume_available).times(SHARE_PCT).div(100).gte(part)).toBe(true);
      expect(fill.fill.volume_taken).toBe('0.00000000');

      const held = open ? lockOf(remaining) : ZERO;
      expect(await balances(id)).toEqual({
        available: START_BALANCE.minus(paid).minus(held).toFixed(8),
        locked: held.toFixed(8),
        bch: filled.toFixed(8),
      });
      const listed = (await call('GET', `/backtest/${id}/trade/orders/open`)).body.orders;
      expect(listed.map((o: any) => o.order_id)).toEqual(open ? [orderId] : []);
    }
    expect(filled.toFixed()).toBe(window.quantity.toFixed());
  }, 120_000);

  it('cancelling the order after its first part releases exactly the remaining lock', async () => {
    const { id, orderId } = await createSession();
    expect((await call('POST', `/backtest/${id}/step`)).status).toBe(200);
    const part = window.parts[0]!;
    const remaining = window.quantity.minus(part);
    const cancelled = await call('DELETE', `/backtest/${id}/trade/order/${orderId}`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      status: 'cancelled',
      unlocked_amount: lockOf(remaining).toFixed(8),
      unlocked_asset: 'USDT',
    });
    const notional = part.times(window.limit);
    expect(await balances(id)).toEqual({
      available: START_BALANCE.minus(notional).minus(feeFor(notional, FEE)).toFixed(8),
      locked: '0.00000000',
      bch: part.toFixed(8),
    });
    const order = await call('GET', `/backtest/${id}/trade/order/${orderId}`);
    expect(order.body).toMatchObject({ status: 'cancelled', executed_qty: part.toFixed(8) });
    expect(order.body.fills).toHaveLength(1);
    // Nothing fills on the next candle, which reaches the limit too.
    const next = await call('POST', `/backtest/${id}/step`);
    expect(next.body.orders_filled).toEqual([]);
  }, 120_000);
});

describe('time in force in a backtest on the real data', () => {
  it('an IOC limit buy larger than the book within its limit fills what the book holds and cancels the rest', async () => {
    const id = await startSession('IOC');
    const price = dec((await call('GET', `/backtest/${id}/market/price/${SYMBOL}`)).body.price);
    const pairs = (await call('GET', '/market/pairs?status=active')).body.pairs as any[];
    const tick = dec(pairs.find((p) => p.symbol === SYMBOL)!.tick_size);
    // 0.2 % above the price: a few levels of the book; 2 M USDT: far more than they hold.
    const limit = floorToStep(price.times('1.002'), tick);
    const quantity = floorToStep(dec(2_000_000).div(limit), step);
    const placed = await call('POST', `/backtest/${id}/trade/order`, {
      symbol: SYMBOL,
      side: 'buy',
      type: 'limit',
      quantity: quantity.toFixed(),
      price: limit.toFixed(),
      time_in_force: 'IOC',
    });
    expect(placed.status).toBe(201);
    expect(placed.body).toMatchObject({
      status: 'cancelled',
      cancel_reason: 'unfilled',
      time_in_force: 'IOC',
    });
    // The 201 has the market-order shape (`executed_quantity`); the order's record names it `executed_qty`.
    const executed = dec(placed.body.executed_quantity);
    expect(executed.gt(0) && executed.lt(quantity)).toBe(true);

    const order = await call('GET', `/backtest/${id}/trade/order/${placed.body.order_id}`);
    expect(order.body).toMatchObject({ status: 'cancelled', executed_qty: executed.toFixed(8) });
    for (const f of order.body.fills) {
      expect(dec(f.price).lte(limit)).toBe(true); // never beyond the limit
      expect(f.fill).toMatchObject({ fill_model: 'realistic', liquidity: 'taker' });
    }
    const history = (await call('GET', `/backtest/${id}/trade/history`)).body.trades as any[];
    const spent = history.reduce((sum: Dec, t: any) => sum.plus(t.total), ZERO);
    const bought = history.reduce((sum: Dec, t: any) => sum.plus(t.quantity), ZERO);
    expect(bought.toFixed(8)).toBe(executed.toFixed(8));
    // The remainder's lock is released whole: nothing stays locked, cash is the start less what the fills cost.
    expect(await balances(id)).toEqual({
      available: START_BALANCE.minus(spent).toFixed(8),
      locked: '0.00000000',
      bch: executed.toFixed(8),
    });
    expect((await call('GET', `/backtest/${id}/trade/orders/open`)).body.orders).toEqual([]);
  }, 120_000);
});
