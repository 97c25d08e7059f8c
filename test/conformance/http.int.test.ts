import { beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  bearer,
  createAgent,
  freshIp,
  keyHeader,
  registerAccount,
  type TestAccount,
} from '../accounts/support';
import { useTestApp } from '../support/test-app';

/**
 * Regressions found by the black-box conformance pass (spec "Errors", "Limits", "Agent", "Account endpoints"),
 * through the real stack with `inject`: rate-limit headers on refused and unknown requests, body-less calls
 * that carry `Content-Type: application/json`, account reset without a body, and an agent reset that cancels
 * the agent's orders before it answers. Synthetic market; BTCUSDT moves only when a test ingests a tick.
 */

const t = useTestApp({ env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT' } });
const { tick } = t;

const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'] as const;
const expectRateHeaders = (headers: Record<string, unknown>, limit: string) => {
  for (const h of RATE_HEADERS) expect(headers[h], h).toBeDefined();
  expect(headers['x-ratelimit-limit']).toBe(limit);
  expect(Number(headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000 - 1);
};

let account: TestAccount;
let listening: Promise<string> | undefined;
/** The app listening on a free port (once), for the tests that go over real HTTP: `http://127.0.0.1:<port>`. */
const baseUrl = () => (listening ??= t.app.listen({ host: '127.0.0.1', port: 0 }));

beforeAll(async () => {
  tick('BTCUSDT', '40000', '10000');
  account = await registerAccount(t.app, {}, { plain: true });
});

describe('rate-limit headers on every /api/v1 response', () => {
  it('puts them on 401s (key or JWT routes, JWT-only routes) and counts refused requests per client IP', async () => {
    const ip = freshIp();
    /** A GET from `ip` refused with 401 `code`, the general group's headers on it. */
    const refused = async (url: string, headers: Record<string, string> | undefined, code: string) => {
      const res = await api(t.app, { method: 'GET', url, remoteAddress: ip, headers });
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe(code);
      expectRateHeaders(res.headers, '600');
      return res;
    };
    const missing = await refused('/account/info', undefined, 'INVALID_API_KEY');
    const unknown = await refused(
      '/account/balance',
      keyHeader(`ak_live_${'A'.repeat(43)}`),
      'INVALID_API_KEY',
    );
    // The same client IP: the second refused request was counted after the first.
    expect(Number(unknown.headers['x-ratelimit-remaining'])).toBe(
      Number(missing.headers['x-ratelimit-remaining']) - 1,
    );
    await refused('/agents', keyHeader(account.apiKey), 'INVALID_TOKEN');
    await refused('/agents', { authorization: 'Bearer not.a.jwt' }, 'INVALID_TOKEN');
  });

  it('puts them on unknown routes under /api/v1, answered in the envelope', async () => {
    const res = await api(t.app, { method: 'GET', url: '/no/such/route', remoteAddress: freshIp() });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      error: { code: 'NOT_FOUND', message: 'no route GET /api/v1/no/such/route' },
    });
    expectRateHeaders(res.headers, '600');
    const outside = await t.app.inject({ method: 'GET', url: '/no/such/route' });
    expect(outside.statusCode).toBe(404);
    expect(outside.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('answers an empty last path id (`GET /battles/`) as the route that does not exist, like an empty middle one', async () => {
    const jwt = bearer(account);
    const key = keyHeader(account.apiKey);
    const cases: [method: 'GET' | 'DELETE' | 'PUT', url: string, headers: Record<string, string>][] = [
      ['GET', '/battles/', jwt],
      ['DELETE', '/battles/', jwt],
      ['GET', '/agents/', jwt],
      ['PUT', '/agents/', jwt],
      ['GET', '/webhooks/', jwt],
      ['GET', '/trade/order/', key],
      ['DELETE', '/trade/order/', key],
      ['GET', '/market/candles/', {}],
      ['GET', '/market/price/', {}],
      ['GET', '/battles//participants', jwt],
    ];
    for (const [method, url, headers] of cases) {
      const res = await api(t.app, { method, url, headers, remoteAddress: freshIp() });
      expect([url, res.statusCode, res.json()]).toEqual([
        url,
        404,
        { error: { code: 'NOT_FOUND', message: `no route ${method} /api/v1${url}` } },
      ]);
      // The matched route's group counts it (market data 1,200, order cancels 100, the others 600).
      for (const h of RATE_HEADERS) expect(res.headers[h], `${url} ${h}`).toBeDefined();
    }
    // Without credentials too: the path is refused before authentication.
    const anonymous = await api(t.app, { method: 'GET', url: '/battles/', remoteAddress: freshIp() });
    expect([anonymous.statusCode, anonymous.json().error.code]).toEqual([404, 'NOT_FOUND']);
  });

  it('keeps the group of a known route, e.g. orders (100 per minute) on a refused order', async () => {
    const res = await api(t.app, {
      method: 'POST',
      url: '/trade/order',
      remoteAddress: freshIp(),
      payload: { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.001' },
    });
    expect(res.statusCode).toBe(401);
    expectRateHeaders(res.headers, '100');
  });
});

describe('JSON bodies', () => {
  const json = { 'content-type': 'application/json' };

  it('accepts Content-Type: application/json with an empty body on body-less calls', async () => {
    /** A body-less call that still says `Content-Type: application/json`, with an empty (or blank) body. */
    const bodyless = (method: 'DELETE' | 'POST', url: string, auth: Record<string, string>, payload = '') =>
      api(t.app, { method, url, headers: { ...auth, ...json }, payload });
    const cancel = await bodyless(
      'DELETE',
      '/trade/order/00000000-0000-4000-8000-000000000000',
      keyHeader(account.apiKey),
    );
    expect(cancel.statusCode).toBe(404);
    expect(cancel.json().error.code).toBe('ORDER_NOT_FOUND');
    const cancelAll = await bodyless('DELETE', '/trade/orders/open', keyHeader(account.apiKey), ' ');
    expect(cancelAll.statusCode).toBe(200);
    expect(cancelAll.json()).toMatchObject({ cancelled_count: 0, total_unlocked: '0.00000000' });
    const { agentId } = await createAgent(t.app, account, { display_name: 'Body-less' });
    const archive = await bodyless('POST', `/agents/${agentId}/archive`, bearer(account));
    expect(archive.statusCode).toBe(200);
    expect(archive.json().status).toBe('archived');
  });

  it('names a missing body on a call that needs one, still VALIDATION_ERROR 422', async () => {
    for (const headers of [keyHeader(account.apiKey), { ...keyHeader(account.apiKey), ...json }]) {
      const res = await api(t.app, { method: 'POST', url: '/trade/order', headers, payload: '' });
      expect(res.statusCode).toBe(422);
      expect(res.json().error).toMatchObject({
        code: 'VALIDATION_ERROR',
        message: 'request body is missing: send a JSON object with Content-Type: application/json',
      });
    }
  });

  it('still refuses malformed JSON and prototype poisoning in the envelope', async () => {
    for (const payload of ['{"symbol":', '{"__proto__":{"x":1}}']) {
      const res = await api(t.app, {
        method: 'POST',
        url: '/trade/order',
        headers: { ...keyHeader(account.apiKey), ...json },
        payload,
      });
      expect(res.statusCode).toBe(422);
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('a JSON body that is not UTF-8', () => {
  it('is refused 422 as not valid JSON (RFC 8259 §8.1), not stored with U+FFFD in place of its bytes', async () => {
    // `{"display_name":"<0xFF 0xFE>"}` and an agent name in Latin-1: decoding replaced the bytes with U+FFFD and
    // the account or agent was created under that name.
    const cases = [
      { url: '/auth/register', headers: {}, bytes: ['{"display_name":"', [0xff, 0xfe], '"}'] },
      { url: '/agents', headers: bearer(account), bytes: ['{"display_name":"caf', [0xe9], '"}'] },
    ] as const;
    const agentCount = async () =>
      (await api(t.app, { method: 'GET', url: '/agents', headers: bearer(account) })).json().total;
    const agentsBefore = await agentCount();
    for (const { url, headers, bytes } of cases) {
      const payload = Buffer.concat(
        bytes.map((b) => (typeof b === 'string' ? Buffer.from(b) : Buffer.from(b))),
      );
      const res = await api(t.app, {
        method: 'POST',
        url,
        headers: { ...headers, 'content-type': 'application/json' },
        payload,
        remoteAddress: freshIp(),
      });
      expect([res.statusCode, res.json().error?.code], url).toEqual([422, 'VALIDATION_ERROR']);
      expect(res.json().error.message, url).toBe('request body is not valid JSON: it is not UTF-8 text');
      expect(res.json().error.details.issues, url).toEqual([
        { field: 'body', location: 'body', message: 'is not UTF-8 text' },
      ]);
    }
    expect(await agentCount()).toBe(agentsBefore);
    // Well-formed UTF-8 (two- and four-byte sequences) is read as before.
    const ok = await api(t.app, {
      method: 'POST',
      url: '/agents',
      headers: { ...bearer(account), 'content-type': 'application/json' },
      payload: Buffer.from('{"display_name":"café 😀"}'),
    });
    expect([ok.statusCode, ok.json().display_name]).toEqual([201, 'café 😀']);
  });
});

describe('a JSON body holding a __proto__ or constructor.prototype key (over HTTP)', () => {
  it('is refused 422 naming the key and why, not as "not valid JSON", on any route with a JSON body', async () => {
    const base = await baseUrl();
    const cases = [
      {
        url: '/api/v1/auth/register',
        payload: '{"email":"a@b.c","__proto__":{"admin":true}}',
        field: '__proto__',
      },
      {
        url: '/api/v1/trade/order',
        payload: '{"symbol":"BTCUSDT","meta":{"constructor":{"prototype":{"x":1}}}}',
        field: 'meta.constructor',
      },
    ];
    for (const c of cases) {
      const res = await fetch(`${base}${c.url}`, {
        method: 'POST',
        headers: { ...keyHeader(account.apiKey), 'content-type': 'application/json' },
        body: c.payload,
      });
      const body = (await res.json()) as {
        error: { code: string; message: string; details: { issues: unknown } };
      };
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(body.error.code).toBe('VALIDATION_ERROR');
      expect(body.error.message).not.toMatch(/not valid JSON/);
      expect(body.error.message).toMatch(/prototype poisoning/);
      expect(body.error.details.issues).toEqual([
        { field: c.field, location: 'body', message: expect.stringMatching(/refused/) },
      ]);
    }
  });
});

describe('an integer query parameter (over HTTP)', () => {
  it('accepts only decimal digits: empty, 5e1, 1.0, " 5" and 0x10 are "must be an integer"', async () => {
    const base = await baseUrl();
    const get = async (url: string) => {
      const res = await fetch(`${base}/api/v1${url}`, { headers: keyHeader(account.apiKey) });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    for (const raw of ['', '5e1', '1.0', '%205', '0x10', 'abc']) {
      for (const url of [`/trade/orders?limit=${raw}`, `/market/trades/BTCUSDT?limit=${raw}`]) {
        const res = await get(url);
        expect(res.status, `${url} ${JSON.stringify(res.body)}`).toBe(422);
        expect(res.body.error.details.issues, url).toEqual([
          { field: 'limit', location: 'querystring', message: 'must be an integer' },
        ]);
      }
    }
    const fine = await get('/trade/orders?limit=50&offset=0');
    expect([fine.status, fine.body.limit], JSON.stringify(fine.body)).toEqual([200, 50]);
    expect((await get('/trade/orders?limit=0')).body.error.details.issues[0].message).toMatch(
      />=1|too small/i,
    );
  });
});

describe('POST /account/reset', () => {
  it('answers VALIDATION_ERROR 400 when confirm is missing, also with no body at all', async () => {
    const cases = [
      { headers: keyHeader(account.apiKey) },
      { headers: { ...keyHeader(account.apiKey), 'content-type': 'application/json' }, payload: '' },
      { headers: keyHeader(account.apiKey), payload: {} },
      { headers: keyHeader(account.apiKey), payload: { confirm: false } },
    ];
    for (const c of cases) {
      const res = await api(t.app, { method: 'POST', url: '/account/reset', ...c });
      expect(res.statusCode, JSON.stringify(c)).toBe(400);
      expect(res.json().error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { issues: [{ field: 'confirm', location: 'body' }] },
      });
    }
  });

  it('names new_starting_balance (not starting_balance) when it is malformed', async () => {
    const res = await api(t.app, {
      method: 'POST',
      url: '/account/reset',
      headers: keyHeader(account.apiKey),
      payload: { confirm: true, new_starting_balance: '1e4' },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('VALIDATION_ERROR');
    expect(res.json().error.details).toEqual({
      issues: [
        {
          field: 'new_starting_balance',
          location: 'body',
          message: 'must be a positive decimal string with at most 8 decimal places, e.g. "10000.00"',
        },
      ],
    });
    expect(res.json().error.message).toMatch(/^new_starting_balance /);
  });
});

describe('VALIDATION_ERROR details', () => {
  it('lists details.issues[] (field, location, message) whoever refuses the input: schema, route or decider', async () => {
    const cases: [Parameters<typeof api>[1] & { method: string }, { field: string; location: string }][] = [
      // schema (zod)
      [
        { method: 'POST', url: '/auth/register', payload: { display_name: '' } },
        { field: 'display_name', location: 'body' },
      ],
      // the account decider / command (details.field)
      [
        { method: 'POST', url: '/auth/register', payload: { display_name: 'x', password: 'long enough pw' } },
        { field: 'password', location: 'body' },
      ],
      [
        {
          method: 'POST',
          url: '/auth/register',
          payload: { display_name: 'x', starting_balance: '1.123456789' },
        },
        { field: 'starting_balance', location: 'body' },
      ],
      // the authentication layer
      [
        {
          method: 'GET',
          url: '/account/info',
          headers: { ...keyHeader(account.apiKey), 'x-agent-id': 'nope' },
        },
        { field: 'X-Agent-Id', location: 'headers' },
      ],
      // a route's own check
      [
        { method: 'GET', url: '/backtest/compare?sessions=', headers: keyHeader(account.apiKey) },
        { field: 'sessions', location: 'querystring' },
      ],
      // the wallet decider
      [
        {
          method: 'POST',
          url: '/trade/order',
          headers: keyHeader(account.apiKey),
          payload: { symbol: 'BTCUSDT', side: 'buy', type: 'limit', quantity: '0.001' },
        },
        { field: 'price', location: 'body' },
      ],
    ];
    for (const [request, issue] of cases) {
      const res = await api(t.app, { ...request, remoteAddress: freshIp() });
      const label = `${request.method} ${request.url}`;
      expect([res.statusCode, res.json().error.code], label).toEqual([422, 'VALIDATION_ERROR']);
      const details = res.json().error.details;
      expect(details.issues, label).toEqual([{ ...issue, message: expect.any(String) }]);
      expect(details.field, label).toBeUndefined();
    }
  });
});

describe('VALIDATION_ERROR messages say what is wrong', () => {
  it('names a missing or wrongly typed decimal field (quantity, price, starting_balance), recording nothing', async () => {
    const order = { symbol: 'BTCUSDT', side: 'buy', type: 'limit', quantity: '0.001', price: '39000' };
    // A string is sent as it is: JSON.parse reads 1e400 as Infinity.
    const cases: [string, string, Record<string, unknown> | string, string, RegExp][] = [
      ['POST', '/trade/order', { ...order, quantity: undefined }, 'quantity', /required/],
      ['POST', '/trade/order', { ...order, quantity: true }, 'quantity', /decimal string.*received boolean/],
      ['POST', '/trade/order', { ...order, price: { v: 1 } }, 'price', /decimal string.*received object/],
      [
        'POST',
        '/trade/order',
        '{"symbol":"BTCUSDT","side":"buy","type":"limit","quantity":1e400,"price":"1"}',
        'quantity',
        /decimal string.*received Infinity/,
      ],
      [
        'POST',
        '/auth/register',
        { display_name: 'x', starting_balance: [1] },
        'starting_balance',
        /received array/,
      ],
    ];
    const before = (
      await api(t.app, { method: 'GET', url: '/trade/orders', headers: keyHeader(account.apiKey) })
    ).json();
    for (const [method, url, payload, field, message] of cases) {
      const res = await api(t.app, {
        method,
        url,
        headers: { ...keyHeader(account.apiKey), 'content-type': 'application/json' },
        payload,
        remoteAddress: freshIp(),
      });
      const label = `${url} ${JSON.stringify(payload)}`;
      expect([res.statusCode, res.json().error.code], label).toEqual([422, 'VALIDATION_ERROR']);
      const issues = res.json().error.details.issues;
      expect(issues, label).toEqual([{ field, location: 'body', message: expect.stringMatching(message) }]);
      expect(issues[0].message, label).not.toBe('Invalid input');
    }
    const after = (
      await api(t.app, { method: 'GET', url: '/trade/orders', headers: keyHeader(account.apiKey) })
    ).json();
    expect(after.total).toBe(before.total);
  });
});

describe('query parameters that are not integers, or given twice', () => {
  it('says an integer is expected (not "received NaN") and names a parameter sent more than once', async () => {
    const headers = keyHeader(account.apiKey);
    const cases: [string, string, RegExp][] = [
      ['/trade/orders?limit=abc', 'limit', /^must be an integer$/],
      ['/trade/history?offset=x', 'offset', /^must be an integer$/],
      ['/trade/orders/open?limit=1.5', 'limit', /^must be an integer$/],
      ['/market/candles/BTCUSDT?limit=ten', 'limit', /^must be an integer$/],
      ['/market/trades/BTCUSDT?limit=many', 'limit', /^must be an integer$/],
      ['/analytics/portfolio/history?limit=all', 'limit', /^must be an integer$/],
      ['/trade/orders?limit=1&limit=2', 'limit', /more than once/],
      ['/account/pnl?period=1d&period=7d', 'period', /more than once/],
      ['/market/candles/BTCUSDT?interval=1h&interval=1d', 'interval', /more than once/],
      ['/market/indicators/BTCUSDT?limit=abc', 'limit', /^must be an integer$/],
      [`/backtest/bt_${'0'.repeat(32)}/market/candles/BTCUSDT?limit=abc`, 'limit', /^must be an integer$/],
      ['/battles?limit=abc', 'limit', /^must be an integer$/],
      ['/battles?offset=1.5', 'offset', /^must be an integer$/],
    ];
    for (const [url, field, message] of cases) {
      // Battles are JWT only (spec "Battle endpoints").
      const auth = url.startsWith('/battles') ? bearer(account) : headers;
      const res = await api(t.app, { method: 'GET', url, headers: auth, remoteAddress: freshIp() });
      expect([res.statusCode, res.json().error.code], url).toEqual([422, 'VALIDATION_ERROR']);
      expect(res.json().error.details.issues, url).toEqual([
        { field, location: 'querystring', message: expect.stringMatching(message) },
      ]);
      expect(res.json().error.message, url).toMatch(message.source.replace(/^\^|\$$/g, ''));
    }
  });
});

describe('input PostgreSQL cannot store', () => {
  it('refuses U+0000 in a body string, a body key or the URL with VALIDATION_ERROR 422, recording nothing', async () => {
    const cases: [Parameters<typeof api>[1] & { method: string }, string][] = [
      [{ method: 'POST', url: '/auth/register', payload: { display_name: 'a\u0000b' } }, 'display_name'],
      [
        {
          method: 'POST',
          url: '/agents',
          headers: bearer(account),
          payload: { display_name: 'bot', risk_profile: { 'max\u0000': 1 } },
        },
        'risk_profile',
      ],
      [
        {
          method: 'POST',
          url: '/trade/order',
          headers: keyHeader(account.apiKey),
          payload: { symbol: 'BTC\u0000USDT', side: 'buy', type: 'market', quantity: '0.001' },
        },
        'symbol',
      ],
      [
        {
          method: 'GET',
          url: '/trade/history?side=buy&symbol=BTC%00USDT',
          headers: keyHeader(account.apiKey),
        },
        'symbol',
      ],
      [{ method: 'GET', url: '/market/price/BTC%00USDT' }, 'path'],
    ];
    for (const [request, field] of cases) {
      const res = await api(t.app, { ...request, remoteAddress: freshIp() });
      const label = `${request.method} ${request.url}`;
      expect([res.statusCode, res.json().error.code], label).toEqual([422, 'VALIDATION_ERROR']);
      expect(res.json().error.details.issues, label).toEqual([
        { field, location: expect.any(String), message: expect.stringContaining('U+0000') },
      ]);
    }
    const orders = await api(t.app, {
      method: 'GET',
      url: '/trade/orders',
      headers: keyHeader(account.apiKey),
    });
    expect(orders.json().total).toBe(0);
  });

  it('refuses an unknown risk-profile field instead of ignoring it', async () => {
    const res = await api(t.app, {
      method: 'PUT',
      url: '/account/risk-profile',
      headers: keyHeader(account.apiKey),
      payload: {
        max_position_size_pct: 25,
        daily_loss_limit_pct: 20,
        max_open_orders: 50,
        max_positon_pct: 10,
      },
      remoteAddress: freshIp(),
    });
    expect([res.statusCode, res.json().error.code]).toEqual([422, 'VALIDATION_ERROR']);
    expect(res.json().error.details.issues).toEqual([
      { field: 'max_positon_pct', location: 'body', message: 'unknown field' },
    ]);
  });
});

describe('POST /agents/{id}/reset', () => {
  it('cancels the agent’s orders and restores its balance before it answers', async () => {
    const { agentId, apiKey } = await createAgent(t.app, account, { display_name: 'Resettable' });
    const limit = await api(t.app, {
      method: 'POST',
      url: '/trade/order',
      headers: keyHeader(apiKey),
      payload: { symbol: 'BTCUSDT', side: 'buy', type: 'limit', quantity: '0.001', price: '30000' },
    });
    expect(limit.statusCode, limit.body).toBe(201);
    const buy = await api(t.app, {
      method: 'POST',
      url: '/trade/order',
      headers: keyHeader(apiKey),
      payload: { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.001' },
    });
    expect(buy.statusCode, buy.body).toBe(201);

    const reset = await api(t.app, {
      method: 'POST',
      url: `/agents/${agentId}/reset`,
      headers: bearer(account),
    });
    expect(reset.statusCode).toBe(200);
    expect(reset.json().status).toBe('active');

    // No wait and no other request in between: the reads right after the reset see it.
    const open = await api(t.app, { method: 'GET', url: '/trade/orders/open', headers: keyHeader(apiKey) });
    expect(open.json()).toMatchObject({ orders: [], total: 0 });
    const order = await api(t.app, {
      method: 'GET',
      url: `/trade/order/${limit.json().order_id}`,
      headers: keyHeader(apiKey),
    });
    expect(order.json()).toMatchObject({ status: 'cancelled', cancel_reason: 'owner_reset' });
    const balance = await api(t.app, { method: 'GET', url: '/account/balance', headers: keyHeader(apiKey) });
    expect(balance.json()).toEqual({
      balances: [
        { asset: 'USDT', available: '10000.00000000', locked: '0.00000000', total: '10000.00000000' },
      ],
      total_equity_usdt: '10000.00000000',
    });
    // Trade history is kept: the buy and the closing sell of the reset.
    const history = await api(t.app, { method: 'GET', url: '/trade/history', headers: keyHeader(apiKey) });
    expect(history.json().total).toBe(2);
  });
});
