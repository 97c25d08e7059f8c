import { describe, expect, it } from 'vitest';
import { useAccount, useTestApp } from '../support/test-app';
import { api, bearer, createAgent, errorOf, keyHeader } from './support';

/**
 * An order is decided with its owner's status and risk limits as the owner's own stream has them whenever this
 * process knows the read models to be behind it (`installTrading`'s `ownerProfiles`, `UnfoldedChanges`): an agent
 * created a moment ago trades with its key at once, one archived a moment ago is refused, and risk limits replaced a
 * moment ago apply to the next order, however far the read models lag. The projections are stopped to hold the
 * read models back; every order goes through the same use case whatever the door (REST here).
 */
const t = useTestApp({
  env: {
    READ_MODEL_WAIT_MS: '300',
    MARKET_SOURCE: 'synthetic',
    MARKET_SYMBOLS: 'SOLUSDT',
    FILL_MODEL: 'instant',
  },
});

const account = useAccount(t, [['BTCUSDT', '40000', '10000']]);

/** A pending limit buy worth 300 USDT (3 % of a 10,000 USDT wallet). */
const order = (apiKey: string) =>
  api(t.app, {
    method: 'POST',
    url: '/trade/order',
    headers: keyHeader(apiKey),
    payload: { symbol: 'BTCUSDT', side: 'buy', type: 'limit', quantity: '0.01', price: '30000' },
  });

/** Runs `fn` with the projections stopped (the read models fold nothing meanwhile). */
const lagging = async (fn: () => Promise<void>) => {
  const projections = t.runtime.services.projections;
  await projections.stop();
  try {
    await fn();
  } finally {
    await projections.start();
  }
};

/** Replaces the risk limits of the key's owner (the agent of an agent key, else the account). */
const setRisk = (apiKey: string, maxOrderSizePct: number) =>
  api(t.app, {
    method: 'PUT',
    url: '/account/risk-profile',
    headers: keyHeader(apiKey),
    payload: {
      max_position_size_pct: 25,
      daily_loss_limit_pct: 20,
      max_open_orders: 50,
      max_order_size_pct: maxOrderSizePct,
    },
  });

describe('orders while the read models stay behind the owner', () => {
  it('an agent created a moment ago places an order with its key at once (was ACCOUNT_NOT_FOUND 404)', async () => {
    await lagging(async () => {
      const agent = await createAgent(t.app, account, { display_name: 'Brand new' });
      const placed = await order(agent.apiKey);
      expect([placed.statusCode, placed.json().status]).toEqual([201, 'pending']);
    });
  });

  it('an agent archived a moment ago is refused (PERMISSION_DENIED agent_archived; was 201)', async () => {
    const agent = await createAgent(t.app, account, { display_name: 'Soon archived' });
    // The read models know the agent as active before they stop.
    expect((await order(agent.apiKey)).statusCode).toBe(201);
    await lagging(async () => {
      const archived = await api(t.app, {
        method: 'POST',
        url: `/agents/${agent.agentId}/archive`,
        headers: bearer(account),
      });
      expect(archived.statusCode).toBe(200);
      const refused = await order(agent.apiKey);
      expect([refused.statusCode, errorOf(refused).code, errorOf(refused).details?.reason]).toEqual([
        403,
        'PERMISSION_DENIED',
        'agent_archived',
      ]);
    });
  });

  it("an agent's risk limits replaced a moment ago apply to its next order (was the old limits')", async () => {
    const agent = await createAgent(t.app, account, { display_name: 'Tightened' });
    expect((await order(agent.apiKey)).statusCode).toBe(201);
    await lagging(async () => {
      expect((await setRisk(agent.apiKey, 1)).statusCode).toBe(200);
      const refused = await order(agent.apiKey);
      expect([refused.statusCode, errorOf(refused).code, errorOf(refused).details?.rule]).toEqual([
        400,
        'ORDER_REJECTED',
        'max_order_size',
      ]);
      // And loosened again: the next order passes at once too.
      expect((await setRisk(agent.apiKey, 50)).statusCode).toBe(200);
      expect((await order(agent.apiKey)).statusCode).toBe(201);
    });
  });

  it("the account's own risk limits replaced a moment ago apply to its next order", async () => {
    expect((await order(account.apiKey)).statusCode).toBe(201);
    await lagging(async () => {
      expect((await setRisk(account.apiKey, 1)).statusCode).toBe(200);
      const refused = await order(account.apiKey);
      expect([refused.statusCode, errorOf(refused).code]).toEqual([400, 'ORDER_REJECTED']);
    });
    expect((await setRisk(account.apiKey, 50)).statusCode).toBe(200);
  });

  it('once the read models include the change, orders read them again (no stream read left over)', async () => {
    const agent = await createAgent(t.app, account, { display_name: 'Caught up' });
    await lagging(async () => {
      expect((await setRisk(agent.apiKey, 1)).statusCode).toBe(200);
    });
    const changes = t.runtime.services.ownerChanges!;
    expect(changes.has(agent.agentId)).toBe(true);
    await t.runtime.services.projections.waitFor(await t.runtime.services.eventStore.headPosition(), 10_000);
    const refused = await order(agent.apiKey);
    expect(errorOf(refused).code).toBe('ORDER_REJECTED');
    expect(changes.has(agent.agentId)).toBe(false);
  });
});
