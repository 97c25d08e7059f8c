import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { BattleEvent } from '../../domain/battle/events';
import type { OrderFilledData } from '../../domain/wallet/events';
import { battleChannels } from '../../src/http/ws/battle-channel';
import type { WsConnection } from '../../src/http/ws/registry';
import { bearer, createAgent, registerAccount, type TestAccount } from '../accounts/support';
import { rawCandles, useBacktestApp } from '../backtest/http-support';
import { BINANCE } from '../market/support';
import { call, fails, ok } from '../support/api-calls';
import { until } from '../support/until';

/**
 * Historical battles over HTTP through the real stack on the real hourly BTCUSDT and ETHUSDT files (the shared data
 * set), PGlite by default or PostgreSQL with DATABASE_URL: one shared virtual clock, one sandbox wallet per
 * participant, no look-ahead, pending orders along the intra-candle path, deterministic rankings.
 */
const FILES = ['klines/1h/BTCUSDT-1h.csv', 'klines/1h/ETHUSDT-1h.csv'];
const missing = FILES.filter((f) => !fs.existsSync(path.join(BINANCE, f)));
if (missing.length)
  console.warn(`historical battle tests skipped: market data missing (${missing.join(', ')})`);

const H_MS = 3_600_000;
const START = '2022-01-01T00:00:00Z';
const END = '2022-01-03T00:00:00Z';
const T0 = Date.parse(START);

describe.skipIf(missing.length > 0)('a historical battle', () => {
  const t = useBacktestApp();
  let owner: TestAccount;
  let H: Record<string, string>;
  let a1: { agentId: string };
  let a2: { agentId: string };
  let id: string;
  const BTC = missing.length ? new Map() : rawCandles('BTCUSDT');
  const ETH = missing.length ? new Map() : rawCandles('ETHUSDT');

  beforeAll(async () => {
    owner = await registerAccount(t.app, {}, { plain: true });
    H = bearer(owner);
    a1 = await createAgent(t.app, owner, {
      display_name: 'Alpha',
      risk_profile: { max_position_size_pct: 100 },
    });
    a2 = await createAgent(t.app, owner, {
      display_name: 'Beta',
      risk_profile: { max_position_size_pct: 100 },
    });
  }, 90_000);

  const body = (bc: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
    name: 'History',
    battle_mode: 'historical',
    backtest_config: {
      start_time: START,
      end_time: END,
      candle_interval: '1h',
      pairs: ['btcusdt', 'ETHUSDT'],
      ...bc,
    },
    ...extra,
  });

  const create = async () => {
    const b = await ok(t.app, H, 'POST', '/battles', body(), 201);
    for (const a of [a1, a2])
      await ok(t.app, H, 'POST', `/battles/${b.battle_id}/participants`, { agent_id: a.agentId }, 201);
    return b;
  };

  // The body of `POST /battles/{id}/trade/order`: a market buy by `agentId`, `o` overriding.
  const orderBody = (agentId: string, o: Record<string, unknown>) => ({
    agent_id: agentId,
    side: 'buy',
    type: 'market',
    ...o,
  });
  const order = (battleId: string, agentId: string, o: Record<string, unknown>) =>
    call(t.app, H, 'POST', `/battles/${battleId}/trade/order`, orderBody(agentId, o));
  // The same order, refused with `status` and `code`.
  const orderFails = (
    battleId: string,
    status: number,
    code: string,
    agentId: string,
    o: Record<string, unknown>,
  ) => fails(t.app, H, 'POST', `/battles/${battleId}/trade/order`, status, code, orderBody(agentId, o));

  it('validates backtest_config: interval, start < end, inside the stored data, known pairs', async () => {
    await fails(t.app, H, 'POST', '/battles', 422, 'VALIDATION_ERROR', body({ candle_interval: '15m' }));
    await fails(t.app, H, 'POST', '/battles', 422, 'VALIDATION_ERROR', body({ end_time: START }));
    await fails(
      t.app,
      H,
      'POST',
      '/battles',
      422,
      'VALIDATION_ERROR',
      body({ start_time: '2019-01-01T00:00:00Z', end_time: '2019-02-01T00:00:00Z' }),
    );
    await fails(t.app, H, 'POST', '/battles', 400, 'INVALID_SYMBOL', body({ pairs: ['NOPEUSDT'] }));
    await fails(t.app, H, 'POST', '/battles', 422, 'VALIDATION_ERROR', body({}, { duration_minutes: 60 }));
    await fails(t.app, H, 'POST', '/battles', 422, 'VALIDATION_ERROR', {
      name: 'x',
      battle_mode: 'historical',
    });
    // PUT changes only the fields sent; switching to live drops backtest_config, back needs a new one.
    const b = await ok(t.app, H, 'POST', '/battles', body(), 201);
    const renamed = await ok(t.app, H, 'PUT', `/battles/${b.battle_id}`, { name: 'Renamed' });
    expect(renamed.backtest_config).toEqual(b.backtest_config);
    const live = await ok(t.app, H, 'PUT', `/battles/${b.battle_id}`, {
      battle_mode: 'live',
      duration_minutes: 60,
    });
    expect(live).toMatchObject({
      battle_mode: 'live',
      backtest_config: null,
      duration_minutes: 60,
      name: 'Renamed',
    });
    await fails(t.app, H, 'PUT', `/battles/${b.battle_id}`, 422, 'VALIDATION_ERROR', {
      battle_mode: 'historical',
    });
    const back = await ok(t.app, H, 'PUT', `/battles/${b.battle_id}`, body());
    expect(back).toMatchObject({ battle_mode: 'historical', duration_minutes: null, name: 'History' });
  });

  it('creates a draft with the resolved configuration; nothing is stepped or priced before the start', async () => {
    const b = await create();
    id = b.battle_id;
    expect(b.backtest_config).toEqual({
      start_time: '2022-01-01T00:00:00.000Z',
      end_time: '2022-01-03T00:00:00.000Z',
      candle_interval: '1h',
      pairs: ['BTCUSDT', 'ETHUSDT'],
      resolved_pairs: ['BTCUSDT', 'ETHUSDT'],
      total_steps: 48,
    });
    await fails(t.app, H, 'POST', `/battles/${id}/step`, 409, 'BATTLE_INVALID_STATE');
    await fails(t.app, H, 'GET', `/battles/${id}/market/prices`, 409, 'BATTLE_INVALID_STATE');
    await orderFails(id, 409, 'BATTLE_INVALID_STATE', a1.agentId, { symbol: 'BTCUSDT', quantity: '0.01' });
  });

  it('starts the shared virtual clock at start_time; prices are the last closed candles (no look-ahead)', async () => {
    const s = await ok(t.app, H, 'POST', `/battles/${id}/start`);
    expect(s).toMatchObject({ status: 'active', step: 0, virtual_time: '2022-01-01T00:00:00.000Z' });
    const p = await ok(t.app, H, 'GET', `/battles/${id}/market/prices`);
    expect(p.prices.BTCUSDT).toBe(Number(BTC.get(T0 - H_MS)!.closeText).toFixed(8));
    expect(p.prices.ETHUSDT).toBe(Number(ETH.get(T0 - H_MS)!.closeText).toFixed(8));
  });

  let level: string;
  let hitIndex: number;

  it('places each participant’s orders in its own sandbox: a market fill at the last close, a pending limit', async () => {
    const filled = await order(id, a1.agentId, { symbol: 'BTCUSDT', quantity: '0.1' });
    expect(filled.status, filled.raw).toBe(201);
    expect(filled.body.status).toBe('filled');
    expect(Number(filled.body.reference_price)).toBe(BTC.get(T0 - H_MS)!.close);
    // Beta bids for ETH at the lowest low of the first 10 hours: the first candle reaching it fills it.
    let low = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 10; i++) low = Math.min(low, ETH.get(T0 + i * H_MS)!.low);
    hitIndex = [...Array(10).keys()].find((i) => ETH.get(T0 + i * H_MS)!.low <= low)!;
    level = low.toFixed(2);
    const pending = await order(id, a2.agentId, {
      symbol: 'ETHUSDT',
      type: 'limit',
      quantity: '1',
      price: level,
    });
    expect(pending.status, pending.raw).toBe(201);
    expect(pending.body.status).toBe('pending');
    const rejected = await order(id, a2.agentId, { symbol: 'BTCUSDT', quantity: '100' });
    expect(rejected.status).toBe(400);
    // A real pair outside the battle's pairs is named as such (as in a backtest), not as an unknown symbol.
    const outside = await orderFails(id, 404, 'INVALID_SYMBOL', a2.agentId, {
      symbol: 'solusdt',
      quantity: '1',
    });
    expect(outside.message).toMatch(/SOLUSDT is not a pair of this battle/);
    expect(outside.details).toMatchObject({ symbol: 'SOLUSDT', reason: 'not_in_session' });
    const unknown = await orderFails(id, 404, 'INVALID_SYMBOL', a2.agentId, {
      symbol: 'NOPEUSDT',
      quantity: '1',
    });
    expect(unknown.message).toMatch(/unknown symbol NOPEUSDT/);
    expect(unknown.details?.['reason']).toBeUndefined();
    await orderFails(id, 422, 'VALIDATION_ERROR', '00000000-0000-4000-8000-000000000009', {
      symbol: 'BTCUSDT',
      quantity: '0.01',
    });
  });

  it('steps one candle and a batch; fills the limit on the candle whose path reaches it', async () => {
    // The single step takes no body: `steps` there is refused (naming it), not read as one step.
    const misplaced = await fails(t.app, H, 'POST', `/battles/${id}/step`, 422, 'VALIDATION_ERROR', {
      steps: 5,
    });
    expect(misplaced.details?.['issues']).toEqual([
      expect.objectContaining({ field: 'steps', location: 'body' }),
    ]);
    const one = await ok(t.app, H, 'POST', `/battles/${id}/step`);
    expect(one).toMatchObject({
      step: 1,
      total_steps: 48,
      virtual_time: '2022-01-01T01:00:00.000Z',
      is_complete: false,
      progress_pct: '2.08',
    });
    expect(one.prices.BTCUSDT).toBe(Number(BTC.get(T0)!.closeText).toFixed(8));
    expect(one.participants.map((p: { agent_id: string }) => p.agent_id)).toEqual([a1.agentId, a2.agentId]);
    expect(one.participants[0].trade_count).toBe(1);
    const batch = await ok(t.app, H, 'POST', `/battles/${id}/step/batch`, { steps: 11 });
    expect(batch).toMatchObject({
      step: 12,
      virtual_time: '2022-01-01T12:00:00.000Z',
      progress_pct: '25.00',
    });
    await fails(t.app, H, 'POST', `/battles/${id}/step/batch`, 422, 'VALIDATION_ERROR', { steps: 100_001 });
    const stream = await t.app.services.eventStore.readStream(`battle-${id}`);
    const fills = stream
      .map((e) => ({ type: e.type, data: e.data }) as BattleEvent)
      .flatMap((e) =>
        e.type === 'BattleSandboxEventRecorded' && e.data.event.type === 'OrderFilled'
          ? [{ agent: e.data.agent_id, fill: e.data.event.data as OrderFilledData }]
          : [],
      );
    const limitFill = fills.find((f) => f.agent === a2.agentId)!;
    expect(limitFill.fill.executed_price).toBe(Number(level).toFixed(8));
    expect(limitFill.fill.reference_time).toBe(new Date(T0 + hitIndex * H_MS).toISOString());
    expect(limitFill.fill.filled_at).toBe(new Date(T0 + (hitIndex + 1) * H_MS).toISOString());
  });

  it('pauses one agent: its orders are refused, the clock and the others go on', async () => {
    await ok(t.app, H, 'POST', `/battles/${id}/pause/${a1.agentId}`);
    await orderFails(id, 409, 'BATTLE_INVALID_STATE', a1.agentId, {
      symbol: 'BTCUSDT',
      side: 'sell',
      quantity: '0.1',
    });
    const sell = await order(id, a2.agentId, { symbol: 'ETHUSDT', side: 'sell', quantity: '1' });
    expect(sell.status, sell.raw).toBe(201);
    expect((await ok(t.app, H, 'POST', `/battles/${id}/step`)).status).toBe('paused');
    await ok(t.app, H, 'POST', `/battles/${id}/resume/${a1.agentId}`);
    const live = await ok(t.app, H, 'GET', `/battles/${id}/live`);
    expect(live.elapsed_seconds).toBe(13 * 3600);
    expect(live.rankings).toHaveLength(2);
  });

  let final: unknown[];

  it('completes on the last step (batch clamped) with final rankings, results and per-step snapshots', async () => {
    const last = await ok(t.app, H, 'POST', `/battles/${id}/step/batch`, { steps: 1000 });
    expect(last).toMatchObject({
      step: 48,
      is_complete: true,
      status: 'completed',
      progress_pct: '100.00',
      virtual_time: '2022-01-03T00:00:00.000Z',
    });
    await fails(t.app, H, 'POST', `/battles/${id}/step`, 409, 'BATTLE_INVALID_STATE');
    const detail = await ok(t.app, H, 'GET', `/battles/${id}`);
    expect(detail.completion_reason).toBe('last_step');
    final = detail.final_rankings;
    expect(detail.final_rankings.map((r: { rank: number }) => r.rank)).toEqual([1, 2]);
    const results = await ok(t.app, H, 'GET', `/battles/${id}/results`);
    expect(results.rankings).toEqual(final);
    expect(results.elapsed_seconds).toBe(48 * 3600);
    // ROI from the equity valued at the last closes: Alpha holds 0.1 BTC bought at the first close.
    const alpha = results.rankings.find((r: { agent_id: string }) => r.agent_id === a1.agentId);
    const lastClose = BTC.get(T0 + 47 * H_MS)!.close;
    const cash = Number(alpha.equity) - 0.1 * lastClose;
    expect(cash).toBeGreaterThan(10_000 - 0.1 * BTC.get(T0 - H_MS)!.close * 1.002);
    expect(cash).toBeLessThan(10_000 - 0.1 * BTC.get(T0 - H_MS)!.close);
    const replay = await ok(t.app, H, 'GET', `/battles/${id}/replay`);
    expect(replay.snapshots).toHaveLength(49);
    expect(replay.snapshots[0]).toMatchObject({ timestamp: '2022-01-01T00:00:00.000Z' });
    expect(replay.snapshots[48].timestamp).toBe('2022-01-03T00:00:00.000Z');
    expect(
      replay.snapshots[48].participants.find((p: { agent_id: string }) => p.agent_id === a1.agentId).equity,
    ).toBe(alpha.equity);
  });

  it('a subscribe to the finished battle is answered without its candles: none reloaded, no market source needed', async () => {
    const services = t.app.services;
    const channel = battleChannels[0]!.create(services)!;
    const sent: { type: string; data: Record<string, unknown> }[] = [];
    const connection = {
      id: 'ws-test',
      request: {},
      principal: { accountId: owner.accountId, via: 'jwt' },
      send: (_channel: string, type: string, data: unknown) => {
        sent.push({ type, data: data as Record<string, unknown> });
        return true;
      },
      sendRaw: () => true,
    } as unknown as WsConnection;
    // The battle not cached (its candles not loaded) and no market source on this server: the candles cannot be
    // loaded (SERVICE_UNAVAILABLE), and a follower needs none.
    services.battle!.commands.clear();
    const market = services.market;
    delete (services as { market?: unknown }).market;
    let ended = false;
    try {
      const sub = channel.subscription({ action: 'subscribe', channel: 'battle', battle_id: id }, connection);
      const stop = sub.start(() => {
        ended = true;
      });
      await until(() => ended, { what: 'the subscription ended' });
      stop();
    } finally {
      if (market) services.market = market;
      channel.close?.();
    }
    expect(sent.map((m) => m.type)).toEqual(['battle:status', 'unsubscribed']);
    expect(sent[0]!.data).toMatchObject({ battle_id: id, status: 'completed', previous_status: 'active' });
    expect(sent[1]!.data).toEqual({ battle_id: id, reason: 'battle_completed' });
  });

  it('is deterministic: the replayed draft given the same commands ranks the same', async () => {
    const copy = await ok(t.app, H, 'POST', `/battles/${id}/replay`, {}, 201);
    const c = copy.battle_id;
    expect(copy.backtest_config.total_steps).toBe(48);
    await ok(t.app, H, 'POST', `/battles/${c}/start`);
    expect((await order(c, a1.agentId, { symbol: 'BTCUSDT', quantity: '0.1' })).status).toBe(201);
    expect(
      (await order(c, a2.agentId, { symbol: 'ETHUSDT', type: 'limit', quantity: '1', price: level })).status,
    ).toBe(201);
    await ok(t.app, H, 'POST', `/battles/${c}/step`);
    await ok(t.app, H, 'POST', `/battles/${c}/step/batch`, { steps: 11 });
    await ok(t.app, H, 'POST', `/battles/${c}/pause/${a1.agentId}`);
    expect((await order(c, a2.agentId, { symbol: 'ETHUSDT', side: 'sell', quantity: '1' })).status).toBe(201);
    await ok(t.app, H, 'POST', `/battles/${c}/step`);
    await ok(t.app, H, 'POST', `/battles/${c}/resume/${a1.agentId}`);
    await ok(t.app, H, 'POST', `/battles/${c}/step/batch`, { steps: 1000 });
    expect((await ok(t.app, H, 'GET', `/battles/${c}`)).final_rankings).toEqual(final);
  });

  it('a restarted process continues a running battle from its stream', async () => {
    const b = await create();
    await ok(t.app, H, 'POST', `/battles/${b.battle_id}/start`);
    expect((await order(b.battle_id, a1.agentId, { symbol: 'BTCUSDT', quantity: '0.1' })).status).toBe(201);
    await ok(t.app, H, 'POST', `/battles/${b.battle_id}/step/batch`, { steps: 5 });
    t.app.services.battle!.commands.clear();
    const next = await ok(t.app, H, 'POST', `/battles/${b.battle_id}/step`);
    expect(next).toMatchObject({ step: 6, virtual_time: '2022-01-01T06:00:00.000Z' });
    expect(next.participants[0].trade_count).toBe(1);
  });
});
