import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createKeyIndex } from '../../commands/key-index';
import { apiKeyStreamId } from '../../domain/account/key-index';
import type { DomainError } from '../../domain/shared/errors';
import { createAuthService } from '../../src/auth/service';
import { changeAccountStatus } from '../../src/cli/accounts';
import { useTestApp } from '../support/test-app';
import { api, freshIp, type TestApp } from './support';

/**
 * A key whose registration answered before the credential read models caught up (an overloaded venue: the
 * registration's read-your-writes wait, `READ_MODEL_WAIT_MS`, ran out) is found by the next login or keyed request
 * once they catch up, instead of being refused as unknown (`AuthService.settleCredentials`). The projections are
 * stopped to hold the read models back, and started again while the login and a keyed request wait.
 */
// Short: every write and keyed request made while the projections stay stopped waits all of it out (1.5 s of each
// took most of the file's minute). Where a case needs the read models caught up it waits for them itself; the
// case whose requests wait through the projections' restart has an app of its own with a longer wait.
const t = useTestApp({ env: { READ_MODEL_WAIT_MS: '300' } });

/** Waits until every read model includes the log's head (a case's precondition, not the request's own wait). */
const caughtUp = async () => {
  const { projections, eventStore } = t.runtime.services;
  expect(await projections.waitFor(await eventStore.headPosition(), 30_000)).toBe(true);
};

/**
 * How long another process serves a write-side answer it remembered (`WRITTEN_TTL_MS` in src/auth/service.ts, 1 s)
 * when nothing tells it of a change: waited out before it is asked again after one.
 */
const writtenAnswerLifetime = () => new Promise((r) => setTimeout(r, 1_100));

/** Registers an account named `name` over HTTP on `on` (default: `t`; 201 expected): its key, secret and id. */
const register = async (name: string, on: { app: TestApp['app'] } = t) => {
  const registered = await on.app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    remoteAddress: freshIp(),
    payload: { display_name: name },
  });
  expect(registered.statusCode).toBe(201);
  const body = registered.json();
  return {
    apiKey: body.api_key as string,
    apiSecret: body.api_secret as string,
    accountId: body.account_id as string,
  };
};

describe('credentials registered while the read models lag, then catch up', () => {
  // The login and the keyed request below wait through the projections' restart 300 ms in and their catch-up.
  const lag = useTestApp({ env: { READ_MODEL_WAIT_MS: '1500' } });

  it('log in and authenticate once the read models include the key; an unknown key is still refused', async () => {
    const projections = lag.runtime.services.projections;
    await projections.stop();
    let restarted = false;
    try {
      const { apiKey, apiSecret, accountId } = await register('Lagging', lag);

      // The read models have not folded the registration: the key is not in `api_keys` yet.
      const login = lag.app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        remoteAddress: freshIp(),
        payload: { api_key: apiKey, api_secret: apiSecret },
      });
      const info = api(lag.app, { method: 'GET', url: '/account/info', headers: { 'x-api-key': apiKey } });
      await new Promise((r) => setTimeout(r, 300));
      await projections.start();
      restarted = true;
      const [loggedIn, keyed] = await Promise.all([login, info]);
      expect(loggedIn.statusCode).toBe(200);
      expect(loggedIn.json().token).toEqual(expect.any(String));
      expect(keyed.statusCode).toBe(200);
      expect(keyed.json().account_id).toBe(accountId);

      // A key that does not exist is refused as before, after the read models are seen caught up.
      const unknown = await api(lag.app, {
        method: 'GET',
        url: '/account/info',
        headers: { 'x-api-key': `ak_live_${'x'.repeat(43)}` },
      });
      expect([unknown.statusCode, unknown.json().error.code]).toEqual([401, 'INVALID_API_KEY']);
    } finally {
      if (!restarted) await projections.start();
    }
  });
});

describe('credentials registered while the read models lag', () => {
  it('log in right after registering while the read models stay behind: the key is found on the write side', async () => {
    const projections = t.runtime.services.projections;
    await projections.stop();
    try {
      const { apiKey, apiSecret, accountId } = await register('Still lagging');
      const login = (secret: string) =>
        t.app.inject({
          method: 'POST',
          url: '/api/v1/auth/login',
          remoteAddress: freshIp(),
          payload: { api_key: apiKey, api_secret: secret },
        });
      // The projections stay stopped: no wait, however long, would let the read models include the key.
      const loggedIn = await login(apiSecret);
      expect([loggedIn.statusCode, loggedIn.json().token_type]).toEqual([200, 'Bearer']);
      const claims = t.runtime.services.auth!.tokens.verify(loggedIn.json().token);
      expect(claims.accountId).toBe(accountId);
      // The secret is still checked.
      const wrong = await login(`sk_live_${'x'.repeat(43)}`);
      expect([wrong.statusCode, wrong.json().error.code]).toEqual([401, 'INVALID_TOKEN']);
      // The token authenticates at once too: its account is checked on the write side until the read model has it.
      const principal = await t.runtime.services.auth!.resolveCredential({ token: loggedIn.json().token });
      expect(principal).toMatchObject({ accountId, via: 'jwt' });
      const agent = await t.app.inject({
        method: 'POST',
        url: '/api/v1/agents',
        remoteAddress: freshIp(),
        headers: { authorization: `Bearer ${loggedIn.json().token}` },
        payload: { display_name: 'First agent' },
      });
      expect([agent.statusCode, agent.json().agent_id]).toEqual([201, expect.any(String)]);
    } finally {
      await projections.start();
    }
  });

  it('an index entry naming an account whose key is another gives no login, whatever the secret', async () => {
    const { apiSecret, accountId } = await register('Indexed elsewhere');
    // A well-formed key nobody registered, whose index entry names that account (as a re-issue or a hand-made
    // event would): the account's own stream, which holds its real key's hash, refuses it.
    const stray = `ak_live_${'s'.repeat(43)}`;
    const hash = createHash('sha256').update(stray).digest('hex');
    await t.runtime.services.eventStore.append(apiKeyStreamId(hash), [
      {
        type: 'AccountKeyIssued',
        data: { key_hash: hash, account_id: accountId, issued_at: new Date().toISOString() },
      },
    ]);
    const loggedIn = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      remoteAddress: freshIp(),
      payload: { api_key: stray, api_secret: apiSecret },
    });
    expect([loggedIn.statusCode, loggedIn.json().error.code]).toEqual([401, 'INVALID_API_KEY']);

    // An entry naming an account that was never recorded (a registration that failed after writing it): the key
    // is unknown, as any other, not ACCOUNT_NOT_FOUND.
    const orphan = `ak_live_${'o'.repeat(43)}`;
    const orphanHash = createHash('sha256').update(orphan).digest('hex');
    await t.runtime.services.eventStore.append(apiKeyStreamId(orphanHash), [
      {
        type: 'AccountKeyIssued',
        data: { key_hash: orphanHash, account_id: randomUUID(), issued_at: new Date().toISOString() },
      },
    ]);
    const orphaned = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      remoteAddress: freshIp(),
      payload: { api_key: orphan, api_secret: apiSecret },
    });
    expect([orphaned.statusCode, orphaned.json().error.code]).toEqual([401, 'INVALID_API_KEY']);
  });
});

describe('agent keys issued while the read models stay behind', () => {
  /** Registers, logs in and returns a JWT caller over HTTP, all while the projections are stopped. */
  const loggedIn = async (name: string) => {
    const { apiKey, apiSecret } = await register(name);
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      remoteAddress: freshIp(),
      payload: { api_key: apiKey, api_secret: apiSecret },
    });
    expect(login.statusCode).toBe(200);
    const bearer = { authorization: `Bearer ${login.json().token}` };
    /** A call with the account's JWT (agent management takes only that). */
    const manage = (method: 'POST' | 'DELETE', url: string, payload?: object) =>
      t.app.inject({ method, url: `/api/v1${url}`, remoteAddress: freshIp(), headers: bearer, payload });
    return { manage, bearer };
  };
  /** A keyed request of the agent's own: its orders (200, none yet, when the key is taken). */
  const orders = (apiKey: string) =>
    api(t.app, { method: 'GET', url: '/trade/orders', headers: { 'x-api-key': apiKey } });
  /** The agent's account info with its key (a read). */
  const info = (apiKey: string) =>
    api(t.app, { method: 'GET', url: '/account/info', headers: { 'x-api-key': apiKey } });

  it("an agent's key is taken from the moment its creation answers, with no read model folding it", async () => {
    const projections = t.runtime.services.projections;
    await projections.stop();
    try {
      const { manage } = await loggedIn('Agent owner');
      const created = await manage('POST', '/agents', { display_name: 'Fresh agent' });
      expect(created.statusCode).toBe(201);
      const { api_key: agentKey, agent_id: agentId } = created.json();
      // The projections stay stopped: no wait, however long, lets `api_keys` include the key.
      const listed = await orders(agentKey);
      expect([listed.statusCode, listed.json().error?.code]).toEqual([200, undefined]);
      const principal = await t.runtime.services.auth!.resolveCredential(agentKey);
      expect(principal).toMatchObject({ agentId, via: 'agent_key', agentStatus: 'active' });
    } finally {
      await projections.start();
    }
  });

  it("the account's JWT acts for an agent created a moment ago (X-Agent-Id), not another account's", async () => {
    const projections = t.runtime.services.projections;
    await projections.stop();
    try {
      const { manage, bearer } = await loggedIn('Scoping owner');
      const created = await manage('POST', '/agents', { display_name: 'Scoped agent' });
      expect(created.statusCode).toBe(201);
      const agentId: string = created.json().agent_id;
      // The projections stay stopped: the `agents` read model has no row for it; its stream says whose it is.
      const scoped = await api(t.app, {
        method: 'GET',
        url: '/trade/orders',
        headers: { ...bearer, 'x-agent-id': agentId },
      });
      expect([scoped.statusCode, scoped.json().error?.code]).toEqual([200, undefined]);
      const auth = t.runtime.services.auth!;
      const principal = await auth.resolveCredential({ token: bearer.authorization.slice(7) });
      expect(await auth.scopeToAgent(principal, agentId, 'agent_id')).toMatchObject({
        agentId,
        agentStatus: 'active',
      });
      // Another account's JWT naming that agent is still refused.
      const other = await loggedIn('Other scoping owner');
      const foreign = await api(t.app, {
        method: 'GET',
        url: '/trade/orders',
        headers: { ...other.bearer, 'x-agent-id': agentId },
      });
      expect([foreign.statusCode, foreign.json().error?.code]).toEqual([403, 'PERMISSION_DENIED']);
    } finally {
      await projections.start();
    }
  });

  it("a regenerated key works at once and the key it replaced is refused; a deleted agent's key is refused", async () => {
    const projections = t.runtime.services.projections;
    await projections.stop();
    try {
      const { manage } = await loggedIn('Rotating owner');
      const created = await manage('POST', '/agents', { display_name: 'Rotating agent' });
      const { api_key: first, agent_id: agentId } = created.json();
      expect((await orders(first)).statusCode).toBe(200);

      const regenerated = await manage('POST', `/agents/${agentId}/regenerate-key`);
      expect(regenerated.statusCode).toBe(200);
      const second: string = regenerated.json().api_key;
      expect((await orders(second)).statusCode).toBe(200);
      const old = await orders(first);
      expect([old.statusCode, old.json().error.code]).toEqual([401, 'INVALID_API_KEY']);

      const deleted = await manage('DELETE', `/agents/${agentId}`);
      expect(deleted.statusCode).toBe(204);
      for (const key of [first, second]) {
        const refused = await info(key);
        expect([refused.statusCode, refused.json().error.code]).toEqual([401, 'INVALID_API_KEY']);
      }
    } finally {
      await projections.start();
    }
  });

  it("another process that saw no change refuses a replaced key and a deleted agent's key from the write side", async () => {
    const projections = t.runtime.services.projections;
    await projections.stop();
    try {
      const { manage } = await loggedIn('Other process owner');
      const { api_key: first, agent_id: agentId } = (
        await manage('POST', '/agents', { display_name: 'Watched agent' })
      ).json();
      const second: string = (await manage('POST', `/agents/${agentId}/regenerate-key`)).json().api_key;
      // An auth service as another API process has: none of this process's revocations, the same database and event
      // store, and no wait (the read models have neither key: only the write side can answer).
      const services = t.runtime.services;
      const other = createAuthService({
        db: services.database.db,
        tokens: services.auth!.tokens,
        waitForReadModels: async () => false,
        keyOnWriteSide: createKeyIndex(services.eventStore).inForce,
      });
      const refusal = (key: string) =>
        other.resolveCredential(key).then(
          () => 'taken',
          (e: DomainError) => e.code,
        );
      expect(await other.resolveCredential(second)).toMatchObject({ agentId, via: 'agent_key' });
      expect(await refusal(first)).toBe('INVALID_API_KEY');

      // Archived: the key still reads, but says the agent is archived (trading refuses it), from the agent's stream.
      expect((await manage('POST', `/agents/${agentId}/archive`)).statusCode).toBe(200);
      await writtenAnswerLifetime();
      expect(await other.resolveCredential(second)).toMatchObject({ agentId, agentStatus: 'archived' });

      expect((await manage('DELETE', `/agents/${agentId}`)).statusCode).toBe(204);
      await writtenAnswerLifetime();
      expect(await refusal(second)).toBe('INVALID_API_KEY');
    } finally {
      await projections.start();
    }
  });
});

describe('keys the write side refuses while the read models stay behind', () => {
  it("a suspended account's key found only in the index is refused; an agent key cannot log in", async () => {
    const projections = t.runtime.services.projections;
    await projections.stop();
    try {
      const { apiKey, apiSecret, accountId } = await register('Suspended while lagging');
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        remoteAddress: freshIp(),
        payload: { api_key: apiKey, api_secret: apiSecret },
      });
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/agents',
        remoteAddress: freshIp(),
        headers: { authorization: `Bearer ${login.json().token}` },
        payload: { display_name: 'Cannot log in' },
      });
      expect(created.statusCode).toBe(201);
      // An agent key is in force in the index, and is still no login key.
      const agentLogin = await t.app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        remoteAddress: freshIp(),
        payload: { api_key: created.json().api_key, api_secret: apiSecret },
      });
      expect([agentLogin.statusCode, agentLogin.json().error.code]).toEqual([401, 'INVALID_API_KEY']);

      const services = t.runtime.services;
      await changeAccountStatus(services.accounts!, 'suspend', accountId, 'audit');
      // Another process's auth (no invalidation from here, no read-model row): the index's answer is checked.
      const other = createAuthService({
        db: services.database.db,
        tokens: services.auth!.tokens,
        waitForReadModels: async () => false,
        keyOnWriteSide: createKeyIndex(services.eventStore).inForce,
      });
      for (const key of [apiKey, created.json().api_key as string]) {
        const refused = await other.resolveCredential(key).then(
          () => 'taken',
          (e: DomainError) => e.code,
        );
        expect(refused).toBe('ACCOUNT_SUSPENDED');
      }
    } finally {
      await projections.start();
    }
  });
});

describe('an agent archived while the read models stay behind', () => {
  it("its key is refused for changes at once: the agent's status from its stream, not the stale read model", async () => {
    const { apiKey, apiSecret } = await register('Archiving owner');
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      remoteAddress: freshIp(),
      payload: { api_key: apiKey, api_secret: apiSecret },
    });
    const bearer = { authorization: `Bearer ${login.json().token}` };
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      remoteAddress: freshIp(),
      headers: bearer,
      payload: { display_name: 'Soon archived' },
    });
    const { api_key: agentKey } = created.json();
    /** A change the spec refuses to an archived agent's key (rule 6; `assertAgentActive`). */
    const change = () =>
      api(t.app, {
        method: 'PUT',
        url: '/account/fill-model',
        headers: { 'x-api-key': agentKey },
        payload: { fill_model: 'instant' },
      });
    // Known to every read model before they stop.
    await caughtUp();
    expect((await change()).statusCode).toBe(200);
    const projections = t.runtime.services.projections;
    await projections.stop();
    try {
      const archived = await t.app.inject({
        method: 'POST',
        url: `/api/v1/agents/${created.json().agent_id}/archive`,
        remoteAddress: freshIp(),
        headers: bearer,
      });
      expect(archived.statusCode).toBe(200);
      const refused = await change();
      expect([refused.statusCode, refused.json().error?.details?.reason]).toEqual([403, 'agent_archived']);
    } finally {
      await projections.start();
    }
  });
});
