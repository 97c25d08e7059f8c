import { beforeAll, describe, expect, it, vi } from 'vitest';
import { periodWindow } from '../../src/analytics/performance';
import { identity } from '../../src/auth/install';
import { api, bearer, createAgent, keyHeader, registerAccount } from '../accounts/support';
import { useTestApp } from '../support/test-app';
import { settleTrading } from '../trading/log-head';

/**
 * Regressions found by the audit of the account and analytics endpoints against the spec ("Account endpoints",
 * "Analytics endpoints", "Authentication"), through the real stack (`app.inject`, PGlite, the matching engine,
 * the projections); no mocks.
 */

const DAY = 86_400_000;

// Trades that close flat, at a gain or a loss at chosen prices: wallets fill `instant` (no spread) explicitly.
const t = useTestApp({
  env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT', FILL_MODEL: 'instant' },
});
const { tick } = t;
const settle = () => settleTrading(t);

const get = (headers: Record<string, string>, url: string) => api(t.app, { method: 'GET', url, headers });
const getOk = async (headers: Record<string, string>, url: string) => {
  const res = await get(headers, url);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const post = (headers: Record<string, string>, url: string, payload?: unknown) =>
  api(t.app, {
    method: 'POST',
    url,
    headers,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });
const order = async (headers: Record<string, string>, payload: Record<string, unknown>) => {
  const res = await post(headers, '/trade/order', payload);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
};

beforeAll(async () => {
  // 24h quote volume of 100M USDT: small orders pay the minimum slippage.
  tick('ETHUSDT', '2000', '50000');
}, 60_000);

describe('the current session starts with the owner, not at the first order', () => {
  it('keeps current_session.started_at, live_session.started_at and the performance window at registration', async () => {
    // Registered (and the agent created) three days ago; the first order is placed now.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() - 3 * DAY);
    let acct: Awaited<ReturnType<typeof registerAccount>>;
    let agent: Awaited<ReturnType<typeof createAgent>>;
    try {
      acct = await registerAccount(t.app, { display_name: 'Early bird' }, { plain: true });
      agent = await createAgent(t.app, acct, { display_name: 'Early bot' });
    } finally {
      vi.useRealTimers();
    }
    const owners = [keyHeader(acct.apiKey), keyHeader(agent.apiKey)];
    const befores = [];
    for (const headers of owners) {
      const before = await getOk(headers, '/account/info');
      expect(before.current_session.started_at).toBe(before.created_at);
      expect(Date.now() - Date.parse(before.created_at)).toBeGreaterThan(3 * DAY - 60_000);
      befores.push(before);
      await order(headers, { symbol: 'ETHUSDT', side: 'buy', type: 'market', quantity: '0.1' });
    }
    await settle();
    // ETH falls, and the marks of this minute value both wallets lower: a drawdown that began at the first order.
    tick('ETHUSDT', '1500');
    expect(await t.app.services.analytics!.snapshotter!.record(Date.now())).toBeDefined();
    await settle();
    tick('ETHUSDT', '2000');

    for (const [i, headers] of owners.entries()) {
      const before = befores[i]!;
      // The first order opened the wallet in the same session: neither its id nor its start moves.
      const after = await getOk(headers, '/account/info');
      expect(after.current_session).toEqual(before.current_session);
      const mode = await getOk(headers, '/account/mode');
      expect(mode.live_session.started_at).toBe(before.current_session.started_at);

      // `all` is the whole session: three days, one fill.
      const perf = await getOk(headers, '/analytics/performance?period=all');
      expect(perf.from).toBe(before.current_session.started_at);
      const days = (Date.parse(perf.to) - Date.parse(perf.from)) / DAY;
      expect(Number(perf.avg_trades_per_day)).toBeCloseTo(1 / days, 6);
      // The drawdown runs from the first order (minutes), not from registration (three days).
      expect(Number(perf.max_drawdown_pct)).toBeGreaterThan(0.4);
      expect(perf.max_drawdown_duration_days).toBe(0);
      // A period inside the session starts at its own start.
      const week = await getOk(headers, '/analytics/performance?period=7d');
      expect(week.from).toBe(before.current_session.started_at);
      expect(week.max_drawdown_duration_days).toBe(0);
      const day = await getOk(headers, '/analytics/performance?period=1d');
      expect(Date.parse(day.to) - Date.parse(day.from)).toBe(DAY);
      expect(day.total_trades).toBe(1);
      expect(day.max_drawdown_pct).toBe(perf.max_drawdown_pct);
      expect(day.max_drawdown_duration_days).toBe(0);

      // The reset's previous session lasted the three days since registration.
      const reset = await post(headers, '/account/reset', { confirm: true });
      expect(reset.statusCode, reset.body).toBe(200);
      const body = reset.json();
      expect(body.previous_session.session_id).toBe(before.current_session.session_id);
      const lasted =
        Math.round(
          ((Date.parse(body.new_session.started_at) - Date.parse(before.current_session.started_at)) / DAY) *
            10_000,
        ) / 10_000;
      expect(body.previous_session.duration_days).toBe(lasted);
      expect(body.previous_session.duration_days).toBeGreaterThan(2.99);

      // A reset's session is the wallet's own: it starts at the reset.
      const info = await getOk(headers, '/account/info');
      expect(info.current_session).toEqual({
        session_id: body.new_session.session_id,
        started_at: body.new_session.started_at,
      });
      expect((await getOk(headers, '/account/mode')).live_session.started_at).toBe(
        body.new_session.started_at,
      );
      expect((await getOk(headers, '/analytics/performance')).from).toBe(body.new_session.started_at);
    }
  });

  it('periodWindow opens with the starting balance while the wallet had not traded yet', () => {
    const now = Date.parse('2024-03-01T00:00:00.000Z');
    const session = now - 3 * DAY;
    const wallet = now - 2 * 3_600_000;
    // The period starts after the session but before the wallet's first order: the balance opens it.
    expect(periodWindow('1d', session, now, wallet)).toEqual({
      from: now - DAY,
      to: now,
      opensWithSession: true,
    });
    expect(periodWindow('all', session, now, wallet)).toEqual({
      from: session,
      to: now,
      opensWithSession: true,
    });
    // A period starting after the wallet traded opens with its first snapshot.
    expect(periodWindow('1d', session, now, now - 2 * DAY)).toEqual({
      from: now - DAY,
      to: now,
      opensWithSession: false,
    });
  });
});

describe('an archived agent key reads but cannot reset or change mode', () => {
  it('refuses POST /account/reset and POST /account/mode with PERMISSION_DENIED 403 and changes nothing', async () => {
    const acct = await registerAccount(t.app, { display_name: 'Archiver' }, { plain: true });
    const agent = await createAgent(t.app, acct, { display_name: 'Retired' });
    const AK = keyHeader(agent.apiKey);
    await order(AK, { symbol: 'ETHUSDT', side: 'buy', type: 'market', quantity: '0.1' });
    const archived = await post(bearer(acct), `/agents/${agent.agentId}/archive`);
    expect(archived.statusCode, archived.body).toBe(200);
    await settle();
    const before = await getOk(AK, '/account/portfolio');
    const modeBefore = await getOk(AK, '/account/mode');

    for (const headers of [AK, { ...bearer(acct), 'x-agent-id': agent.agentId }]) {
      for (const [url, payload] of [
        ['/account/reset', { confirm: true }],
        ['/account/reset', {}],
        ['/account/mode', { mode: 'backtest', strategy_label: 'x' }],
      ] as const) {
        const res = await post(headers, url, payload);
        expect(res.statusCode, `${url} ${res.body}`).toBe(403);
        expect(res.json().error).toMatchObject({
          code: 'PERMISSION_DENIED',
          details: { reason: 'agent_archived', agent_id: agent.agentId },
        });
      }
    }

    const after = await getOk(AK, '/account/portfolio');
    expect(after.session_id).toBe(before.session_id);
    expect(after.revision).toBe(before.revision);
    expect(after.positions.map((p: { quantity: string }) => p.quantity)).toEqual(['0.10000000']);
    expect((await getOk(AK, '/account/mode')).mode).toBe(modeBefore.mode);
    // Reads keep working.
    expect((await getOk(AK, '/account/info')).status).toBe('archived');
    await getOk(AK, '/analytics/performance');
    await getOk(AK, '/account/pnl');
  });
});

describe('POST /account/reset confirmation', () => {
  it('answers "confirm": null like a missing confirmation (400), keeps 422 for a malformed body', async () => {
    const acct = await registerAccount(t.app, {}, { plain: true });
    const K = keyHeader(acct.apiKey);
    // Without a confirmation the reset is refused as such, whatever else the body holds (issue 17, item 2).
    for (const payload of [
      undefined,
      {},
      { confirm: false },
      { confirm: null },
      { wipe: 'everything' },
      { confirm: false, wipe: 'everything' },
      { new_starting_balance: { bad: true } },
    ]) {
      const res = await post(K, '/account/reset', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { issues: [{ field: 'confirm', location: 'body' }] },
      });
    }
    const extra = await post(K, '/account/reset', { confirm: true, wipe: 'everything' });
    expect(extra.statusCode).toBe(422);
    expect(extra.json().error.code).toBe('VALIDATION_ERROR');
    const wrongType = await post(K, '/account/reset', { confirm: 'yes' });
    expect(wrongType.statusCode).toBe(422);
    // An account endpoint: the standard limit (600/min), not the order limit (100/min).
    const done = await post(K, '/account/reset', { confirm: true });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.headers['x-ratelimit-limit']).toBe('600');
  });

  it("reports the session this reset ended when the wallet first follows the agent's newer session", async () => {
    const acct = await registerAccount(t.app, {}, { plain: true });
    const agent = await createAgent(t.app, acct, { display_name: 'Twice reset' });
    const AK = keyHeader(agent.apiKey);
    await order(AK, { symbol: 'ETHUSDT', side: 'buy', type: 'market', quantity: '0.1' });
    await settle();
    const old = (await getOk(AK, '/account/info')).current_session.session_id;
    // The agent is reset on its own stream only (the wallet has not followed yet).
    const { agents } = identity(t.app.services);
    const result = await agents.reset(acct.accountId, agent.agentId, {
      actor: acct.accountId,
      requestId: 'audit',
    });
    expect(result.position).toBeDefined();
    expect(await t.app.services.projections.waitFor(result.position!, 15_000)).toBe(true);
    const agentSession = result.agent.sessionId;
    expect(agentSession).not.toBe(old);

    const res = await post(AK, '/account/reset', { confirm: true, new_starting_balance: '2500' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    // The session the reset ended is the agent's current one, not the stale one the wallet still held.
    expect(body.previous_session.session_id).toBe(agentSession);
    expect(body.previous_session.ending_equity).toBe('10000.00000000');
    expect(body.previous_session.total_pnl).toBe('0.00000000');
    expect(body.new_session.starting_balance).toBe('2500.00000000');
    const info = await getOk(AK, '/account/info');
    expect(info.current_session.session_id).toBe(body.new_session.session_id);
    expect(info.starting_balance).toBe('2500.00000000');
  });
});

describe('GET /account/pnl counts wins and losses like /analytics/performance', () => {
  it('counts a flat closed trade (realized PnL 0) as neither a win nor a loss', async () => {
    const acct = await registerAccount(t.app, {}, { plain: true });
    const K = keyHeader(acct.apiKey);
    tick('ETHUSDT', '2000');
    // A limit buy and a limit sell at 2,000: filled at their limit, realized PnL exactly 0.
    await order(K, { symbol: 'ETHUSDT', side: 'buy', type: 'limit', quantity: '0.1', price: '2000' });
    tick('ETHUSDT', '2000');
    await settle();
    await order(K, { symbol: 'ETHUSDT', side: 'sell', type: 'limit', quantity: '0.1', price: '2000' });
    tick('ETHUSDT', '2000');
    await settle();
    // A market round trip loses the slippage.
    await order(K, { symbol: 'ETHUSDT', side: 'buy', type: 'market', quantity: '0.1' });
    await order(K, { symbol: 'ETHUSDT', side: 'sell', type: 'market', quantity: '0.1' });
    await settle();

    const trades = (await getOk(K, '/trade/history')).trades as { side: string; realized_pnl: string }[];
    const sells = trades.filter((f) => f.side === 'sell').map((f) => Number(f.realized_pnl));
    expect(sells).toHaveLength(2);
    expect(sells.filter((p) => p === 0)).toHaveLength(1);
    expect(sells.filter((p) => p < 0)).toHaveLength(1);

    const perf = await getOk(K, '/analytics/performance');
    expect(perf).toMatchObject({ closed_trades: 2, winning_trades: 0, losing_trades: 1 });
    for (const period of ['all', '1d', '7d', '30d']) {
      const pnl = await getOk(K, `/account/pnl?period=${period}`);
      expect(pnl, period).toMatchObject({
        winning_trades: perf.winning_trades,
        losing_trades: perf.losing_trades,
        win_rate: '0.00000000',
      });
      expect(Number(pnl.net_pnl)).toBeCloseTo(Number(pnl.total_pnl) - Number(pnl.fees_paid), 8);
    }
  });
});
