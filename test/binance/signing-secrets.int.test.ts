import { describe, expect, it } from 'vitest';
import { createAccountCommands } from '../../commands/accounts';
import { freshIp, registerAccount } from '../accounts/support';
import { useTestApp } from '../support/test-app';

/**
 * Signing secrets (issue 19, item 2; docs/operations.md "Signing secrets"): the account's registration `api_secret`
 * is the HMAC secret of its `api_key`; an agent gets one with its key and from `POST /agents/{id}/signing-secret`;
 * both stored as AES-256-GCM ciphertext in the owner's stream, never in plaintext; an account registered before
 * gets one at its next key login. Real runtime, real event store.
 */
const t = useTestApp({ captureLogs: true });

const secrets = () => t.app.services.signingSecrets!;
/** Every event of a stream (types, data, metadata) as text, to search for a plaintext. */
const streamText = async (streamId: string) =>
  JSON.stringify(
    (await t.runtime.services.eventStore.readStream(streamId)).map((e) => [e.type, e.data, e.metadata]),
  );

describe('account signing secret', () => {
  it("is the registration api_secret, stored only as ciphertext in the account's stream", async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    expect(await secrets().of({ accountId: account.accountId, via: 'account_key' })).toBe(account.apiSecret);
    const text = await streamText(`account-${account.accountId}`);
    expect(text).toContain('api_secret_ciphertext');
    expect(text).not.toContain(account.apiSecret);
    expect(text).not.toContain(account.apiSecret.slice('sk_live_'.length));
  });

  it('an account registered without one gets it at its next key login, once', async () => {
    // An account recorded the way registration did before signing secrets existed: no ciphertext.
    const legacy = createAccountCommands({ store: t.runtime.services.eventStore });
    const reg = await legacy.register({ displayName: 'Before signing secrets' });
    await t.runtime.services.projections.waitFor(reg.position, 5_000);
    const principal = { accountId: reg.accountId, via: 'account_key' as const };
    expect(await secrets().of(principal)).toBeNull();
    const login = async () =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        remoteAddress: freshIp(),
        payload: { api_key: reg.apiKey, api_secret: reg.apiSecret },
      });
    expect((await login()).statusCode).toBe(200);
    secrets().forget(reg.accountId);
    expect(await secrets().of(principal)).toBe(reg.apiSecret);
    expect((await login()).statusCode).toBe(200);
    const events = await t.runtime.services.eventStore.readStream(`account-${reg.accountId}`);
    expect(events.map((e) => e.type)).toEqual(['AccountRegistered', 'AccountSigningSecretStored']);
    expect(await streamText(`account-${reg.accountId}`)).not.toContain(reg.apiSecret);
  });

  it('a wrong secret at login stores nothing', async () => {
    const legacy = createAccountCommands({ store: t.runtime.services.eventStore });
    const reg = await legacy.register({ displayName: 'Wrong secret' });
    await t.runtime.services.projections.waitFor(reg.position, 5_000);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      remoteAddress: freshIp(),
      payload: { api_key: reg.apiKey, api_secret: `sk_live_${'x'.repeat(43)}` },
    });
    expect(res.statusCode).toBe(401);
    const events = await t.runtime.services.eventStore.readStream(`account-${reg.accountId}`);
    expect(events.map((e) => e.type)).toEqual(['AccountRegistered']);
  });
});

describe('agent signing secret', () => {
  it('comes with the key, is replaced by POST /agents/{id}/signing-secret and by regenerate-key', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const req = (method: 'POST' | 'GET', url: string, payload?: object) =>
      t.app.inject({
        method,
        url: `/api/v1${url}`,
        headers: { authorization: `Bearer ${account.token}` },
        ...(payload ? { payload } : {}),
      });
    const created = (await req('POST', '/agents', { display_name: 'Signer' })).json();
    expect(created.api_secret).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/);
    const principal = { accountId: account.accountId, agentId: created.agent_id, via: 'agent_key' as const };
    expect(await secrets().of(principal)).toBe(created.api_secret);

    const issued = await req('POST', `/agents/${created.agent_id}/signing-secret`);
    expect(issued.statusCode).toBe(200);
    const body = issued.json();
    expect(Object.keys(body).sort()).toEqual(['agent_id', 'api_key_preview', 'api_secret', 'message']);
    expect(body.api_secret).not.toBe(created.api_secret);
    expect(await secrets().of(principal)).toBe(body.api_secret);
    // Shown once: reading the agent or its key never shows it again.
    expect((await req('GET', `/agents/${created.agent_id}/api-key`)).body).not.toContain(body.api_secret);
    expect((await req('GET', `/agents/${created.agent_id}`)).body).not.toContain(body.api_secret);

    const regenerated = (await req('POST', `/agents/${created.agent_id}/regenerate-key`)).json();
    expect(regenerated.api_secret).toMatch(/^sk_live_/);
    expect(await secrets().of(principal)).toBe(regenerated.api_secret);

    const text = await streamText(`agent-${created.agent_id}`);
    for (const s of [created.api_secret, body.api_secret, regenerated.api_secret])
      expect(text).not.toContain(s);
    for (const s of [created.api_secret, body.api_secret, regenerated.api_secret]) {
      expect(t.logs.join('\n')).not.toContain(s);
    }
  });

  it("another account's agent: PERMISSION_DENIED and nothing issued", async () => {
    const owner = await registerAccount(t.app, {}, { plain: true });
    const other = await registerAccount(t.app, {}, { plain: true });
    const created = (
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/agents',
        headers: { authorization: `Bearer ${owner.token}` },
        payload: { display_name: 'Mine' },
      })
    ).json();
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/agents/${created.agent_id}/signing-secret`,
      headers: { authorization: `Bearer ${other.token}` },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('PERMISSION_DENIED');
    const events = await t.runtime.services.eventStore.readStream(`agent-${created.agent_id}`);
    expect(events.map((e) => e.type)).toEqual(['AgentCreated']);
  });
});
