import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { sha256Hex } from '../../commands/credentials';
import type { LogPosition } from '../../ports/event-store';
import { changeAccountStatus } from '../../src/cli/accounts';
import {
  api,
  bearer,
  createAgent,
  errorOf,
  freshIp,
  keyHeader,
  registerAccount,
  type TestAccount,
  type TestApp,
} from './support';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** authAccountSuite: registered by `identity.int.test.ts` on its shared app. */
export const authAccountSuite = (use: () => TestApp): void => {
  let t: TestApp;
  beforeAll(() => {
    t = use();
  });
  const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
    api(t.app, { method: 'POST', url, payload: payload as object, headers, remoteAddress: freshIp() });

  it('documents every auth, account and agent endpoint in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    const expected: [string, string][] = [
      ['post', '/auth/register'],
      ['post', '/auth/login'],
      ['post', '/auth/user-login'],
      ['put', '/auth/password'],
      ['get', '/account/info'],
      ['put', '/account/risk-profile'],
      ['post', '/agents'],
      ['get', '/agents'],
      ['get', '/agents/overview'],
      ['get', '/agents/{agent_id}'],
      ['put', '/agents/{agent_id}'],
      ['delete', '/agents/{agent_id}'],
      ['post', '/agents/{agent_id}/clone'],
      ['post', '/agents/{agent_id}/reset'],
      ['post', '/agents/{agent_id}/archive'],
      ['get', '/agents/{agent_id}/api-key'],
      ['post', '/agents/{agent_id}/regenerate-key'],
      ['get', '/agents/{agent_id}/risk-profile'],
      ['put', '/agents/{agent_id}/risk-profile'],
      ['get', '/agents/{agent_id}/skill.md'],
    ];
    for (const [method, path] of expected) {
      expect(doc.paths[`/api/v1${path}`]?.[method], `${method} ${path}`).toBeDefined();
    }
  });

  describe('POST /auth/register', () => {
    it('returns 201 with the account id, key, secret, name, default balance and a message', async () => {
      const res = await post('/auth/register', { display_name: 'Alice' });
      expect(res.statusCode).toBe(201);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(
        ['account_id', 'api_key', 'api_secret', 'display_name', 'message', 'starting_balance'].sort(),
      );
      expect(body.account_id).toMatch(UUID);
      expect(body.api_key).toMatch(/^ak_live_[A-Za-z0-9_-]{43}$/);
      expect(body.api_secret).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/);
      expect(body.display_name).toBe('Alice');
      expect(body.starting_balance).toBe('10000.00000000');
      expect(body.message).toMatch(/only/);
      expect(res.headers['x-ratelimit-limit']).toBe('60');
    });

    it('accepts a starting balance as a decimal string or a number, and a 64-character name', async () => {
      const a = await post('/auth/register', { display_name: 'B', starting_balance: '2500.5' });
      expect(a.json().starting_balance).toBe('2500.50000000');
      const b = await post('/auth/register', { display_name: 'x'.repeat(64), starting_balance: 1234.25 });
      expect(b.statusCode).toBe(201);
      expect(b.json().starting_balance).toBe('1234.25000000');
    });

    it.each([
      ['missing display_name', {}],
      ['empty display_name', { display_name: '' }],
      ['blank display_name', { display_name: '   ' }],
      ['65-character display_name', { display_name: 'x'.repeat(65) }],
      ['bad email', { display_name: 'A', email: 'not-an-email' }],
      ['non-decimal balance', { display_name: 'A', starting_balance: 'abc' }],
      ['zero balance', { display_name: 'A', starting_balance: '0' }],
      ['negative balance', { display_name: 'A', starting_balance: '-10' }],
      ['9 decimal places', { display_name: 'A', starting_balance: '1.123456789' }],
      ['password of 7 characters', { display_name: 'A', email: 'p7@example.com', password: '1234567' }],
      [
        'password of 73 characters',
        { display_name: 'A', email: 'p73@example.com', password: 'p'.repeat(73) },
      ],
      ['password without email', { display_name: 'A', password: 'long enough pw' }],
      ['a display_name that is not a string', { display_name: 42 }],
    ])('refuses %s with VALIDATION_ERROR 422', async (_name, body) => {
      const res = await post('/auth/register', body);
      expect(res.statusCode).toBe(422);
      expect(errorOf(res).code).toBe('VALIDATION_ERROR');
    });

    it('refuses an email already registered (any letter case) with DUPLICATE_ACCOUNT 409', async () => {
      const email = `dup.${Date.now()}@example.com`;
      expect((await post('/auth/register', { display_name: 'A', email })).statusCode).toBe(201);
      const again = await post('/auth/register', { display_name: 'B', email: email.toUpperCase() });
      expect(again.statusCode).toBe(409);
      expect(errorOf(again).code).toBe('DUPLICATE_ACCOUNT');
    });

    it('keeps emails unique under concurrent registration: exactly one of 6 wins', async () => {
      const email = `race.${Date.now()}@example.com`;
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => post('/auth/register', { display_name: `R${i}`, email })),
      );
      const codes = results.map((r) => r.statusCode).sort();
      expect(codes).toEqual([201, 409, 409, 409, 409, 409]);
      const count = await t.database.db
        .selectFrom('accounts')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('email', '=', email)
        .executeTakeFirstOrThrow();
      expect(Number(count.n)).toBe(1);
    });

    it('answers INTERNAL_ERROR 500 in the envelope, without internals, when storage fails', async () => {
      const spy = vi
        .spyOn(t.runtime.services.accounts!, 'register')
        .mockRejectedValueOnce(new Error('connection to 10.0.0.5 refused'));
      const res = await post('/auth/register', { display_name: 'A' });
      spy.mockRestore();
      expect(res.statusCode).toBe(500);
      expect(errorOf(res)).toEqual({ code: 'INTERNAL_ERROR', message: 'internal error' });
    });
  });

  describe('POST /auth/login', () => {
    let acct: TestAccount;
    beforeAll(async () => {
      acct = await registerAccount(t.app);
    });

    it('returns a Bearer JWT expiring in one hour; a new login refreshes it', async () => {
      const before = Date.now();
      const res = await post('/auth/login', { api_key: acct.apiKey, api_secret: acct.apiSecret });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(['expires_at', 'token', 'token_type']);
      expect(body.token_type).toBe('Bearer');
      const expires = new Date(body.expires_at).getTime();
      expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 3600_000);
      expect(expires).toBeLessThanOrEqual(Date.now() + 3600_000);
      const again = await post('/auth/login', { api_key: acct.apiKey, api_secret: acct.apiSecret });
      expect(again.json().token).not.toBe(body.token);
      for (const token of [body.token, again.json().token]) {
        expect(
          (await api(t.app, { method: 'GET', url: '/account/info', headers: bearer({ token }) })).statusCode,
        ).toBe(200);
      }
    });

    it('INVALID_API_KEY 401 for an unknown, malformed or agent key', async () => {
      const agent = await createAgent(t.app, acct);
      for (const api_key of ['ak_live_' + 'A'.repeat(43), 'abc', 'sk_live_nope', agent.apiKey]) {
        const res = await post('/auth/login', { api_key, api_secret: acct.apiSecret });
        expect(res.statusCode).toBe(401);
        expect(errorOf(res).code).toBe('INVALID_API_KEY');
      }
    });

    it('INVALID_TOKEN 401 for a wrong secret', async () => {
      for (const api_secret of [`sk_live_${'B'.repeat(43)}`, 'wrong', acct.apiKey]) {
        const res = await post('/auth/login', { api_key: acct.apiKey, api_secret });
        expect(res.statusCode).toBe(401);
        expect(errorOf(res).code).toBe('INVALID_TOKEN');
      }
    });

    it('ACCOUNT_NOT_FOUND 404 for a key whose account is gone', async () => {
      const ghostKey = `ak_live_${'G'.repeat(43)}`;
      await t.database.db
        .insertInto('api_keys')
        .values({
          key_hash: sha256Hex(ghostKey),
          owner_type: 'account',
          account_id: randomUUID(),
          agent_id: null,
          key_preview: 'ak_live_GGGG...',
          created_at: new Date().toISOString(),
        })
        .execute();
      const res = await post('/auth/login', { api_key: ghostKey, api_secret: acct.apiSecret });
      expect(res.statusCode).toBe(404);
      expect(errorOf(res).code).toBe('ACCOUNT_NOT_FOUND');
    });

    it('VALIDATION_ERROR 422 for a missing field', async () => {
      const res = await post('/auth/login', { api_key: acct.apiKey });
      expect(res.statusCode).toBe(422);
      expect(errorOf(res).code).toBe('VALIDATION_ERROR');
    });
  });

  describe('POST /auth/user-login and PUT /auth/password', () => {
    it('logs in with email (any case) and password', async () => {
      const acct = await registerAccount(t.app);
      const res = await post('/auth/user-login', {
        email: acct.email!.toUpperCase(),
        password: acct.password,
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().token_type).toBe('Bearer');
      const info = await api(t.app, { method: 'GET', url: '/account/info', headers: bearer(res.json()) });
      expect(info.json().account_id).toBe(acct.accountId);
    });

    it('INVALID_TOKEN 401 for an unknown email, a wrong password, or an account without a password', async () => {
      const acct = await registerAccount(t.app);
      const email = `nopw.${Date.now()}@example.com`;
      await post('/auth/register', { display_name: 'No password', email });
      for (const body of [
        { email: 'nobody.here@example.com', password: 'whatever123' },
        { email: acct.email, password: `${acct.password}x` },
        { email, password: 'whatever123' },
      ]) {
        const res = await post('/auth/user-login', body);
        expect(res.statusCode).toBe(401);
        expect(errorOf(res).code).toBe('INVALID_TOKEN');
      }
      const bad = await post('/auth/user-login', { email: 'not-an-email', password: 'x' });
      expect(bad.statusCode).toBe(422);
    });

    it('sets a first password, then changes it with the current one', async () => {
      const email = `setpw.${Date.now()}@example.com`;
      const reg = (await post('/auth/register', { display_name: 'P', email })).json();
      const token = (await post('/auth/login', { api_key: reg.api_key, api_secret: reg.api_secret })).json()
        .token;
      const put = (payload: object, headers = bearer({ token })) =>
        api(t.app, { method: 'PUT', url: '/auth/password', payload, headers, remoteAddress: freshIp() });

      const first = await put({ password: 'first password' });
      expect(first.statusCode).toBe(200);
      expect(first.json()).toMatchObject({ account_id: reg.account_id, password_set: true });
      expect((await post('/auth/user-login', { email, password: 'first password' })).statusCode).toBe(200);

      const missing = await put({ password: 'second password' });
      expect(missing.statusCode).toBe(422);
      expect(errorOf(missing).details).toEqual({
        issues: [
          { field: 'current_password', location: 'body', message: 'is required to change the password' },
        ],
      });
      const wrong = await put({ password: 'second password', current_password: 'nope nope' });
      expect(wrong.statusCode).toBe(401);
      expect(errorOf(wrong).code).toBe('INVALID_TOKEN');
      const ok = await put({ password: 'second password', current_password: 'first password' });
      expect(ok.statusCode).toBe(200);
      expect((await post('/auth/user-login', { email, password: 'first password' })).statusCode).toBe(401);
      const relogin = await post('/auth/user-login', { email, password: 'second password' });
      expect(relogin.statusCode).toBe(200);
      // The change refuses the tokens issued before it (issue 16): the first one no longer works.
      const stale = await put({ password: 'third password', current_password: 'second password' });
      expect(stale.statusCode).toBe(401);
      expect(errorOf(stale)).toMatchObject({
        code: 'INVALID_TOKEN',
        details: { reason: 'credentials_changed' },
      });

      const fresh = bearer({ token: relogin.json().token });
      expect((await put({ password: 'short' }, fresh)).statusCode).toBe(422);
      expect(
        (await put({ password: 'p'.repeat(73), current_password: 'second password' }, fresh)).statusCode,
      ).toBe(422);
    });

    it('needs a JWT (an API key alone is refused) and an account with an email', async () => {
      const plain = await registerAccount(t.app, {}, { plain: true });
      const byKey = await api(t.app, {
        method: 'PUT',
        url: '/auth/password',
        payload: { password: 'long enough' },
        headers: keyHeader(plain.apiKey),
      });
      expect(byKey.statusCode).toBe(401);
      expect(errorOf(byKey).code).toBe('INVALID_TOKEN');
      const none = await api(t.app, {
        method: 'PUT',
        url: '/auth/password',
        payload: { password: 'long enough' },
      });
      expect(none.statusCode).toBe(401);
      const noEmail = await api(t.app, {
        method: 'PUT',
        url: '/auth/password',
        payload: { password: 'long enough' },
        headers: bearer(plain),
      });
      expect(noEmail.statusCode).toBe(422);
      expect(errorOf(noEmail).code).toBe('VALIDATION_ERROR');
    });
  });

  describe('GET /account/info', () => {
    it('shows the account view with JWT or account key: balance, session, risk profile, status', async () => {
      const acct = await registerAccount(t.app, { starting_balance: '5000' });
      for (const headers of [bearer(acct), keyHeader(acct.apiKey)]) {
        const res = await api(t.app, { method: 'GET', url: '/account/info', headers });
        expect(res.statusCode).toBe(200);
        const body = res.json();
        expect(body).toMatchObject({
          account_id: acct.accountId,
          agent_id: null,
          status: 'active',
          starting_balance: '5000.00000000',
          risk_profile: {
            max_position_size_pct: 25,
            daily_loss_limit_pct: 20,
            max_open_orders: 50,
            max_order_size_pct: 50,
          },
        });
        expect(body.current_session.session_id).toMatch(UUID);
        expect(body.current_session.started_at).toBe(body.created_at);
        expect(Number.isNaN(Date.parse(body.created_at))).toBe(false);
      }
    });

    it("shows the agent's view with its key or with JWT + X-Agent-Id", async () => {
      const acct = await registerAccount(t.app);
      const agent = await createAgent(t.app, acct, { display_name: 'Scoped', starting_balance: '777' });
      for (const headers of [keyHeader(agent.apiKey), { ...bearer(acct), 'x-agent-id': agent.agentId }]) {
        const res = await api(t.app, { method: 'GET', url: '/account/info', headers });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({
          account_id: acct.accountId,
          agent_id: agent.agentId,
          display_name: 'Scoped',
          starting_balance: '777.00000000',
          status: 'active',
        });
      }
    });

    it('refuses missing or bad credentials and foreign or malformed X-Agent-Id', async () => {
      const acct = await registerAccount(t.app);
      const other = await registerAccount(t.app);
      const foreign = await createAgent(t.app, other);
      const mine = await createAgent(t.app, acct);
      const cases: [Record<string, string>, number, string][] = [
        [{}, 401, 'INVALID_API_KEY'],
        [keyHeader('garbage'), 401, 'INVALID_API_KEY'],
        [keyHeader(`ak_live_${'Z'.repeat(43)}`), 401, 'INVALID_API_KEY'],
        [{ authorization: 'Basic abc' }, 401, 'INVALID_TOKEN'],
        [{ authorization: 'Bearer not.a.token' }, 401, 'INVALID_TOKEN'],
        [{ ...bearer(acct), 'x-agent-id': foreign.agentId }, 403, 'PERMISSION_DENIED'],
        [{ ...bearer(acct), 'x-agent-id': randomUUID() }, 403, 'PERMISSION_DENIED'],
        [{ ...bearer(acct), 'x-agent-id': 'not-a-uuid' }, 422, 'VALIDATION_ERROR'],
        [{ ...keyHeader(mine.apiKey), 'x-agent-id': foreign.agentId }, 403, 'PERMISSION_DENIED'],
      ];
      for (const [headers, status, code] of cases) {
        const res = await api(t.app, { method: 'GET', url: '/account/info', headers });
        expect([res.statusCode, errorOf(res).code]).toEqual([status, code]);
      }
    });

    it('ACCOUNT_NOT_FOUND 404 for a valid token of an unknown account', async () => {
      const token = t.runtime.services.auth!.tokens.issue(randomUUID()).token;
      const res = await api(t.app, { method: 'GET', url: '/account/info', headers: bearer({ token }) });
      expect(res.statusCode).toBe(404);
      expect(errorOf(res).code).toBe('ACCOUNT_NOT_FOUND');
    });
  });

  // A sweep of the spec's Authentication rules 2, 4 and 5 found a request carrying both headers authenticated by the
  // token alone: an agent key beside the account's JWT answered the account's wallet (an order sent so landed
  // there), and a garbage key beside a valid JWT got 200. Now both are checked and the agent key scopes.
  describe('X-API-Key and a bearer token together (key/JWT routes)', () => {
    const info = (headers: Record<string, string>) =>
      api(t.app, { method: 'GET', url: '/account/info', headers, remoteAddress: freshIp() });

    it("an agent key beside the account's JWT scopes every figure to the agent (rule 4)", async () => {
      const acct = await registerAccount(t.app, { starting_balance: '5000' });
      const agent = await createAgent(t.app, acct, { display_name: 'Both', starting_balance: '777' });
      const both = { ...bearer(acct), ...keyHeader(agent.apiKey) };
      const shown = await info(both);
      expect([shown.statusCode, shown.json().agent_id, shown.json().starting_balance], shown.body).toEqual([
        200,
        agent.agentId,
        '777.00000000',
      ]);
      const balance = await api(t.app, { method: 'GET', url: '/account/balance', headers: both });
      expect([balance.statusCode, balance.json().total_equity_usdt], balance.body).toEqual([
        200,
        '777.00000000',
      ]);
      // The agent's own X-Agent-Id is fine; another agent of the same account is refused, as with the key alone.
      const sibling = await createAgent(t.app, acct);
      const own = await info({ ...both, 'x-agent-id': agent.agentId });
      expect([own.statusCode, own.json().agent_id], own.body).toEqual([200, agent.agentId]);
      const other = await info({ ...both, 'x-agent-id': sibling.agentId });
      expect([other.statusCode, errorOf(other).code], other.body).toEqual([403, 'PERMISSION_DENIED']);
      // A write acts for the agent too: its limits change, not the account's.
      const put = await api(t.app, {
        method: 'PUT',
        url: '/account/risk-profile',
        headers: both,
        payload: { max_position_size_pct: 11, daily_loss_limit_pct: 12, max_open_orders: 13 },
      });
      expect(put.statusCode, put.body).toBe(200);
      expect((await info(bearer(acct))).json().risk_profile.max_open_orders).toBe(50);
      expect((await info(keyHeader(agent.apiKey))).json().risk_profile.max_open_orders).toBe(13);
      // An archived agent's key reads but does not change anything, beside a JWT as alone.
      await api(t.app, { method: 'POST', url: `/agents/${agent.agentId}/archive`, headers: bearer(acct) });
      const refused = await api(t.app, {
        method: 'PUT',
        url: '/account/risk-profile',
        headers: both,
        payload: { max_position_size_pct: 11, daily_loss_limit_pct: 12, max_open_orders: 14 },
      });
      expect([refused.statusCode, errorOf(refused).details?.reason], refused.body).toEqual([
        403,
        'agent_archived',
      ]);
    });

    it('an account key beside its JWT changes nothing: the account view, X-Agent-Id honoured', async () => {
      const acct = await registerAccount(t.app);
      const agent = await createAgent(t.app, acct);
      const both = { ...bearer(acct), ...keyHeader(acct.apiKey) };
      const plain = await info(both);
      expect([plain.statusCode, plain.json().agent_id], plain.body).toEqual([200, null]);
      const scoped = await info({ ...both, 'x-agent-id': agent.agentId });
      expect([scoped.statusCode, scoped.json().agent_id], scoped.body).toEqual([200, agent.agentId]);
    });

    it('refuses a bad key beside a valid JWT, a bad JWT beside a valid key, and credentials of two accounts', async () => {
      const acct = await registerAccount(t.app);
      const other = await registerAccount(t.app);
      const mine = await createAgent(t.app, acct);
      const foreign = await createAgent(t.app, other);
      const replaced = await createAgent(t.app, acct);
      const regenerated = await api(t.app, {
        method: 'POST',
        url: `/agents/${replaced.agentId}/regenerate-key`,
        headers: bearer(acct),
      });
      expect(regenerated.statusCode, regenerated.body).toBe(200);
      const cases: [string, Record<string, string>, number, string][] = [
        ['garbage key', { ...bearer(acct), ...keyHeader('garbage') }, 401, 'INVALID_API_KEY'],
        [
          'unknown key',
          { ...bearer(acct), ...keyHeader(`ak_live_${'Z'.repeat(43)}`) },
          401,
          'INVALID_API_KEY',
        ],
        ['replaced agent key', { ...bearer(acct), ...keyHeader(replaced.apiKey) }, 401, 'INVALID_API_KEY'],
        [
          'bad token',
          { authorization: 'Bearer not.a.token', ...keyHeader(mine.apiKey) },
          401,
          'INVALID_TOKEN',
        ],
        ['Basic auth', { authorization: 'Basic abc', ...keyHeader(acct.apiKey) }, 401, 'INVALID_TOKEN'],
        [
          'agent key of another account',
          { ...bearer(acct), ...keyHeader(foreign.apiKey) },
          403,
          'PERMISSION_DENIED',
        ],
        [
          'account key of another account',
          { ...bearer(acct), ...keyHeader(other.apiKey) },
          403,
          'PERMISSION_DENIED',
        ],
      ];
      for (const [name, headers, status, code] of cases) {
        const res = await info(headers);
        expect([res.statusCode, errorOf(res).code], `${name}: ${res.body}`).toEqual([status, code]);
      }
      const mixed = await info({ ...bearer(acct), ...keyHeader(other.apiKey) });
      expect(errorOf(mixed).message).toMatch(/different accounts/);
    });

    it("counts against the agent's rate budget, as the agent key alone does", async () => {
      const acct = await registerAccount(t.app);
      const agent = await createAgent(t.app, acct);
      const remaining = (res: { headers: Record<string, unknown> }) =>
        Number(res.headers['x-ratelimit-remaining']);
      const byKey = await info(keyHeader(agent.apiKey));
      const byBoth = await info({ ...bearer(acct), ...keyHeader(agent.apiKey) });
      const byJwt = await info(bearer(acct));
      const byJwtAgain = await info(bearer(acct));
      expect(byBoth.statusCode, byBoth.body).toBe(200);
      expect(remaining(byBoth)).toBe(remaining(byKey) - 1);
      expect(remaining(byJwtAgain)).toBe(remaining(byJwt) - 1);
      expect(remaining(byJwt)).toBeGreaterThan(remaining(byBoth));
    });

    it('on JWT-only routes the token alone decides: a key beside it is neither used nor checked (rule 3)', async () => {
      const acct = await registerAccount(t.app);
      const agent = await createAgent(t.app, acct, { display_name: 'Listed' });
      for (const key of [agent.apiKey, 'garbage', acct.apiKey]) {
        const res = await api(t.app, {
          method: 'GET',
          url: '/agents',
          headers: { ...bearer(acct), ...keyHeader(key) },
        });
        expect([res.statusCode, res.json().total], `${key}: ${res.body}`).toEqual([200, 1]);
      }
      // An API key alone is still refused there.
      const alone = await api(t.app, { method: 'GET', url: '/agents', headers: keyHeader(acct.apiKey) });
      expect([alone.statusCode, errorOf(alone).code]).toEqual([401, 'INVALID_TOKEN']);
    });
  });

  describe('PUT /account/risk-profile', () => {
    let shared: TestAccount | undefined;
    const profile = { max_position_size_pct: 10, daily_loss_limit_pct: 5, max_open_orders: 3 };
    /** What the endpoints show after `profile` is put: `max_order_size_pct` kept at its default 50. */
    const shown = { ...profile, max_order_size_pct: 50 };
    /** PUT /account/risk-profile with an account's or an agent's API key. */
    const putRiskProfile = (apiKey: string, payload: object = profile) =>
      api(t.app, { method: 'PUT', url: '/account/risk-profile', payload, headers: keyHeader(apiKey) });

    it('replaces the account limits and returns the three fields and max_order_size_pct', async () => {
      const acct = await registerAccount(t.app);
      const res = await putRiskProfile(acct.apiKey);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(shown);
      const info = await api(t.app, { method: 'GET', url: '/account/info', headers: bearer(acct) });
      expect(info.json().risk_profile).toEqual(shown);
    });

    it('sets max_order_size_pct (ARCHITECTURE §14b) and keeps it when a later PUT omits it', async () => {
      const acct = await registerAccount(t.app);
      const put = (payload: object) => putRiskProfile(acct.apiKey, payload);
      const set = await put({ ...profile, max_order_size_pct: 7 });
      expect([set.statusCode, set.json()]).toEqual([200, { ...profile, max_order_size_pct: 7 }]);
      const next = { max_position_size_pct: 30, daily_loss_limit_pct: 6, max_open_orders: 4 };
      const kept = await put(next);
      expect([kept.statusCode, kept.json()]).toEqual([200, { ...next, max_order_size_pct: 7 }]);
      const info = await api(t.app, { method: 'GET', url: '/account/info', headers: bearer(acct) });
      expect(info.json().risk_profile).toEqual({ ...next, max_order_size_pct: 7 });
    });

    it("with an agent key changes the agent's limits, not the account's; an archived agent's key is refused", async () => {
      const acct = await registerAccount(t.app);
      const agent = await createAgent(t.app, acct);
      const res = await putRiskProfile(agent.apiKey);
      expect(res.json()).toEqual(shown);
      const acctInfo = await api(t.app, { method: 'GET', url: '/account/info', headers: bearer(acct) });
      expect(acctInfo.json().risk_profile.max_open_orders).toBe(50);
      const agentRisk = await api(t.app, {
        method: 'GET',
        url: `/agents/${agent.agentId}/risk-profile`,
        headers: bearer(acct),
      });
      expect(agentRisk.json()).toEqual(shown);

      await api(t.app, { method: 'POST', url: `/agents/${agent.agentId}/archive`, headers: bearer(acct) });
      const refused = await putRiskProfile(agent.apiKey);
      expect(refused.statusCode).toBe(403);
      expect(errorOf(refused)).toMatchObject({
        code: 'PERMISSION_DENIED',
        details: { reason: 'agent_archived' },
      });
      const stillReads = await api(t.app, {
        method: 'GET',
        url: '/account/info',
        headers: keyHeader(agent.apiKey),
      });
      expect(stillReads.statusCode).toBe(200);
      expect(stillReads.json().status).toBe('archived');
    });

    it.each([
      ['max_position_size_pct 0', { ...profile, max_position_size_pct: 0 }],
      ['max_position_size_pct 101', { ...profile, max_position_size_pct: 101 }],
      ['daily_loss_limit_pct 0', { ...profile, daily_loss_limit_pct: 0 }],
      ['daily_loss_limit_pct 101', { ...profile, daily_loss_limit_pct: 101 }],
      ['max_open_orders 0', { ...profile, max_open_orders: 0 }],
      ['max_open_orders 201', { ...profile, max_open_orders: 201 }],
      ['a fraction', { ...profile, max_open_orders: 2.5 }],
      ['a string', { ...profile, max_open_orders: '3' }],
      ['a missing field', { max_position_size_pct: 10, daily_loss_limit_pct: 5 }],
      ['max_order_size_pct 0', { ...profile, max_order_size_pct: 0 }],
      ['max_order_size_pct 101', { ...profile, max_order_size_pct: 101 }],
      ['max_order_size_pct a fraction', { ...profile, max_order_size_pct: 12.5 }],
      ['max_order_size_pct null', { ...profile, max_order_size_pct: null }],
    ])('refuses %s with VALIDATION_ERROR 422', async (_n, payload) => {
      shared ??= await registerAccount(t.app, {}, { plain: true });
      const acct = shared;
      const res = await api(t.app, {
        method: 'PUT',
        url: '/account/risk-profile',
        payload,
        headers: bearer(acct),
      });
      expect(res.statusCode).toBe(422);
      expect(errorOf(res).code).toBe('VALIDATION_ERROR');
    });

    it('accepts the bounds 1/1/1/1 and 100/100/200/100', async () => {
      const acct = await registerAccount(t.app, {}, { plain: true });
      for (const p of [
        { max_position_size_pct: 1, daily_loss_limit_pct: 1, max_open_orders: 1, max_order_size_pct: 1 },
        {
          max_position_size_pct: 100,
          daily_loss_limit_pct: 100,
          max_open_orders: 200,
          max_order_size_pct: 100,
        },
      ]) {
        const res = await api(t.app, {
          method: 'PUT',
          url: '/account/risk-profile',
          payload: p,
          headers: bearer(acct),
        });
        expect(res.json()).toEqual(p);
      }
    });
  });

  describe('account statuses (operator CLI)', () => {
    it('suspend → ACCOUNT_SUSPENDED on login, user-login, key and JWT; reactivate restores; archive refuses again', async () => {
      const acct = await registerAccount(t.app);
      const accounts = t.runtime.services.accounts!;
      const expectSuspended = async () => {
        for (const res of [
          await post('/auth/login', { api_key: acct.apiKey, api_secret: acct.apiSecret }),
          await post('/auth/user-login', { email: acct.email, password: acct.password }),
          await api(t.app, { method: 'GET', url: '/account/info', headers: bearer(acct) }),
          await api(t.app, { method: 'GET', url: '/account/info', headers: keyHeader(acct.apiKey) }),
          await api(t.app, { method: 'GET', url: '/agents', headers: bearer(acct) }),
        ]) {
          expect([res.statusCode, errorOf(res).code]).toEqual([403, 'ACCOUNT_SUSPENDED']);
        }
      };

      const settle = (outcome: { position?: LogPosition }) =>
        outcome.position ? t.runtime.services.projections.waitFor(outcome.position, 5_000) : true;
      const suspended = await changeAccountStatus(accounts, 'suspend', acct.accountId, 'test');
      expect(suspended).toMatchObject({ accountId: acct.accountId, status: 'suspended', changed: true });
      await settle(suspended);
      await expectSuspended();
      expect((await changeAccountStatus(accounts, 'suspend', acct.accountId)).changed).toBe(false);

      const reactivated = await changeAccountStatus(accounts, 'reactivate', acct.accountId);
      expect(reactivated.status).toBe('active');
      await settle(reactivated);
      expect(
        (await post('/auth/login', { api_key: acct.apiKey, api_secret: acct.apiSecret })).statusCode,
      ).toBe(200);
      expect(
        (await api(t.app, { method: 'GET', url: '/account/info', headers: bearer(acct) })).statusCode,
      ).toBe(200);

      const archived = await changeAccountStatus(accounts, 'archive', acct.accountId);
      expect(archived.status).toBe('archived');
      await settle(archived);
      await expectSuspended();
      await expect(changeAccountStatus(accounts, 'suspend', acct.accountId)).rejects.toMatchObject({
        code: 'CONFLICT',
      });
      await expect(changeAccountStatus(accounts, 'suspend', randomUUID())).rejects.toMatchObject({
        code: 'ACCOUNT_NOT_FOUND',
      });
      await expect(changeAccountStatus(accounts, 'suspend', 'nope')).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
      });
    });
  });
};
