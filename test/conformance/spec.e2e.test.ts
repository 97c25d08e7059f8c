import fs from 'node:fs';
import path from 'node:path';
import BigNumber from 'bignumber.js';
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { MARKET_DATA } from '../market/support';
import { useRealDataServer } from '../support/real-data-server';

/**
 * Conformance of the implemented parts of the interface contract (`../shared/spec/paper-trading-interface.md`)
 * as a client sees them: the real server process (`src/main.ts serve`) replaying the real data set over HTTP and
 * WebSocket. Checks field sets, types (8-dp decimal strings, integers, ISO UTC timestamps, UUIDs), bounds and
 * the exact error codes and statuses of auth, agents, account, market data, trading, backtests, the ticker feed,
 * the error envelope and the rate-limit headers. Every `/api/v1` response is checked for the rate-limit headers
 * and every error for the envelope. Skipped with a printed reason when the data set is absent.
 */

const DATA_PRESENT = fs.existsSync(path.join(MARKET_DATA, 'binance', 'exchangeInfo.json'));

// Types of the wire (spec "Conventions").
const DEC = /^-?\d+(\.\d{1,8})?$/;
const DEC8 = /^-?\d+\.\d{8}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const decimal8 = expect.stringMatching(DEC8);
const iso = expect.stringMatching(ISO);
const uuid = expect.stringMatching(UUID);
const int = expect.any(Number);

const keys = (o: object) => Object.keys(o).sort();
/** The object has at least the spec's fields (extra fields are allowed). */
const expectFields = (o: object, fields: string[]) => expect(keys(o)).toEqual(expect.arrayContaining(fields));
const isInt = (v: unknown) => Number.isInteger(v);

interface Res {
  status: number;
  body: any;
  headers: Headers;
  text: string;
}

let base = '';

/**
 * One HTTP call to `/api/v1{url}` with the spec's invariants of every response checked on the way: the three
 * rate-limit headers, and for an error the envelope `{error: {code, message, details?}}` and nothing else.
 */
const call = async (
  method: string,
  url: string,
  options: { body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<Res> => {
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  const r = await fetch(`${base}/api/v1${url}`, {
    method,
    headers,
    ...(options.body !== undefined
      ? { body: JSON.stringify(options.body) }
      : options.raw !== undefined
        ? { body: options.raw }
        : {}),
  });
  const text = await r.text();
  const type = r.headers.get('content-type') ?? '';
  const body = type.includes('json') && text ? JSON.parse(text) : text;
  const where = `${method} ${url} → ${r.status} ${text.slice(0, 300)}`;
  for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    expect(r.headers.get(h), `${h} on ${where}`).toMatch(/^\d+$/);
  }
  expect(Number(r.headers.get('x-ratelimit-reset')), where).toBeGreaterThan(1e9);
  if (r.status >= 400) {
    expect(keys(body), where).toEqual(['error']);
    expect(body.error, where).toMatchObject({
      code: expect.stringMatching(/^[A-Z_]+$/),
      message: expect.any(String),
    });
    expect(
      keys(body.error).filter((k) => !['code', 'message', 'details'].includes(k)),
      where,
    ).toEqual([]);
    expect(r.status, where).not.toBe(500);
  }
  return { status: r.status, body, headers: r.headers, text };
};

/** Asserts an error response: status, code (and the envelope, checked by {@link call}). */
const expectError = (res: Res, status: number, code: string) => {
  expect({ status: res.status, code: res.body?.error?.code }, res.text.slice(0, 300)).toEqual({
    status,
    code,
  });
};

const json = (method: string, url: string, body: unknown, headers: Record<string, string> = {}) =>
  call(method, url, { body, headers });

// Shared state, filled in order by the describe blocks below (vitest runs them in file order).
let accountKey = '';
let accountSecret = '';
let accountId = '';
let token = '';
let agentId = '';
let agentKey = '';
const key = () => ({ 'x-api-key': accountKey });
const jwt = () => ({ authorization: `Bearer ${token}` });
const EMAIL = `conformance.${Date.now()}@example.com`;
const PASSWORD = 'conformance-password-1';

const suite = DATA_PRESENT ? describe : describe.skip;
if (!DATA_PRESENT) {
  console.log(`[conformance] spec e2e skipped: no market data set at ${MARKET_DATA} (../shared/market-data)`);
}

suite('the interface contract on the real server with the real data', () => {
  const server = useRealDataServer('ptv-conformance-e2e-');
  beforeAll(() => {
    base = server.url;
  });

  describe('auth', () => {
    it('registers: 201 with the spec fields; default balance 10000; the secret shown once', async () => {
      const r = await json('POST', '/auth/register', {
        display_name: 'Conformance',
        email: EMAIL,
        password: PASSWORD,
      });
      expect(r.status).toBe(201);
      expectFields(r.body, [
        'account_id',
        'api_key',
        'api_secret',
        'display_name',
        'starting_balance',
        'message',
      ]);
      expect(r.body).toMatchObject({
        account_id: uuid,
        api_key: expect.stringMatching(/^ak_live_/),
        api_secret: expect.stringMatching(/^sk_live_/),
        display_name: 'Conformance',
        message: expect.any(String),
      });
      expect(new BigNumber(r.body.starting_balance).eq(10000)).toBe(true);
      expect(r.body.starting_balance).toMatch(DEC);
      ({ account_id: accountId, api_key: accountKey, api_secret: accountSecret } = r.body);
      expect(r.headers.get('x-ratelimit-limit')).toBe('60');
    });

    it('validates registration: VALIDATION_ERROR 422 (missing name, 0 or 65 characters, bad email or balance)', async () => {
      for (const body of [
        {},
        { display_name: '' },
        { display_name: 'x'.repeat(65) },
        { display_name: 'x', email: 'not-an-email' },
        { display_name: 'x', starting_balance: '1.123456789' },
        { display_name: 'x', starting_balance: '1e5' },
        { display_name: 'x', starting_balance: '-5' },
      ]) {
        expectError(await json('POST', '/auth/register', body), 422, 'VALIDATION_ERROR');
      }
      const max = await json('POST', '/auth/register', {
        display_name: 'x'.repeat(64),
        starting_balance: '2500.5',
      });
      expect(max.status).toBe(201);
      expect(max.body.starting_balance).toBe('2500.50000000');
      expectError(
        await json('POST', '/auth/register', { display_name: 'Again', email: EMAIL }),
        409,
        'DUPLICATE_ACCOUNT',
      );
    });

    it('logs in with key and secret, and with email and password: token, expires_at in 1 h, Bearer', async () => {
      const r = await json('POST', '/auth/login', { api_key: accountKey, api_secret: accountSecret });
      expect(r.status).toBe(200);
      expect(keys(r.body)).toEqual(['expires_at', 'token', 'token_type']);
      expect(r.body).toMatchObject({ token: expect.any(String), expires_at: iso, token_type: 'Bearer' });
      const lifetime = Date.parse(r.body.expires_at) - Date.now();
      expect(lifetime).toBeGreaterThan(3_500_000);
      expect(lifetime).toBeLessThanOrEqual(3_600_000);
      token = r.body.token;
      const user = await json('POST', '/auth/user-login', { email: EMAIL, password: PASSWORD });
      expect(user.status).toBe(200);
      expect(user.body.token_type).toBe('Bearer');
    });

    it('refuses bad credentials with the spec codes: INVALID_API_KEY vs INVALID_TOKEN', async () => {
      const unknownKey = `ak_live_${'Q'.repeat(43)}`;
      expectError(
        await json('POST', '/auth/login', { api_key: unknownKey, api_secret: accountSecret }),
        401,
        'INVALID_API_KEY',
      );
      expectError(
        await json('POST', '/auth/login', { api_key: accountKey, api_secret: 'sk_live_wrong' }),
        401,
        'INVALID_TOKEN',
      );
      expectError(await json('POST', '/auth/login', {}), 422, 'VALIDATION_ERROR');
      expectError(
        await json('POST', '/auth/user-login', { email: EMAIL, password: 'wrong-password' }),
        401,
        'INVALID_TOKEN',
      );
      expectError(
        await json('POST', '/auth/user-login', { email: 'nobody@example.com', password: 'x' }),
        401,
        'INVALID_TOKEN',
      );
      expectError(await call('GET', '/account/info'), 401, 'INVALID_API_KEY');
      expectError(
        await call('GET', '/account/info', { headers: { 'x-api-key': unknownKey } }),
        401,
        'INVALID_API_KEY',
      );
      expectError(
        await call('GET', '/account/info', { headers: { 'x-api-key': 'garbage' } }),
        401,
        'INVALID_API_KEY',
      );
      for (const bad of ['Bearer abc.def.ghi', `Bearer ${token}x`, 'Basic abc']) {
        expectError(
          await call('GET', '/account/info', { headers: { authorization: bad } }),
          401,
          'INVALID_TOKEN',
        );
      }
      expect((await call('GET', '/account/info', { headers: jwt() })).status).toBe(200);
    });
  });

  describe('agents (JWT only)', () => {
    it('creates: 201 agent_id, api_key, display_name, starting_balance; 1–100 characters', async () => {
      const r = await json(
        'POST',
        '/agents',
        {
          display_name: 'Conformance agent',
          llm_model: 'model-x',
          framework: 'fw',
          strategy_tags: ['a', 'b'],
          risk_profile: { max_position_size_pct: 30 },
          color: '#AABBCC',
        },
        jwt(),
      );
      expect(r.status).toBe(201);
      expectFields(r.body, ['agent_id', 'api_key', 'display_name', 'starting_balance']);
      expect(r.body).toMatchObject({
        agent_id: uuid,
        api_key: expect.stringMatching(/^ak_live_/),
        starting_balance: decimal8,
      });
      agentId = r.body.agent_id;
      agentKey = r.body.api_key;
      expect((await json('POST', '/agents', { display_name: 'b'.repeat(100) }, jwt())).status).toBe(201);
      for (const body of [
        { display_name: 'b'.repeat(101) },
        { display_name: '' },
        {},
        { display_name: 'x', color: 'red' },
        { display_name: 'x', risk_profile: { max_open_orders: 201 } },
        { display_name: 'x', risk_profile: { daily_loss_limit_pct: 0 } },
        { display_name: 'x', risk_profile: { max_position_size_pct: 2.5 } },
      ]) {
        expectError(await json('POST', '/agents', body, jwt()), 422, 'VALIDATION_ERROR');
      }
    });

    it('refuses an API key (account or agent) on /agents/*', async () => {
      expectError(await call('GET', '/agents', { headers: key() }), 401, 'INVALID_TOKEN');
      expectError(
        await call('GET', `/agents/${agentId}`, { headers: { 'x-api-key': agentKey } }),
        401,
        'INVALID_TOKEN',
      );
      expectError(await call('GET', '/agents'), 401, 'INVALID_TOKEN');
    });

    it('returns AgentResponse with every spec field and type', async () => {
      const r = await call('GET', `/agents/${agentId}`, { headers: jwt() });
      expect(r.status).toBe(200);
      expectFields(r.body, [
        'id',
        'account_id',
        'display_name',
        'api_key_preview',
        'starting_balance',
        'llm_model',
        'framework',
        'strategy_tags',
        'risk_profile',
        'avatar_url',
        'color',
        'status',
        'created_at',
        'updated_at',
      ]);
      expect(r.body).toMatchObject({
        id: agentId,
        account_id: accountId,
        api_key_preview: `${agentKey.slice(0, 12)}...`,
        starting_balance: decimal8,
        llm_model: 'model-x',
        framework: 'fw',
        strategy_tags: ['a', 'b'],
        // the spec's three fields and max_order_size_pct (ARCHITECTURE §14b, default 50)
        risk_profile: {
          max_position_size_pct: 30,
          daily_loss_limit_pct: 20,
          max_open_orders: 50,
          max_order_size_pct: 50,
        },
        avatar_url: null,
        status: 'active',
        created_at: iso,
        updated_at: iso,
      });
      expect(r.body.color.toLowerCase()).toBe('#aabbcc');
    });

    it('lists with include_archived, limit 1–500 (default 100) and offset; overview excludes archived', async () => {
      const list = await call('GET', '/agents', { headers: jwt() });
      expect(list.status).toBe(200);
      expect(keys(list.body)).toEqual(['agents', 'total']);
      expect(isInt(list.body.total)).toBe(true);
      expect(list.body.total).toBe(2);
      expect((await call('GET', '/agents?limit=1&offset=1', { headers: jwt() })).body.agents).toHaveLength(1);
      expect((await call('GET', '/agents?limit=500', { headers: jwt() })).status).toBe(200);
      for (const q of ['limit=0', 'limit=501', 'limit=abc', 'offset=-1', 'include_archived=maybe']) {
        expectError(await call('GET', `/agents?${q}`, { headers: jwt() }), 422, 'VALIDATION_ERROR');
      }
      const clone = await call('POST', `/agents/${agentId}/clone`, { headers: jwt() });
      expect(clone.status).toBe(201);
      expectFields(clone.body, ['agent_id', 'api_key', 'display_name', 'starting_balance']);
      expect(clone.body.display_name).toBe('Conformance agent (copy)');
      const cloned = (await call('GET', `/agents/${clone.body.agent_id}`, { headers: jwt() })).body;
      expect(cloned).toMatchObject({ llm_model: 'model-x', framework: 'fw', strategy_tags: ['a', 'b'] });
      expect(cloned.risk_profile.max_position_size_pct).toBe(30);
      const named = await call('POST', `/agents/${agentId}/clone?new_name=Named`, { headers: jwt() });
      expect(named.body.display_name).toBe('Named');
      const archived = await call('POST', `/agents/${clone.body.agent_id}/archive`, { headers: jwt() });
      expect(archived.status).toBe(200);
      expect(archived.body.status).toBe('archived');
      expect((await call('GET', '/agents', { headers: jwt() })).body.total).toBe(3);
      expect((await call('GET', '/agents?include_archived=true', { headers: jwt() })).body.total).toBe(4);
      const overview = await call('GET', '/agents/overview', { headers: jwt() });
      expect(overview.body.agents.every((a: any) => a.status === 'active')).toBe(true);
      // An archived agent's key stops working for new trading requests.
      const refused = await json(
        'POST',
        '/trade/order',
        { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.001' },
        { 'x-api-key': clone.body.api_key },
      );
      expect(refused.status).toBeGreaterThanOrEqual(400);
      expect(refused.status).toBeLessThan(500);
      const removed = await call('DELETE', `/agents/${clone.body.agent_id}`, { headers: jwt() });
      expect(removed.status).toBe(204);
      expect(removed.text).toBe('');
    });

    it('updates partially, reads and replaces the risk profile (integers, bounds), serves skill.md', async () => {
      const put = await json('PUT', `/agents/${agentId}`, { framework: 'fw2', strategy_tags: ['z'] }, jwt());
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({
        display_name: 'Conformance agent',
        framework: 'fw2',
        strategy_tags: ['z'],
      });
      const risk = await call('GET', `/agents/${agentId}/risk-profile`, { headers: jwt() });
      expect(risk.body).toEqual({
        max_position_size_pct: 30,
        daily_loss_limit_pct: 20,
        max_open_orders: 50,
        max_order_size_pct: 50,
      });
      const full = { max_position_size_pct: 100, daily_loss_limit_pct: 1, max_open_orders: 200 };
      const replaced = await json('PUT', `/agents/${agentId}/risk-profile`, full, jwt());
      expect(replaced.status).toBe(200);
      expect(replaced.body).toEqual({ ...full, max_order_size_pct: 50 });
      for (const body of [
        { max_position_size_pct: 50 },
        { ...full, max_open_orders: 0 },
        { ...full, max_open_orders: 201 },
        { ...full, max_position_size_pct: 101 },
        { ...full, daily_loss_limit_pct: '10' },
        { ...full, daily_loss_limit_pct: 10.5 },
      ]) {
        expectError(
          await json('PUT', `/agents/${agentId}/risk-profile`, body, jwt()),
          422,
          'VALIDATION_ERROR',
        );
      }
      await json(
        'PUT',
        `/agents/${agentId}/risk-profile`,
        { ...full, max_position_size_pct: 25, daily_loss_limit_pct: 20 },
        jwt(),
      );
      const key = await call('GET', `/agents/${agentId}/api-key`, { headers: jwt() });
      expect(key.body).toMatchObject({ agent_id: agentId, api_key: agentKey, message: expect.any(String) });
      const skill = await call('GET', `/agents/${agentId}/skill.md`, { headers: jwt() });
      expect(skill.status).toBe(200);
      expect(skill.headers.get('content-type')).toMatch(/^text\/markdown/);
      const head = skill.text.split('\n').slice(0, 12).join('\n');
      expect(head).toContain('Conformance agent');
      expect(head).toContain(agentId);
      expect(head).toContain(agentKey.slice(0, 12));
    });

    it('guards other accounts’ agents with PERMISSION_DENIED 403 (also through X-Agent-Id)', async () => {
      const other = await json('POST', '/auth/register', { display_name: 'Other' });
      const login = await json('POST', '/auth/login', {
        api_key: other.body.api_key,
        api_secret: other.body.api_secret,
      });
      const otherJwt = { authorization: `Bearer ${login.body.token}` };
      expectError(await call('GET', `/agents/${agentId}`, { headers: otherJwt }), 403, 'PERMISSION_DENIED');
      expectError(
        await json('PUT', `/agents/${agentId}`, { framework: 'x' }, otherJwt),
        403,
        'PERMISSION_DENIED',
      );
      expectError(
        await call('DELETE', `/agents/${agentId}`, { headers: otherJwt }),
        403,
        'PERMISSION_DENIED',
      );
      expectError(
        await call('GET', '/account/info', { headers: { ...otherJwt, 'x-agent-id': agentId } }),
        403,
        'PERMISSION_DENIED',
      );
      const scoped = await call('GET', '/account/info', { headers: { ...jwt(), 'x-agent-id': agentId } });
      expect(scoped.status).toBe(200);
      expect(scoped.body.account_id).toBe(accountId);
    });

    it('regenerates the key: the old one gives 401 at once', async () => {
      const old = agentKey;
      const r = await call('POST', `/agents/${agentId}/regenerate-key`, { headers: jwt() });
      expect(r.status).toBe(200);
      expect(r.body.api_key).toMatch(/^ak_live_/);
      expect(r.body.api_key).not.toBe(old);
      agentKey = r.body.api_key;
      expectError(
        await call('GET', '/account/balance', { headers: { 'x-api-key': old } }),
        401,
        'INVALID_API_KEY',
      );
      expect((await call('GET', '/account/balance', { headers: { 'x-api-key': agentKey } })).status).toBe(
        200,
      );
    });
  });

  describe('market data (public)', () => {
    it('lists pairs with their filters; status filter; 456 pairs, 359 active', async () => {
      const r = await call('GET', '/market/pairs');
      expect(r.status).toBe(200);
      expect(r.body.total).toBe(456);
      for (const p of r.body.pairs) {
        expectFields(p, [
          'symbol',
          'base_asset',
          'quote_asset',
          'status',
          'min_qty',
          'step_size',
          'min_notional',
        ]);
        expect(p.quote_asset).toBe('USDT');
        expect(p.symbol).toBe(`${p.base_asset}USDT`);
        expect(['active', 'inactive']).toContain(p.status);
        for (const f of ['min_qty', 'step_size', 'min_notional']) expect(p[f]).toMatch(DEC);
      }
      expect((await call('GET', '/market/pairs?status=active')).body.total).toBe(359);
      expect((await call('GET', '/market/pairs?status=inactive')).body.total).toBe(97);
      expectError(await call('GET', '/market/pairs?status=halted'), 422, 'VALIDATION_ERROR');
    });

    it('serves price (microsecond timestamp, case-insensitive), prices, ticker and tickers (≤ 100)', async () => {
      const price = await call('GET', '/market/price/btcusdt');
      expect(price.body).toEqual({
        symbol: 'BTCUSDT',
        price: decimal8,
        timestamp: expect.stringMatching(ISO_MICROS),
      });
      const prices = await call('GET', '/market/prices');
      expect(keys(prices.body)).toEqual(['count', 'prices', 'timestamp']);
      expect(prices.body.count).toBe(16);
      expect(Object.values(prices.body.prices).every((p) => DEC8.test(p as string))).toBe(true);
      const some = await call('GET', '/market/prices?symbols=BTCUSDT,ethusdt');
      expect(keys(some.body.prices)).toEqual(['BTCUSDT', 'ETHUSDT']);
      const ticker = await call('GET', '/market/ticker/ETHUSDT');
      expectFields(ticker.body, [
        'symbol',
        'open',
        'high',
        'low',
        'close',
        'volume',
        'quote_volume',
        'change',
        'change_pct',
        'trade_count',
        'timestamp',
      ]);
      for (const f of ['open', 'high', 'low', 'close', 'volume', 'quote_volume', 'change', 'change_pct']) {
        expect(ticker.body[f], f).toMatch(DEC);
      }
      expect(isInt(ticker.body.trade_count)).toBe(true);
      expect(ticker.body.timestamp).toMatch(ISO);
      const tickers = await call('GET', '/market/tickers?symbols=BTCUSDT,ETHUSDT');
      expect(keys(tickers.body)).toEqual(['BTCUSDT', 'ETHUSDT']);
      expectFields(tickers.body.BTCUSDT, [
        'symbol',
        'open',
        'high',
        'low',
        'close',
        'volume',
        'change_pct',
        'trade_count',
      ]);
      const symbols = (await call('GET', '/market/pairs')).body.pairs.map((p: any) => p.symbol);
      expect((await call('GET', `/market/tickers?symbols=${symbols.slice(0, 100).join(',')}`)).status).toBe(
        200,
      );
      expectError(
        await call('GET', `/market/tickers?symbols=${symbols.slice(0, 101).join(',')}`),
        422,
        'VALIDATION_ERROR',
      );
      expectError(await call('GET', '/market/tickers'), 422, 'VALIDATION_ERROR');
    });

    it('serves candles: intervals 1m 5m 1h 1d (default 1h), limit 1–1000 (default 100), inclusive bounds', async () => {
      const def = await call('GET', '/market/candles/BTCUSDT');
      expect(keys(def.body)).toEqual(['candles', 'count', 'interval', 'symbol']);
      expect(def.body).toMatchObject({ symbol: 'BTCUSDT', interval: '1h', count: 100 });
      const c = def.body.candles[0];
      expect(keys(c)).toEqual(['close', 'high', 'low', 'open', 'time', 'trade_count', 'volume']);
      expect(c).toMatchObject({
        time: iso,
        open: decimal8,
        high: decimal8,
        low: decimal8,
        close: decimal8,
        volume: decimal8,
      });
      expect(isInt(c.trade_count)).toBe(true);
      const times = def.body.candles.map((x: any) => Date.parse(x.time));
      expect([...times].sort((a, b) => a - b)).toEqual(times);
      for (const interval of ['1m', '5m', '1h', '1d']) {
        const r = await call('GET', `/market/candles/BTCUSDT?interval=${interval}&limit=2`);
        expect(r.status, interval).toBe(200);
        expect(r.body).toMatchObject({ interval, count: 2 });
      }
      const range = await call(
        'GET',
        '/market/candles/ETHUSDT?interval=1h&start_time=2022-01-01T00:00:00Z&end_time=2022-01-01T03:00:00Z',
      );
      expect(range.body.candles.map((x: any) => x.time)).toEqual([
        '2022-01-01T00:00:00.000Z',
        '2022-01-01T01:00:00.000Z',
        '2022-01-01T02:00:00.000Z',
        '2022-01-01T03:00:00.000Z',
      ]);
      expect((await call('GET', '/market/candles/BTCUSDT?limit=1000')).body.count).toBe(1000);
      expect((await call('GET', '/market/candles/BTCUSDT?limit=1')).body.count).toBe(1);
      for (const q of ['limit=0', 'limit=1001', 'limit=2.5', 'start_time=yesterday']) {
        expectError(await call('GET', `/market/candles/BTCUSDT?${q}`), 422, 'VALIDATION_ERROR');
      }
      for (const q of ['interval=2h', 'interval=1w', 'interval=1M']) {
        expectError(await call('GET', `/market/candles/BTCUSDT?${q}`), 400, 'INVALID_SYMBOL');
      }
    });

    it('serves trades (limit 1–500, default 100, newest first) and the order book (depth 5, 10, 20; default 10)', async () => {
      const trades = await call('GET', '/market/trades/BTCUSDT');
      expect(keys(trades.body)).toEqual(['symbol', 'trades']);
      expect(trades.body.trades).toHaveLength(100);
      const t = trades.body.trades[0];
      expect(keys(t)).toEqual(['is_buyer_maker', 'price', 'quantity', 'time', 'trade_id']);
      expect(t).toMatchObject({
        trade_id: int,
        price: decimal8,
        quantity: decimal8,
        time: iso,
        is_buyer_maker: expect.any(Boolean),
      });
      expect(isInt(t.trade_id)).toBe(true);
      const ids = trades.body.trades.map((x: any) => Date.parse(x.time));
      expect([...ids].sort((a, b) => b - a)).toEqual(ids);
      expect((await call('GET', '/market/trades/BTCUSDT?limit=500')).body.trades.length).toBeLessThanOrEqual(
        500,
      );
      expect((await call('GET', '/market/trades/BTCUSDT?limit=1')).body.trades).toHaveLength(1);
      for (const q of ['limit=0', 'limit=501']) {
        expectError(await call('GET', `/market/trades/BTCUSDT?${q}`), 422, 'VALIDATION_ERROR');
      }
      const book = await call('GET', '/market/orderbook/BTCUSDT');
      expect(keys(book.body)).toEqual(['asks', 'bids', 'symbol', 'timestamp']);
      expect(book.body.bids).toHaveLength(10);
      expect(book.body.asks).toHaveLength(10);
      for (const depth of [5, 10, 20]) {
        const r = await call('GET', `/market/orderbook/BTCUSDT?depth=${depth}`);
        expect(r.body.bids).toHaveLength(depth);
        expect(r.body.asks).toHaveLength(depth);
        const bids = r.body.bids.map((l: string[]) => Number(l[0]));
        const asks = r.body.asks.map((l: string[]) => Number(l[0]));
        expect([...bids].sort((a, b) => b - a)).toEqual(bids);
        expect([...asks].sort((a, b) => a - b)).toEqual(asks);
        expect(bids[0]).toBeLessThan(asks[0]);
        for (const level of [...r.body.bids, ...r.body.asks]) {
          expect(level).toEqual([decimal8, decimal8]);
        }
      }
      for (const depth of ['1', '15', '50', 'ten']) {
        expectError(await call('GET', `/market/orderbook/BTCUSDT?depth=${depth}`), 400, 'INVALID_SYMBOL');
      }
    });

    it('answers INVALID_SYMBOL 400 for unknown and inactive pairs, PRICE_NOT_AVAILABLE 503 for an active pair without data', async () => {
      for (const url of ['price', 'ticker', 'candles', 'trades', 'orderbook']) {
        expectError(await call('GET', `/market/${url}/NOSUCHUSDT`), 400, 'INVALID_SYMBOL');
        // 1INCHDOWNUSDT is in BREAK (inactive) in the exchangeInfo of the data set.
        if (url !== 'candles')
          expectError(await call('GET', `/market/${url}/1INCHDOWNUSDT`), 400, 'INVALID_SYMBOL');
      }
      expectError(await call('GET', '/market/prices?symbols=BTCUSDT,NOSUCHUSDT'), 400, 'INVALID_SYMBOL');
      expectError(await call('GET', '/market/tickers?symbols=NOSUCHUSDT'), 400, 'INVALID_SYMBOL');
      // AAVEUSDT is active but has no candles in the data set: no price yet.
      expectError(await call('GET', '/market/price/AAVEUSDT'), 503, 'PRICE_NOT_AVAILABLE');
      expectError(await call('GET', '/market/ticker/AAVEUSDT'), 503, 'PRICE_NOT_AVAILABLE');
      expectError(await call('GET', '/market/orderbook/AAVEUSDT'), 503, 'PRICE_NOT_AVAILABLE');
    });

    it('reports the data range without authentication', async () => {
      const r = await call('GET', '/market/data-range');
      expectFields(r.body, ['earliest', 'latest', 'total_pairs', 'intervals_available', 'data_gaps']);
      expect(r.body).toMatchObject({ earliest: iso, latest: iso, total_pairs: 16 });
      expect(r.body.intervals_available).toEqual(['1m', '5m', '15m', '1h', '4h', '1d']);
      expect(r.body.data_gaps).toHaveLength(5);
      expect(r.headers.get('x-ratelimit-limit')).toBe('1200');
    });
  });

  describe('account and trading', () => {
    const pairs = new Map<string, { stepSize: string }>();
    /** A quantity of `symbol` worth about `notional` USDT, on the pair's step. */
    const qtyFor = async (symbol: string, notional: number) => {
      if (pairs.size === 0) {
        for (const p of (await call('GET', '/market/pairs')).body.pairs)
          pairs.set(p.symbol, { stepSize: p.step_size });
      }
      const price = (await call('GET', `/market/price/${symbol}`)).body.price;
      const step = new BigNumber(pairs.get(symbol)!.stepSize);
      return new BigNumber(notional)
        .div(price)
        .div(step)
        .integerValue(BigNumber.ROUND_FLOOR)
        .times(step)
        .toFixed();
    };
    const order = (body: Record<string, unknown>, headers = key()) =>
      json('POST', '/trade/order', body, headers);

    it('shows account info, balance, positions, portfolio and pnl with the spec fields', async () => {
      const info = await call('GET', '/account/info', { headers: key() });
      expectFields(info.body, [
        'account_id',
        'display_name',
        'status',
        'starting_balance',
        'current_session',
        'risk_profile',
        'created_at',
      ]);
      expect(info.body).toMatchObject({
        account_id: accountId,
        status: 'active',
        starting_balance: decimal8,
        current_session: { session_id: uuid, started_at: iso },
        risk_profile: {
          max_position_size_pct: 25,
          daily_loss_limit_pct: 20,
          max_open_orders: 50,
          max_order_size_pct: 50,
        },
        created_at: iso,
      });
      const balance = await call('GET', '/account/balance', { headers: key() });
      expect(keys(balance.body)).toEqual(['balances', 'total_equity_usdt']);
      expect(balance.body.balances).toEqual([
        { asset: 'USDT', available: '10000.00000000', locked: '0.00000000', total: '10000.00000000' },
      ]);
      expect((await call('GET', '/account/positions', { headers: key() })).body).toEqual({
        positions: [],
        total_unrealized_pnl: '0.00000000',
      });
      for (const period of ['1d', '7d', '30d', 'all']) {
        const pnl = await call('GET', `/account/pnl?period=${period}`, { headers: key() });
        expect(pnl.body.period).toBe(period);
      }
      expect((await call('GET', '/account/pnl', { headers: key() })).body.period).toBe('all');
      expectError(await call('GET', '/account/pnl?period=90d', { headers: key() }), 422, 'VALIDATION_ERROR');
      const mode = await call('GET', '/account/mode', { headers: key() });
      expect(mode.body).toMatchObject({
        mode: 'live',
        live_session: { started_at: iso, current_equity: decimal8 },
        active_backtests: 0,
        total_backtests_completed: 0,
      });
    });

    it('places a market order: 201 with the filled fields; slippage and fee; buys above the reference', async () => {
      const qty = await qtyFor('BTCUSDT', 1000);
      const r = await order({ symbol: 'btcusdt', side: 'buy', type: 'market', quantity: qty });
      expect(r.status).toBe(201);
      expectFields(r.body, [
        'order_id',
        'status',
        'symbol',
        'side',
        'type',
        'requested_quantity',
        'executed_quantity',
        'executed_price',
        'slippage_pct',
        'fee',
        'total_cost',
        'filled_at',
      ]);
      expect(r.body).toMatchObject({
        order_id: uuid,
        status: 'filled',
        symbol: 'BTCUSDT',
        side: 'buy',
        type: 'market',
        requested_quantity: new BigNumber(qty).toFixed(8),
        executed_quantity: new BigNumber(qty).toFixed(8),
        executed_price: decimal8,
        slippage_pct: decimal8,
        fee: decimal8,
        total_cost: decimal8,
        filled_at: iso,
      });
      const px = new BigNumber(r.body.executed_price);
      // total_cost of a buy = quantity × price + fee (each rounded to 8 places).
      const cost = px.times(qty).plus(r.body.fee);
      expect(new BigNumber(r.body.total_cost).minus(cost).abs().lte('0.00000001')).toBe(true);
      const one = await call('GET', `/trade/order/${r.body.order_id}`, { headers: key() });
      expectFields(one.body, [
        'order_id',
        'status',
        'symbol',
        'side',
        'type',
        'quantity',
        'price',
        'executed_price',
        'executed_qty',
        'slippage_pct',
        'fee',
        'created_at',
        'filled_at',
      ]);
      expect(one.body).toMatchObject({
        price: null,
        executed_qty: new BigNumber(qty).toFixed(8),
        created_at: iso,
      });
      // A float is accepted on input.
      const float = await order({
        symbol: 'ETHUSDT',
        side: 'buy',
        type: 'market',
        quantity: Number(await qtyFor('ETHUSDT', 300)),
      });
      expect(float.status).toBe(201);
    });

    it('places pending limit, stop-loss and take-profit orders: 201 with locked_amount; locks add up', async () => {
      const price = new BigNumber((await call('GET', '/market/price/BTCUSDT')).body.price);
      const limit = await order({
        symbol: 'BTCUSDT',
        side: 'buy',
        type: 'limit',
        quantity: '0.001',
        price: price.times(0.5).toFixed(2),
      });
      expect(limit.status).toBe(201);
      expectFields(limit.body, [
        'order_id',
        'status',
        'symbol',
        'side',
        'type',
        'quantity',
        'price',
        'locked_amount',
        'created_at',
      ]);
      expect(limit.body).toMatchObject({
        status: 'pending',
        quantity: '0.00100000',
        price: decimal8,
        locked_amount: decimal8,
      });
      const held = (await call('GET', '/account/positions', { headers: key() })).body.positions.find(
        (p: any) => p.symbol === 'BTCUSDT',
      );
      const stop = await order({
        symbol: 'BTCUSDT',
        side: 'sell',
        type: 'stop_loss',
        quantity: '0.0005',
        trigger_price: price.times(0.5).toFixed(2),
      });
      expect(stop.status).toBe(201);
      expect(stop.body).toMatchObject({ status: 'pending', locked_amount: '0.00050000' });
      const tp = await order({
        symbol: 'BTCUSDT',
        side: 'sell',
        type: 'take_profit',
        quantity: '0.0005',
        trigger_price: price.times(2).toFixed(2),
      });
      expect(tp.status).toBe(201);
      const open = await call('GET', '/trade/orders/open', { headers: key() });
      // The spec's fields, plus next_cursor: keyset paging (docs/architecture.md, "The flow of a query"); null on
      // the last page.
      expect(keys(open.body)).toEqual(['limit', 'next_cursor', 'offset', 'orders', 'total']);
      expect(open.body).toMatchObject({ total: 3, limit: 100, offset: 0, next_cursor: null });
      const balance = (await call('GET', '/account/balance', { headers: key() })).body.balances;
      const usdt = balance.find((b: any) => b.asset === 'USDT');
      const btc = balance.find((b: any) => b.asset === 'BTC');
      const lockedBy = (asset: 'USDT' | 'BTC') =>
        open.body.orders
          .filter((o: any) => (o.side === 'buy') === (asset === 'USDT'))
          .reduce((s: BigNumber, o: any) => s.plus(o.locked_amount), new BigNumber(0))
          .toFixed(8);
      expect(usdt.locked).toBe(lockedBy('USDT'));
      expect(btc.locked).toBe(lockedBy('BTC'));
      expect(new BigNumber(btc.total).toFixed(8)).toBe(new BigNumber(held.quantity).toFixed(8));
      // Selling more than is free is refused.
      expectError(
        await order({
          symbol: 'BTCUSDT',
          side: 'sell',
          type: 'market',
          quantity: new BigNumber(btc.total).toFixed(),
        }),
        400,
        'INSUFFICIENT_BALANCE',
      );
    });

    it('refuses bad orders with the spec codes and statuses', async () => {
      const base = { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.001' };
      expectError(await order({ ...base, symbol: 'NOSUCHUSDT' }), 404, 'INVALID_SYMBOL');
      expectError(await order({ ...base, symbol: '1INCHDOWNUSDT', quantity: '10' }), 404, 'INVALID_SYMBOL');
      expectError(await order({ ...base, symbol: 'AAVEUSDT', quantity: '1' }), 503, 'PRICE_NOT_AVAILABLE');
      for (const quantity of ['0', '-1', '0.000001', '0.000015']) {
        expectError(await order({ ...base, quantity }), 400, 'INVALID_QUANTITY');
      }
      expectError(await order({ ...base, quantity: '0.00001' }), 400, 'ORDER_REJECTED'); // below min notional
      expectError(await order({ ...base, quantity: '1' }), 400, 'ORDER_REJECTED'); // max order size
      expectError(
        await order({ ...base, quantity: await qtyFor('BTCUSDT', 3000) }),
        400,
        'POSITION_LIMIT_EXCEEDED',
      );
      for (const body of [
        { ...base, quantity: '0.000010001' },
        { ...base, quantity: '1e-3' },
        { ...base, quantity: 'abc' },
        { ...base, side: 'long' },
        { ...base, type: 'stop' },
        { ...base, type: 'limit' },
        { ...base, type: 'stop_loss', side: 'sell' },
        { ...base, type: 'limit', price: '-1' },
        { ...base, type: 'limit', price: '1.123456789' },
        { side: 'buy', type: 'market', quantity: '0.001' },
      ]) {
        expectError(await order(body), 422, 'VALIDATION_ERROR');
      }
      expectError(
        await call('POST', '/trade/order', {
          raw: '{"symbol":',
          headers: { ...key(), 'content-type': 'application/json' },
        }),
        422,
        'VALIDATION_ERROR',
      );
      expectError(
        await call('POST', '/trade/order', {
          raw: 'symbol=BTCUSDT',
          headers: { ...key(), 'content-type': 'text/plain' },
        }),
        415,
        'VALIDATION_ERROR',
      );
      const huge = await call('POST', '/trade/order', {
        raw: JSON.stringify({ ...base, pad: 'x'.repeat(1_100_000) }),
        headers: { ...key(), 'content-type': 'application/json' },
      });
      expectError(huge, 413, 'VALIDATION_ERROR');
      // Rejected orders are recorded and listed.
      const rejected = await call('GET', '/trade/orders?status=rejected&limit=1', { headers: key() });
      expect(rejected.body.total).toBeGreaterThan(0);
    });

    it('lists orders (limit 1–500), open orders (1–200) and fills (1–500, default 50), newest first', async () => {
      const list = await call('GET', '/trade/orders', { headers: key() });
      expect(keys(list.body)).toEqual(['limit', 'next_cursor', 'offset', 'orders', 'total']);
      expect(list.body).toMatchObject({ limit: 100, offset: 0 });
      for (const status of ['pending', 'filled', 'cancelled', 'rejected']) {
        const r = await call('GET', `/trade/orders?status=${status}`, { headers: key() });
        expect(
          r.body.orders.every((o: any) => o.status === status),
          status,
        ).toBe(true);
      }
      expect(
        (await call('GET', '/trade/orders?symbol=ethusdt', { headers: key() })).body.orders.every(
          (o: any) => o.symbol === 'ETHUSDT',
        ),
      ).toBe(true);
      expect((await call('GET', '/trade/orders?limit=500', { headers: key() })).status).toBe(200);
      expect((await call('GET', '/trade/orders/open?limit=200', { headers: key() })).status).toBe(200);
      for (const url of [
        '/trade/orders?limit=0',
        '/trade/orders?limit=501',
        '/trade/orders/open?limit=201',
        '/trade/orders?status=open',
        '/trade/history?limit=501',
        '/trade/history?side=long',
      ]) {
        expectError(await call('GET', url, { headers: key() }), 422, 'VALIDATION_ERROR');
      }
      const history = await call('GET', '/trade/history', { headers: key() });
      expect(keys(history.body)).toEqual(['limit', 'next_cursor', 'offset', 'total', 'trades']);
      expect(history.body).toMatchObject({ total: 2, limit: 50, offset: 0, next_cursor: null });
      for (const fill of history.body.trades) {
        expectFields(fill, [
          'trade_id',
          'order_id',
          'symbol',
          'side',
          'quantity',
          'price',
          'fee',
          'total',
          'executed_at',
        ]);
        expect(fill).toMatchObject({
          trade_id: uuid,
          order_id: uuid,
          quantity: decimal8,
          price: decimal8,
          fee: decimal8,
          total: decimal8,
          executed_at: iso,
        });
      }
      const times = history.body.trades.map((f: any) => Date.parse(f.executed_at));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
      expect((await call('GET', '/trade/history?side=sell', { headers: key() })).body.total).toBe(0);
    });

    it('cancels: 200 with unlocked_amount; ORDER_NOT_CANCELLABLE 409; ORDER_NOT_FOUND 404; cancel-all', async () => {
      const open = (await call('GET', '/trade/orders/open', { headers: key() })).body.orders;
      const buy = open.find((o: any) => o.side === 'buy');
      const r = await call('DELETE', `/trade/order/${buy.order_id}`, { headers: key() });
      expect(r.status).toBe(200);
      expectFields(r.body, ['order_id', 'status', 'unlocked_amount', 'cancelled_at']);
      expect(r.body).toMatchObject({
        order_id: buy.order_id,
        status: 'cancelled',
        unlocked_amount: buy.locked_amount,
        cancelled_at: iso,
      });
      // The order just cancelled, a filled one and a rejected one are all past cancelling.
      const newest = async (status: string) =>
        (await call('GET', `/trade/orders?status=${status}&limit=1`, { headers: key() })).body.orders[0];
      const filled = await newest('filled');
      const rejected = await newest('rejected');
      for (const done of [buy, filled, rejected]) {
        expectError(
          await call('DELETE', `/trade/order/${done.order_id}`, { headers: key() }),
          409,
          'ORDER_NOT_CANCELLABLE',
        );
      }
      const nobody = '00000000-0000-4000-8000-000000000000';
      expectError(await call('DELETE', `/trade/order/${nobody}`, { headers: key() }), 404, 'ORDER_NOT_FOUND');
      expectError(await call('GET', `/trade/order/${nobody}`, { headers: key() }), 404, 'ORDER_NOT_FOUND');
      // Another credential's order is not found (the agent's view is separate from the account's).
      expectError(
        await call('GET', `/trade/order/${filled.order_id}`, { headers: { 'x-api-key': agentKey } }),
        404,
        'ORDER_NOT_FOUND',
      );
      const all = await call('DELETE', '/trade/orders/open', { headers: key() });
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ cancelled_count: 2, total_unlocked: decimal8 });
      expect(isInt(all.body.cancelled_count)).toBe(true);
      expect((await call('GET', '/trade/orders/open', { headers: key() })).body.total).toBe(0);
      const locked = (await call('GET', '/account/balance', { headers: key() })).body.balances.map(
        (b: any) => b.locked,
      );
      expect(locked.every((l: string) => l === '0.00000000')).toBe(true);
    });

    it('keeps the portfolio identities: equity = cash + locked + positions, roi_pct, net_pnl = total_pnl − fees', async () => {
      const qty = (await call('GET', '/account/positions', { headers: key() })).body.positions.find(
        (p: any) => p.symbol === 'BTCUSDT',
      ).quantity;
      const half = new BigNumber(qty).div(2).decimalPlaces(5, BigNumber.ROUND_DOWN).toFixed();
      const sell = await order({ symbol: 'BTCUSDT', side: 'sell', type: 'market', quantity: half });
      expect(sell.status).toBe(201);
      const p = (await call('GET', '/account/portfolio', { headers: key() })).body;
      const portfolioDecimals = [
        'total_equity',
        'available_cash',
        'locked_cash',
        'total_position_value',
        'unrealized_pnl',
        'realized_pnl',
        'total_pnl',
        'roi_pct',
        'starting_balance',
      ];
      expectFields(p, [...portfolioDecimals, 'positions', 'timestamp']);
      for (const f of portfolioDecimals) expect(p[f], f).toMatch(DEC8);
      expect(p.timestamp).toMatch(ISO);
      const n = (v: string) => new BigNumber(v);
      expect(n(p.total_equity).toFixed(8)).toBe(
        n(p.available_cash).plus(p.locked_cash).plus(p.total_position_value).toFixed(8),
      );
      expect(
        n(p.roi_pct)
          .minus(n(p.total_equity).minus(p.starting_balance).div(p.starting_balance).times(100))
          .abs()
          .lte('0.00000001'),
      ).toBe(true);
      expect(n(p.total_pnl).toFixed(8)).toBe(n(p.realized_pnl).plus(p.unrealized_pnl).toFixed(8));
      for (const pos of p.positions) {
        const positionDecimals = [
          'quantity',
          'avg_entry_price',
          'current_price',
          'market_value',
          'unrealized_pnl',
          'unrealized_pnl_pct',
        ];
        expectFields(pos, ['symbol', 'asset', ...positionDecimals, 'opened_at']);
        for (const f of positionDecimals) expect(pos[f], f).toMatch(DEC8);
        expect(pos.opened_at).toMatch(ISO);
      }
      const pnl = (await call('GET', '/account/pnl', { headers: key() })).body;
      expect(keys(pnl)).toEqual(
        expect.arrayContaining([
          'period',
          'realized_pnl',
          'unrealized_pnl',
          'total_pnl',
          'fees_paid',
          'net_pnl',
          'winning_trades',
          'losing_trades',
          'win_rate',
        ]),
      );
      expect(n(pnl.net_pnl).toFixed(8)).toBe(n(pnl.total_pnl).minus(pnl.fees_paid).toFixed(8));
      expect(isInt(pnl.winning_trades) && isInt(pnl.losing_trades)).toBe(true);
      expect(pnl.winning_trades + pnl.losing_trades).toBe(1);
      expect(pnl.win_rate).toMatch(DEC);
      const balance = (await call('GET', '/account/balance', { headers: key() })).body;
      expect(balance.total_equity_usdt).toMatch(DEC8);
    });

    it('replaces the account risk profile (three integers, bounds) and resets (400 without confirm)', async () => {
      const full = { max_position_size_pct: 40, daily_loss_limit_pct: 15, max_open_orders: 20 };
      const put = await json('PUT', '/account/risk-profile', full, key());
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ ...full, max_order_size_pct: 50 });
      expectError(
        await json('PUT', '/account/risk-profile', { max_position_size_pct: 40 }, key()),
        422,
        'VALIDATION_ERROR',
      );
      expectError(
        await json('PUT', '/account/risk-profile', { ...full, max_open_orders: 0 }, key()),
        422,
        'VALIDATION_ERROR',
      );
      expectError(await call('POST', '/account/reset', { headers: key() }), 400, 'VALIDATION_ERROR');
      expectError(await json('POST', '/account/reset', {}, key()), 400, 'VALIDATION_ERROR');
      expectError(await json('POST', '/account/reset', { confirm: false }, key()), 400, 'VALIDATION_ERROR');
      const reset = await json(
        'POST',
        '/account/reset',
        { confirm: true, new_starting_balance: '5000' },
        key(),
      );
      expect(reset.status).toBe(200);
      expect(keys(reset.body)).toEqual(['message', 'new_session', 'previous_session']);
      expect(reset.body.previous_session).toMatchObject({
        session_id: uuid,
        ending_equity: decimal8,
        total_pnl: decimal8,
      });
      expect(reset.body.new_session).toMatchObject({
        session_id: uuid,
        starting_balance: '5000.00000000',
        started_at: iso,
      });
      const after = (await call('GET', '/account/portfolio', { headers: key() })).body;
      expect(after).toMatchObject({ total_equity: '5000.00000000', positions: [], roi_pct: '0.00000000' });
      expect((await call('GET', '/trade/history', { headers: key() })).body.total).toBeGreaterThan(2); // kept
      const info = (await call('GET', '/account/info', { headers: key() })).body;
      expect(info.current_session.session_id).toBe(reset.body.new_session.session_id);
    });

    it('scopes an agent key to the agent and enforces the agent’s risk profile', async () => {
      const agent = { 'x-api-key': agentKey };
      expect((await call('GET', '/account/balance', { headers: agent })).body.total_equity_usdt).toBe(
        '10000.00000000',
      );
      const full = { max_position_size_pct: 25, daily_loss_limit_pct: 20, max_open_orders: 1 };
      await json('PUT', `/agents/${agentId}/risk-profile`, full, jwt());
      const price = new BigNumber((await call('GET', '/market/price/BTCUSDT')).body.price);
      const limit = {
        symbol: 'BTCUSDT',
        side: 'buy',
        type: 'limit',
        quantity: '0.001',
        price: price.times(0.5).toFixed(2),
      };
      expect((await order(limit, agent)).status).toBe(201);
      const second = await order(limit, agent);
      expectError(second, 400, 'ORDER_REJECTED');
      expect(second.body.error.details.rule).toBe('max_open_orders');
      const reset = await call('POST', `/agents/${agentId}/reset`, { headers: jwt() });
      expect(reset.body.status).toBe('active');
      expect((await call('GET', '/trade/orders/open', { headers: agent })).body.total).toBe(0);
    });
  });

  describe('backtests', () => {
    let session = '';
    it('creates (200, bt_ id, integer steps), starts, steps, trades in the sandbox and completes', async () => {
      const create = await json(
        'POST',
        '/backtest/create',
        {
          start_time: '2022-01-01T00:00:00Z',
          end_time: '2022-01-02T00:00:00Z',
          starting_balance: 10000,
          candle_interval: '1h',
          agent_id: agentId,
          strategy_label: 'conformance',
          pairs: ['BTCUSDT', 'ethusdt'],
        },
        key(),
      );
      expect(create.status).toBe(200);
      expect(create.body).toMatchObject({
        session_id: expect.stringMatching(/^bt_/),
        status: 'created',
        total_steps: 24,
        estimated_pairs: 2,
      });
      session = create.body.session_id;
      expectError(
        await call('POST', `/backtest/${session}/step`, { headers: key() }),
        409,
        'BACKTEST_INVALID_STATE',
      );
      const start = await call('POST', `/backtest/${session}/start`, { headers: key() });
      expect(start.body).toMatchObject({
        session_id: session,
        status: 'running',
        total_steps: 24,
        virtual_time: '2022-01-01T00:00:00.000Z',
      });
      const step = await call('POST', `/backtest/${session}/step`, { headers: key() });
      expectFields(step.body, [
        'virtual_time',
        'step',
        'total_steps',
        'progress_pct',
        'prices',
        'orders_filled',
        'portfolio',
        'is_complete',
        'remaining_steps',
      ]);
      expect(step.body).toMatchObject({
        step: 1,
        total_steps: 24,
        is_complete: false,
        remaining_steps: 23,
        progress_pct: expect.any(Number),
      });
      expect(step.body.prices.BTCUSDT).toMatchObject({
        open: decimal8,
        high: decimal8,
        low: decimal8,
        close: decimal8,
        volume: decimal8,
      });
      expectFields(step.body.portfolio, ['total_equity', 'available_cash', 'positions', 'unrealized_pnl']);
      const buy = await json(
        'POST',
        `/backtest/${session}/trade/order`,
        { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.01' },
        key(),
      );
      expect(buy.status).toBe(201);
      expect(buy.body).toMatchObject({
        status: 'filled',
        executed_price: decimal8,
        filled_at: '2022-01-01T01:00:00.000Z',
      });
      const tooBig = await json(
        'POST',
        `/backtest/${session}/trade/order`,
        { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '1' },
        key(),
      );
      expectError(tooBig, 400, 'ORDER_REJECTED');
      expect(tooBig.body.error.details.rule).toBe('max_order_size');
      const outside = await json(
        'POST',
        `/backtest/${session}/trade/order`,
        { symbol: 'SOLUSDT', side: 'buy', type: 'market', quantity: '1' },
        key(),
      );
      expectError(outside, 404, 'INVALID_SYMBOL');
      expect(outside.body.error.message).toMatch(/SOLUSDT is not a pair of this backtest session/);
      expect(outside.body.error.details).toMatchObject({ symbol: 'SOLUSDT', reason: 'not_in_session' });
      const unknown = await json(
        'POST',
        `/backtest/${session}/trade/order`,
        { symbol: 'NOSUCHUSDT', side: 'buy', type: 'market', quantity: '1' },
        key(),
      );
      expectError(unknown, 404, 'INVALID_SYMBOL');
      expect(unknown.body.error.message).toMatch(/unknown symbol NOSUCHUSDT/);
      expectError(
        await json('POST', `/backtest/${session}/step/batch`, { steps: 0 }, key()),
        422,
        'VALIDATION_ERROR',
      );
      const batch = await json('POST', `/backtest/${session}/step/batch`, { steps: 100 }, key());
      expect(batch.body).toMatchObject({ step: 24, is_complete: true, remaining_steps: 0 });
      const results = await call('GET', `/backtest/${session}/results`, { headers: key() });
      expectFields(results.body, ['session_id', 'status', 'config', 'summary', 'metrics', 'by_pair']);
      expectFields(results.body.config, [
        'start_time',
        'end_time',
        'starting_balance',
        'strategy_label',
        'candle_interval',
      ]);
      expectFields(results.body.summary, [
        'final_equity',
        'total_pnl',
        'roi_pct',
        'total_trades',
        'total_fees',
        'duration_simulated_days',
        'duration_real_seconds',
      ]);
      expectFields(results.body.metrics, [
        'sharpe_ratio',
        'sortino_ratio',
        'max_drawdown_pct',
        'max_drawdown_duration_days',
        'win_rate',
        'profit_factor',
        'avg_win',
        'avg_loss',
        'best_trade',
        'worst_trade',
        'avg_trade_duration_minutes',
        'trades_per_day',
      ]);
      expect(results.body.by_pair[0]).toMatchObject({ symbol: 'BTCUSDT', trades: 1 });
      expectFields(results.body.by_pair[0], ['symbol', 'trades', 'win_rate', 'net_pnl']);
    });

    it('lists, compares and finds the best session; unknown ids are BACKTEST_NOT_FOUND 404', async () => {
      const list = await call('GET', '/backtest/list?status=completed', { headers: key() });
      expect(list.body.backtests[0]).toMatchObject({ session_id: session });
      expectFields(list.body.backtests[0], ['session_id', 'roi_pct', 'sharpe_ratio']);
      expectError(
        await call('GET', '/backtest/list?status=paused', { headers: key() }),
        422,
        'VALIDATION_ERROR',
      );
      const compare = await call('GET', `/backtest/compare?sessions=${session}`, { headers: key() });
      expectFields(compare.body, [
        'comparisons',
        'best_by_roi',
        'best_by_sharpe',
        'best_by_drawdown',
        'recommendation',
      ]);
      expectFields(compare.body.comparisons[0], [
        'session_id',
        'strategy_label',
        'roi_pct',
        'sharpe_ratio',
        'max_drawdown_pct',
        'win_rate',
      ]);
      const best = await call('GET', '/backtest/best?metric=roi_pct', { headers: key() });
      expect(best.body.session_id).toBe(session);
      expectError(
        await call('GET', '/backtest/bt_00000000000000000000000000000000/status', { headers: key() }),
        404,
        'BACKTEST_NOT_FOUND',
      );
      const stranger = await json('POST', '/auth/register', { display_name: 'Stranger' });
      expectError(
        await call('GET', `/backtest/${session}/status`, { headers: { 'x-api-key': stranger.body.api_key } }),
        403,
        'PERMISSION_DENIED',
      );
    });
  });

  describe('WebSocket ticker feed', () => {
    it('pushes {channel, type, data} ticker messages after a subscription; bad messages get an error, not a close', async () => {
      const ws = new WebSocket(`${base.replace('http', 'ws')}/ws/v1?api_key=${accountKey}`);
      const messages: any[] = [];
      ws.on('message', (d) => messages.push(JSON.parse(String(d))));
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      ws.send('not json');
      ws.send(JSON.stringify({ action: 'subscribe', channel: 'ticker', symbol: 'NOSUCHUSDT' }));
      ws.send(JSON.stringify({ action: 'subscribe', channel: 'ticker', symbol: '1INCHDOWNUSDT' }));
      ws.send(JSON.stringify({ action: 'subscribe', channel: 'ticker', symbol: 'btcusdt' }));
      const started = Date.now();
      const tickers = () => messages.filter((m) => m.channel === 'ticker' && m.type === 'ticker');
      while (tickers().length < 2 && Date.now() - started < 5000) await new Promise((r) => setTimeout(r, 50));
      expect(ws.readyState).toBe(WebSocket.OPEN);
      ws.close();
      for (const m of messages) expect(keys(m)).toEqual(['channel', 'data', 'type']);
      const errors = messages.filter((m) => m.type === 'error').map((m) => m.data.code);
      expect(errors).toEqual(['VALIDATION_ERROR', 'INVALID_SYMBOL', 'INVALID_SYMBOL']);
      expect(tickers().length).toBeGreaterThanOrEqual(2);
      expect(tickers()[0].data).toMatchObject({ symbol: 'BTCUSDT', price: decimal8 });
      const bad = new WebSocket(`${base.replace('http', 'ws')}/ws/v1?api_key=ak_live_nope`);
      const code = await new Promise<number>((resolve) => bad.on('close', (c) => resolve(c)));
      expect(code).toBe(4401);
    });
  });
});
