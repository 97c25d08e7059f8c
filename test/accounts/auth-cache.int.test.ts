import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../commands/credentials';
import { DomainError } from '../../domain/shared/errors';
import { createAuthService } from '../../src/auth/service';
import { statementCounter } from '../support/statement-counter';
import { useTestApp } from '../support/test-app';
import { api, bearer, createAgent, registerAccount } from './support';

/**
 * The auth cache's refresh of the keys in use (src/auth/service.ts, issue 23): an auth service over the app's read
 * models, as another process's would be (the app's own changes do not reach its `invalidate`), with a short cache
 * lifetime. Its statements are counted: the keys in use cost about one statement per three quarters of a lifetime
 * together, not one each per lifetime; and a key replaced elsewhere is still refused within a lifetime.
 */
const t = useTestApp();

const TTL_MS = 400;

describe('auth cache: the keys in use refreshed in one statement', () => {
  it('reads nine keys in use about once per 3/4 lifetime together, and refuses a replaced key within a lifetime', async () => {
    const owner = await registerAccount(t.app);
    const agents = await Promise.all(Array.from({ length: 8 }, () => createAgent(t.app, owner)));
    const keys = [owner.apiKey, ...agents.map((a) => a.apiKey)];
    const statements = statementCounter();
    const auth = createAuthService({
      db: t.runtime.services.database.db.withPlugin(statements.plugin),
      tokens: t.runtime.services.auth!.tokens,
      waitForReadModels: async () => true,
      cacheTtlMs: TTL_MS,
    });
    // Every key resolves and is cached (one statement each).
    for (const key of keys) expect((await auth.resolveCredential(key)).accountId).toBe(owner.accountId);
    expect(statements.count).toBe(keys.length);

    // In use for six lifetimes: one statement per key and lifetime would be 9 × 6 = 54.
    statements.reset();
    const started = performance.now();
    while (performance.now() - started < 6 * TTL_MS) {
      for (const key of keys) expect((await auth.resolveCredential(key)).accountId).toBe(owner.accountId);
      await new Promise((r) => setTimeout(r, 10));
    }
    const lifetimes = (performance.now() - started) / TTL_MS;
    expect(statements.count).toBeGreaterThan(0);
    expect(statements.count).toBeLessThanOrEqual(Math.ceil(lifetimes / 0.75) + 1);
    expect(statements.count).toBeLessThan(keys.length * Math.floor(lifetimes));

    // Replaced through the app (this service hears no `invalidate`): refused once the read models have it, within
    // a lifetime, although the key stays in use.
    const regenerated = await api(t.app, {
      method: 'POST',
      url: `/agents/${agents[0]!.agentId}/regenerate-key`,
      headers: bearer(owner),
    });
    expect(regenerated.statusCode).toBe(200);
    const replacedAt = performance.now();
    let refusedAfter: number | undefined;
    while (refusedAfter === undefined && performance.now() - replacedAt < 3 * TTL_MS) {
      const outcome = await auth.resolveCredential(agents[0]!.apiKey).catch((e: unknown) => e);
      if (outcome instanceof DomainError) {
        expect(outcome.code).toBe('INVALID_API_KEY');
        refusedAfter = performance.now() - replacedAt;
      }
      for (const key of keys.slice(2)) await auth.resolveCredential(key);
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(refusedAfter).toBeDefined();
    expect(refusedAfter!).toBeLessThanOrEqual(TTL_MS + 300);
    const fresh = regenerated.json().api_key as string;
    expect((await auth.resolveCredential(fresh)).agentId).toBe(agents[0]!.agentId);

    // This process's own change applies at once, as before.
    auth.invalidate({ agentId: agents[1]!.agentId, revokedKeyHashes: [sha256Hex(agents[1]!.apiKey)] });
    await expect(auth.resolveCredential(agents[1]!.apiKey)).rejects.toMatchObject({
      code: 'INVALID_API_KEY',
    });
  });
});
