import { beforeAll, describe, expect, it } from 'vitest';
import { api, bearer, keyHeader, registerAccount, type TestAccount } from '../accounts/support';
import { call, fails, ok } from '../support/api-calls';
import { battleAgent, draftBattle, marketBuy, useLiveBattleApp } from './live-support';

/**
 * `DELETE /agents/{id}` of an agent in a running (active or paused) live battle is refused with
 * `BATTLE_INVALID_STATE` 409 and changes nothing: the battle ranks the agent from its wallet's fills, which the
 * delete would destroy. Draft, completed and cancelled battles do not block the delete. Real stack over
 * `app.inject` on PGlite (or PostgreSQL with DATABASE_URL), set up as `live.int.test.ts`.
 */

const t = useLiveBattleApp();
let owner: TestAccount;
let H: Record<string, string>;
type Agent = { agentId: string; apiKey: string };

const newAgent = (name: string): Promise<Agent> => battleAgent(t, owner, name);
const buy = (key: string, quantity = '0.01') => marketBuy(t, key, quantity);
const draft = (members: Agent[]) => draftBattle(t, H, members);

/** `DELETE /agents/{id}` (204 has no body, so not through `call`). */
const deleteAgent = (agentId: string, headers = H) =>
  api(t.app, { method: 'DELETE', url: `/agents/${agentId}`, headers });

/** Expects the refusal, with its details, and that the agent, its key and its streams are all still there. */
const expectRefused = async (agent: Agent, battleId: string) => {
  const store = t.app.services.eventStore;
  const agentEvents = (await store.readStream(`agent-${agent.agentId}`)).length;
  const walletRevision = await store.streamRevision(`wallet-${agent.agentId}`);
  const res = await deleteAgent(agent.agentId);
  expect(res.statusCode, res.body).toBe(409);
  expect(res.json().error).toMatchObject({
    code: 'BATTLE_INVALID_STATE',
    details: { reason: 'agent_in_running_battle', battle_id: battleId, agent_id: agent.agentId },
  });
  expect((await ok(t.app, H, 'GET', `/agents/${agent.agentId}`)).id).toBe(agent.agentId);
  expect((await call(t.app, keyHeader(agent.apiKey), 'GET', '/account/balance')).status).toBe(200);
  expect((await store.readStream(`agent-${agent.agentId}`)).length).toBe(agentEvents);
  expect(await store.streamRevision(`wallet-${agent.agentId}`)).toBe(walletRevision);
};

const expectDeleted = async (agent: Agent) => {
  const res = await deleteAgent(agent.agentId);
  expect(res.statusCode, res.body).toBe(204);
  await fails(t.app, H, 'GET', `/agents/${agent.agentId}`, 403, 'PERMISSION_DENIED');
};

beforeAll(async () => {
  owner = await registerAccount(t.app, {}, { plain: true });
  H = bearer(owner);
}, 120_000);

describe('deleting an agent that takes part in a battle', () => {
  it('refuses while the live battle is active or paused (409, nothing changes); deletes once it completed', async () => {
    const [a1, a2] = [await newAgent('Alpha'), await newAgent('Beta')];
    const id = await draft([a1, a2]);
    expect((await ok(t.app, H, 'POST', `/battles/${id}/start`)).status).toBe('active');
    expect((await buy(a1.apiKey)).status).toBe(201);

    await expectRefused(a1, id);
    // Another account learns nothing about the battle: the agent is not its own (403, as for any foreign agent).
    const other = await registerAccount(t.app, {}, { plain: true });
    const foreign = await deleteAgent(a1.agentId, bearer(other));
    expect([foreign.statusCode, foreign.json().error.code]).toEqual([403, 'PERMISSION_DENIED']);

    // Paused: the battle is paused while Beta is; both participants are still refused.
    expect((await ok(t.app, H, 'POST', `/battles/${id}/pause/${a2.agentId}`)).status).toBe('paused');
    await expectRefused(a2, id);
    await expectRefused(a1, id);
    expect((await ok(t.app, H, 'POST', `/battles/${id}/resume/${a2.agentId}`)).status).toBe('active');

    // The battle still ranks Alpha with its fill.
    const live = await ok(t.app, H, 'GET', `/battles/${id}/live`);
    expect(live.rankings.find((r: { agent_id: string }) => r.agent_id === a1.agentId).trade_count).toBe(1);

    const stopped = await ok(t.app, H, 'POST', `/battles/${id}/stop`);
    expect(stopped.status).toBe('completed');
    await expectDeleted(a1);
    await expectDeleted(a2);
    // The completed battle's results are frozen: the delete does not change them.
    const results = await ok(t.app, H, 'GET', `/battles/${id}/results`);
    expect(results.rankings).toEqual(stopped.final_rankings);
  });

  it('deletes an agent of a cancelled battle', async () => {
    const [a3, a4] = [await newAgent('Gamma'), await newAgent('Delta')];
    const id = await draft([a3, a4]);
    await ok(t.app, H, 'POST', `/battles/${id}/start`);
    await expectRefused(a3, id);
    expect(await ok(t.app, H, 'DELETE', `/battles/${id}`)).toEqual({ battle_id: id, status: 'cancelled' });
    await expectDeleted(a3);
  });

  it('deletes an agent of a draft battle', async () => {
    const [a5, a6] = [await newAgent('Epsilon'), await newAgent('Zeta')];
    await draft([a5, a6]);
    await expectDeleted(a5);
  });

  it('never lets a delete and a live start of the same agent both succeed when they race', async () => {
    // Before the agent locks (commands/battle-locks.ts) the delete read the read models while the start was
    // resetting wallets: both answered success, and the running battle lost a participant's wallet.
    const outcomes: string[] = [];
    for (let round = 0; round < 6; round++) {
      const [a, b] = [await newAgent(`Racer ${round}a`), await newAgent(`Racer ${round}b`)];
      const id = await draft([a, b]);
      // Even rounds: the delete arrives while the start is resetting the wallets; odd ones: the other way round.
      const later = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const [started, deleted] = await Promise.all([
        later(round % 2 === 1 ? round : 0).then(() => call(t.app, H, 'POST', `/battles/${id}/start`)),
        later(round % 2 === 0 ? round : 0).then(() => deleteAgent(a.agentId)),
      ]);
      outcomes.push(`${started.status}/${deleted.statusCode}`);
      expect([started.status, deleted.statusCode], JSON.stringify(started.body)).not.toEqual([200, 204]);
      if (started.status === 200) {
        expect(deleted.statusCode, deleted.body).toBe(409);
        expect((await ok(t.app, H, 'GET', `/agents/${a.agentId}`)).id).toBe(a.agentId);
        await ok(t.app, H, 'DELETE', `/battles/${id}`); // cancel it, so the next round starts clean
      } else {
        expect(deleted.statusCode, deleted.body).toBe(204);
        expect((await ok(t.app, H, 'GET', `/battles/${id}`)).status).toBe('draft');
      }
    }
    console.log(`[race] start/delete outcomes: ${outcomes.join(' ')}`);
  });

  it('documents the 409 on DELETE /agents/{agent_id}', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(doc.paths['/api/v1/agents/{agent_id}'].delete.responses)).toContain('409');
  });
});

describe('OpenAPI: optional request bodies', () => {
  it('marks a body whose schema accepts no body required: false, the others required: true', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const replay = doc.paths['/api/v1/battles/{id}/replay'].post;
    expect(replay.requestBody.required).toBe(false);
    expect(replay.requestBody.content['application/json'].schema).toBeDefined();
    expect(replay['x-optional-body']).toBeUndefined();
    expect(doc.paths['/api/v1/battles'].post.requestBody.required).toBe(true);
    expect(doc.paths['/api/v1/battles/{id}/participants'].post.requestBody.required).toBe(true);
    expect(doc.paths['/api/v1/agents'].post.requestBody.required).toBe(true);
    // As documented: the replay route takes no body at all.
    const [a7, a8] = [await newAgent('Eta'), await newAgent('Theta')];
    const id = await draft([a7, a8]);
    await ok(t.app, H, 'POST', `/battles/${id}/start`);
    await ok(t.app, H, 'POST', `/battles/${id}/stop`);
    const copy = await ok(t.app, H, 'POST', `/battles/${id}/replay`, undefined, 201);
    expect(copy).toMatchObject({ status: 'draft', replay_of: id });
  });
});
