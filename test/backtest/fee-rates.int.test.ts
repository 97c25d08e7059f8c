import { beforeAll, describe, expect, it } from 'vitest';
import { bearer, createAgent, keyHeader, registerAccount } from '../accounts/support';
import { ok, type Trader, trader, useBacktestApp } from './http-support';

/**
 * Maker and taker fee settings (issue 21; docs/trading-rules.md, "Fees by liquidity"): `MAKER_FEE_RATE` and
 * `TAKER_FEE_RATE` over `FEE_RATE`, shown by the account, recorded by a backtest and a historical battle when they
 * are created and shown by them (their replay decides with what they recorded: test/backtest/backtest-decider).
 */
const t = useBacktestApp(undefined, {
  FEE_RATE: '0.003',
  TAKER_FEE_RATE: '0.0008',
  MAKER_FEE_RATE: '0.0002',
});
let alice: Trader;

beforeAll(async () => {
  alice = await trader(t.app);
}, 90_000);

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
    const placed = await ok(
      t.app,
      agent,
      'POST',
      `/backtest/${id}/trade/order`,
      {
        symbol: 'BTCUSDT',
        side: 'buy',
        type: 'market',
        quantity: '0.01',
      },
      201,
    );
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
