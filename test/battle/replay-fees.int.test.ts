import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../domain/trading/decimal';
import { bearer, createAgent, registerAccount, type TestApp } from '../accounts/support';
import { dataDirectory, ok, startBacktestApp } from '../backtest/http-support';
import { BINANCE } from '../market/support';
import { createTestDatabase, type TestDatabase } from '../support/databases';

/**
 * `POST /battles/{id}/replay` reproduces its original under the fee rates and fill settings the original recorded,
 * not the venue's configuration or the agents' wallets at the time of the replay (docs/battles.md): a historical
 * battle runs on the real hourly BTCUSDT data with `FEE_RATE` 0.001 and `MAKER_FEE_RATE` 0.0005; the venue restarts
 * on the same database with 0.002 and 0.0015 and the agent's wallet switches to `instant` fills; the replay records
 * and fills with the original's rates and model, and the same commands give the same fill and final rankings. A new
 * battle after the restart takes the new rates (so the configuration did change).
 */
const FILES = ['klines/1h/BTCUSDT-1h.csv'];
const missing = FILES.filter((f) => !fs.existsSync(path.join(BINANCE, f)));
if (missing.length)
  console.warn(`battle replay fee test skipped: market data missing (${missing.join(', ')})`);

let database: TestDatabase | undefined;
/** What the test started, undone last first after it (apps, data directories, the database). */
const cleanups: (() => unknown)[] = [];

beforeAll(async () => {
  if (missing.length) return;
  database = await createTestDatabase();
  cleanups.push(() => database?.close());
}, 60_000);

afterAll(async () => {
  for (const undo of cleanups.reverse()) await undo();
});

const body = {
  name: 'Fees',
  battle_mode: 'historical',
  backtest_config: {
    start_time: '2022-02-01T00:00:00Z',
    end_time: '2022-02-02T00:00:00Z',
    candle_interval: '1h',
    pairs: ['BTCUSDT'],
  },
};

describe.skipIf(missing.length > 0)('a battle replay', () => {
  it('keeps the fee rates its original recorded when the configured rates have changed', async () => {
    const data = dataDirectory();
    cleanups.push(data.remove);
    const first = await startBacktestApp(
      data.dir,
      { database: database! },
      { FEE_RATE: '0.001', MAKER_FEE_RATE: '0.0005' },
    );
    const serverDir = first.dataDir;
    cleanups.push(
      () => fs.rmSync(serverDir, { recursive: true, force: true }),
      () => first.stop(),
    );
    const owner = await registerAccount(first.app, {}, { plain: true });
    const H = bearer(owner);
    const agent = await createAgent(first.app, owner, { risk_profile: { max_position_size_pct: 100 } });
    // A battle needs two participants; the second holds its cash.
    const idle = await createAgent(first.app, owner, { display_name: 'Idle' });

    /** Runs the same commands on a draft: start, one market buy, then to the end; the buy's fill and the battle. */
    const run = async (app: TestApp['app'], id: string) => {
      await ok(app, H, 'POST', `/battles/${id}/start`);
      await ok(app, H, 'POST', `/battles/${id}/step/batch`, { steps: 3 });
      const buy = await ok(
        app,
        H,
        'POST',
        `/battles/${id}/trade/order`,
        { agent_id: agent.agentId, symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.1' },
        201,
      );
      await ok(app, H, 'POST', `/battles/${id}/step/batch`, { steps: 1000 });
      return { buy, battle: await ok(app, H, 'GET', `/battles/${id}`) };
    };

    const original = await ok(first.app, H, 'POST', '/battles', body, 201);
    for (const a of [agent, idle]) {
      await ok(
        first.app,
        H,
        'POST',
        `/battles/${original.battle_id}/participants`,
        { agent_id: a.agentId },
        201,
      );
    }
    expect(original).toMatchObject({ fee_rate: '0.00100000', maker_fee_rate: '0.00050000' });
    const before = await run(first.app, original.battle_id);
    expect(before.battle.status).toBe('completed');
    const notional = dec(before.buy.executed_quantity).times(before.buy.executed_price);
    expect(dec(before.buy.fee).eq(notional.times('0.001'))).toBe(true);
    await first.stop();

    const second = await startBacktestApp(
      data.dir,
      { database: database!, dataDir: serverDir },
      { FEE_RATE: '0.002', MAKER_FEE_RATE: '0.0015' },
    );
    cleanups.push(() => second.stop());
    // The agent's wallet switches to `instant` fills (not the `realistic` its sandbox started the original with).
    const agentKey = { 'x-api-key': agent.apiKey };
    await ok(second.app, agentKey, 'PUT', '/account/fill-model', { fill_model: 'instant' });
    const fresh = await ok(second.app, H, 'POST', '/battles', body, 201);
    expect(fresh).toMatchObject({ fee_rate: '0.00200000', maker_fee_rate: '0.00150000' });

    const replay = await ok(second.app, H, 'POST', `/battles/${original.battle_id}/replay`, {}, 201);
    expect(replay).toMatchObject({
      replay_of: original.battle_id,
      fee_rate: '0.00100000',
      maker_fee_rate: '0.00050000',
    });
    // override_config changes the configuration it names, never the fee rates.
    const renamed = await ok(
      second.app,
      H,
      'POST',
      `/battles/${original.battle_id}/replay`,
      { override_config: { name: 'Fees again' } },
      201,
    );
    expect(renamed).toMatchObject({
      name: 'Fees again',
      fee_rate: '0.00100000',
      maker_fee_rate: '0.00050000',
    });

    const after = await run(second.app, replay.battle_id);
    const started = (b: { participants: { agent_id: string }[] }) =>
      b.participants.find((p) => p.agent_id === agent.agentId);
    expect(started(before.battle)).toMatchObject({ fill_model: 'realistic', participation_pct: 10 });
    expect(started(after.battle)).toMatchObject({ fill_model: 'realistic', participation_pct: 10 });
    expect(after.buy).toMatchObject({
      executed_price: before.buy.executed_price,
      fee: before.buy.fee,
      total_cost: before.buy.total_cost,
    });
    expect(after.battle.final_rankings).toEqual(before.battle.final_rankings);
  }, 180_000);
});
