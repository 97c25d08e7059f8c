import { randomUUID } from 'node:crypto';
import { createSigner } from 'fast-jwt';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { RATE_LIMIT_GROUPS } from '../../src/application/rate-limits';
import {
  agentRoutes,
  api,
  bearer,
  createAgent,
  errorOf,
  freshIp,
  keyHeader,
  logIn,
  logInWithPassword,
  registerAccount,
  type TestAccount,
  type TestApp,
} from './support';

/** The account's own endpoints, which an agent's key reaches as its agent: a read and a write (method, path, body). */
const ACCOUNT_ENDPOINTS = [
  ['GET', '/account/info', undefined],
  ['PUT', '/account/risk-profile', { max_position_size_pct: 1, daily_loss_limit_pct: 1, max_open_orders: 1 }],
] as const;

/**
 * securitySuite: isolation, tokens, key rotation, the plaintext scan and rate limits; registered by
 * `identity.int.test.ts` on its shared app, whose logger captures every line (the scan reads them all).
 */
export const securitySuite = (use: () => TestApp): void => {
  let t: TestApp;
  let victim: TestAccount;
  let attacker: TestAccount;
  let victimAgent: { agentId: string; apiKey: string };
  let attackerAgent: { agentId: string; apiKey: string };

  beforeAll(async () => {
    t = use();
    victim = await registerAccount(t.app, {}, { login: true });
    attacker = await registerAccount(t.app, {}, { login: true });
    victimAgent = await createAgent(t.app, victim, {
      display_name: 'Victim bot',
      strategy_tags: ['secret-sauce'],
    });
    attackerAgent = await createAgent(t.app, attacker, { display_name: 'Attacker bot' });
  });
  const snapshot = async () => ({
    agent: (
      await api(t.app, { method: 'GET', url: `/agents/${victimAgent.agentId}`, headers: bearer(victim) })
    ).json(),
    account: (await api(t.app, { method: 'GET', url: '/account/info', headers: bearer(victim) })).json(),
    key: (
      await api(t.app, {
        method: 'GET',
        url: `/agents/${victimAgent.agentId}/api-key`,
        headers: bearer(victim),
      })
    ).json(),
    events: [
      await t.runtime.services.eventStore.streamRevision(`agent-${victimAgent.agentId}`),
      await t.runtime.services.eventStore.streamRevision(`account-${victim.accountId}`),
    ],
  });

  describe('isolation between accounts and agents', () => {
    it("another account's JWT can neither read nor change anything of the victim's", async () => {
      const before = await snapshot();
      const id = victimAgent.agentId;
      const attempts = agentRoutes(id);
      for (const [method, url, payload] of attempts) {
        const res = await api(t.app, {
          method,
          url,
          headers: bearer(attacker),
          ...(payload ? { payload } : {}),
        });
        expect([method, url, res.statusCode, errorOf(res).code]).toEqual([
          method,
          url,
          403,
          'PERMISSION_DENIED',
        ]);
        expect(res.body).not.toContain(victimAgent.apiKey);
        expect(res.body).not.toContain('secret-sauce');
      }
      for (const [method, url, payload] of ACCOUNT_ENDPOINTS) {
        for (const headers of [
          { ...bearer(attacker), 'x-agent-id': id },
          { ...keyHeader(attacker.apiKey), 'x-agent-id': id },
        ]) {
          const res = await api(t.app, { method, url, headers, ...(payload ? { payload } : {}) });
          expect([url, res.statusCode, errorOf(res).code]).toEqual([url, 403, 'PERMISSION_DENIED']);
        }
      }
      const list = (
        await api(t.app, { method: 'GET', url: '/agents?include_archived=true', headers: bearer(attacker) })
      ).json();
      expect(list.agents.map((a: { id: string }) => a.id)).toEqual([attackerAgent.agentId]);
      expect(await snapshot()).toEqual(before);
    });

    it("another agent's key cannot act for the victim's agent, and cannot manage agents", async () => {
      const before = await snapshot();
      const sibling = await createAgent(t.app, victim, { display_name: 'Sibling' });
      for (const key of [attackerAgent.apiKey, sibling.apiKey]) {
        for (const [method, url, payload] of ACCOUNT_ENDPOINTS) {
          const res = await api(t.app, {
            method,
            url,
            headers: { ...keyHeader(key), 'x-agent-id': victimAgent.agentId },
            ...(payload ? { payload } : {}),
          });
          expect([res.statusCode, errorOf(res).code]).toEqual([403, 'PERMISSION_DENIED']);
        }
        const manage = await api(t.app, {
          method: 'GET',
          url: `/agents/${victimAgent.agentId}/api-key`,
          headers: keyHeader(key),
        });
        expect([manage.statusCode, errorOf(manage).code]).toEqual([401, 'INVALID_TOKEN']);
      }
      // A sibling agent's key changes only its own limits.
      const own = await api(t.app, {
        method: 'PUT',
        url: '/account/risk-profile',
        headers: keyHeader(sibling.apiKey),
        payload: { max_position_size_pct: 2, daily_loss_limit_pct: 2, max_open_orders: 2 },
      });
      expect(own.statusCode).toBe(200);
      const after = await snapshot();
      expect(after).toEqual(before);
    });
  });

  describe('tokens', () => {
    it('refuses expired, malformed, wrongly signed, tampered and unsigned tokens with INVALID_TOKEN 401', async () => {
      const tokens = t.runtime.services.auth!.tokens;
      const now = Math.floor(Date.now() / 1000);
      const expired = tokens.issue(victim.accountId, new Date(Date.now() - 3601_000)).token;
      const foreignSecret = createSigner({ key: 'x'.repeat(48), algorithm: 'HS256' })({
        sub: victim.accountId,
        iat: now,
        exp: now + 600,
        jti: randomUUID(),
      });
      const [h, , s] = attacker.token.split('.');
      const forgedPayload = Buffer.from(
        JSON.stringify({ sub: victim.accountId, iat: now, exp: now + 600, jti: randomUUID() }),
      ).toString('base64url');
      const tampered = `${h}.${forgedPayload}.${s}`;
      const unsigned = createSigner({ algorithm: 'none' })({
        sub: victim.accountId,
        iat: now,
        exp: now + 600,
        jti: 'j',
      });
      const cases: [string, string][] = [
        ['expired', expired],
        ['foreign secret', foreignSecret],
        ['tampered payload', tampered],
        ['alg none', unsigned],
        ['garbage', 'garbage'],
        ['three garbage parts', 'aaa.bbb.ccc'],
        ['truncated', victim.token.slice(0, -5)],
      ];
      for (const [name, token] of cases) {
        for (const url of ['/agents', '/account/info']) {
          const res = await api(t.app, { method: 'GET', url, headers: bearer({ token }) });
          expect([name, url, res.statusCode, errorOf(res).code]).toEqual([name, url, 401, 'INVALID_TOKEN']);
        }
      }
      const expiredRes = await api(t.app, {
        method: 'GET',
        url: '/agents',
        headers: bearer({ token: expired }),
      });
      expect(errorOf(expiredRes).details.reason).toBe('expired');
      const emptyBearer = await api(t.app, {
        method: 'GET',
        url: '/agents',
        headers: { authorization: 'Bearer ' },
      });
      expect(errorOf(emptyBearer).code).toBe('INVALID_TOKEN');
    });

    it('accepts the same token over the WebSocket resolver, and refuses bad credentials there too', async () => {
      const auth = t.runtime.services.auth!;
      await expect(auth.resolveCredential(victim.token)).resolves.toMatchObject({
        accountId: victim.accountId,
        via: 'jwt',
      });
      await expect(auth.resolveCredential({ apiKey: victimAgent.apiKey })).resolves.toMatchObject({
        accountId: victim.accountId,
        agentId: victimAgent.agentId,
        via: 'agent_key',
        agentStatus: 'active',
      });
      await expect(auth.resolveCredential(victim.apiKey)).resolves.toMatchObject({ via: 'account_key' });
      await expect(auth.resolveCredential('nope')).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
      await expect(auth.resolveCredential({ apiKey: `ak_live_${'Q'.repeat(43)}` })).rejects.toMatchObject({
        code: 'INVALID_API_KEY',
      });
      await expect(auth.resolveCredential({})).rejects.toMatchObject({ code: 'INVALID_API_KEY' });
    });
  });

  describe('key rotation', () => {
    it('the old key fails right after regeneration, even when its lookup was cached', async () => {
      const { agentId, apiKey } = await createAgent(t.app, victim, { display_name: 'Rotating' });
      for (let i = 0; i < 3; i++) {
        expect(
          (await api(t.app, { method: 'GET', url: '/account/info', headers: keyHeader(apiKey) })).statusCode,
        ).toBe(200);
      }
      const inflight = Array.from({ length: 5 }, () =>
        api(t.app, { method: 'GET', url: '/account/info', headers: keyHeader(apiKey) }),
      );
      const regen = await api(t.app, {
        method: 'POST',
        url: `/agents/${agentId}/regenerate-key`,
        headers: bearer(victim),
      });
      await Promise.all(inflight);
      const fresh = regen.json().api_key;
      for (let i = 0; i < 3; i++) {
        const old = await api(t.app, { method: 'GET', url: '/account/info', headers: keyHeader(apiKey) });
        expect([old.statusCode, errorOf(old).code]).toEqual([401, 'INVALID_API_KEY']);
        await expect(t.runtime.services.auth!.resolveCredential(apiKey)).rejects.toMatchObject({
          code: 'INVALID_API_KEY',
        });
      }
      expect(
        (await api(t.app, { method: 'GET', url: '/account/info', headers: keyHeader(fresh) })).statusCode,
      ).toBe(200);
      // A deleted agent's (cached) key fails at once too.
      await api(t.app, { method: 'DELETE', url: `/agents/${agentId}`, headers: bearer(victim) });
      const gone = await api(t.app, { method: 'GET', url: '/account/info', headers: keyHeader(fresh) });
      expect([gone.statusCode, errorOf(gone).code]).toEqual([401, 'INVALID_API_KEY']);
    });
  });

  describe('no plaintext secret, key or password at rest or in logs', () => {
    it('scans the event log, every read-model table and the captured logs', async () => {
      const secrets: string[] = [victim.apiKey, victim.apiSecret, victim.password!, victim.token];
      secrets.push(attacker.apiKey, attacker.apiSecret, attacker.password!, attacker.token);
      secrets.push(victimAgent.apiKey, attackerAgent.apiKey);
      // Exercise every credential path once more: password change, failed logins, regeneration, clone, skill.md.
      const newPassword = 'a brand new passphrase';
      await api(t.app, {
        method: 'PUT',
        url: '/auth/password',
        headers: bearer(victim),
        payload: { password: newPassword, current_password: victim.password },
        remoteAddress: freshIp(),
      });
      secrets.push(newPassword);
      const wrongPassword = 'wrong-password-attempt';
      await logInWithPassword(t.app, { email: victim.email, password: wrongPassword });
      const tooLong = `${'z'.repeat(80)}-too-long-password`;
      await api(t.app, {
        method: 'POST',
        url: '/auth/register',
        payload: { display_name: 'X', email: 'x.too.long@example.com', password: tooLong },
        remoteAddress: freshIp(),
      });
      const badSecret = `sk_live_${'W'.repeat(43)}`;
      await logIn(t.app, { apiKey: victim.apiKey, apiSecret: badSecret });
      secrets.push(wrongPassword, tooLong, badSecret);
      const regen = await api(t.app, {
        method: 'POST',
        url: `/agents/${attackerAgent.agentId}/regenerate-key`,
        headers: bearer(attacker),
      });
      secrets.push(regen.json().api_key);
      const clone = await api(t.app, {
        method: 'POST',
        url: `/agents/${attackerAgent.agentId}/clone`,
        headers: bearer(attacker),
      });
      secrets.push(clone.json().api_key);
      await api(t.app, {
        method: 'GET',
        url: `/agents/${attackerAgent.agentId}/skill.md`,
        headers: bearer(attacker),
      });
      await api(t.app, {
        method: 'GET',
        url: `/agents/${clone.json().agent_id}/api-key`,
        headers: bearer(attacker),
      });
      const userLogin = await logInWithPassword(t.app, { email: victim.email, password: newPassword });
      secrets.push(userLogin.json().token);
      // A request with the key in a query string must not leak through the request log either.
      await api(t.app, {
        method: 'GET',
        url: `/account/info?api_key=${victim.apiKey}`,
        headers: keyHeader(victim.apiKey),
      });

      const db = t.database.db;
      const events = await sql<{
        t: string;
      }>`select (data::text || metadata::text || stream_id || type) as t from events`.execute(db);
      expect(events.rows.length).toBeGreaterThan(10);
      const tables = await sql<{ table_schema: string; table_name: string }>`
        select table_schema, table_name from information_schema.tables
        where table_schema not in ('pg_catalog', 'information_schema') and table_name <> 'events'`.execute(
        db,
      );
      const dumps: string[] = [];
      for (const { table_schema, table_name } of tables.rows) {
        const rows = await sql<
          Record<string, unknown>
        >`select * from ${sql.id(table_schema, table_name)}`.execute(db);
        dumps.push(JSON.stringify(rows.rows));
      }
      expect(tables.rows.map((r) => r.table_name)).toEqual(
        expect.arrayContaining(['accounts', 'agents', 'api_keys']),
      );
      const logs = t.logs.join('');
      expect(logs.length).toBeGreaterThan(1000);
      const haystacks: [string, string][] = [
        ['events', events.rows.map((r) => r.t).join('\n')],
        ['read models', dumps.join('\n')],
        ['logs', logs],
      ];
      for (const secret of secrets) {
        expect(secret.length).toBeGreaterThan(7);
        for (const [where, text] of haystacks) {
          expect(text.includes(secret), `${where} contains a plaintext credential`).toBe(false);
        }
      }
      // The event log does hold the hashes and ciphertexts instead.
      expect(haystacks[0]![1]).toMatch(/scrypt\$16384\$8\$1\$/);
      expect(haystacks[0]![1]).toMatch(/v1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+/);
    });
  });

  describe('rate limits (spec "Limits", ARCHITECTURE §14b)', () => {
    it('has the spec numbers per group', () => {
      expect(RATE_LIMIT_GROUPS).toMatchObject({
        general: 600,
        orders: 100,
        market: 1200,
        analytics: 120,
        auth: 60,
        management: 600,
      });
    });

    it('auth endpoints: 60 per minute per client IP, then 429 with details and Retry-After', async () => {
      const ip = freshIp();
      const payload = { api_key: `ak_live_${'R'.repeat(43)}`, api_secret: `sk_live_${'R'.repeat(43)}` };
      for (let i = 0; i < 60; i++) {
        const res = await api(t.app, { method: 'POST', url: '/auth/login', payload, remoteAddress: ip });
        expect(res.statusCode).toBe(401);
        expect(Number(res.headers['x-ratelimit-remaining'])).toBe(59 - i);
      }
      const limited = await api(t.app, { method: 'POST', url: '/auth/login', payload, remoteAddress: ip });
      expect(limited.statusCode).toBe(429);
      const error = errorOf(limited);
      expect(error.code).toBe('RATE_LIMIT_EXCEEDED');
      expect(error.details).toMatchObject({ limit: 60, window_seconds: 60 });
      expect(error.details.retry_after_seconds).toBeGreaterThan(0);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(limited.headers['x-ratelimit-limit']).toBe('60');
      expect(Number(limited.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
      // Register shares the group and the IP; another IP is unaffected.
      expect(
        (
          await api(t.app, {
            method: 'POST',
            url: '/auth/register',
            payload: { display_name: 'x' },
            remoteAddress: ip,
          })
        ).statusCode,
      ).toBe(429);
      expect(
        (await api(t.app, { method: 'POST', url: '/auth/login', payload, remoteAddress: freshIp() }))
          .statusCode,
      ).toBe(401);
    });

    it('agent management: 600 per minute per account, shared by all its tokens, not by other accounts', async () => {
      const acct = await registerAccount(t.app, {}, { plain: true });
      const second = (await logIn(t.app, acct)).json().token;
      const hit = (token: string) =>
        api(t.app, {
          method: 'GET',
          url: '/agents/not-a-uuid',
          headers: bearer({ token }),
          remoteAddress: freshIp(),
        });
      for (let i = 0; i < 600; i++) {
        const res = await hit(i % 2 ? acct.token : second);
        expect(res.statusCode).toBe(422);
      }
      const limited = await hit(acct.token);
      expect(limited.statusCode).toBe(429);
      expect(errorOf(limited).details).toMatchObject({ limit: 600, window_seconds: 60 });
      expect(limited.headers['retry-after']).toBeDefined();
      expect((await hit(second)).statusCode).toBe(429);
      const other = await registerAccount(t.app, {}, { plain: true });
      expect((await hit(other.token)).statusCode).toBe(422);
    }, 60_000);

    it('general endpoints: 600 per minute per key; the account key and an agent key count apart', async () => {
      const acct = await registerAccount(t.app, {}, { plain: true });
      const agent = await createAgent(t.app, acct);
      const hit = (key: string) =>
        api(t.app, {
          method: 'PUT',
          url: '/account/risk-profile',
          headers: keyHeader(key),
          payload: {},
          remoteAddress: freshIp(),
        });
      for (let i = 0; i < 600; i++) expect((await hit(acct.apiKey)).statusCode).toBe(422);
      const limited = await hit(acct.apiKey);
      expect(limited.statusCode).toBe(429);
      expect(errorOf(limited).details).toMatchObject({ limit: 600 });
      expect((await hit(agent.apiKey)).statusCode).toBe(422);
    }, 60_000);
  });
};
