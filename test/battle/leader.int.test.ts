import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createAgent, registerAccount, startApp, type TestApp } from '../accounts/support';
import { call, ok } from '../support/api-calls';
import { postgresPassOnlyReason } from '../support/databases';

/**
 * Two processes on one PostgreSQL database (two runtimes sharing the log and the read models, each with its own
 * snapshot loop): only the advisory-lock leader records a live battle's snapshots, so they come every 5 s, not
 * twice as often. PGlite cannot be shared between processes: the test needs DATABASE_URL's server.
 */
const reason = await postgresPassOnlyReason();
if (reason) console.warn(`battle snapshot leadership test skipped: ${reason}`);

describe.skipIf(reason !== null)('the battle snapshot leader', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    a = await startApp({ env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT' } });
    b = await startApp({
      database: a.database,
      dataDir: a.dataDir,
      env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT' },
    });
  }, 60_000);

  afterAll(async () => {
    await b?.stop();
    await a?.close();
  });

  /** A new account's battle `name` (drafted on process a) with two new agents as participants, not started. */
  const draftDuel = async (name: string) => {
    const owner = await registerAccount(a.app, {}, { plain: true });
    const H = bearer(owner);
    const agents = [await createAgent(a.app, owner), await createAgent(a.app, owner)];
    const battle = await ok(a.app, H, 'POST', '/battles', { name }, 201);
    for (const x of agents)
      await ok(a.app, H, 'POST', `/battles/${battle.battle_id}/participants`, { agent_id: x.agentId }, 201);
    return { H, agents, battle };
  };

  it('records one snapshot per 5 s whichever process leads', async () => {
    const { H, battle } = await draftDuel('Led');
    await ok(a.app, H, 'POST', `/battles/${battle.battle_id}/start`);
    await new Promise((r) => setTimeout(r, 16_000));
    const snapshots = (await a.app.services.eventStore.readStream(`battle-${battle.battle_id}`)).filter(
      (e) => e.type === 'BattleSnapshotRecorded',
    );
    // 16 s at one round per 5 s: 3 (a second leader would double it).
    expect(snapshots.length).toBeGreaterThanOrEqual(2);
    expect(snapshots.length).toBeLessThanOrEqual(4);
    const times = snapshots.map((e) => Date.parse((e.data as { timestamp: string }).timestamp));
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThan(4_000);
    // Both processes serve the snapshots (the read models are shared).
    const replay = await ok(b.app, H, 'GET', `/battles/${battle.battle_id}/replay`);
    expect(replay.snapshots.length).toBe(snapshots.length);
  }, 40_000);

  it('starts a live battle once when both processes start it at the same moment', async () => {
    const { H, agents, battle } = await draftDuel('Raced');
    const starts = await Promise.all(
      [a, b].map((p) => call(p.app, H, 'POST', `/battles/${battle.battle_id}/start`)),
    );
    expect(starts.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(starts.find((r) => r.status === 409)!.body.error.code).toBe('BATTLE_INVALID_STATE');
    // Each wallet got one fresh session for the battle: the loser waited, saw the battle started and reset nothing.
    for (const x of agents) {
      const events = await a.app.services.eventStore.readStream(`wallet-${x.agentId}`);
      expect(
        events.filter((e) => e.type === 'WalletReset'),
        x.agentId,
      ).toHaveLength(1);
    }
    await ok(a.app, H, 'POST', `/battles/${battle.battle_id}/stop`);
  }, 40_000);
});
