import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { accountsProjection } from '../../projections/accounts';
import { agentsProjection } from '../../projections/agents';
import { apiKeysProjection } from '../../projections/api-keys';
import { rebuildProjection } from '../../projections/rebuild';
import { changeAccountStatus } from '../../src/cli/accounts';
import {
  api,
  bearer,
  createAgent,
  keyHeader,
  logIn,
  logInWithPassword,
  registerAccount,
  startApp,
  type TestApp,
} from './support';

let first: TestApp | undefined;
let second: TestApp | undefined;
afterAll(async () => {
  await first?.stop();
  await second?.close();
}, 60_000);

/** Every row of the identity read models, in a stable order. */
const readModels = async (t: TestApp) => {
  const db = t.database.db;
  return {
    accounts: (await sql`select * from accounts order by account_id`.execute(db)).rows,
    agents: (await sql`select * from agents order by agent_id`.execute(db)).rows,
    api_keys: (await sql`select * from api_keys order by key_hash`.execute(db)).rows,
  };
};

describe('agents and accounts survive a restart and a full projection rebuild unchanged', () => {
  it('compares the read models and the API before a restart, after it, and after rebuilding from the log', async () => {
    first = await startApp();
    const alice = await registerAccount(first.app, { starting_balance: '2000' });
    const bob = await registerAccount(first.app, {}, { plain: true });
    const carol = await registerAccount(first.app, {}, { plain: true });
    const a1 = await createAgent(first.app, alice, {
      display_name: 'Alpha',
      strategy_tags: ['x', 'y'],
      color: '#aa00ff',
      risk_profile: { max_open_orders: 9 },
    });
    const a2 = await createAgent(first.app, alice, { display_name: 'Beta' });
    const a3 = await createAgent(first.app, alice, { display_name: 'Gamma' });
    const b1 = await createAgent(first.app, bob, { display_name: 'Delta', llm_model: 'm' });
    const h = (acct: { token: string }) => bearer(acct);
    await api(first.app, {
      method: 'PUT',
      url: `/agents/${a1.agentId}`,
      headers: h(alice),
      payload: { framework: 'f', llm_model: 'z' },
    });
    await api(first.app, { method: 'POST', url: `/agents/${a2.agentId}/archive`, headers: h(alice) });
    const regen = await api(first.app, {
      method: 'POST',
      url: `/agents/${a1.agentId}/regenerate-key`,
      headers: h(alice),
    });
    const a1Key = regen.json().api_key as string;
    await api(first.app, {
      method: 'POST',
      url: `/agents/${b1.agentId}/clone?new_name=Echo`,
      headers: h(bob),
    });
    await api(first.app, { method: 'DELETE', url: `/agents/${a3.agentId}`, headers: h(alice) });
    await api(first.app, {
      method: 'PUT',
      url: `/agents/${b1.agentId}/risk-profile`,
      headers: h(bob),
      payload: { max_position_size_pct: 30, daily_loss_limit_pct: 3, max_open_orders: 30 },
    });
    await api(first.app, {
      method: 'PUT',
      url: '/account/risk-profile',
      headers: keyHeader(alice.apiKey),
      payload: { max_position_size_pct: 11, daily_loss_limit_pct: 12, max_open_orders: 13 },
    });
    const suspended = await changeAccountStatus(
      first.runtime.services.accounts!,
      'suspend',
      carol.accountId,
      'review',
    );
    expect(await first.runtime.services.projections.waitFor(suspended.position!, 5_000)).toBe(true);

    const apiView = async (t: TestApp) => ({
      aliceInfo: (await api(t.app, { method: 'GET', url: '/account/info', headers: h(alice) })).json(),
      aliceAgents: (
        await api(t.app, { method: 'GET', url: '/agents?include_archived=true', headers: h(alice) })
      ).json(),
      bobAgents: (
        await api(t.app, { method: 'GET', url: '/agents?include_archived=true', headers: h(bob) })
      ).json(),
      a1Key: (
        await api(t.app, { method: 'GET', url: `/agents/${a1.agentId}/api-key`, headers: h(alice) })
      ).json(),
      agentInfo: (
        await api(t.app, { method: 'GET', url: '/account/info', headers: keyHeader(a1Key) })
      ).json(),
      carol: (await api(t.app, { method: 'GET', url: '/account/info', headers: h(carol) })).statusCode,
    });
    const modelsBefore = await readModels(first);
    const viewBefore = await apiView(first);
    expect(modelsBefore.accounts).toHaveLength(3);
    expect(modelsBefore.agents).toHaveLength(4);
    expect(modelsBefore.api_keys).toHaveLength(7);
    expect(viewBefore.a1Key.api_key).toBe(a1Key);
    expect(viewBefore.carol).toBe(403);

    // Restart: a new runtime and app on the same database and data directory (same server keys).
    await first.stop();
    second = await startApp({ database: first.database, dataDir: first.dataDir });
    expect(await readModels(second)).toEqual(modelsBefore);
    expect(await apiView(second)).toEqual(viewBefore);
    // Old credentials keep working: the JWT (same signing key), the agent key (decrypts with the same key).
    const login = await logIn(second.app, alice);
    expect(login.statusCode).toBe(200);
    const userLogin = await logInWithPassword(second.app, alice);
    expect(userLogin.statusCode).toBe(200);
    expect(
      (await api(second.app, { method: 'GET', url: '/account/info', headers: keyHeader(a1.apiKey) }))
        .statusCode,
    ).toBe(401);
    expect(
      (await api(second.app, { method: 'GET', url: '/account/info', headers: keyHeader(a3.apiKey) }))
        .statusCode,
    ).toBe(401);

    // Full rebuild of each identity projection from position 0, verified row by row against the live tables.
    for (const projection of [accountsProjection, agentsProjection, apiKeysProjection]) {
      const result = await rebuildProjection(
        second.runtime.services.eventStore,
        second.database.db,
        projection,
        {
          verify: true,
        },
      );
      expect([projection.name, result.differences]).toEqual([projection.name, []]);
      expect(result.swapped).toBe(true);
      expect(result.comparedTables).toBe(projection.tables.length);
    }
    expect(await readModels(second)).toEqual(modelsBefore);
    expect(await apiView(second)).toEqual(viewBefore);
  }, 120_000);
});
