import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { indexedOrder, levelUnitsOf, OrderIndex } from '../../src/matching/order-index';
import {
  api,
  createAgent,
  keyHeader,
  registerAccount,
  startApp,
  type TestAccount,
  type TestApp,
} from '../accounts/support';
import { priceTicker } from '../support/price-ticks';
import { operatorHeadersOf } from '../support/runtime';
import { keyCalls, orderBody } from './key-calls';
import { settleTrading } from './log-head';

/**
 * Regressions of the trading-area audits (the endpoints under `/trade/*` and `/account/*`, the `/ws/v1` channels), on the
 * real stack (`app.inject` and a listening socket; PGlite, or PostgreSQL with DATABASE_URL). BTCUSDT and
 * ETHUSDT move only when a test ticks them (the synthetic source walks SOLUSDT only).
 */

// These tests pin the ledger's figures with the spec's slippage table (touch and fill in full): their wallets
// open `instant` explicitly; the realistic model has its own tests (test/fill-model).
const ENV = { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT', FILL_MODEL: 'instant' };
let t: TestApp;
let base: string;
const tick = priceTicker(() => t.app.services.market!);

const { order, get, send, cancel } = keyCalls(() => t.app);
const failedProjections = async (app: TestApp['app']) =>
  (
    (await app.inject({ method: 'GET', url: '/health', headers: operatorHeadersOf(app) })).json()
      .projections as {
      state: string;
    }[]
  ).filter((p) => p.state === 'failed');
const walletRevision = async (account: TestAccount) =>
  (await get(account.apiKey, '/account/events?limit=1000')).json().events.length as number;

beforeAll(async () => {
  t = await startApp({ env: ENV });
  base = (await t.app.listen({ host: '127.0.0.1', port: 0 })).replace('http', 'ws');
  tick('BTCUSDT', '40000', '10000');
  tick('ETHUSDT', '2000', '50000');
});

afterAll(async () => {
  await t?.close();
});

describe('order decimals are bounded (a huge value stopped the orders read model for everyone)', () => {
  it('refuses a quantity, price or trigger price of 10^15 or more with 422 and records nothing', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    expect((await order(account.apiKey, orderBody('BTCUSDT', 'buy', 'market', '0.01'))).statusCode).toBe(201);
    const before = await walletRevision(account);
    const cases: [Record<string, unknown>, string][] = [
      [{ type: 'market', quantity: '9'.repeat(38) }, 'quantity'],
      [{ type: 'market', quantity: 1e300 }, 'quantity'],
      [{ type: 'market', quantity: '-1000000000000000000000' }, 'quantity'],
      [{ type: 'limit', quantity: '0.001', price: '1000000000000000' }, 'price'],
      [{ type: 'stop_loss', quantity: '0.001', trigger_price: 1e20 }, 'trigger_price'],
    ];
    for (const [fields, field] of cases) {
      const res = await order(account.apiKey, { symbol: 'BTCUSDT', side: 'buy', ...fields });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().error.details.issues).toEqual([
        { field, location: 'body', message: 'must be less than 1000000000000000 in absolute value' },
      ]);
    }
    // Malformed decimals keep the decider's own message (the bound only looks at well-formed ones).
    const malformed = await order(account.apiKey, orderBody('BTCUSDT', 'buy', 'market', '1e-3'));
    expect(malformed.statusCode).toBe(422);
    expect(malformed.json().error.message).toMatch(/decimal string with at most 8 decimal places/);
    // Just below the bound is an ordinary order.
    const far = await order(
      account.apiKey,
      orderBody('BTCUSDT', 'sell', 'limit', '0.001', { price: '999999999999999.99999999' }),
    );
    expect(far.statusCode, far.body).toBe(201);
    await settleTrading(t);
    expect(await walletRevision(account)).toBe(before + 1); // only the far sell limit
    expect(await failedProjections(t.app)).toEqual([]);
    expect((await get(account.apiKey, '/trade/orders')).json().total).toBe(2);
  });
});

describe('the matching engine and levels beyond exact number range', () => {
  it('indexes a level above 90 million USDT as +Infinity: buys there fire on any tick, sells never', () => {
    expect(levelUnitsOf('40000.5')).toBe(4_000_050_000_000);
    expect(levelUnitsOf('100000000.00000000')).toBe(Number.POSITIVE_INFINITY);
    const index = new OrderIndex();
    const at = (orderId: string, side: 'buy' | 'sell', type: 'limit' | 'take_profit' | 'stop_loss') =>
      indexedOrder({ orderId, ownerId: 'o', symbol: 'BTCUSDT', side, type, level: '100000000' });
    index.add(at('buy-limit', 'buy', 'limit'));
    index.add(at('buy-tp', 'buy', 'take_profit'));
    index.add(at('sell-limit', 'sell', 'limit'));
    index.add(at('buy-stop', 'buy', 'stop_loss'));
    const reached = index.reached('BTCUSDT', 4_000_000_000_000).map((o) => o.orderId);
    expect(reached.sort()).toEqual(['buy-limit', 'buy-tp']);
    // The sells wait in their heap; the reached buys are parked until their fills remove them.
    expect(index.reached('BTCUSDT', Number.MAX_SAFE_INTEGER)).toEqual([]);
    for (const id of reached) index.remove(id);
    expect(index.size).toBe(2);
  });

  it('takes such orders without error, fills the reachable one, and still starts with them in the log', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    await send(account.apiKey, 'PUT', '/account/risk-profile', {
      max_position_size_pct: 100,
      daily_loss_limit_pct: 20,
      max_open_orders: 50,
      max_order_size_pct: 100,
    });
    expect((await order(account.apiKey, orderBody('BTCUSDT', 'buy', 'market', '0.01'))).statusCode).toBe(201);
    // A sell limit no tick can reach, and a buy take-profit every tick reaches (its lock: 0.00001 × 2e8 × 1.006).
    const sell = await order(
      account.apiKey,
      orderBody('BTCUSDT', 'sell', 'limit', '0.005', { price: '100000000' }),
    );
    expect(sell.statusCode, sell.body).toBe(201);
    const buy = await order(
      account.apiKey,
      orderBody('BTCUSDT', 'buy', 'take_profit', '0.00001', { trigger_price: '200000000' }),
    );
    expect(buy.statusCode, buy.body).toBe(201);
    expect(buy.json().locked_amount).toBe('2012.00000000');
    tick('BTCUSDT', '40000');
    await settleTrading(t);
    const engine = t.app.services.trading!.engine!;
    expect(engine.status()).toMatchObject({ ok: true });
    expect(engine.index.has(sell.json().order_id)).toBe(true);
    const filled = (await get(account.apiKey, `/trade/order/${buy.json().order_id}`)).json();
    expect(filled).toMatchObject({ status: 'filled', executed_price: '40004.00000000' });
    expect((await get(account.apiKey, '/account/balance')).json().balances[0].locked).toBe('0.00000000');

    // A restart folds the log again: the far order must not stop the engine (it threw and the server did not start).
    await t.stop();
    t = await startApp({ env: ENV, database: t.database, dataDir: t.dataDir });
    base = (await t.app.listen({ host: '127.0.0.1', port: 0 })).replace('http', 'ws');
    tick('BTCUSDT', '40000', '10000');
    tick('ETHUSDT', '2000', '50000');
    const restarted = t.app.services.trading!.engine!;
    expect(restarted.status()).toMatchObject({ ok: true, ready: true });
    expect(restarted.index.has(sell.json().order_id)).toBe(true);
  }, 60_000);
});

describe('order ids and idempotency keys', () => {
  it('finds and cancels an order by its id in upper case (UUIDs are case-insensitive)', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const placed = await order(
      account.apiKey,
      orderBody('ETHUSDT', 'buy', 'limit', '0.01', { price: '1000' }),
    );
    expect(placed.statusCode).toBe(201);
    const upper = placed.json().order_id.toUpperCase();
    const one = await get(account.apiKey, `/trade/order/${upper}`);
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json().order_id).toBe(placed.json().order_id);
    const cancelled = await cancel(account.apiKey, upper);
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json()).toMatchObject({
      order_id: placed.json().order_id,
      unlocked_amount: '10.01000000',
    });
  });

  it('replays a retry that spells the same order differently; another order under the key is 409', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const key = { 'idempotency-key': 'audit-retry-1' };
    const first = await order(account.apiKey, orderBody('BTCUSDT', 'buy', 'market', '0.001'), key);
    expect(first.statusCode).toBe(201);
    for (const quantity of ['0.00100', '.001', 0.001]) {
      const again = await order(
        account.apiKey,
        { symbol: 'btcusdt', side: 'buy', type: 'market', quantity },
        key,
      );
      expect(again.statusCode, again.body).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json().order_id).toBe(first.json().order_id);
    }
    const other = await order(account.apiKey, orderBody('BTCUSDT', 'buy', 'market', '0.002'), key);
    expect(other.statusCode).toBe(409);
    expect((await get(account.apiKey, '/trade/history')).json().total).toBe(1);
  });
});

describe('control characters in a symbol (PostgreSQL stores no NUL: it was a 500)', () => {
  it('refuses them with 422 on placement and in the list filters', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const placed = await order(account.apiKey, orderBody('BTC\u0000USDT', 'buy', 'market', '0.001'));
    expect(placed.statusCode, placed.body).toBe(422);
    expect(placed.json().error.details.issues[0]).toMatchObject({ field: 'symbol', location: 'body' });
    for (const url of ['/trade/orders?symbol=BTC%00USDT', '/trade/history?symbol=%00']) {
      const res = await get(account.apiKey, url);
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().error.details.issues[0]).toMatchObject({ field: 'symbol', location: 'querystring' });
    }
    // An unknown but printable symbol is still INVALID_SYMBOL, 404 on placement (spec "Errors").
    const unknown = await order(account.apiKey, orderBody('BTC-USDT', 'buy', 'market', '0.001'));
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('INVALID_SYMBOL');
  });
});

describe('WebSocket authentication with the spec’s headers', () => {
  /** Opens `/ws/v1` with handshake headers; resolves with the messages up to the one `until` accepts. */
  const session = (
    headers: Record<string, string>,
    send: unknown[],
    until: (m: any) => boolean,
  ): Promise<{ messages: any[]; closeCode?: number }> =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(`${base}/ws/v1`, { headers });
      const messages: any[] = [];
      const timer = setTimeout(() => reject(new Error(`timeout: ${JSON.stringify(messages)}`)), 10_000);
      ws.on('message', (data) => {
        const m = JSON.parse(String(data));
        messages.push(m);
        if (m.type === 'welcome') for (const s of send) ws.send(JSON.stringify(s));
        if (until(m)) {
          clearTimeout(timer);
          ws.close();
          resolve({ messages });
        }
      });
      ws.on('close', (code) => {
        clearTimeout(timer);
        resolve({ messages, closeCode: code });
      });
      ws.on('error', reject);
    });

  it('accepts X-API-Key and a bearer token with X-Agent-Id on the handshake, and refuses a bad key with 4401', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const agent = await createAgent(t.app, account);

    const byKey = await session(
      { 'X-API-Key': account.apiKey },
      [{ action: 'subscribe', channel: 'orders' }],
      (m) => m.type === 'subscribed' || m.type === 'error',
    );
    expect(byKey.messages[0].data.authenticated).toBe(true);
    expect(byKey.messages[1]).toMatchObject({
      channel: 'orders',
      type: 'subscribed',
      data: { owner_id: account.accountId },
    });

    const byToken = await session(
      { authorization: `Bearer ${account.token}`, 'x-agent-id': agent.agentId },
      [{ action: 'subscribe', channel: 'portfolio' }],
      (m) => m.type === 'portfolio' || m.type === 'error',
    );
    expect(byToken.messages.find((m) => m.type === 'subscribed').data.owner_id).toBe(agent.agentId);
    expect(byToken.messages.at(-1)).toMatchObject({
      channel: 'portfolio',
      data: { starting_balance: '10000.00000000' },
    });

    const bad = await session({ 'X-API-Key': 'ak_live_not-a-key' }, [], () => false);
    expect(bad.closeCode).toBe(4401);
    expect(bad.messages[0]).toMatchObject({
      channel: 'system',
      type: 'error',
      data: { code: 'INVALID_API_KEY' },
    });

    // A `since` beyond exact integers is refused (it was accepted, and every read of the stream failed).
    const far = await session(
      { 'X-API-Key': account.apiKey },
      [{ action: 'subscribe', channel: 'orders', since: 1e20 }],
      (m) => m.type === 'subscribed' || m.type === 'error',
    );
    expect(far.messages.at(-1)).toMatchObject({
      type: 'error',
      data: { code: 'VALIDATION_ERROR', channel: 'orders', details: { issues: [{ field: 'since' }] } },
    });

    // Without any credential the socket is anonymous and the private channel says how to authenticate.
    const anonymous = await session(
      {},
      [{ action: 'subscribe', channel: 'orders' }],
      (m) => m.type === 'error',
    );
    expect(anonymous.messages[0].data.authenticated).toBe(false);
    expect(anonymous.messages.at(-1).data.message).toMatch(/X-API-Key/);
  });
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
    expect((await order(account.apiKey, orderBody('ETHUSDT', 'buy', 'market', '0.01'))).statusCode).toBe(201);
    const before = await walletRevision(account);
    for (const symbol of [lone, '\udc00ETHUSDT', 'ETH\udfff\ud800USDT']) {
      const res = await order(account.apiKey, { symbol, side: 'buy', type: 'market', quantity: '0.01' });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
      expect(res.json().error.details.issues[0].field).toBe('symbol');
    }
    // A well-formed astral character is only an unknown symbol.
    const astral = await order(account.apiKey, orderBody('ETH\ud83d\ude00USDT', 'buy', 'market', '0.01'));
    expect(astral.statusCode, astral.body).toBe(404);
    expect(astral.json().error.code).toBe('INVALID_SYMBOL');
    expect(await walletRevision(account)).toBe(before + 1); // the INVALID_SYMBOL rejection only
  });

  it('refuses such a strategy_label on POST /account/mode with 422 and changes nothing', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const res = await send(account.apiKey, 'POST', '/account/mode', {
      mode: 'backtest',
      strategy_label: `grid\ud800`,
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
