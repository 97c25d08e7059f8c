import { beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api-calls';
import { useTestApp } from '../support/test-app';
import { bearer, createAgent, registerAccount, type TestAccount } from './support';

/**
 * Regressions of the interface audit of the agent endpoints, on the real stack: `include_archived` (spec "List
 * query": boolean) took only lower-case `true`/`false` (and `1`/`0`), so a Python client, whose `requests` sends
 * `True`/`False`, got `VALIDATION_ERROR` 422 for a plain boolean.
 */
const t = useTestApp();
let owner: TestAccount;
let archivedId = '';

beforeAll(async () => {
  owner = await registerAccount(t.app, {}, { plain: true });
  await createAgent(t.app, owner, { display_name: 'Active' });
  archivedId = (await createAgent(t.app, owner, { display_name: 'Archived' })).agentId;
  const archived = await call(t.app, bearer(owner), 'POST', `/agents/${archivedId}/archive`);
  expect(archived.status, archived.raw).toBe(200);
}, 60_000);

const list = (query: string) => call(t.app, bearer(owner), 'GET', `/agents?${query}`);

describe('GET /agents include_archived', () => {
  it('reads a boolean in any letter case, and 1 or 0', async () => {
    for (const value of ['true', 'True', 'TRUE', '1']) {
      const r = await list(`include_archived=${value}`);
      expect([r.status, r.body.total], `${value}: ${r.raw}`).toEqual([200, 2]);
      expect(r.body.agents.map((a: { id: string }) => a.id)).toContain(archivedId);
    }
    for (const value of ['false', 'False', 'FALSE', '0']) {
      const r = await list(`include_archived=${value}`);
      expect([r.status, r.body.total], `${value}: ${r.raw}`).toEqual([200, 1]);
    }
    expect((await list('')).body.total).toBe(1);
  });

  it('refuses anything else with VALIDATION_ERROR 422 naming the parameter', async () => {
    for (const value of ['yes', 'no', 'truee', '2', '']) {
      const r = await list(`include_archived=${value}`);
      expect([r.status, r.body.error?.code], `${value}: ${r.raw}`).toEqual([422, 'VALIDATION_ERROR']);
      expect(r.body.error.details.issues[0]).toMatchObject({
        field: 'include_archived',
        location: 'querystring',
      });
    }
  });
});
