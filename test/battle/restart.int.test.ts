import { afterAll, describe, expect, it } from 'vitest';
import { bearer, createAgent, keyHeader, registerAccount, startApp, type TestApp } from '../accounts/support';
import { call, ok } from '../support/api-calls';
import { priceTicker } from '../support/price-ticks';

/**
 * A live battle survives a restart (its state is its stream; the paused agents come back from the read model):
 * the real stack stopped and started again on the same database and data directory.
 */
const env = { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT' };
let first: TestApp | undefined;
let second: TestApp | undefined;

afterAll(async () => {
  await first?.stop();
  await second?.close();
});

describe('a live battle across a restart', () => {
  it('keeps its status, its paused agent stays unable to trade, and it completes afterwards', async () => {
    first = await startApp({ env });
    priceTicker(() => first!.app.services.market!)('BTCUSDT', '40000', '10000');
    const owner = await registerAccount(first.app, {}, { plain: true });
    const H = bearer(owner);
    const a1 = await createAgent(first.app, owner, { display_name: 'Alpha' });
    const a2 = await createAgent(first.app, owner, { display_name: 'Beta' });
    const b = await ok(first.app, H, 'POST', '/battles', { name: 'Durable', starting_balance: '3000' }, 201);
    const id = b.battle_id as string;
    for (const a of [a1, a2])
      await ok(first.app, H, 'POST', `/battles/${id}/participants`, { agent_id: a.agentId }, 201);
    await ok(first.app, H, 'POST', `/battles/${id}/start`);
    await ok(first.app, H, 'POST', `/battles/${id}/pause/${a1.agentId}`);
    await first.stop();

    second = await startApp({ env, database: first.database, dataDir: first.dataDir });
    const tick = priceTicker(() => second!.app.services.market!);
    tick('BTCUSDT', '40000', '10000');
    const order = (key: string) =>
      call(second!.app, keyHeader(key), 'POST', '/trade/order', {
        symbol: 'BTCUSDT',
        side: 'buy',
        type: 'market',
        quantity: '0.01',
      });
    const detail = await ok(second.app, H, 'GET', `/battles/${id}`);
    expect(detail).toMatchObject({ status: 'paused', starting_balance: '3000.00000000' });
    const refused = await order(a1.apiKey);
    expect([refused.status, refused.body.error.details.reason]).toEqual([403, 'agent_paused_in_battle']);
    expect((await order(a2.apiKey)).status).toBe(201);
    await ok(second.app, H, 'POST', `/battles/${id}/resume/${a1.agentId}`);
    expect((await order(a1.apiKey)).status).toBe(201);
    const stopped = await ok(second.app, H, 'POST', `/battles/${id}/stop`);
    expect(stopped.status).toBe('completed');
    expect(stopped.final_rankings.map((r: { trade_count: number }) => r.trade_count)).toEqual([1, 1]);
  }, 90_000);
});
