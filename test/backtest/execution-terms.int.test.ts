import { describe, expect, it } from 'vitest';
import { bearer, createAgent, keyHeader, registerAccount } from '../accounts/support';
import { ok, sandboxOrder, useBacktestApp, useTrader } from './http-support';

/**
 * How sandboxes fill, fixed when a backtest or battle begins (issue 21): the maker and taker fee settings
 * (docs/trading-rules.md, "Fees by liquidity": `MAKER_FEE_RATE` and `TAKER_FEE_RATE` over `FEE_RATE`, shown by the
 * account) and the agent wallet's participation share, recorded by a backtest and a historical battle and shown by
 * them (their replay decides with what they recorded: test/backtest/backtest-decider.unit.test.ts).
 */
const t = useBacktestApp(undefined, {
  FEE_RATE: '0.003',
  TAKER_FEE_RATE: '0.0008',
  MAKER_FEE_RATE: '0.0002',
});
const alice = useTrader(t);

const window = {
  start_time: '2022-01-01T00:00:00Z',
  end_time: '2022-01-01T05:00:00Z',
  candle_interval: '1h',
};

describe('maker and taker fee rates', () => {
  it('the account shows both; TAKER_FEE_RATE wins over FEE_RATE', async () => {
    const info = await ok(t.app, keyHeader(alice.agentKey), 'GET', '/account/info');
    expect(info).toMatchObject({ fee_rate: '0.00080000', maker_fee_rate: '0.00020000' });
  });

  it('a backtest records them at creation and shows them (create, status, results) with its fill model', async () => {
    const agent = keyHeader(alice.agentKey);
    const terms = { fill_model: 'realistic', fee_rate: '0.00080000', maker_fee_rate: '0.00020000' };
    const created = await ok(t.app, agent, 'POST', '/backtest/create', {
      ...window,
      starting_balance: 10000,
      agent_id: alice.agentId,
      pairs: ['BTCUSDT'],
    });
    expect(created).toMatchObject(terms);
    const id = created.session_id as string;
    expect(await ok(t.app, agent, 'GET', `/backtest/${id}/status`)).toMatchObject(terms);
    await ok(t.app, agent, 'POST', `/backtest/${id}/start`);
    const placed = await sandboxOrder(t.app, agent, id, {
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'market',
      quantity: '0.01',
    });
    await ok(t.app, agent, 'POST', `/backtest/${id}/step/batch`, { steps: 5 });
    const results = await ok(t.app, agent, 'GET', `/backtest/${id}/results`);
    expect(results.config).toMatchObject(terms);
    // A market order takes liquidity: the taker rate of the settings, not FEE_RATE.
    expect(Number(placed.fee)).toBeCloseTo(0.01 * Number(placed.executed_price) * 0.0008, 7);
  });

  it('a historical battle records them at creation and shows them', async () => {
    const owner = await registerAccount(t.app, {}, { plain: true });
    const agent = await createAgent(t.app, owner, {});
    const battle = await ok(
      t.app,
      bearer(owner),
      'POST',
      '/battles',
      { name: 'Fees', battle_mode: 'historical', backtest_config: { ...window, pairs: ['BTCUSDT'] } },
      201,
    );
    await ok(
      t.app,
      bearer(owner),
      'POST',
      `/battles/${battle.battle_id}/participants`,
      { agent_id: agent.agentId },
      201,
    );
    expect(battle).toMatchObject({ fee_rate: '0.00080000', maker_fee_rate: '0.00020000' });
    const read = await ok(t.app, bearer(owner), 'GET', `/battles/${battle.battle_id}`);
    expect(read).toMatchObject({ fee_rate: '0.00080000', maker_fee_rate: '0.00020000' });
  });
});

describe('participation share', () => {
  it("a backtest and a historical battle carry the agent wallet's share, recorded at creation and start, and show it", async () => {
    const owner = await registerAccount(t.app, {}, { plain: true });
    const agent = await createAgent(t.app, owner, {});
    const key = keyHeader(agent.apiKey);
    await ok(t.app, key, 'PUT', '/account/fill-model', { fill_model: 'realistic', participation_pct: 25 });
    const created = await ok(t.app, key, 'POST', '/backtest/create', {
      ...window,
      starting_balance: 10000,
      agent_id: agent.agentId,
      pairs: ['BTCUSDT'],
    });
    expect(created).toMatchObject({ fill_model: 'realistic', participation_pct: 25 });
    expect(await ok(t.app, key, 'GET', `/backtest/${created.session_id}/status`)).toMatchObject({
      participation_pct: 25,
    });

    const H = bearer(owner);
    const battle = await ok(
      t.app,
      H,
      'POST',
      '/battles',
      { name: 'Share', battle_mode: 'historical', backtest_config: { ...window, pairs: ['BTCUSDT'] } },
      201,
    );
    const other = await createAgent(t.app, owner, {});
    for (const a of [agent, other])
      await ok(t.app, H, 'POST', `/battles/${battle.battle_id}/participants`, { agent_id: a.agentId }, 201);
    // A later change of the wallet's share does not reach the battle: it copies the share at start.
    const started = await ok(t.app, H, 'POST', `/battles/${battle.battle_id}/start`);
    await ok(t.app, key, 'PUT', '/account/fill-model', { fill_model: 'realistic', participation_pct: 50 });
    // The other agent's wallet never traded: a new wallet's share, 10 %.
    expect(started.participants).toMatchObject([
      { agent_id: agent.agentId, fill_model: 'realistic', participation_pct: 25 },
      { agent_id: other.agentId, participation_pct: 10 },
    ]);
    const read = await ok(t.app, H, 'GET', `/battles/${battle.battle_id}`);
    expect(read.participants).toMatchObject([{ participation_pct: 25 }, { participation_pct: 10 }]);
  });
});
