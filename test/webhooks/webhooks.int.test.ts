import { beforeAll, describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../src/net/outbound-url';
import { bearer, createAgent, keyHeader, registerAccount, type TestAccount } from '../accounts/support';
import { call, fails, ok } from '../support/api-calls';
import { useTestApp } from '../support/test-app';
import { until } from '../support/until';

/**
 * Webhook management in process (issue 17, item 11; docs/webhooks.md): the SSRF rule with its default (no
 * private addresses), the error envelope of refusals, ownership between the account and its agents, the secret
 * shown once. Deliveries are tested against the real server process (`delivery.e2e.test.ts`).
 */
const t = useTestApp({ env: { MARKET_DATA_DIR: '' } });
let account: TestAccount;
let agent: { agentId: string; apiKey: string };
const PUBLIC_URL = 'https://93.184.215.14/hooks/ptv';

/** Registers a webhook (201) with these credentials; by default one for `order.filled` at `PUBLIC_URL`. */
const createWebhook = (
  headers: Record<string, string>,
  body: object = { url: PUBLIC_URL, event_types: ['order.filled'] },
) => ok(t.app, headers, 'POST', '/webhooks', body, 201);

beforeAll(async () => {
  account = await registerAccount(t.app, {}, { plain: true });
  agent = await createAgent(t.app, account);
}, 180_000);

describe('the SSRF rule (WEBHOOKS_ALLOW_PRIVATE unset)', () => {
  it.each([
    'http://127.0.0.1:8000/hook',
    'http://localhost/hook',
    'http://[::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://10.1.2.3/hook',
    'http://192.168.0.10/hook',
    'http://172.16.5.4/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://0.0.0.0/hook',
    'http://100.64.0.1/hook',
    'http://[fd00::1]/hook',
    'http://[fe80::1]/hook',
  ])('refuses %s with VALIDATION_ERROR on url', async (url) => {
    const error = await fails(t.app, bearer(account), 'POST', '/webhooks', 422, 'VALIDATION_ERROR', {
      url,
      event_types: ['order.filled'],
    });
    expect(error.details).toMatchObject({ issues: [{ field: 'url', location: 'body' }] });
  });

  it('refuses other schemes and malformed URLs the same way', async () => {
    for (const url of ['ftp://93.184.215.14/x', 'file:///etc/passwd', 'gopher://example.com/', 'not a url']) {
      const error = await fails(t.app, bearer(account), 'POST', '/webhooks', 422, 'VALIDATION_ERROR', {
        url,
        event_types: ['order.filled'],
      });
      expect(error.details).toMatchObject({ issues: [{ field: 'url' }] });
    }
  });

  it('refuses a URL with a user name or password, and keeps nothing of it', async () => {
    for (const url of ['https://user:secret@93.184.215.14/hook', 'https://token@93.184.215.14/hook']) {
      const error = await fails(t.app, bearer(account), 'POST', '/webhooks', 422, 'VALIDATION_ERROR', {
        url,
        event_types: ['order.filled'],
      });
      expect(error.details).toMatchObject({ issues: [{ field: 'url' }], reason: 'credentials' });
    }
    const listed = await ok(t.app, bearer(account), 'GET', '/webhooks');
    expect(JSON.stringify(listed)).not.toContain('secret@');
  });

  it('shows a webhook registered before the credentials rule without its user name and password, in every read', async () => {
    // As a webhook of before the rule was recorded: the command straight, without the application's URL check.
    const { webhook } = await t.runtime.services.webhooks!.commands.register(
      { accountId: account.accountId, agentId: null },
      {
        url: 'https://olduser:hunter2@93.184.215.14/hooks/ptv?x=1',
        event_types: ['order.filled'],
        description: null,
        active: true,
      },
      { actor: account.accountId },
    );
    const id = webhook.webhookId;
    await until(async () => (await call(t.app, bearer(account), 'GET', `/webhooks/${id}`)).status === 200, {
      what: 'the webhook in the read model',
    });
    const shown = 'https://***:***@93.184.215.14/hooks/ptv?x=1';
    expect((await ok(t.app, bearer(account), 'GET', `/webhooks/${id}`)).url).toBe(shown);
    const listed = await ok(t.app, keyHeader(account.apiKey), 'GET', '/webhooks');
    expect(listed.webhooks.find((w: { webhook_id: string }) => w.webhook_id === id).url).toBe(shown);
    const updated = await ok(t.app, bearer(account), 'PUT', `/webhooks/${id}`, { description: 'kept' });
    expect(updated.url).toBe(shown);
    const mcp = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        ...keyHeader(account.apiKey),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      payload: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'list_webhooks', arguments: {} },
      },
    });
    expect(mcp.body).toContain(id);
    expect(mcp.body).toContain('***:***@93.184.215.14');
    for (const body of [JSON.stringify(listed), JSON.stringify(updated), mcp.body]) {
      expect(body).not.toContain('hunter2');
      expect(body).not.toContain('olduser');
    }
    // The deliveries still go to the URL as registered (the worker's own fold of the log, not this read model).
    const logged = await t.runtime.services.eventStore.readStream(`webhook-${id}`);
    expect(JSON.stringify(logged.map((e) => e.data))).toContain('olduser:hunter2@');
    const deleted = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/webhooks/${id}`,
      headers: bearer(account),
    });
    expect(deleted.statusCode).toBe(204);
  });

  it('refuses a host that does not resolve, and a change of URL to a private address', async () => {
    await fails(t.app, bearer(account), 'POST', '/webhooks', 422, 'VALIDATION_ERROR', {
      url: 'http://no-such-host.invalid/hook',
      event_types: ['order.filled'],
    });
    const created = await createWebhook(bearer(account));
    const error = await fails(
      t.app,
      bearer(account),
      'PUT',
      `/webhooks/${created.webhook_id}`,
      422,
      'VALIDATION_ERROR',
      { url: 'http://127.0.0.1/x' },
    );
    expect(error.details).toMatchObject({ issues: [{ field: 'url' }] });
    const deleted = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/webhooks/${created.webhook_id}`,
      headers: bearer(account),
    });
    expect(deleted.statusCode).toBe(204);
  });

  it('classifies addresses: only public unicast ones pass', () => {
    expect(isPublicAddress('93.184.215.14')).toBe(true);
    expect(isPublicAddress('2606:2800:21f:cb07:6820:80da:af6b:8b2c')).toBe(true);
    for (const a of [
      '127.0.0.1',
      '10.0.0.1',
      '::1',
      '::ffff:10.0.0.1',
      '169.254.1.1',
      '224.0.0.1',
      '64:ff9b::a00:1',
    ])
      expect(isPublicAddress(a), a).toBe(false);
  });
});

describe('registering and managing webhooks', () => {
  it('shows the secret once, lists without it, updates and deletes', async () => {
    const created = await createWebhook(bearer(account), {
      url: PUBLIC_URL,
      event_types: ['order.filled', 'battle.completed', 'order.filled'],
      description: 'main',
    });
    expect(created).toMatchObject({
      account_id: account.accountId,
      agent_id: null,
      url: PUBLIC_URL,
      event_types: ['battle.completed', 'order.filled'],
      description: 'main',
      active: true,
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(created.secret_preview).toBe(`${created.secret.slice(0, 12)}...`);
    const id = created.webhook_id as string;
    const listed = await ok(t.app, bearer(account), 'GET', '/webhooks');
    expect(listed.webhooks.map((w: { webhook_id: string }) => w.webhook_id)).toContain(id);
    expect(JSON.stringify(listed)).not.toContain(created.secret);
    const got = await ok(t.app, keyHeader(account.apiKey), 'GET', `/webhooks/${id}`);
    expect(got.secret).toBeUndefined();
    const updated = await ok(t.app, bearer(account), 'PUT', `/webhooks/${id}`, {
      event_types: ['risk.daily_loss_breaker_tripped'],
      active: false,
    });
    expect(updated).toMatchObject({ event_types: ['risk.daily_loss_breaker_tripped'], active: false });
    await fails(t.app, bearer(account), 'PUT', `/webhooks/${id}`, 422, 'VALIDATION_ERROR', {
      event_types: ['order.exploded'],
    });
    await fails(t.app, bearer(account), 'POST', '/webhooks', 422, 'VALIDATION_ERROR', {
      url: PUBLIC_URL,
      event_types: [],
    });
    const deleted = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/webhooks/${id}`,
      headers: bearer(account),
    });
    expect([deleted.statusCode, deleted.body]).toEqual([204, '']);
    await fails(t.app, bearer(account), 'GET', `/webhooks/${id}`, 404, 'NOT_FOUND');
    await fails(t.app, bearer(account), 'DELETE', `/webhooks/${id}`, 404, 'NOT_FOUND');
  });

  it("scopes an agent's credential to the agent's own webhooks; another account sees none", async () => {
    const mine = await createWebhook(keyHeader(agent.apiKey));
    expect(mine.agent_id).toBe(agent.agentId);
    const accounts = await createWebhook(bearer(account), {
      url: PUBLIC_URL,
      event_types: ['order.cancelled'],
    });
    const agentList = await ok(t.app, keyHeader(agent.apiKey), 'GET', '/webhooks');
    expect(agentList.webhooks.map((w: { webhook_id: string }) => w.webhook_id)).toEqual([mine.webhook_id]);
    await fails(t.app, keyHeader(agent.apiKey), 'GET', `/webhooks/${accounts.webhook_id}`, 404, 'NOT_FOUND');
    await fails(
      t.app,
      keyHeader(agent.apiKey),
      'DELETE',
      `/webhooks/${accounts.webhook_id}`,
      404,
      'NOT_FOUND',
    );
    const accountList = await ok(t.app, bearer(account), 'GET', '/webhooks');
    const ids = accountList.webhooks.map((w: { webhook_id: string }) => w.webhook_id);
    expect(ids).toEqual(expect.arrayContaining([mine.webhook_id, accounts.webhook_id]));
    const other = await registerAccount(t.app, {}, { plain: true });
    expect((await ok(t.app, bearer(other), 'GET', '/webhooks')).webhooks).toEqual([]);
    await fails(t.app, bearer(other), 'GET', `/webhooks/${mine.webhook_id}`, 404, 'NOT_FOUND');
    await fails(t.app, bearer(other), 'POST', `/webhooks/${mine.webhook_id}/test`, 404, 'NOT_FOUND');
    await fails(t.app, bearer(other), 'GET', `/webhooks/${mine.webhook_id}/deliveries`, 404, 'NOT_FOUND');
    const r = await call(t.app, {}, 'GET', '/webhooks');
    expect(r.status).toBe(401);
  });

  it('records a test request as a pending delivery (no worker runs in this runtime)', async () => {
    const created = await createWebhook(bearer(account));
    const test = await ok(
      t.app,
      bearer(account),
      'POST',
      `/webhooks/${created.webhook_id}/test`,
      undefined,
      202,
    );
    expect(test).toMatchObject({
      webhook_id: created.webhook_id,
      event_type: 'webhook.test',
      status: 'pending',
    });
    const deliveries = await ok(t.app, bearer(account), 'GET', `/webhooks/${created.webhook_id}/deliveries`);
    expect(deliveries).toEqual({ deliveries: [], total: 0 });
  });
});
