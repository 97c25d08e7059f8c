import { describe, expect, it } from 'vitest';
import { keyHeader } from '../accounts/support';
import { ok, trader, useBacktestApp, useTrader } from './http-support';

/**
 * `GET /account/mode` counts the owner's backtests (spec "Account endpoints": `active_backtests`,
 * `total_backtests_completed`): the agent's own with its key, every session of the account with the account's.
 */
const t = useBacktestApp();
const alice = useTrader(t);

const mode = async (headers: Record<string, string>) => ok(t.app, headers, 'GET', '/account/mode');

describe('account mode', () => {
  it('counts open and completed backtests per agent and per account', async () => {
    const agent = keyHeader(alice.agentKey);
    expect(await mode(agent)).toMatchObject({ active_backtests: 0, total_backtests_completed: 0 });
    const create = () =>
      ok(t.app, agent, 'POST', '/backtest/create', {
        start_time: '2022-01-01T00:00:00Z',
        end_time: '2022-01-01T05:00:00Z',
        starting_balance: 10000,
        candle_interval: '1h',
        agent_id: alice.agentId,
        pairs: ['BTCUSDT'],
      });
    const done = (await create()).session_id as string;
    const open = (await create()).session_id as string;
    expect(await mode(agent)).toMatchObject({ active_backtests: 2, total_backtests_completed: 0 });
    await ok(t.app, agent, 'POST', `/backtest/${done}/start`);
    await ok(t.app, agent, 'POST', `/backtest/${done}/step/batch`, { steps: 5 });
    await ok(t.app, agent, 'POST', `/backtest/${open}/start`);
    expect(await mode(agent)).toMatchObject({ active_backtests: 1, total_backtests_completed: 1 });
    // The account key sees the account's sessions (its agent's here); another account sees none.
    expect(await mode(keyHeader(alice.account.apiKey))).toMatchObject({
      active_backtests: 1,
      total_backtests_completed: 1,
    });
    const other = await trader(t.app);
    expect(await mode(keyHeader(other.agentKey))).toMatchObject({
      active_backtests: 0,
      total_backtests_completed: 0,
    });
  });
});
