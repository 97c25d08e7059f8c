import { describe, expect, it } from 'vitest';
import { dec } from '../../domain/trading/decimal';
import { operatorHeaders } from '../support/server-process';
import { connectWs } from '../support/ws-client';
import { client, useCompatTrader } from './support';

/**
 * The original product's clients against the real server process (issue 17, items 3–8; docs/compatibility.md):
 * each request is sent the way the original SDK sends it (its bodies and paths), and next to it the spec's form
 * is checked to answer as before. The data set's hourly candles of BTCUSDT and ETHUSDT, replayed live.
 */
const compat = useCompatTrader(2);

const BACKTEST = { start_time: '2023-01-01T00:00:00Z', end_time: '2023-01-03T00:00:00Z' };

/** The original SDK's client with the API key of the trader's agent number `n` (0 or 1). */
const sdkAgent = (n: number) => client(compat.base, { apiKey: compat.trader.agents[n]!.apiKey });

/**
 * A `POST /backtest/create` body as the original SDK sends it: {@link BACKTEST}'s window, the balance as text, the
 * interval in seconds, then `more` (pairs, a label).
 */
const sdkBacktest = (candleIntervalSeconds: number, more: Record<string, unknown> = {}) => ({
  ...BACKTEST,
  starting_balance: '10000',
  candle_interval: candleIntervalSeconds,
  ...more,
});

describe('backtests as the original SDK creates them', () => {
  it('takes candle_interval in seconds and no agent_id from an agent key; the spec form is unchanged', async () => {
    const agent = compat.trader.agents[0]!;
    const asAgent = sdkAgent(0);
    const created = await asAgent(
      'POST',
      '/backtest/create',
      sdkBacktest(3600, { pairs: ['BTCUSDT'], strategy_label: 'original sdk' }),
    );
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ candle_interval: '1h', agent_id: agent.agentId, total_steps: 48 });

    // The spec's form, with the account's JWT and an agent named: as before.
    const spec = await compat.trader.jwt('POST', '/backtest/create', {
      ...BACKTEST,
      starting_balance: '10000.00',
      candle_interval: '1h',
      agent_id: agent.agentId,
      pairs: ['BTCUSDT'],
    });
    expect(spec.status).toBe(200);
    expect(spec.body).toMatchObject({ candle_interval: '1h', agent_id: agent.agentId, total_steps: 48 });

    // Every interval the venue serves has its number of seconds.
    for (const [seconds, name] of [
      [60, '1m'],
      [300, '5m'],
      [900, '15m'],
      [14400, '4h'],
      [86400, '1d'],
    ] as const) {
      const r = await asAgent('POST', '/backtest/create', {
        start_time: '2023-01-01T00:00:00Z',
        end_time: '2023-01-10T00:00:00Z',
        starting_balance: '1000',
        candle_interval: seconds,
        pairs: ['BTCUSDT'],
      });
      // 1m and 5m are finer than the stored hourly data: refused for the data, not for the form.
      if (seconds < 3600) expect(r.body.error?.code ?? r.body.candle_interval).not.toBe('VALIDATION_ERROR');
      else expect(r.body.candle_interval).toBe(name);
    }
  });

  it('refuses what it cannot read: seconds of no interval, no agent with an account credential', async () => {
    const asAgent = sdkAgent(0);
    const odd = await asAgent('POST', '/backtest/create', sdkBacktest(120));
    expect(odd.status).toBe(422);
    expect(odd.body.error.code).toBe('VALIDATION_ERROR');
    expect(odd.body.error.details.issues[0].field).toBe('candle_interval');

    const noAgent = await compat.trader.key('POST', '/backtest/create', {
      ...BACKTEST,
      starting_balance: '10000',
      candle_interval: '1h',
    });
    expect(noAgent.status).toBe(422);
    expect(noAgent.body.error.code).toBe('VALIDATION_ERROR');
    expect(noAgent.body.error.details.issues).toEqual([
      expect.objectContaining({ field: 'agent_id', location: 'body' }),
    ]);
  });

  it('serves sandbox candles by interval in seconds and takes a sandbox stop_loss with stop_price', async () => {
    const asAgent = sdkAgent(0);
    const created = await asAgent('POST', '/backtest/create', sdkBacktest(3600, { pairs: ['BTCUSDT'] }));
    const id = created.body.session_id as string;
    expect((await asAgent('POST', `/backtest/${id}/start`)).status).toBe(200);
    expect((await asAgent('POST', `/backtest/${id}/step/batch`, { steps: 10 })).status).toBe(200);

    const bySeconds = await asAgent('GET', `/backtest/${id}/market/candles/BTCUSDT?interval=3600&limit=5`);
    const byName = await asAgent('GET', `/backtest/${id}/market/candles/BTCUSDT?interval=1h&limit=5`);
    expect(bySeconds.status).toBe(200);
    expect(bySeconds.body.interval).toBe('1h');
    expect(bySeconds.body.candles).toEqual(byName.body.candles);
    expect(bySeconds.body.candles).toHaveLength(5);

    const price = await asAgent('GET', `/backtest/${id}/market/price/BTCUSDT`);
    const trigger = dec(price.body.price).times(2).toFixed(2);
    const order = await asAgent('POST', `/backtest/${id}/trade/order`, {
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'stop_loss',
      quantity: '0.001',
      stop_price: trigger,
    });
    expect(order.status).toBe(201);
    expect(order.body).toMatchObject({ status: 'pending', type: 'stop_loss' });
    expect(dec(order.body.trigger_price).eq(trigger)).toBe(true);
  });
});

describe('orders with stop_price', () => {
  it('reads stop_price as trigger_price on stop_loss and take_profit; the spec form is unchanged', async () => {
    const agent = sdkAgent(1);
    const price = dec((await agent('GET', '/market/price/BTCUSDT')).body.price);
    const above = price.times(2).toFixed(2);
    /** Places a buy of 0.001 BTC of this type with these price fields. */
    const placeBuy = (type: string, prices: Record<string, unknown>) =>
      agent('POST', '/trade/order', { symbol: 'BTCUSDT', side: 'buy', type, quantity: '0.001', ...prices });
    const stop = await placeBuy('stop_loss', { stop_price: above });
    expect(stop.status).toBe(201);
    expect(stop.body).toMatchObject({ status: 'pending', type: 'stop_loss' });
    expect(dec(stop.body.trigger_price).eq(above)).toBe(true);

    const below = price.div(2).toFixed(2);
    const takeProfit = await placeBuy('take_profit', { stop_price: below });
    expect(takeProfit.status).toBe(201);
    expect(dec(takeProfit.body.trigger_price).eq(below)).toBe(true);

    const spec = await placeBuy('stop_loss', { trigger_price: above });
    expect(spec.status).toBe(201);
    expect(dec(spec.body.trigger_price).eq(above)).toBe(true);

    // Both names with one value: accepted; with two: refused rather than one picked.
    const same = await placeBuy('stop_loss', { trigger_price: above, stop_price: Number(above) });
    expect(same.status).toBe(201);
    const differ = await placeBuy('stop_loss', { trigger_price: above, stop_price: below });
    expect(differ.status).toBe(422);
    expect(differ.body.error.details.issues[0].field).toBe('stop_price');
    // On a market order a trigger is refused whatever its name (as trigger_price is by the spec).
    const market = await placeBuy('market', { stop_price: above });
    expect(market.status).toBe(422);
    expect((await agent('DELETE', '/trade/orders/open')).status).toBe(200);
  });
});

describe('battles as the original SDK creates them', () => {
  it('fills a preset, reads config nested, answers with id beside battle_id', async () => {
    const quick = await compat.trader.jwt('POST', '/battles', { name: 'Sprint', preset: 'quick_1h' });
    expect(quick.status).toBe(201);
    expect(quick.body).toMatchObject({
      name: 'Sprint',
      battle_mode: 'live',
      duration_minutes: 60,
      starting_balance: '10000.00000000',
    });
    expect(quick.body.id).toBe(quick.body.battle_id);

    // Explicit fields win over the preset; the preset names the battle when no name is given.
    const duel = await compat.trader.jwt('POST', '/battles', {
      preset: 'scalper_duel',
      duration_minutes: 30,
    });
    expect(duel.status).toBe(201);
    expect(duel.body).toMatchObject({
      name: 'Scalper Duel',
      duration_minutes: 30,
      starting_balance: '5000.00000000',
    });

    // Settings nested under `config`, the interval in seconds.
    const nested = await compat.trader.jwt('POST', '/battles', {
      name: 'Nested',
      config: {
        battle_mode: 'historical',
        starting_balance: '2500',
        ranking_metric: 'sharpe_ratio',
        backtest_config: { ...BACKTEST, candle_interval: 3600, pairs: ['BTCUSDT', 'ETHUSDT'] },
      },
    });
    expect(nested.status).toBe(201);
    expect(nested.body).toMatchObject({
      battle_mode: 'historical',
      starting_balance: '2500.00000000',
      ranking_metric: 'sharpe_ratio',
      backtest_config: { candle_interval: '1h', start_time: '2023-01-01T00:00:00.000Z' },
    });

    // A historical preset: its interval, and the end from the start and its days.
    const month = await compat.trader.jwt('POST', '/battles', {
      name: 'Month',
      preset: 'historical_month',
      backtest_config: { start_time: '2023-02-01T00:00:00Z', pairs: ['BTCUSDT'] },
    });
    expect(month.status).toBe(201);
    expect(month.body.backtest_config).toMatchObject({
      candle_interval: '1h',
      start_time: '2023-02-01T00:00:00.000Z',
      end_time: '2023-03-03T00:00:00.000Z',
    });

    // Update: a preset and nested settings too; the name stays.
    const updated = await compat.trader.jwt('PUT', `/battles/${quick.body.id}`, {
      preset: 'marathon',
      config: { starting_balance: '7000' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      id: quick.body.id,
      name: 'Sprint',
      duration_minutes: 7 * 24 * 60,
      starting_balance: '7000.00000000',
    });

    const detail = await compat.trader.jwt('GET', `/battles/${nested.body.id}`);
    expect(detail.body.id).toBe(nested.body.battle_id);
    const list = await compat.trader.jwt('GET', '/battles');
    expect(list.body.battles.every((b: any) => b.id === b.battle_id)).toBe(true);

    // The spec's form: as before.
    const spec = await compat.trader.jwt('POST', '/battles', {
      name: 'Spec',
      battle_mode: 'historical',
      backtest_config: { ...BACKTEST, candle_interval: '1h', pairs: null },
    });
    expect(spec.status).toBe(201);
    expect(spec.body).toMatchObject({
      battle_mode: 'historical',
      backtest_config: { candle_interval: '1h' },
    });
  });

  it('refuses an unknown preset, a body without a name, a config field it does not know', async () => {
    for (const body of [
      { name: 'X', preset: 'nope' },
      { battle_mode: 'live' },
      { name: 'X', config: { mode: 'live' } },
      { name: 'X', battle_mode: 'historical', backtest_config: { ...BACKTEST } },
    ]) {
      const r = await compat.trader.jwt('POST', '/battles', body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('/health as the original clients read it', () => {
  it('names the dependencies with db_connected and redis_connected; details stay the operator’s', async () => {
    const pub = await client(compat.base)('GET', '/health');
    expect(pub.status).toBe(200);
    expect(pub.body).toEqual({
      status: 'ok',
      version: expect.any(String),
      db_connected: true,
      redis_connected: true,
      dependencies: { database: 'ok', event_store: 'ok', market_feed: 'ok', projections: 'ok' },
    });
    const op = await (await fetch(`${compat.base}/health`, { headers: operatorHeaders })).json();
    expect(op).toMatchObject({
      db_connected: true,
      redis_connected: true,
      dependencies: { database: 'ok' },
      database: { status: 'ok' },
      projections: expect.any(Array),
    });
  });
});

describe('WebSocket subscriptions of the original SDK', () => {
  it('answers ticker:BTCUSDT on that channel name; the spec form on ticker', async () => {
    const ws = await connectWs(compat.base.replace('http', 'ws'));
    try {
      ws.send({ action: 'subscribe', channel: 'ticker:BTCUSDT' });
      const ack = await ws.next((m) => m.type === 'subscribed');
      expect(ack).toEqual({ channel: 'ticker:BTCUSDT', type: 'subscribed', data: { symbol: 'BTCUSDT' } });
      const tick = await ws.next((m) => m.type === 'ticker');
      expect(tick.channel).toBe('ticker:BTCUSDT');
      expect(tick.data.symbol).toBe('BTCUSDT');
      // A second tick (fanned out, serialized once) comes on the same name.
      const again = await ws.next((m) => m.type === 'ticker' && m.data.timestamp !== tick.data.timestamp);
      expect(again.channel).toBe('ticker:BTCUSDT');

      ws.send({ action: 'subscribe', channel: 'ticker', symbol: 'ETHUSDT' });
      expect(await ws.next((m) => m.type === 'subscribed')).toMatchObject({ channel: 'ticker' });
      const eth = await ws.next((m) => m.type === 'ticker' && m.data.symbol === 'ETHUSDT');
      expect(eth.channel).toBe('ticker');

      ws.send({ action: 'unsubscribe', channel: 'ticker:BTCUSDT' });
      expect(await ws.next((m) => m.type === 'unsubscribed')).toMatchObject({ channel: 'ticker:BTCUSDT' });
    } finally {
      ws.ws.close();
    }
  });

  it('answers battle:<id> on that channel name', async () => {
    const battle = await compat.trader.jwt('POST', '/battles', { name: 'WS', preset: 'quick_1h' });
    const id = battle.body.id as string;
    for (const a of compat.trader.agents) {
      expect(
        (await compat.trader.jwt('POST', `/battles/${id}/participants`, { agent_id: a.agentId })).status,
      ).toBe(201);
    }
    const ws = await connectWs(compat.base.replace('http', 'ws'), `?token=${compat.trader.token}`);
    try {
      ws.send({ action: 'subscribe', channel: `battle:${id}` });
      expect(await ws.next((m) => m.type === 'subscribed')).toEqual({
        channel: `battle:${id}`,
        type: 'subscribed',
        data: { battle_id: id },
      });
      expect((await compat.trader.jwt('POST', `/battles/${id}/start`)).status).toBe(200);
      const started = await ws.next((m) => m.type === 'battle:status');
      expect(started).toMatchObject({ channel: `battle:${id}`, data: { battle_id: id, status: 'active' } });
      expect((await compat.trader.jwt('POST', `/battles/${id}/stop`)).status).toBe(200);
      const completed = await ws.next((m) => m.type === 'battle:status' && m.data.status === 'completed');
      expect(completed.channel).toBe(`battle:${id}`);
    } finally {
      ws.ws.close();
    }
  });
});

describe('one rate budget per account whatever the credential (issue 17, item 3)', () => {
  it('counts the JWT and the API key of an account together; an agent keeps its own budget', async () => {
    const remaining = (a: { headers: Headers }) => Number(a.headers.get('x-ratelimit-remaining'));
    const byJwt = await compat.trader.jwt('GET', '/account/info');
    const byKey = await compat.trader.key('GET', '/account/info');
    const byJwtAgain = await compat.trader.jwt('GET', '/account/info');
    expect(byJwt.status).toBe(200);
    expect(remaining(byKey)).toBe(remaining(byJwt) - 1);
    expect(remaining(byJwtAgain)).toBe(remaining(byJwt) - 2);

    const agent = sdkAgent(1);
    const first = await agent('GET', '/account/info');
    const second = await agent('GET', '/account/info');
    expect(remaining(second)).toBe(remaining(first) - 1);
    // The agent's requests did not count against the account's budget.
    expect(remaining(await compat.trader.key('GET', '/account/info'))).toBe(remaining(byJwt) - 3);
  });
});
