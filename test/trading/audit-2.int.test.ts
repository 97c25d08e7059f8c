import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  keyHeader,
  registerAccount,
  startApp,
  type TestAccount,
  type TestApp,
} from '../accounts/support';
import { priceTicker } from '../support/price-ticks';

/**
 * Regressions of the second audit of the trading (`/trade/*`) and account (`/account/*`) endpoints, on the real
 * stack (`app.inject`; PGlite, or PostgreSQL with DATABASE_URL). BTCUSDT and ETHUSDT move only when a test ticks
 * them (the synthetic source walks SOLUSDT only).
 */

const ENV = { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT' };
let t: TestApp;
const tick = priceTicker(() => t.app.services.market!);

const order = (key: string, payload: Record<string, unknown>) =>
  api(t.app, { method: 'POST', url: '/trade/order', headers: keyHeader(key), payload });
const walletRevision = async (account: TestAccount) =>
  (
    await api(t.app, { method: 'GET', url: '/account/events?limit=1000', headers: keyHeader(account.apiKey) })
  ).json().events.length as number;

beforeAll(async () => {
  t = await startApp({ env: ENV });
  tick('BTCUSDT', '40000', '10000');
  tick('ETHUSDT', '2000', '50000');
});

afterAll(async () => {
  await t?.close();
});

describe('text with a lone UTF-16 surrogate (PostgreSQL refuses it in jsonb: it was a 500)', () => {
  it('is refused in any body, whichever field or key holds it (src/http/unstorable-text.ts)', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const cases: [string, string, Record<string, unknown>, Record<string, string>, string][] = [
      ['POST', '/auth/register', { display_name: 'Trader \udfff' }, {}, 'display_name'],
      [
        'POST',
        '/agents',
        { display_name: 'Bot \ud83d' },
        { authorization: `Bearer ${account.token}` },
        'display_name',
      ],
      ['PUT', '/account/risk-profile', { ['max_\ud800']: 1 }, keyHeader(account.apiKey), 'body'],
    ];
    for (const [method, url, payload, headers, field] of cases) {
      const res = await api(t.app, { method: method as 'POST', url, headers, payload });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(422);
      expect(res.json().error.details.issues[0]).toMatchObject({ field, location: 'body' });
    }
  });

  const lone = 'ETHUSDT\ud800';

  it('refuses such a symbol on order placement with 422 and records nothing', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    expect(
      (await order(account.apiKey, { symbol: 'ETHUSDT', side: 'buy', type: 'market', quantity: '0.01' }))
        .statusCode,
    ).toBe(201);
    const before = await walletRevision(account);
    for (const symbol of [lone, '\udc00ETHUSDT', 'ETH\udfff\ud800USDT']) {
      const res = await order(account.apiKey, { symbol, side: 'buy', type: 'market', quantity: '0.01' });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
      expect(res.json().error.details.issues[0].field).toBe('symbol');
    }
    // A well-formed astral character is only an unknown symbol.
    const astral = await order(account.apiKey, {
      symbol: 'ETH\ud83d\ude00USDT',
      side: 'buy',
      type: 'market',
      quantity: '0.01',
    });
    expect(astral.statusCode, astral.body).toBe(404);
    expect(astral.json().error.code).toBe('INVALID_SYMBOL');
    expect(await walletRevision(account)).toBe(before + 1); // the INVALID_SYMBOL rejection only
  });

  it('refuses such a strategy_label on POST /account/mode with 422 and changes nothing', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const res = await api(t.app, {
      method: 'POST',
      url: '/account/mode',
      headers: keyHeader(account.apiKey),
      payload: { mode: 'backtest', strategy_label: `grid\ud800` },
    });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().error.code).toBe('VALIDATION_ERROR');
    expect(res.json().error.details.issues[0].field).toBe('strategy_label');
    const mode = await api(t.app, {
      method: 'GET',
      url: '/account/mode',
      headers: keyHeader(account.apiKey),
    });
    expect(mode.json()).toMatchObject({ mode: 'live', live_session: { strategy_label: null } });
  });
});
