import { beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api-calls';
import { useTestApp } from '../support/test-app';
import { api, bearer, createAgent, freshIp, keyHeader, registerAccount, type TestAccount } from './support';

/**
 * Regressions of the second interface audit of the authentication and agent endpoints, on the real stack:
 *
 * - an agent id in upper case (a UUID is case-insensitive) was found by `GET /agents/{id}` but every other
 *   `/agents/{id}/…` route answered `PERMISSION_DENIED` 403 for the caller's own agent;
 * - a display name with control characters (a line break) was stored, and the agent's `skill.md`, whose
 *   header lines give the name, id and key preview, then carried forged header lines;
 * - `POST /auth/register` ignored unknown fields, so a misspelt `pasword` or `starting_balence` silently gave an
 *   account without a password or with the default balance (every other body of the service refuses them).
 */
const t = useTestApp();
let owner: TestAccount;
let agentId = '';

beforeAll(async () => {
  owner = await registerAccount(t.app, {}, { plain: true });
  agentId = (await createAgent(t.app, owner, { display_name: 'Case' })).agentId;
}, 60_000);

const register = (payload: Record<string, unknown>) =>
  api(t.app, { method: 'POST', url: '/auth/register', remoteAddress: freshIp(), payload });

describe('agent id in upper case', () => {
  it('reaches the same agent on every /agents/{id} route, and answers with the lower-case id', async () => {
    const upper = agentId.toUpperCase();
    const h = bearer(owner);
    const get = await call(t.app, h, 'GET', `/agents/${upper}`);
    expect([get.status, get.body.id], get.raw).toEqual([200, agentId]);
    const update = await call(t.app, h, 'PUT', `/agents/${upper}`, { framework: 'upper' });
    expect([update.status, update.body.id, update.body.framework], update.raw).toEqual([
      200,
      agentId,
      'upper',
    ]);
    const risk = await call(t.app, h, 'PUT', `/agents/${upper}/risk-profile`, {
      max_position_size_pct: 30,
      daily_loss_limit_pct: 30,
      max_open_orders: 30,
    });
    expect(risk.status, risk.raw).toBe(200);
    const key = await call(t.app, h, 'GET', `/agents/${upper}/api-key`);
    expect([key.status, key.body.agent_id], key.raw).toEqual([200, agentId]);
    const skill = await api(t.app, { method: 'GET', url: `/agents/${upper}/skill.md`, headers: h });
    expect(skill.statusCode, skill.body).toBe(200);
    const archived = await call(t.app, h, 'POST', `/agents/${upper}/archive`);
    expect([archived.status, archived.body.status], archived.raw).toEqual([200, 'archived']);
    const reset = await call(t.app, h, 'POST', `/agents/${upper}/reset`);
    expect([reset.status, reset.body.status], reset.raw).toEqual([200, 'active']);
    const regenerated = await call(t.app, h, 'POST', `/agents/${upper}/regenerate-key`);
    expect([regenerated.status, regenerated.body.agent_id], regenerated.raw).toEqual([200, agentId]);
    const info = await call(t.app, keyHeader(regenerated.body.api_key), 'GET', '/account/info');
    expect([info.status, info.body.agent_id], info.raw).toEqual([200, agentId]);
    const clone = await call(t.app, h, 'POST', `/agents/${upper}/clone`);
    expect(clone.status, clone.raw).toBe(201);
    const removed = await api(t.app, {
      method: 'DELETE',
      url: `/agents/${clone.body.agent_id.toUpperCase()}`,
      headers: h,
    });
    expect([removed.statusCode, removed.body], removed.body).toEqual([204, '']);
    const gone = await call(t.app, h, 'GET', `/agents/${clone.body.agent_id}`);
    expect(gone.status, gone.raw).toBe(403);
  });

  it("still refuses another account's agent in upper case with PERMISSION_DENIED 403", async () => {
    const stranger = await registerAccount(t.app, {}, { plain: true });
    for (const [method, path] of [
      ['GET', ''],
      ['GET', '/api-key'],
      ['POST', '/archive'],
      ['POST', '/regenerate-key'],
      ['DELETE', ''],
    ] as const) {
      const r = await call(t.app, bearer(stranger), method, `/agents/${agentId.toUpperCase()}${path}`);
      expect([r.status, r.body.error?.code], `${method} ${path}: ${r.raw}`).toEqual([
        403,
        'PERMISSION_DENIED',
      ]);
    }
    const still = await call(t.app, bearer(owner), 'GET', `/agents/${agentId}`);
    expect([still.status, still.body.status], still.raw).toEqual([200, 'active']);
  });
});

describe('control characters in display names', () => {
  const bad = ['two\nlines', 'Name\r\n- **Agent ID:** forged', 'tab\there', 'bell\u0007', 'c1\u0085x'];

  it('refuses them in an agent name on create, update and clone, changing nothing', async () => {
    const h = bearer(owner);
    for (const name of bad) {
      const created = await call(t.app, h, 'POST', '/agents', { display_name: name });
      expect([created.status, created.body.error?.code], `${JSON.stringify(name)}: ${created.raw}`).toEqual([
        422,
        'VALIDATION_ERROR',
      ]);
      expect(created.body.error.details.issues[0].field).toBe('display_name');
      const updated = await call(t.app, h, 'PUT', `/agents/${agentId}`, { display_name: name });
      expect([updated.status, updated.body.error?.code], updated.raw).toEqual([422, 'VALIDATION_ERROR']);
      const cloned = await call(
        t.app,
        h,
        'POST',
        `/agents/${agentId}/clone?new_name=${encodeURIComponent(name)}`,
      );
      expect([cloned.status, cloned.body.error?.code], cloned.raw).toEqual([422, 'VALIDATION_ERROR']);
    }
    const agent = await call(t.app, h, 'GET', `/agents/${agentId}`);
    expect(agent.body.display_name).toBe('Case');
    const skill = await api(t.app, { method: 'GET', url: `/agents/${agentId}/skill.md`, headers: h });
    expect(skill.body.split('\n')[0]).toBe('# Trading skill: Case');
  });

  it('refuses them in an account name at registration; emoji and inner spaces stay accepted', async () => {
    for (const name of bad) {
      const r = await register({ display_name: name });
      expect([r.statusCode, r.json().error?.code], `${JSON.stringify(name)}: ${r.body}`).toEqual([
        422,
        'VALIDATION_ERROR',
      ]);
    }
    const fine = await register({ display_name: 'Trader 🚀 one' });
    expect([fine.statusCode, fine.json().display_name], fine.body).toEqual([201, 'Trader 🚀 one']);
    const agent = await call(t.app, bearer(owner), 'POST', '/agents', { display_name: '🤖 Bot  two' });
    expect([agent.status, agent.body.display_name], agent.raw).toEqual([201, '🤖 Bot  two']);
  });
});

// A spec sweep ("Agent (AgentResponse)") found the other labels took what names refuse: a newline, a tab and a
// terminal escape in `llm_model`, `framework` and `strategy_tags` answered 200 and were stored.
describe('control characters in agent labels', () => {
  const bad = ['two\nlines', 'tab\there', 'red \u001b[31m', 'c1\u0085x'];
  const fields: [string, (value: string) => Record<string, unknown>][] = [
    ['llm_model', (value) => ({ llm_model: value })],
    ['framework', (value) => ({ framework: value })],
    ['strategy_tags', (value) => ({ strategy_tags: ['fine', value] })],
  ];

  it('refuses them in llm_model, framework and strategy_tags on create and update, naming the field, changing nothing', async () => {
    const h = bearer(owner);
    const labelled = await call(t.app, h, 'POST', '/agents', {
      display_name: 'Labelled',
      llm_model: 'gpt-x',
      framework: 'plain',
      strategy_tags: ['trend'],
    });
    expect(labelled.status, labelled.raw).toBe(201);
    const id = labelled.body.agent_id as string;
    const before = await call(t.app, h, 'GET', '/agents?include_archived=true&limit=500');
    for (const [field, body] of fields) {
      for (const value of bad) {
        const what = `${field} ${JSON.stringify(value)}`;
        const created = await call(t.app, h, 'POST', '/agents', { display_name: 'Label', ...body(value) });
        expect([created.status, created.body.error?.code], `${what}: ${created.raw}`).toEqual([
          422,
          'VALIDATION_ERROR',
        ]);
        expect(created.body.error.details.issues[0].field, created.raw).toMatch(new RegExp(`^${field}`));
        const updated = await call(t.app, h, 'PUT', `/agents/${id}`, body(value));
        expect([updated.status, updated.body.error?.code], `${what}: ${updated.raw}`).toEqual([
          422,
          'VALIDATION_ERROR',
        ]);
        expect(updated.body.error.details.issues[0].field, updated.raw).toMatch(new RegExp(`^${field}`));
      }
    }
    const after = await call(t.app, h, 'GET', '/agents?include_archived=true&limit=500');
    expect(after.body.total).toBe(before.body.total);
    const agent = await call(t.app, h, 'GET', `/agents/${id}`);
    expect([agent.body.llm_model, agent.body.framework, agent.body.strategy_tags]).toEqual([
      'gpt-x',
      'plain',
      ['trend'],
    ]);
    // Spaces, emoji and other printable text stay accepted.
    const fine = await call(t.app, h, 'PUT', `/agents/${id}`, {
      llm_model: 'claude 🚀 v2',
      framework: 'lang chain',
      strategy_tags: ['mean reversion', 'ß'],
    });
    expect([fine.status, fine.body.llm_model, fine.body.strategy_tags], fine.raw).toEqual([
      200,
      'claude 🚀 v2',
      ['mean reversion', 'ß'],
    ]);
  });
});

describe('POST /auth/register unknown fields', () => {
  it('refuses a misspelt field with VALIDATION_ERROR 422 naming it, and registers nothing', async () => {
    const email = `typo.${Date.now()}@example.com`;
    const typo = await register({ display_name: 'Typo', email, pasword: 'correct horse battery' });
    expect([typo.statusCode, typo.json().error?.code], typo.body).toEqual([422, 'VALIDATION_ERROR']);
    expect(typo.json().error.details.issues[0]).toMatchObject({ field: 'pasword', location: 'body' });
    const balance = await register({ display_name: 'Typo', starting_balence: '500' });
    expect([balance.statusCode, balance.json().error?.details?.issues?.[0]?.field], balance.body).toEqual([
      422,
      'starting_balence',
    ]);
    // The refused request reserved nothing: the address is still free.
    const again = await register({ display_name: 'Typo', email, password: 'correct horse battery' });
    expect(again.statusCode, again.body).toBe(201);
  });
});

describe('unknown fields of the login and password bodies (over HTTP)', () => {
  it('POST /auth/user-login and PUT /auth/password refuse one with VALIDATION_ERROR 422 naming it', async () => {
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const cases = [
      {
        method: 'POST',
        url: '/auth/user-login',
        body: { email: 'nobody@example.com', password: 'correct horse battery', remember: true },
        field: 'remember',
      },
      {
        method: 'PUT',
        url: '/auth/password',
        body: { password: 'correct horse battery', curent_password: 'x' },
        field: 'curent_password',
      },
    ];
    for (const c of cases) {
      const res = await fetch(`${base}/api/v1${c.url}`, {
        method: c.method,
        headers: { 'content-type': 'application/json', ...bearer(owner) },
        body: JSON.stringify(c.body),
      });
      const body = (await res.json()) as { error?: { code: string; details?: { issues?: unknown[] } } };
      expect([res.status, body.error?.code], JSON.stringify(body)).toEqual([422, 'VALIDATION_ERROR']);
      expect(body.error?.details?.issues?.[0]).toMatchObject({ field: c.field, location: 'body' });
    }
  });

  it('POST /auth/login takes the registration answer as it came, ignoring the fields beside the key and secret', async () => {
    const registered = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { display_name: 'posts its registration back' },
    });
    expect(registered.statusCode, registered.body).toBe(201);
    const answer = registered.json() as Record<string, unknown>;
    expect(Object.keys(answer).length).toBeGreaterThan(2);
    const login = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: answer });
    expect(login.statusCode, login.body).toBe(200);
    expect(login.json().token).toEqual(expect.any(String));
  });
});
