import { describe, expect, it } from 'vitest';
import { participantEquity } from '../../src/battle/live';
import { keyHeader } from '../accounts/support';
import { call, fails, ok } from '../support/api-calls';
import { settleTrading } from '../trading/log-head';
import { RANKING_FIELDS } from './fixtures';
import { draftBattle, useBattleCast, useLiveBattleApp } from './live-support';

/**
 * Regressions found by the battles audit (live mode, through the real stack on PGlite or PostgreSQL):
 * case-insensitive ids, a participant's equity frozen when its battle session ends by a reset, a replay without a
 * body, ranking entries with their documented field order.
 */

const t = useLiveBattleApp();
const { tick } = t;
const my = useBattleCast(t, { a1: 'Alpha', a2: 'Beta' });

const settle = () => settleTrading(t);
const draft = (body: Record<string, unknown> = {}) =>
  draftBattle(t, my.H, [my.a1, my.a2], { name: 'Audit', ...body });

describe('ids are UUIDs: either case names the same battle and agent', () => {
  it('an upper-case agent id is the same participant, not a second one', async () => {
    const b = await ok(t.app, my.H, 'POST', '/battles', { name: 'Case' }, 201);
    const ID = (b.battle_id as string).toUpperCase();
    const added = await ok(
      t.app,
      my.H,
      'POST',
      `/battles/${ID}/participants`,
      { agent_id: my.a1.agentId.toUpperCase() },
      201,
    );
    expect(added.battle_id).toBe(b.battle_id);
    expect(added.participants.map((p: { agent_id: string }) => p.agent_id)).toEqual([my.a1.agentId]);
    await fails(t.app, my.H, 'POST', `/battles/${b.battle_id}/participants`, 422, 'VALIDATION_ERROR', {
      agent_id: my.a1.agentId,
    });
    // Only one participant: too few to start.
    const e = await fails(t.app, my.H, 'POST', `/battles/${ID}/start`, 409, 'BATTLE_INVALID_STATE');
    expect(e.details?.reason).toBe('too_few_participants');
    expect((await ok(t.app, my.H, 'GET', `/battles/${ID}`)).battle_id).toBe(b.battle_id);
    const removed = await ok(
      t.app,
      my.H,
      'DELETE',
      `/battles/${ID}/participants/${my.a1.agentId.toUpperCase()}`,
    );
    expect(removed.participants).toEqual([]);
    expect(await ok(t.app, my.H, 'DELETE', `/battles/${ID}`)).toEqual({
      battle_id: b.battle_id,
      status: 'deleted',
    });
  });

  it('pause and resume take an upper-case agent id', async () => {
    const id = await draft();
    await ok(t.app, my.H, 'POST', `/battles/${id.toUpperCase()}/start`);
    const paused = await ok(t.app, my.H, 'POST', `/battles/${id}/pause/${my.a2.agentId.toUpperCase()}`);
    expect(paused.participants.find((p: { agent_id: string }) => p.agent_id === my.a2.agentId).status).toBe(
      'paused',
    );
    const resumed = await ok(
      t.app,
      my.H,
      'POST',
      `/battles/${id.toUpperCase()}/resume/${my.a2.agentId.toUpperCase()}`,
    );
    expect(resumed.status).toBe('active');
    await ok(t.app, my.H, 'POST', `/battles/${id}/stop`);
  });
});

describe('a reset during a live battle', () => {
  it('freezes the participant at the equity its battle session ended with', async () => {
    const id = await draft({ starting_balance: '1000' });
    await ok(t.app, my.H, 'POST', `/battles/${id}/start`);
    tick('BTCUSDT', '40000', '10000');
    expect(
      (
        await call(t.app, keyHeader(my.a1.apiKey), 'POST', '/trade/order', {
          symbol: 'BTCUSDT',
          side: 'buy',
          type: 'market',
          quantity: '0.001',
        })
      ).status,
    ).toBe(201);
    await settle();
    // The agent is reset (a new session with the agent's own 10,000 USDT), then trades in the new session.
    await ok(t.app, my.H, 'POST', `/agents/${my.a1.agentId}/reset`);
    const balance = await ok(t.app, keyHeader(my.a1.apiKey), 'GET', '/account/balance');
    expect(balance.total_equity_usdt).toBe('10000.00000000');
    await call(t.app, keyHeader(my.a1.apiKey), 'POST', '/trade/order', {
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'market',
      quantity: '0.01',
    });
    await settle();

    const live = await ok(t.app, my.H, 'GET', `/battles/${id}/live`);
    const alpha = live.rankings.find((r: { agent_id: string }) => r.agent_id === my.a1.agentId);
    // Bought 0.001 BTC and sold it back at the reset: a little under 1,000 USDT, never the new 10,000.
    expect(Number(alpha.equity)).toBeLessThan(1000);
    expect(Number(alpha.equity)).toBeGreaterThan(999);
    expect(Number(alpha.roi_pct)).toBeLessThan(0);
    expect(alpha.trade_count).toBe(2); // the buy and the reset's closing sell; not the new session's buy
    expect(live.rankings[0].agent_id).toBe(my.a2.agentId);

    const battle = await t.app.services.battle!.commands.load(id);
    const p1 = battle.state.participants.find((p) => p.agentId === my.a1.agentId)!;
    expect(await participantEquity(t.app.services, p1)).toBe(alpha.equity);
    // The snapshot leader's round (as wired by the battle capability) records the same frozen equity.
    await t.app.services.battle!.snapshotter.tick();
    await settle();
    const replay = await ok(t.app, my.H, 'GET', `/battles/${id}/replay`);
    const last = replay.snapshots[replay.snapshots.length - 1];
    expect(last.participants.find((p: { agent_id: string }) => p.agent_id === my.a1.agentId).equity).toBe(
      alpha.equity,
    );

    const stopped = await ok(t.app, my.H, 'POST', `/battles/${id}/stop`);
    const final = stopped.final_rankings.find((r: { agent_id: string }) => r.agent_id === my.a1.agentId);
    expect(final.equity).toBe(alpha.equity);
  });
});

describe('replay and rankings on the wire', () => {
  it('POST /battles/{id}/replay needs no body (both of its fields are optional)', async () => {
    const id = await draft({ starting_balance: '2500' });
    await ok(t.app, my.H, 'POST', `/battles/${id}/start`);
    await ok(t.app, my.H, 'POST', `/battles/${id}/stop`);
    for (const payload of [undefined, {}]) {
      const copy = await ok(t.app, my.H, 'POST', `/battles/${id}/replay`, payload, 201);
      expect(copy).toMatchObject({ status: 'draft', replay_of: id, starting_balance: '2500.00000000' });
      expect(copy.participants.map((p: { agent_id: string }) => p.agent_id)).toEqual([
        my.a1.agentId,
        my.a2.agentId,
      ]);
    }
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/battles/${id}/replay`,
      headers: { ...my.H, 'content-type': 'application/json' },
      payload: '',
    });
    expect(res.statusCode, res.body).toBe(201);
  });

  it('ranking entries keep the documented field order everywhere (detail, list, live, results)', async () => {
    const id = await draft();
    await ok(t.app, my.H, 'POST', `/battles/${id}/start`);
    const stopped = await ok(t.app, my.H, 'POST', `/battles/${id}/stop`);
    await settle();
    const listed = (await ok(t.app, my.H, 'GET', '/battles?status=completed&limit=200')).battles.find(
      (b: { battle_id: string }) => b.battle_id === id,
    );
    const live = await ok(t.app, my.H, 'GET', `/battles/${id}/live`);
    const results = await ok(t.app, my.H, 'GET', `/battles/${id}/results`);
    for (const rankings of [stopped.final_rankings, listed.final_rankings, live.rankings, results.rankings]) {
      expect(rankings).toHaveLength(2);
      for (const r of rankings) expect(Object.keys(r)).toEqual(RANKING_FIELDS);
    }
  });
});
