import fs from 'node:fs';
import path from 'node:path';
import BigNumber from 'bignumber.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { bearer, createAgent, registerAccount, type TestAccount } from '../accounts/support';
import { useBacktestApp } from '../backtest/http-support';
import { BINANCE } from '../market/support';
import { fails, ok } from '../support/api-calls';

/**
 * Regressions found by the battles audit (historical mode, real hourly BTCUSDT and ETHUSDT files of the shared data
 * set): snapshot participants in join order, a range outside the data names where the data is; (second audit) an
 * order placed at the virtual time after the last step counted in `trade_count` but not in the equity, ROI and PnL of
 * `GET /live` and of the final rankings of a stop (the equity of the last step, without its fee and slippage);
 * `backtest_config.pairs` kept every repetition of a pair (1,000 `ETHUSDT` were stored and answered on every read)
 * where a backtest's `pairs` name each pair once; a draft's `GET /market/prices` refusal listed the statuses that
 * answer without `cancelled`, which answers (a cancelled battle was started: it has a virtual time).
 */
const FILES = ['klines/1h/BTCUSDT-1h.csv', 'klines/1h/ETHUSDT-1h.csv'];
const missing = FILES.filter((f) => !fs.existsSync(path.join(BINANCE, f)));
if (missing.length)
  console.warn(`historical battle audit tests skipped: market data missing (${missing.join(', ')})`);

describe.skipIf(missing.length > 0)('historical battles (audit regressions)', () => {
  const t = useBacktestApp();
  let owner: TestAccount;
  let H: Record<string, string>;
  let agents: { agentId: string; name: string }[];

  beforeAll(async () => {
    owner = await registerAccount(t.app, {}, { plain: true });
    H = bearer(owner);
    agents = [];
    for (const name of ['One', 'Two', 'Three'])
      agents.push({ ...(await createAgent(t.app, owner, { display_name: name })), name });
  }, 90_000);

  /** A draft historical battle over six hours of BTCUSDT (2022-01-01 00:00–06:00, 1h). */
  const sixHourDraft = async (name: string) =>
    (await ok(
      t.app,
      H,
      'POST',
      '/battles',
      {
        name,
        battle_mode: 'historical',
        backtest_config: {
          start_time: '2022-01-01T00:00:00Z',
          end_time: '2022-01-01T06:00:00Z',
          candle_interval: '1h',
          pairs: ['BTCUSDT'],
        },
      },
      201,
    )) as { battle_id: string };

  /** {@link sixHourDraft} with `joined` in that order, started. */
  const startedSixHours = async (name: string, joined: readonly string[]) => {
    const b = await sixHourDraft(name);
    for (const agentId of joined)
      await ok(t.app, H, 'POST', `/battles/${b.battle_id}/participants`, { agent_id: agentId }, 201);
    await ok(t.app, H, 'POST', `/battles/${b.battle_id}/start`);
    return b;
  };

  it('GET /replay lists every snapshot’s participants in the order they joined', async () => {
    // Join in descending id order, so neither the ids' order nor the database's key order is the join order.
    const joined = [...agents].sort((a, b) => (a.agentId < b.agentId ? 1 : -1)).map((a) => a.agentId);
    const b = await startedSixHours('Order', joined);
    await ok(t.app, H, 'POST', `/battles/${b.battle_id}/step`);
    const stepped = await ok(t.app, H, 'POST', `/battles/${b.battle_id}/step/batch`, { steps: 2 });
    // Read right after the step (steps do not wait for the read models): every step is there.
    const replay = await ok(t.app, H, 'GET', `/battles/${b.battle_id}/replay`);
    expect(replay.snapshots.map((s: { timestamp: string }) => s.timestamp)).toEqual([
      '2022-01-01T00:00:00.000Z',
      '2022-01-01T01:00:00.000Z',
      '2022-01-01T02:00:00.000Z',
      '2022-01-01T03:00:00.000Z',
    ]);
    for (const s of replay.snapshots)
      expect(s.participants.map((p: { agent_id: string }) => p.agent_id)).toEqual(joined);
    expect(replay.snapshots[3].participants.map((p: { equity: string }) => p.equity)).toEqual(
      stepped.participants.map((p: { equity: string }) => p.equity),
    );
    const names = new Map(agents.map((a) => [a.agentId, a.name]));
    expect(replay.snapshots[0].participants).toEqual(
      joined.map((agentId) => ({
        agent_id: agentId,
        agent_name: names.get(agentId),
        equity: '10000.00000000',
      })),
    );
  });

  it('a range outside the stored data answers 422 with details.earliest and details.latest', async () => {
    const e = await fails(t.app, H, 'POST', '/battles', 422, 'VALIDATION_ERROR', {
      name: 'Future',
      battle_mode: 'historical',
      backtest_config: {
        start_time: '2031-01-01T00:00:00Z',
        end_time: '2031-01-02T00:00:00Z',
        candle_interval: '1h',
        pairs: null,
      },
    });
    expect(typeof e.details?.earliest).toBe('string');
    expect(typeof e.details?.latest).toBe('string');
    expect(Date.parse(e.details!.earliest as string)).toBeLessThan(Date.parse(e.details!.latest as string));
  });

  it('ranks on the equity now: an order placed after the last step counts in live and in the final rankings', async () => {
    const [one, two] = agents;
    const b = await startedSixHours('Equity now', [one!.agentId, two!.agentId]);
    await ok(t.app, H, 'POST', `/battles/${b.battle_id}/step`);
    const order = await ok(
      t.app,
      H,
      'POST',
      `/battles/${b.battle_id}/trade/order`,
      { agent_id: one!.agentId, symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.01' },
      201,
    );
    // Bought at the last close: the equity now is the cash left plus 0.01 BTC at that close.
    const close = order.reference_price as string;
    const equityNow = new BigNumber(10_000)
      .minus(order.total_cost)
      .plus(new BigNumber(close).times('0.01'))
      .toFixed(8);
    expect(Number(equityNow)).toBeLessThan(10_000);
    const entry = (rankings: { agent_id: string }[]) => rankings.find((r) => r.agent_id === one!.agentId);
    const live = await ok(t.app, H, 'GET', `/battles/${b.battle_id}/live`);
    expect(entry(live.rankings)).toMatchObject({
      equity: equityNow,
      total_pnl: new BigNumber(equityNow).minus(10_000).toFixed(8),
      trade_count: 1,
    });
    expect(live.rankings[0].agent_id).toBe(two!.agentId);
    const stopped = await ok(t.app, H, 'POST', `/battles/${b.battle_id}/stop`);
    expect(entry(stopped.final_rankings)).toMatchObject({ equity: equityNow, trade_count: 1 });
    const results = await ok(t.app, H, 'GET', `/battles/${b.battle_id}/results`);
    expect(entry(results.rankings)).toMatchObject({ equity: equityNow });
  });

  it('backtest_config.pairs names each pair once, as requested otherwise (order, normalized case)', async () => {
    const b = await ok(
      t.app,
      H,
      'POST',
      '/battles',
      {
        name: 'Pairs',
        battle_mode: 'historical',
        backtest_config: {
          start_time: '2022-01-01T00:00:00Z',
          end_time: '2022-01-01T06:00:00Z',
          candle_interval: '1h',
          pairs: ['ethusdt', ...Array(500).fill('ETHUSDT'), ' BTCUSDT', 'btcusdt'],
        },
      },
      201,
    );
    expect(b.backtest_config).toMatchObject({
      pairs: ['ETHUSDT', 'BTCUSDT'],
      resolved_pairs: ['BTCUSDT', 'ETHUSDT'],
    });
    const read = await ok(t.app, H, 'GET', `/battles/${b.battle_id}`);
    expect(read.backtest_config.pairs).toEqual(['ETHUSDT', 'BTCUSDT']);
  });

  it('market prices answer every started battle, cancelled too, and a draft’s refusal lists them all', async () => {
    const [one, two] = agents;
    const b = await startedSixHours('Cancelled', [one!.agentId, two!.agentId]);
    await ok(t.app, H, 'POST', `/battles/${b.battle_id}/step`);
    expect(await ok(t.app, H, 'DELETE', `/battles/${b.battle_id}`)).toMatchObject({ status: 'cancelled' });
    const prices = await ok(t.app, H, 'GET', `/battles/${b.battle_id}/market/prices`);
    expect(prices).toMatchObject({ virtual_time: '2022-01-01T01:00:00.000Z' });
    const draft = await sixHourDraft('Draft');
    const e = await fails(
      t.app,
      H,
      'GET',
      `/battles/${draft.battle_id}/market/prices`,
      409,
      'BATTLE_INVALID_STATE',
    );
    expect(e.details).toMatchObject({
      status: 'draft',
      allowed: ['active', 'paused', 'completed', 'cancelled'],
    });
  });
});
