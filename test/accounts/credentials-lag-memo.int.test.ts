import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/test-app';
import { api, freshIp } from './support';

/**
 * A key found only on the write side (the read models stopped) answers without waiting for them again: the write
 * side's answer is remembered briefly and the bounded read-model wait (`READ_MODEL_WAIT_MS`) is not paid once the
 * key index has answered; a regeneration still refuses the key it replaced at once.
 */
const WAIT_MS = 3_000;
const t = useTestApp({ env: { READ_MODEL_WAIT_MS: String(WAIT_MS) } });

describe('a write-side-only key under read-model lag', () => {
  it('the second request with a new key does not wait READ_MODEL_WAIT_MS; a regenerate still refuses the old key', async () => {
    const projections = t.runtime.services.projections;
    await projections.stop();
    try {
      const registered = await t.app.inject({
        method: 'POST',
        url: '/api/v1/auth/register',
        remoteAddress: freshIp(),
        payload: { display_name: 'Memo owner' },
      });
      expect(registered.statusCode).toBe(201);
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        remoteAddress: freshIp(),
        payload: { api_key: registered.json().api_key, api_secret: registered.json().api_secret },
      });
      const bearer = { authorization: `Bearer ${login.json().token}` };
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/agents',
        remoteAddress: freshIp(),
        headers: bearer,
        payload: { display_name: 'Memo agent' },
      });
      expect(created.statusCode).toBe(201);
      const { api_key: first, agent_id: agentId } = created.json();
      const orders = (key: string) =>
        api(t.app, { method: 'GET', url: '/trade/orders', headers: { 'x-api-key': key } });
      expect((await orders(first)).statusCode).toBe(200);
      const started = performance.now();
      const again = await orders(first);
      const elapsed = performance.now() - started;
      expect(again.statusCode).toBe(200);
      // Without the remembered answer every request waits the whole bound (the projections stay stopped).
      expect(elapsed).toBeLessThan(WAIT_MS / 2);

      const regenerated = await t.app.inject({
        method: 'POST',
        url: `/api/v1/agents/${agentId}/regenerate-key`,
        remoteAddress: freshIp(),
        headers: bearer,
      });
      expect(regenerated.statusCode).toBe(200);
      const old = await orders(first);
      expect([old.statusCode, old.json().error?.code]).toEqual([401, 'INVALID_API_KEY']);
      expect((await orders(regenerated.json().api_key)).statusCode).toBe(200);
    } finally {
      await projections.start();
    }
  });
});
