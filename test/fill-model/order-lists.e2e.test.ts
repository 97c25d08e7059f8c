import { beforeAll, describe, expect, it } from 'vitest';
import { type Dec, dec } from '../../domain/trading/decimal';
import { floorToStep } from '../../domain/trading/quantity';
import { csvRows } from '../market/support';
import { apiCall, useRealDataServer, useRegisteredTrader } from '../support/real-data-server';

/**
 * Order lists end to end (issue 21, "Done when": "an OCO leg's fill cancels the other"; docs/trading-rules.md,
 * "Order lists: OCO and bracket"): the real server process on the real data set, over HTTP. In a backtest of
 * BTCUSDT hourly candles a bracket's market entry fills and activates its exits (a take-profit 1 % above and a stop
 * 1 % below, one OCO holding the bought quantity once); the first candle that reaches either fills it and cancels
 * the other in the same step (`linked_fill`, nothing more released). An OCO placed on its own does the same, and
 * cancelling either leg of another cancels both and releases the quantity once. Live, `POST /trade/order/oco` places
 * both legs and `GET /trade/order/{id}` shows their list.
 */

const SYMBOL = 'BTCUSDT';
const H = 3_600_000;

const server = useRealDataServer('ptv-order-lists-e2e-');
const trader = useRegisteredTrader(server, 'Order lists', 'Bracketeer');

const call = (method: string, url: string, body?: unknown, auth: 'key' | 'jwt' | 'agent' = 'agent') =>
  apiCall(
    server.url,
    method,
    url,
    auth === 'jwt'
      ? { authorization: `Bearer ${trader.token}` }
      : { 'x-api-key': auth === 'key' ? trader.apiKey : trader.agentKey },
    body,
  );

interface Kline {
  openTime: number;
  high: Dec;
  low: Dec;
  close: Dec;
}

const klines = (): Kline[] =>
  csvRows(`klines/1h/${SYMBOL}-1h.csv`).map(([openTime, , high, low, close]) => ({
    openTime: Number(openTime),
    high: dec(high!),
    low: dec(low!),
    close: dec(close!),
  }));

/**
 * A start hour whose previous close ± 1 % is reached by one of the next twelve candles but not by the first (so the
 * exits rest for a step before one fills), on consecutive hours.
 */
const findStart = (tick: Dec) => {
  const all = klines();
  for (let i = 48; i + 13 < all.length; i++) {
    const before = all[i - 1]!;
    const next = all.slice(i, i + 12);
    if (next.some((k, j) => k.openTime !== before.openTime + (j + 1) * H)) continue;
    const tp = floorToStep(before.close.times('1.01'), tick);
    const sl = floorToStep(before.close.times('0.99'), tick);
    const reaches = (k: Kline) => k.high.gte(tp) || k.low.lte(sl);
    if (reaches(next[0]!) || !next.some(reaches)) continue;
    return { start: all[i]!.openTime, close: before.close, tp, sl };
  }
  throw new Error(`no window of ${SYMBOL} fits the test`);
};

let window: ReturnType<typeof findStart>;
let tick: Dec;

beforeAll(async () => {
  const pairs = (await call('GET', '/market/pairs?status=active')).body.pairs as any[];
  tick = dec(pairs.find((p) => p.symbol === SYMBOL)!.tick_size);
  window = findStart(tick);
}, 150_000);

const createSession = async () => {
  const created = await call(
    'POST',
    '/backtest/create',
    {
      start_time: new Date(window.start).toISOString(),
      end_time: new Date(window.start + 24 * H).toISOString(),
      starting_balance: '100000',
      candle_interval: '1h',
      agent_id: trader.agentId,
      strategy_label: 'order lists',
      pairs: [SYMBOL],
    },
    'jwt',
  );
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const id = created.body.session_id as string;
  expect((await call('POST', `/backtest/${id}/start`, undefined, 'jwt')).status).toBe(200);
  return id;
};

const btc = async (id: string) => {
  const r = await call('GET', `/backtest/${id}/account/balance`, undefined, 'jwt');
  expect(r.status).toBe(200);
  const b = r.body.balances.find((x: any) => x.asset === 'BTC');
  return { total: b?.total ?? '0.00000000', locked: b?.locked ?? '0.00000000' };
};

/** Steps until a step fills something (at most the twelve hours the window was chosen for); its response. */
const stepUntilFill = async (id: string) => {
  for (let k = 0; k < 12; k++) {
    const stepped = await call('POST', `/backtest/${id}/step`, undefined, 'jwt');
    expect(stepped.status).toBe(200);
    if (stepped.body.orders_filled.length > 0) return stepped.body;
  }
  throw new Error('no exit filled within twelve steps');
};

describe('order lists in a backtest on the real data', () => {
  it('a bracket whose market entry fills activates its exits; an exit’s fill cancels the other', async () => {
    const id = await createSession();
    const placed = await call(
      'POST',
      `/backtest/${id}/trade/order`,
      {
        symbol: SYMBOL,
        side: 'buy',
        type: 'market',
        quantity: '0.01',
        bracket: {
          take_profit: { price: window.tp.toFixed() },
          stop_loss: { trigger_price: window.sl.toFixed() },
        },
      },
      'jwt',
    );
    expect(placed.status, JSON.stringify(placed.body)).toBe(201);
    expect(placed.body).toMatchObject({ status: 'filled', list_kind: 'bracket', list_role: 'entry' });
    const listId = placed.body.order_list_id as string;
    const bought = placed.body.executed_quantity as string;
    // The entry was done as it was placed: the 201 shows the exits it placed.
    expect(placed.body.exits.map((o: any) => [o.list_role, o.status, o.quantity])).toEqual([
      ['take_profit', 'pending', bought],
      ['stop_loss', 'pending', bought],
    ]);

    const open = (await call('GET', `/backtest/${id}/trade/orders/open`, undefined, 'jwt')).body
      .orders as any[];
    expect(open.map((o) => o.list_role).sort()).toEqual(['stop_loss', 'take_profit']);
    for (const o of open) expect(o).toMatchObject({ order_list_id: listId, side: 'sell', quantity: bought });
    expect(open.find((o) => o.list_role === 'take_profit')).toMatchObject({
      type: 'limit',
      price: window.tp.toFixed(8),
    });
    expect(open.find((o) => o.list_role === 'stop_loss')).toMatchObject({
      type: 'stop_loss',
      trigger_price: window.sl.toFixed(8),
    });
    // One lock of the bought quantity for both exits.
    expect(await btc(id)).toEqual({ total: bought, locked: bought });

    const step = await stepUntilFill(id);
    expect(step.orders_filled).toHaveLength(1);
    const filled = step.orders_filled[0];
    const other = open.find((o) => o.order_id !== filled.order_id)!;
    expect(open.map((o) => o.order_id)).toContain(filled.order_id);
    expect(filled.quantity).toBe(bought);
    expect(step.orders_cancelled).toEqual([
      expect.objectContaining({
        order_id: other.order_id,
        reason: 'linked_fill',
        unlocked_amount: '0.00000000',
      }),
    ]);
    expect((await call('GET', `/backtest/${id}/trade/orders/open`, undefined, 'jwt')).body.orders).toEqual(
      [],
    );
    expect(await btc(id)).toEqual({ total: '0.00000000', locked: '0.00000000' });
    const cancelled = await call('GET', `/backtest/${id}/trade/order/${other.order_id}`, undefined, 'jwt');
    expect(cancelled.body).toMatchObject({
      status: 'cancelled',
      cancel_reason: 'linked_fill',
      order_list_id: listId,
    });
  }, 120_000);

  it('an OCO leg’s fill cancels the other; cancelling one leg of another OCO cancels both, the lock released once', async () => {
    const id = await createSession();
    const bought = await call(
      'POST',
      `/backtest/${id}/trade/order`,
      { symbol: SYMBOL, side: 'buy', type: 'market', quantity: '0.02' },
      'jwt',
    );
    expect(bought.status).toBe(201);
    const oco = (tp: Dec, sl: Dec) =>
      call(
        'POST',
        `/backtest/${id}/trade/order/oco`,
        {
          symbol: SYMBOL,
          side: 'sell',
          quantity: '0.01',
          take_profit: { price: tp.toFixed() },
          stop_loss: { trigger_price: sl.toFixed() },
        },
        'jwt',
      );
    const first = await oco(window.tp, window.sl);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body.list_kind).toBe('oco');
    expect(first.body.orders.map((o: any) => [o.list_role, o.status, o.locked_amount])).toEqual([
      ['take_profit', 'pending', '0.01000000'],
      ['stop_loss', 'pending', '0.01000000'],
    ]);
    // Far legs that the window never reaches, to be cancelled.
    const far = await oco(
      floorToStep(window.close.times('1.5'), tick),
      floorToStep(window.close.times('0.5'), tick),
    );
    expect(far.status).toBe(201);
    // Both OCOs lock 0.01 each: 0.02 of the 0.02 held.
    expect(await btc(id)).toEqual({ total: '0.02000000', locked: '0.02000000' });

    const [farTp, farSl] = far.body.orders;
    const cancelled = await call('DELETE', `/backtest/${id}/trade/order/${farSl.order_id}`, undefined, 'jwt');
    expect(cancelled.status).toBe(200);
    const farOrders = await Promise.all(
      [farTp, farSl].map(
        async (o: any) =>
          (await call('GET', `/backtest/${id}/trade/order/${o.order_id}`, undefined, 'jwt')).body,
      ),
    );
    expect(farOrders.map((o) => [o.status, o.cancel_reason])).toEqual([
      ['cancelled', 'linked_cancel'],
      ['cancelled', 'user'],
    ]);
    expect(await btc(id)).toEqual({ total: '0.02000000', locked: '0.01000000' });

    const step = await stepUntilFill(id);
    const legs = first.body.orders.map((o: any) => o.order_id);
    expect(step.orders_filled).toHaveLength(1);
    expect(legs).toContain(step.orders_filled[0].order_id);
    expect(step.orders_cancelled).toEqual([
      expect.objectContaining({
        order_id: legs.find((l: string) => l !== step.orders_filled[0].order_id),
        reason: 'linked_fill',
        unlocked_amount: '0.00000000',
      }),
    ]);
    expect(await btc(id)).toEqual({ total: '0.01000000', locked: '0.00000000' });
  }, 120_000);
});

describe('order lists live over HTTP', () => {
  it('POST /trade/order/oco places both legs; GET shows their list; cancelling one cancels both', async () => {
    const bought = await call('POST', '/trade/order', {
      symbol: SYMBOL,
      side: 'buy',
      type: 'market',
      quantity: '0.01',
    });
    expect(bought.status, JSON.stringify(bought.body)).toBe(201);
    const price = dec(bought.body.reference_price);
    const placed = await call('POST', '/trade/order/oco', {
      symbol: SYMBOL,
      side: 'sell',
      quantity: bought.body.executed_quantity,
      take_profit: { price: floorToStep(price.times('1.5'), tick).toFixed() },
      stop_loss: { trigger_price: floorToStep(price.times('0.5'), tick).toFixed() },
    });
    expect(placed.status, JSON.stringify(placed.body)).toBe(201);
    const [tp, sl] = placed.body.orders;
    const shown = (await call('GET', `/trade/order/${sl.order_id}`)).body;
    expect(shown).toMatchObject({
      order_list_id: placed.body.order_list_id,
      list_kind: 'oco',
      list_role: 'stop_loss',
      status: 'pending',
    });
    const wrong = await call('POST', '/trade/order/oco', {
      symbol: SYMBOL,
      side: 'sell',
      quantity: '0.01',
      take_profit: { price: '1000' },
      stop_loss: { trigger_price: '2000' },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.code).toBe('VALIDATION_ERROR');

    expect((await call('DELETE', `/trade/order/${tp.order_id}`)).status).toBe(200);
    const after = (await call('GET', `/trade/order/${sl.order_id}`)).body;
    expect(after).toMatchObject({ status: 'cancelled', cancel_reason: 'linked_cancel' });
    const balance = (await call('GET', '/account/balance')).body.balances.find((b: any) => b.asset === 'BTC');
    expect(balance.locked).toBe('0.00000000');
  }, 60_000);

  it('POST /trade/order/oco/preview answers each leg now, or the rule the list breaks, and places nothing', async () => {
    const held = (await call('GET', '/account/balance')).body.balances.find((b: any) => b.asset === 'BTC');
    expect(dec(held.available).gt(0)).toBe(true);
    const before = {
      orders: (await call('GET', '/trade/orders')).body.total,
      balances: (await call('GET', '/account/balance')).body.balances,
    };
    const price = dec((await call('GET', `/market/price/${SYMBOL}`)).body.price);
    // A take-profit the price already passed (a sell limit 10 % below it) fills at once; its stop-loss is cancelled.
    const body = {
      symbol: SYMBOL,
      side: 'sell',
      quantity: held.available,
      take_profit: { price: floorToStep(price.times('0.9'), tick).toFixed(), client_order_id: 'preview-tp' },
      stop_loss: { trigger_price: floorToStep(price.times('0.5'), tick).toFixed() },
      list_client_order_id: 'preview-list',
    };
    const preview = await call('POST', '/trade/order/oco/preview', body);
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    const [tp, sl] = preview.body.orders;
    expect(preview.body).toMatchObject({
      preview: true,
      list_kind: 'oco',
      list_client_order_id: 'preview-list',
    });
    expect(tp).toMatchObject({
      list_role: 'take_profit',
      client_order_id: 'preview-tp',
      status: 'filled',
      would_fill: true,
      marketable: true,
      type: 'limit',
      models: { realistic: { status: expect.stringMatching(/filled/) }, instant: { status: 'filled' } },
    });
    // Never beyond its limit: a sell fills at or above it.
    expect(dec(tp.executed_price).gte(dec(body.take_profit.price))).toBe(true);
    expect(sl).toMatchObject({
      list_role: 'stop_loss',
      status: 'cancelled',
      cancel_reason: 'linked_fill',
      would_fill: false,
      models: { realistic: { status: 'cancelled' }, instant: { status: 'cancelled' } },
    });
    // Far legs: both would rest, sharing one lock of the quantity.
    const resting = await call('POST', '/trade/order/oco/preview', {
      ...body,
      take_profit: { price: floorToStep(price.times('1.5'), tick).toFixed() },
    });
    expect(resting.status, JSON.stringify(resting.body)).toBe(200);
    expect(resting.body.orders.map((o: any) => [o.list_role, o.status, o.lock_asset])).toEqual([
      ['take_profit', 'pending', 'BTC'],
      ['stop_loss', 'pending', 'BTC'],
    ]);

    // More than is held: the list's own refusal (the balance rule), in the error envelope, as placing it would get.
    const tooMuch = { ...body, quantity: dec(held.available).times(1000).toFixed() };
    const refused = await call('POST', '/trade/order/oco/preview', tooMuch);
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.body.error).toMatchObject({
      code: 'INSUFFICIENT_BALANCE',
      details: { rule: expect.any(String) },
    });
    expect(refused.body.error.details.order_id).toBeUndefined();
    // Bad input: the legs on the wrong sides of each other, and a malformed quantity.
    const wrong = await call('POST', '/trade/order/oco/preview', {
      ...body,
      take_profit: { price: body.stop_loss.trigger_price },
      stop_loss: { trigger_price: body.take_profit.price },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.code).toBe('VALIDATION_ERROR');
    const malformed = await call('POST', '/trade/order/oco/preview', { ...body, quantity: 'lots' });
    expect(malformed.status).toBe(422);
    expect(malformed.body.error.code).toBe('VALIDATION_ERROR');

    // Nothing placed or recorded by any of them.
    expect((await call('GET', '/trade/orders')).body.total).toBe(before.orders);
    expect((await call('GET', '/account/balance')).body.balances).toEqual(before.balances);
    // The refusal placing would get is the preview's (placing records the rejection).
    const placed = await call('POST', '/trade/order/oco', tooMuch);
    expect(placed.status).toBe(refused.status);
    const { order_id: _id, ...placedDetails } = placed.body.error.details;
    expect(refused.body.error).toEqual({ ...placed.body.error, details: placedDetails });
  }, 60_000);
});
