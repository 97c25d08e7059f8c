import { beforeAll } from 'vitest';
import type { TestAccount, TestApp } from '../accounts/support';
import { bearer, createAgent, keyHeader, registerAccount, startApp } from '../accounts/support';
import { call, ok } from '../support/api-calls';
import { lateBound } from '../support/late-bound';
import { priceTicker } from '../support/price-ticks';
import { type SharedTestApp, useTestApp } from '../support/test-app';

/**
 * Set-up shared by the live battle tests (real stack over `app.inject`, PGlite or PostgreSQL with DATABASE_URL):
 * a synthetic market in which BTCUSDT moves only when a test ticks it (40,000 at the start), agents that may put
 * all their equity in one coin, market buys and draft battles.
 */
export const startLiveBattleApp = async (): Promise<TestApp> => {
  const t = await startApp({ env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT' } });
  priceTicker(() => t.app.services.market!)('BTCUSDT', '40000', '10000');
  return t;
};

/** The live battle app of one test file ({@link startLiveBattleApp} in {@link useTestApp}'s hooks). */
export const useLiveBattleApp = (): SharedTestApp => useTestApp(startLiveBattleApp);

/** A battle agent: `max_position_size_pct` 100, so a participant can hold one coin with all its equity. */
export const battleAgent = (
  t: TestApp,
  owner: TestAccount,
  displayName: string,
): Promise<{ agentId: string; apiKey: string }> =>
  createAgent(t.app, owner, { display_name: displayName, risk_profile: { max_position_size_pct: 100 } });

/** An owner of battles, its JWT headers (`H`) and its battle agents by the names a test file gives them. */
export type BattleCast<K extends string> = { owner: TestAccount; H: Record<string, string> } & Record<
  K,
  { agentId: string; apiKey: string }
>;

/**
 * The battle owner of one test file: a `beforeAll` (2 min, after the app's) registers a plain account and, in the
 * order given, one {@link battleAgent} per entry of `agents` (key: the name the file reads it by, value: its
 * display name). Read through {@link lateBound}: a read before the hook ran throws.
 */
export const useBattleCast = <K extends string>(t: TestApp, agents: Record<K, string>): BattleCast<K> => {
  let cast: BattleCast<K> | undefined;
  beforeAll(async () => {
    const owner = await registerAccount(t.app, {}, { plain: true });
    const made: Record<string, unknown> = { owner, H: bearer(owner) };
    for (const [key, displayName] of Object.entries<string>(agents))
      made[key] = await battleAgent(t, owner, displayName);
    cast = made as BattleCast<K>;
  }, 120_000);
  return lateBound('the battle owner and its agents', () => cast);
};

/** A market buy of `quantity` BTCUSDT with an agent's key (the raw answer). */
export const marketBuy = (t: TestApp, key: string, quantity = '0.01') =>
  call(t.app, keyHeader(key), 'POST', '/trade/order', {
    symbol: 'BTCUSDT',
    side: 'buy',
    type: 'market',
    quantity,
  });

/** A draft battle (`body` over the defaults) with `agents` added as participants; its id. */
export const draftBattle = async (
  t: TestApp,
  headers: Record<string, string>,
  agents: readonly { agentId: string }[],
  body: Record<string, unknown> = {},
): Promise<string> => {
  const b = await ok(t.app, headers, 'POST', '/battles', { name: 'Duel', ...body }, 201);
  for (const a of agents)
    await ok(t.app, headers, 'POST', `/battles/${b.battle_id}/participants`, { agent_id: a.agentId }, 201);
  return b.battle_id as string;
};
