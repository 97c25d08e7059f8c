import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { bearer, createAgent, registerAccount } from '../accounts/support';
import { operatorHeadersOf } from '../support/runtime';
import { useTestApp } from '../support/test-app';

/**
 * Issue 16, item 5: response hardening on the real application. Security headers on every kind of response;
 * `Cache-Control: no-store` on every answer that carries a secret; 431 in the error envelope; a JWT issued
 * before a password change refused; `/health` details for the operator only; the body limit per route; the docs
 * UI working under the Content-Security-Policy in a real browser.
 */
const t = useTestApp({ env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'BTCUSDT' } });
let url: string;

beforeAll(async () => {
  url = await t.app.listen({ host: '127.0.0.1', port: 0 });
}, 60_000);

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

const expectSecurityHeaders = (headers: Record<string, unknown>, what: string) => {
  expect(headers, what).toMatchObject(SECURITY_HEADERS);
  const csp = String(headers['content-security-policy']);
  expect(csp, what).toContain("default-src 'self'");
  expect(csp, what).toContain("script-src 'self'");
  expect(csp, what).toContain("frame-ancestors 'none'");
  expect(csp, what).not.toContain('unsafe-eval');
};

describe('response hardening', () => {
  it('sends the security headers on API answers, errors, 404s, /health and the docs', async () => {
    const account = await registerAccount(t.app);
    for (const [what, res] of [
      [
        'an API answer',
        await t.app.inject({ method: 'GET', url: '/api/v1/account/info', headers: bearer(account) }),
      ],
      ['an error', await t.app.inject({ method: 'GET', url: '/api/v1/account/info' })],
      ['a 404', await t.app.inject({ method: 'GET', url: '/api/v1/nowhere' })],
      ['a root 404', await t.app.inject({ method: 'GET', url: '/nowhere' })],
      ['/health', await t.app.inject({ method: 'GET', url: '/health' })],
      ['/docs', await t.app.inject({ method: 'GET', url: '/docs/' })],
      ['/openapi.json', await t.app.inject({ method: 'GET', url: '/openapi.json' })],
    ] as const)
      expectSecurityHeaders(res.headers, what);
  });

  it('marks every answer carrying a secret no-store', async () => {
    const email = `keeper.${Date.now()}@example.com`;
    const register = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: {
        display_name: 'Secret Keeper',
        email,
        password: 'long enough pw',
      },
    });
    expect(register.statusCode).toBe(201);
    expect(register.json().api_secret).toMatch(/^sk_live_/);
    const { api_key, api_secret } = register.json();
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { api_key, api_secret },
    });
    const userLogin = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/user-login',
      payload: {
        email,
        password: 'long enough pw',
      },
    });
    const token = login.json().token as string;
    const H = { authorization: `Bearer ${token}` };
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      headers: H,
      payload: { display_name: 'K' },
    });
    expect(created.json().api_key).toMatch(/^ak_live_/);
    const id = created.json().agent_id as string;
    const shown = await t.app.inject({ method: 'GET', url: `/api/v1/agents/${id}/api-key`, headers: H });
    const regenerated = await t.app.inject({
      method: 'POST',
      url: `/api/v1/agents/${id}/regenerate-key`,
      headers: H,
    });
    for (const [what, res] of [
      ['register', register],
      ['login', login],
      ['user-login', userLogin],
      ['create agent', created],
      ['show agent key', shown],
      ['regenerate agent key', regenerated],
    ] as const) {
      expect(res.statusCode, `${what}: ${res.body}`).toBeLessThan(300);
      expect(res.headers['cache-control'], what).toBe('no-store');
    }
    // And the operator's /health view.
    const health = await t.app.inject({ method: 'GET', url: '/health', headers: operatorHeadersOf(t.app) });
    expect(health.headers['cache-control']).toBe('no-store');
  });

  it('answers headers over 16 KiB with 431 in the error envelope', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const { port } = new URL(url);
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.write(`GET /api/v1/market/pairs HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      });
      let data = '';
      socket.on('data', (d) => {
        data += d;
      });
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    const [head, body] = raw.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 431 /);
    expect(head).toMatch(/content-type: application\/json/i);
    expect(head).toMatch(/x-content-type-options: nosniff/i);
    expect(JSON.parse(body!)).toMatchObject({
      error: { code: 'VALIDATION_ERROR', details: { issues: [{ field: 'headers', location: 'headers' }] } },
    });
    // A URL over the limit too.
    const long = await fetch(`${url}/api/v1/market/price/${'A'.repeat(20_000)}`);
    expect(long.status).toBe(431);
    expect(((await long.json()) as { error: { code: string } }).error.code).toBe('VALIDATION_ERROR');
  });

  it('refuses a JWT issued before a password change, and accepts one issued after', async () => {
    const account = await registerAccount(t.app);
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/user-login',
      payload: { email: account.email, password: account.password },
    });
    const before = login.json().token as string;
    const keyLogin = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { api_key: account.apiKey, api_secret: account.apiSecret },
    });
    const beforeByKey = keyLogin.json().token as string;
    const info = (token: string) =>
      t.app.inject({
        method: 'GET',
        url: '/api/v1/account/info',
        headers: { authorization: `Bearer ${token}` },
      });
    expect((await info(before)).statusCode).toBe(200);
    const changed = await t.app.inject({
      method: 'PUT',
      url: '/api/v1/auth/password',
      headers: { authorization: `Bearer ${before}` },
      payload: { password: 'a brand new password', current_password: account.password },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    for (const token of [before, beforeByKey]) {
      const refused = await info(token);
      expect(refused.statusCode).toBe(401);
      expect(refused.json().error).toMatchObject({
        code: 'INVALID_TOKEN',
        details: { reason: 'credentials_changed' },
      });
    }
    const relogin = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/user-login',
      payload: { email: account.email, password: 'a brand new password' },
    });
    expect(relogin.statusCode).toBe(200);
    expect((await info(relogin.json().token)).statusCode).toBe(200);
    // The old password no longer logs in; API keys are not JWTs and keep working.
    const old = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/user-login',
      payload: { email: account.email, password: account.password },
    });
    expect(old.statusCode).toBe(401);
    const byKey = await t.app.inject({
      method: 'GET',
      url: '/api/v1/account/info',
      headers: { 'x-api-key': account.apiKey },
    });
    expect(byKey.statusCode).toBe(200);
  });

  it('shows /health details to the operator only; the public answer says ok or degraded', async () => {
    const pub = await t.app.inject({ method: 'GET', url: '/health' });
    expect(pub.statusCode).toBe(200);
    // The dependencies by name, up or down, and the original clients' booleans (docs/compatibility.md): no details.
    expect(pub.json()).toEqual({
      status: 'ok',
      version: expect.any(String),
      db_connected: true,
      redis_connected: true,
      dependencies: { database: 'ok', event_store: 'ok', market_feed: 'ok', projections: 'ok' },
    });
    expect(pub.body).not.toContain(t.app.services.database.location);
    const wrong = await t.app.inject({
      method: 'GET',
      url: '/health',
      headers: { authorization: 'Bearer nope' },
    });
    expect(Object.keys(wrong.json())).toEqual([
      'status',
      'version',
      'db_connected',
      'redis_connected',
      'dependencies',
    ]);
    const op = await t.app.inject({ method: 'GET', url: '/health', headers: operatorHeadersOf(t.app) });
    expect(op.json()).toMatchObject({
      status: 'ok',
      database: {
        status: 'ok',
        kind: t.app.services.database.kind,
        location: t.app.services.database.location,
      },
      event_store: { status: 'ok' },
      process: { pid: process.pid, leaderships: expect.any(Object) },
    });
    expect(op.json().projections.length).toBeGreaterThan(0);
  });

  it('limits bodies to 16 KiB, and to 64 KiB where a configuration names many pairs', async () => {
    const account = await registerAccount(t.app);
    const agent = await createAgent(t.app, account);
    const big = await t.app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      headers: { ...bearer(account), 'content-type': 'application/json' },
      payload: JSON.stringify({ display_name: 'x', llm_model: 'y'.repeat(20_000) }),
    });
    expect(big.statusCode).toBe(413);
    expect(big.json().error).toMatchObject({ code: 'VALIDATION_ERROR', details: { limit_bytes: 16_384 } });
    // A backtest naming 1,000 pairs (about 30 KB) is read (and refused for its pairs, not its size).
    const pairs = Array.from({ length: 1000 }, (_, i) => `PAIR${String(i).padStart(20, '0')}USDT`);
    const backtest = await t.app.inject({
      method: 'POST',
      url: '/api/v1/backtest/create',
      headers: bearer(account),
      payload: {
        start_time: '2024-01-01T00:00:00Z',
        end_time: '2024-01-02T00:00:00Z',
        starting_balance: '1000',
        candle_interval: '1h',
        agent_id: agent.agentId,
        pairs,
      },
    });
    expect(backtest.statusCode).not.toBe(413);
  });
});

/** Debian's chromium, for a real browser check of the docs UI. */
const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p));
if (!chromium) console.warn('docs UI browser check skipped: no chromium installed');

describe.skipIf(!chromium)('the docs UI under the Content-Security-Policy', () => {
  it('renders the operations in a real browser', async () => {
    // Asynchronously: the server under test runs in this process and must keep answering the browser.
    const dom = await new Promise<string>((resolve, reject) =>
      execFile(
        chromium!,
        [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--virtual-time-budget=15000',
          '--dump-dom',
          `${url}/docs/`,
        ],
        { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout) => (error ? reject(error) : resolve(stdout)),
      ),
    );
    // Swagger UI builds the operation list with its scripts: a blocked script leaves an empty container.
    expect(dom).toContain('opblock');
    expect(dom).toContain('/api/v1/trade/order');
  }, 90_000);
});
