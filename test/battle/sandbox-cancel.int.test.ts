import { beforeAll, describe, expect, it } from 'vitest';
import { bearer, createAgent, registerAccount } from '../accounts/support';
import { useBacktestApp } from '../backtest/http-support';
import { fails, ok } from '../support/api-calls';

/**
 * `DELETE /battles/{id}/trade/order/{order_id}` (issue 21): an open order of a participant's sandbox in a historical
 * battle is cancelled at virtual time and its lock released, as a backtest sandbox's cancel does; and sandbox orders
 * (backtest and historical battle) take `client_order_id` as live orders do.
 */
const t = useBacktestApp();
let H: Record<string, string>;
let agents: string[];

beforeAll(async () => {
  const owner = await registerAccount(t.app, {}, { plain: true });
  H = bearer(owner);
  agents = [];
  for (const name of ['Alpha', 'Beta'])
    agents.push((await createAgent(t.app, owner, { display_name: name })).agentId);
}, 90_000);

const battle = async (mode: 'historical' | 'live') => {
  const b = await ok(
    t.app,
    H,
    'POST',
    '/battles',
    mode === 'historical'
      ? {
          name: 'Cancel',
          battle_mode: 'historical',
          backtest_config: {
            start_time: '2022-01-01T00:00:00Z',
            end_time: '2022-01-02T00:00:00Z',
            candle_interval: '1h',
            pairs: ['BTCUSDT'],
          },
        }
      : { name: 'Live', battle_mode: 'live', duration_minutes: 60 },
    201,
  );
  for (const agentId of agents)
    await ok(t.app, H, 'POST', `/battles/${b.battle_id}/participants`, { agent_id: agentId }, 201);
  await ok(t.app, H, 'POST', `/battles/${b.battle_id}/start`);
  return b.battle_id as string;
};

describe('cancelling a historical battle sandbox order', () => {
  it("releases the order's lock; a second cancel, an unknown order and a live battle are refused", async () => {
    const id = await battle('historical');
    const placed = await ok(
      t.app,
      H,
      'POST',
      `/battles/${id}/trade/order`,
      {
        agent_id: agents[1],
        symbol: 'BTCUSDT',
        side: 'buy',
        type: 'limit',
        quantity: '0.01',
        price: '20000',
      },
      201,
    );
    expect(placed).toMatchObject({ status: 'pending', locked_amount: '200.20000000' });
    const cancelled = await ok(
      t.app,
      H,
      'DELETE',
      `/battles/${id}/trade/order/${placed.order_id.toUpperCase()}`,
    );
    expect(cancelled).toMatchObject({
      order_id: placed.order_id,
      status: 'cancelled',
      unlocked_amount: '200.20000000',
      unlocked_asset: 'USDT',
      cancelled_at: '2022-01-01T00:00:00.000Z',
    });
    // The sandbox no longer holds it: a second cancel finds no open order, before or after a step.
    await fails(t.app, H, 'DELETE', `/battles/${id}/trade/order/${placed.order_id}`, 404, 'ORDER_NOT_FOUND');
    await ok(t.app, H, 'POST', `/battles/${id}/step/batch`, { steps: 5 });
    await fails(t.app, H, 'DELETE', `/battles/${id}/trade/order/${placed.order_id}`, 404, 'ORDER_NOT_FOUND');
    await fails(t.app, H, 'DELETE', `/battles/${id}/trade/order/not-an-order`, 404, 'ORDER_NOT_FOUND');

    const live = await battle('live');
    await fails(
      t.app,
      H,
      'DELETE',
      `/battles/${live}/trade/order/${placed.order_id}`,
      409,
      'BATTLE_INVALID_STATE',
    );
  });

  it('sandbox orders take client_order_id: echoed, listed, unique among the open orders of the sandbox', async () => {
    const owner = await registerAccount(t.app, {}, { plain: true });
    const agent = await createAgent(t.app, owner, {});
    const A = bearer(owner);
    const session = await ok(t.app, A, 'POST', '/backtest/create', {
      start_time: '2022-01-01T00:00:00Z',
      end_time: '2022-01-01T05:00:00Z',
      candle_interval: '1h',
      starting_balance: 10000,
      agent_id: agent.agentId,
      pairs: ['BTCUSDT'],
    });
    const sid = session.session_id as string;
    await ok(t.app, A, 'POST', `/backtest/${sid}/start`);
    const body = {
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'limit',
      quantity: '0.01',
      price: '20000',
      client_order_id: 'bt-1',
    };
    const placed = await ok(t.app, A, 'POST', `/backtest/${sid}/trade/order`, body, 201);
    expect(placed).toMatchObject({ status: 'pending', client_order_id: 'bt-1' });
    await fails(t.app, A, 'POST', `/backtest/${sid}/trade/order`, 409, 'CONFLICT', body);
    const listed = await ok(t.app, A, 'GET', `/backtest/${sid}/trade/orders`);
    expect(listed.orders).toMatchObject([{ order_id: placed.order_id, client_order_id: 'bt-1' }]);

    const id = await battle('historical');
    const order = { agent_id: agents[0], ...body, client_order_id: 'hb-1' };
    const inBattle = await ok(t.app, H, 'POST', `/battles/${id}/trade/order`, order, 201);
    expect(inBattle).toMatchObject({ status: 'pending', client_order_id: 'hb-1' });
    await fails(t.app, H, 'POST', `/battles/${id}/trade/order`, 409, 'CONFLICT', order);
  });
});
