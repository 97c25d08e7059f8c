import { describe, expect, it } from 'vitest';
import type { DomainError } from '../../domain/shared/errors';
import { type CredentialWatch, createCredentialWatcher } from '../../src/auth/credential-watch';
import type { Principal } from '../../src/auth/principal';
import { createAuthService } from '../../src/auth/service';
import { statementCounter } from '../support/statement-counter';
import { useTestApp } from '../support/test-app';
import { api, bearer, createAgent, registerAccount } from './support';

/**
 * The heartbeat check of every open socket's credential (spec "Authentication" rule 6, `CredentialWatcher`): one
 * round reads the credentials of all watched connections in at most three statements (keys, JWT accounts, scoped
 * agents: `= any($1)`), however many there are, instead of one statement per socket; and a credential refused in
 * that round (here: a key replaced through the app, which this auth service, as another process's, does not hear)
 * ends its watch with the credential's error. The auth service runs over the app's read models with a counting plugin.
 */
const t = useTestApp();

/** An auth service over the app's read models whose statements are counted (`statements`). */
const countingAuth = () => {
  const statements = statementCounter();
  const auth = createAuthService({
    db: t.runtime.services.database.db.withPlugin(statements.plugin),
    tokens: t.runtime.services.auth!.tokens,
    waitForReadModels: async () => true,
  });
  return { statements, auth };
};

describe('the shared credential check of open sockets', () => {
  it('reads N sockets’ credentials in the same few statements per round for N = 3 and N = 30', async () => {
    const { statements, auth } = countingAuth();
    // A heartbeat far away: the rounds are run by hand.
    const watcher = createCredentialWatcher(auth, 3_600_000);
    const owner = await registerAccount(t.app, {}, { plain: true });
    const agents = await Promise.all(Array.from({ length: 10 }, () => createAgent(t.app, owner)));
    const refused = new Map<string, string>();
    const watches: CredentialWatch[] = [];

    /** Watches `n` more sockets: agent keys, the account's key scoped to an agent, the account's JWT scoped to one. */
    const open = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const agent = agents[(watches.length + i) % agents.length]!;
        const kind = (watches.length + i) % 3;
        const resolve = (): Promise<Principal> =>
          kind === 0
            ? auth.resolveCredential(agent.apiKey)
            : auth
                .resolveCredential(kind === 1 ? owner.apiKey : { token: owner.token })
                .then((p) => auth.scopeToAgent(p, agent.agentId, 'agent_id'));
        const principal = await resolve();
        const label = `${kind}:${agent.agentId}:${watches.length + i}`;
        watches.push(
          watcher.watch(
            { apiKey: kind === 2 ? undefined : kind === 0 ? agent.apiKey : owner.apiKey, principal },
            resolve,
            (e: DomainError) => {
              refused.set(label, e.code);
            },
          ),
        );
      }
    };

    /** Statements of one round, its checks included (they are answered from what the round read). */
    const round = async () => {
      // The cache entries of the opening resolutions expire (2 s): each check would otherwise read its own.
      await new Promise((r) => setTimeout(r, 2_100));
      statements.reset();
      await watcher.checkAll();
      await new Promise((r) => setTimeout(r, 50));
      return statements.count;
    };

    await open(3);
    const few = await round();
    await open(27);
    expect(watcher.size).toBe(30);
    const many = await round();
    expect(few).toBeGreaterThan(0);
    expect(few).toBeLessThanOrEqual(3);
    expect(many).toBe(few);
    expect(refused.size).toBe(0);

    // A key replaced elsewhere: the next round ends the watches of that key (and of no other credential).
    const replaced = agents[0]!;
    const regenerated = await api(t.app, {
      method: 'POST',
      url: `/agents/${replaced.agentId}/regenerate-key`,
      headers: bearer(owner),
    });
    expect(regenerated.statusCode).toBe(200);
    await round();
    const ended = [...refused.keys()];
    expect(ended.length).toBeGreaterThan(0);
    for (const label of ended) expect(label.startsWith(`0:${replaced.agentId}:`)).toBe(true);
    expect(new Set(refused.values())).toEqual(new Set(['INVALID_API_KEY']));
    expect(watcher.size).toBe(30 - ended.length);
    for (const w of watches) w.stop();
    expect(watcher.size).toBe(0);
  }, 60_000);

  it('a change of this process during a prefetch discards only what was read for its owner', async () => {
    const { statements, auth } = countingAuth();
    const [changed, kept] = await Promise.all([
      registerAccount(t.app, {}, { plain: true }),
      registerAccount(t.app, {}, { plain: true }),
    ]);
    const watched = (o: typeof changed) => ({
      apiKey: o.apiKey,
      principal: { accountId: o.accountId, via: 'account_key' as const },
    });
    const prefetched = auth.prefetch([watched(changed), watched(kept)]);
    // While its statements run: a change of one account (as a suspension made by this process would announce).
    auth.invalidate({ accountId: changed.accountId });
    await prefetched;
    statements.reset();
    await auth.resolveCredential(kept.apiKey);
    expect(statements.count).toBe(0);
    await auth.resolveCredential(changed.apiKey);
    expect(statements.count).toBeGreaterThan(0);
  });
});
