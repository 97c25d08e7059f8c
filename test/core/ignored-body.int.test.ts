import { describe, expect, it } from 'vitest';
import { api, bearer, createAgent, errorOf } from '../accounts/support';
import { ok } from '../support/api-calls';
import { useAccount, useTestApp } from '../support/test-app';
import { keyCalls, orderBody } from '../trading/key-calls';

/**
 * A route whose endpoint declares no body refuses one that it would ignore, and a write refuses a query parameter
 * it does not declare (`refuseIgnoredInput`, src/http/routes/route-options.ts): `VALIDATION_ERROR` 422 naming each
 * field, nothing changed. It used to run as if nothing was sent: a cancel-all "for ETHUSDT" cancelled every pair's
 * orders, a reset "at 5 USDT" reset at the agent's old balance. No body, an empty one, `{}` and `null` still pass
 * (clients send those on actions).
 */
const t = useTestApp({
  env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT', FILL_MODEL: 'instant' },
});
const account = useAccount(t, [
  ['BTCUSDT', '40000', '10000'],
  ['ETHUSDT', '2000', '50000'],
]);
const { order, get, send } = keyCalls(() => t.app);

/** Expects a 422 `VALIDATION_ERROR` with one issue at `location` (the body) for each of `fields`, in order. */
const expectRefused = (
  res: { statusCode: number; body: string; json(): unknown },
  fields: string[],
  location: 'body' | 'querystring' = 'body',
) => {
  expect(res.statusCode, res.body).toBe(422);
  const error = errorOf(res);
  expect(error.code).toBe('VALIDATION_ERROR');
  expect(error.details.issues).toEqual(fields.map((field) => expect.objectContaining({ field, location })));
};

describe('a route that takes no body', () => {
  it('refuses a cancel-all with a body by naming its fields and cancels nothing', async () => {
    for (const [symbol, price] of [
      ['BTCUSDT', '30000'],
      ['ETHUSDT', '1000'],
    ] as const) {
      const placed = await order(account.apiKey, orderBody(symbol, 'buy', 'limit', '0.01', { price }));
      expect(placed.statusCode, placed.body).toBe(201);
    }
    expectRefused(await send(account.apiKey, 'DELETE', '/trade/orders/open', { symbol: 'ETHUSDT' }), [
      'symbol',
    ]);
    expectRefused(
      await send(account.apiKey, 'DELETE', '/trade/orders/open', { symbol: 'ETHUSDT', side: 'buy' }),
      ['symbol', 'side'],
    );
    // Any JSON value that is not an object (nor null) is refused as the body as a whole.
    for (const payload of ['[]', '"ETHUSDT"', '5', 'true']) {
      const res = await api(t.app, {
        method: 'DELETE',
        url: '/trade/orders/open',
        headers: { 'x-api-key': account.apiKey, 'content-type': 'application/json' },
        payload,
      });
      expectRefused(res, ['body']);
    }
    expect((await get(account.apiKey, '/trade/orders/open')).json().total).toBe(2);
  });

  it('still accepts no body, an empty body, {} and null (as JSON)', async () => {
    const bodies: { payload?: string; contentType?: string }[] = [
      {},
      { payload: '', contentType: 'application/json' },
      { payload: '{}', contentType: 'application/json' },
      { payload: 'null', contentType: 'application/json' },
    ];
    for (const { payload, contentType } of bodies) {
      const res = await api(t.app, {
        method: 'DELETE',
        url: '/trade/orders/open',
        headers: { 'x-api-key': account.apiKey, ...(contentType ? { 'content-type': contentType } : {}) },
        ...(payload !== undefined ? { payload } : {}),
      });
      expect(res.statusCode, `${JSON.stringify(payload)} ${contentType}: ${res.body}`).toBe(200);
    }
  });

  it('refuses an agent reset or archive with an option and leaves the agent as it was', async () => {
    const H = bearer(account);
    const { agentId } = await createAgent(t.app, account, { starting_balance: '500' });
    const before = await ok(t.app, H, 'GET', `/agents/${agentId}`);
    const options: [string, Record<string, string>][] = [
      ['reset', { starting_balance: '5' }],
      ['archive', { reason: 'x' }],
      ['regenerate-key', { key: 'k' }],
    ];
    for (const [action, payload] of options) {
      const url = `/agents/${agentId}/${action}`;
      expectRefused(await api(t.app, { method: 'POST', url, headers: H, payload }), Object.keys(payload));
    }
    // Nothing ran: not the reset, not the archive, not a new key (its preview and `updated_at` would move).
    expect(await ok(t.app, H, 'GET', `/agents/${agentId}`)).toEqual(before);
    expect(before).toMatchObject({ starting_balance: '500.00000000', status: 'active' });
    // The same option as a query parameter, and a misspelt one beside the clone's `new_name`.
    const agents = (await ok(t.app, H, 'GET', '/agents')).total;
    expectRefused(
      await api(t.app, { method: 'POST', url: `/agents/${agentId}/reset?starting_balance=5`, headers: H }),
      ['starting_balance'],
      'querystring',
    );
    expectRefused(
      await api(t.app, { method: 'POST', url: `/agents/${agentId}/clone?new_nam=Copy`, headers: H }),
      ['new_nam'],
      'querystring',
    );
    expect((await ok(t.app, H, 'GET', '/agents')).total).toBe(agents);
    // The same action with `{}` runs, at the agent's own balance.
    await ok(t.app, H, 'POST', `/agents/${agentId}/reset`, {});
    expect(await ok(t.app, H, 'GET', `/agents/${agentId}`)).toMatchObject({
      starting_balance: '500.00000000',
    });
  });

  it('refuses a body on a backtest and a battle action before they run', async () => {
    const H = bearer(account);
    // An unknown session would be 404: the body is refused before the session is looked up.
    expectRefused(
      await api(t.app, {
        method: 'POST',
        url: '/backtest/00000000-0000-4000-8000-000000000000/start',
        headers: H,
        payload: { speed: 10 },
      }),
      ['speed'],
    );
    const battle = await ok(t.app, H, 'POST', '/battles', { name: 'Bodies' }, 201);
    const id = battle.battle_id;
    expectRefused(
      await api(t.app, { method: 'POST', url: `/battles/${id}/start`, headers: H, payload: { force: true } }),
      ['force'],
    );
    expect((await ok(t.app, H, 'GET', `/battles/${id}`)).status).toBe(battle.status);
  });
});
