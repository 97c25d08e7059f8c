import { beforeAll, describe, expect, it } from 'vitest';
import { api, bearer, createAgent, keyHeader, registerAccount, type TestAccount } from '../accounts/support';
import { orderBody } from '../trading/key-calls';
import { fails, ok, type Trader, trader, useBacktestApp } from './http-support';

/**
 * What an agent's archive and deletion do to its sandboxes, whatever the credential (spec "States and
 * transitions" → Agent; docs/backtesting.md "Ownership", docs/battles.md "Participants"): an archived agent's
 * backtest session is refused a start, a step and a new order (`PERMISSION_DENIED` 403 `agent_archived`, as live
 * trading's first risk rule) through the account's JWT as through the agent's key, while reads and cancels stay
 * allowed; a historical battle refuses the archived participant's new orders. A deleted agent's sessions go with
 * it (`BACKTEST_NOT_FOUND` 404, gone from the list); an agent in a running historical battle cannot be deleted
 * (409, as a live one). Real stack over `inject` on the hourly BTCUSDT and ETHUSDT files, PGlite by default or
 * PostgreSQL with DATABASE_URL.
 */
const t = useBacktestApp();

const START = '2022-01-01T00:00:00Z';
const END = '2022-01-03T00:00:00Z';

const create = async (who: Trader) =>
  (
    await ok(t.app, who.headers, 'POST', '/backtest/create', {
      start_time: START,
      end_time: END,
      starting_balance: '10000',
      candle_interval: '1h',
      agent_id: who.agentId,
      pairs: ['BTCUSDT'],
    })
  ).session_id as string;

/** A running session of `who` with one resting limit buy far below the market (its id second). */
const runningWithRestingOrder = async (who: Trader): Promise<[string, string]> => {
  const id = await create(who);
  await ok(t.app, who.headers, 'POST', `/backtest/${id}/start`);
  await ok(t.app, who.headers, 'POST', `/backtest/${id}/step`);
  const placed = await ok(
    t.app,
    who.headers,
    'POST',
    `/backtest/${id}/trade/order`,
    orderBody('BTCUSDT', 'buy', 'limit', '0.01', { price: '1000' }),
    201,
  );
  return [id, placed.order_id as string];
};

const expectArchived = (error: { details?: Record<string, unknown> }) =>
  expect(error.details).toMatchObject({ reason: 'agent_archived' });

describe("an archived agent's backtest session", () => {
  it('refuses a start, a step and a new order through the JWT and the key; reads and cancels stay allowed', async () => {
    const who = await trader(t.app);
    const [id, orderId] = await runningWithRestingOrder(who);
    const unstarted = await create(who);
    await ok(t.app, who.headers, 'POST', `/agents/${who.agentId}/archive`);

    const scoped = { ...who.headers, 'x-agent-id': who.agentId };
    const key = keyHeader(who.agentKey);
    const buy = orderBody('BTCUSDT', 'buy', 'market', '0.001');
    for (const headers of [who.headers, scoped, key]) {
      expectArchived(await fails(t.app, headers, 'POST', `/backtest/${id}/step`, 403, 'PERMISSION_DENIED'));
      expectArchived(
        await fails(t.app, headers, 'POST', `/backtest/${id}/step/batch`, 403, 'PERMISSION_DENIED', {
          steps: 3,
        }),
      );
      expectArchived(
        await fails(t.app, headers, 'POST', `/backtest/${id}/trade/order`, 403, 'PERMISSION_DENIED', buy),
      );
      expectArchived(
        await fails(t.app, headers, 'POST', `/backtest/${unstarted}/start`, 403, 'PERMISSION_DENIED'),
      );
    }
    // Live trading refuses the same agent the same way (its risk chain's first rule), in the same words.
    const live = await fails(t.app, scoped, 'POST', '/trade/order', 403, 'PERMISSION_DENIED', buy);
    expectArchived(live);
    const sandbox = await fails(t.app, who.headers, 'POST', `/backtest/${id}/step`, 403, 'PERMISSION_DENIED');
    expect(sandbox.message).toBe(live.message);
    expect(sandbox.details).toMatchObject({
      rule: 'account_active',
      status: 'archived',
      agent_id: who.agentId,
    });

    // Nothing was recorded: the clock stands where it was, the order is still the only one.
    const status = await ok(t.app, who.headers, 'GET', `/backtest/${id}/status`);
    expect(status).toMatchObject({ status: 'running', step: 1 });
    expect((await ok(t.app, key, 'GET', `/backtest/${id}/trade/orders`)).total).toBe(1);
    await ok(t.app, key, 'GET', `/backtest/${id}/account/balance`);

    // Cancels stay allowed, as live: the resting order, then the session itself.
    await ok(t.app, key, 'DELETE', `/backtest/${id}/trade/order/${orderId}`);
    expect((await ok(t.app, who.headers, 'POST', `/backtest/${id}/cancel`)).status).toBe('cancelled');
  });

  it('steps again once a reset reactivates the agent', async () => {
    const who = await trader(t.app);
    const id = await create(who);
    await ok(t.app, who.headers, 'POST', `/backtest/${id}/start`);
    await ok(t.app, who.headers, 'POST', `/agents/${who.agentId}/archive`);
    await fails(t.app, who.headers, 'POST', `/backtest/${id}/step`, 403, 'PERMISSION_DENIED');
    await ok(t.app, who.headers, 'POST', `/agents/${who.agentId}/reset`);
    expect((await ok(t.app, who.headers, 'POST', `/backtest/${id}/step`)).step).toBe(1);
  });
});

describe("a deleted agent's backtest sessions", () => {
  it('are deleted with it: every session endpoint answers 404 and the list no longer holds them', async () => {
    const who = await trader(t.app);
    const [running] = await runningWithRestingOrder(who);
    const created = await create(who);
    const other = await createAgent(t.app, who.account, { display_name: 'Kept' });
    const kept = (
      await ok(t.app, who.headers, 'POST', '/backtest/create', {
        start_time: START,
        end_time: END,
        starting_balance: '10000',
        candle_interval: '1h',
        agent_id: other.agentId,
        pairs: ['BTCUSDT'],
      })
    ).session_id as string;

    const deleted = await api(t.app, {
      method: 'DELETE',
      url: `/agents/${who.agentId}`,
      headers: who.headers,
    });
    expect(deleted.statusCode, deleted.body).toBe(204);

    for (const id of [running, created]) {
      await fails(t.app, who.headers, 'GET', `/backtest/${id}/status`, 404, 'BACKTEST_NOT_FOUND');
      await fails(t.app, who.headers, 'POST', `/backtest/${id}/step`, 404, 'BACKTEST_NOT_FOUND');
      await fails(
        t.app,
        who.headers,
        'POST',
        `/backtest/${id}/trade/order`,
        404,
        'BACKTEST_NOT_FOUND',
        orderBody('BTCUSDT', 'buy', 'market', '0.001'),
      );
      await fails(t.app, who.headers, 'GET', `/backtest/${id}/trade/orders`, 404, 'BACKTEST_NOT_FOUND');
      await fails(t.app, who.headers, 'POST', `/backtest/${id}/cancel`, 404, 'BACKTEST_NOT_FOUND');
      expect(await t.app.services.eventStore.streamRevision(`backtest-${id}`)).toBe(-1);
    }
    const list = await ok(t.app, who.headers, 'GET', '/backtest/list');
    const ids = (list.backtests as { session_id: string }[]).map((s) => s.session_id);
    expect(ids).toContain(kept);
    expect(ids).not.toContain(running);
    expect(ids).not.toContain(created);
    // The other agent's session is untouched.
    expect((await ok(t.app, who.headers, 'POST', `/backtest/${kept}/start`)).status).toBe('running');
  });
});

describe('an agent in a historical battle', () => {
  let owner: TestAccount;
  let H: Record<string, string>;
  beforeAll(async () => {
    owner = await registerAccount(t.app, {}, { plain: true });
    H = bearer(owner);
  }, 90_000);

  const battle = async (agents: { agentId: string }[]) => {
    const b = await ok(
      t.app,
      H,
      'POST',
      '/battles',
      {
        name: 'History',
        battle_mode: 'historical',
        backtest_config: { start_time: START, end_time: END, candle_interval: '1h', pairs: ['BTCUSDT'] },
      },
      201,
    );
    for (const a of agents)
      await ok(t.app, H, 'POST', `/battles/${b.battle_id}/participants`, { agent_id: a.agentId }, 201);
    await ok(t.app, H, 'POST', `/battles/${b.battle_id}/start`);
    return b.battle_id as string;
  };
  const battleOrder = (agentId: string) => ({
    agent_id: agentId,
    symbol: 'BTCUSDT',
    side: 'buy',
    type: 'market',
    quantity: '0.001',
  });

  it('archived: its new orders are refused (403 agent_archived), the battle steps and the others trade', async () => {
    const a1 = await createAgent(t.app, owner, { display_name: 'Alpha' });
    const a2 = await createAgent(t.app, owner, { display_name: 'Beta' });
    const id = await battle([a1, a2]);
    await ok(t.app, H, 'POST', `/battles/${id}/step`);
    await ok(t.app, H, 'POST', `/agents/${a1.agentId}/archive`);
    expectArchived(
      await fails(
        t.app,
        H,
        'POST',
        `/battles/${id}/trade/order`,
        403,
        'PERMISSION_DENIED',
        battleOrder(a1.agentId),
      ),
    );
    await ok(t.app, H, 'POST', `/battles/${id}/trade/order`, battleOrder(a2.agentId), 201);
    await ok(t.app, H, 'POST', `/battles/${id}/step`);
  });

  it('cannot be deleted while the battle runs (409 agent_in_running_battle); can once it completed', async () => {
    const a1 = await createAgent(t.app, owner, { display_name: 'Gamma' });
    const a2 = await createAgent(t.app, owner, { display_name: 'Delta' });
    const id = await battle([a1, a2]);
    await ok(t.app, H, 'POST', `/battles/${id}/step`);
    await ok(t.app, H, 'POST', `/battles/${id}/trade/order`, battleOrder(a1.agentId), 201);
    const refused = await api(t.app, { method: 'DELETE', url: `/agents/${a1.agentId}`, headers: H });
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json().error).toMatchObject({
      code: 'BATTLE_INVALID_STATE',
      details: { reason: 'agent_in_running_battle', battle_id: id, agent_id: a1.agentId },
    });
    expect((await ok(t.app, H, 'GET', `/agents/${a1.agentId}`)).id).toBe(a1.agentId);
    await ok(t.app, H, 'POST', `/battles/${id}/trade/order`, battleOrder(a1.agentId), 201);

    expect((await ok(t.app, H, 'POST', `/battles/${id}/stop`)).status).toBe('completed');
    const gone = await api(t.app, { method: 'DELETE', url: `/agents/${a1.agentId}`, headers: H });
    expect(gone.statusCode, gone.body).toBe(204);
  });
});
