import { beforeAll, describe, expect, it } from 'vitest';
import { minuteOf } from '../../domain/analytics/marks';
import { computePerformance } from '../../domain/metrics/performance';
import type { MetricsFill } from '../../domain/metrics/trades';
import { dec, fmt, roundHalfEven8 } from '../../domain/trading/decimal';
import { equitySnapshotsProjection } from '../../projections/equity-snapshots';
import { rebuildProjection } from '../../projections/rebuild';
import { firstSnapshotsSince } from '../../queries/analytics';
import type { AnalyticsServices } from '../../src/analytics/install';
import { api, bearer, createAgent, keyHeader, registerAccount, type TestAccount } from '../accounts/support';
import { useTestApp } from '../support/test-app';
import { settleTrading } from '../trading/log-head';

/**
 * The analytics endpoints through the real stack (`app.inject`): real orders through the risk chain and the
 * event store, marks recorded by the snapshotter from the market feed's prices, the `equity_snapshots`
 * projection, and the three routes, on PGlite (or PostgreSQL with DATABASE_URL). Expected figures are computed
 * from the fills the API reports (`/trade/history`) and the prices the test set, then run through
 * `domain/metrics` exactly as ARCHITECTURE §11 says, independently of the analytics code.
 */

const t = useTestApp({ env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT' } });
let analytics: AnalyticsServices;
const { tick } = t;

const settle = () => settleTrading(t);

const order = (headers: Record<string, string>, payload: Record<string, unknown>) =>
  api(t.app, { method: 'POST', url: '/trade/order', headers, payload }).then((res) => {
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  });
/** A market order placed with the key of `who` (201), e.g. `marketOrder(a, 'BTCUSDT', 'buy', '0.05')`. */
const marketOrder = (who: { apiKey: string }, symbol: string, side: 'buy' | 'sell', quantity: string) =>
  order(keyHeader(who.apiKey), { symbol, side, type: 'market', quantity });
const get = (headers: Record<string, string>, url: string) => api(t.app, { method: 'GET', url, headers });
const getOk = async (headers: Record<string, string>, url: string) => {
  const res = await get(headers, url);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

interface Fill {
  side: 'buy' | 'sell';
  symbol: string;
  quantity: string;
  price: string;
  fee: string;
  total: string;
  realized_pnl: string;
  executed_at: string;
}

/** The wallet's fills as the API reports them, oldest first, as `domain/metrics` reads them. */
const fillsOf = async (headers: Record<string, string>): Promise<{ raw: Fill[]; metrics: MetricsFill[] }> => {
  const body = await getOk(headers, '/trade/history?limit=500');
  const raw = (body.trades as Fill[]).slice().reverse();
  return {
    raw,
    metrics: raw.map((f) => ({
      symbol: f.symbol,
      side: f.side,
      quantity: f.quantity,
      price: f.price,
      fee: f.fee,
      realizedPnl: f.realized_pnl,
      time: Date.parse(f.executed_at),
    })),
  };
};

/** cash and BTC held after the fills (buy: total leaves; sell: total comes in). */
const holdingsAfter = (start: string, fills: Fill[]) => {
  let cash = dec(start);
  let btc = dec(0);
  for (const f of fills) {
    if (f.side === 'buy') {
      cash = cash.minus(f.total);
      btc = btc.plus(f.quantity);
    } else {
      cash = cash.plus(f.total);
      btc = btc.minus(f.quantity);
    }
  }
  return { cash, btc };
};

// Account A trades BTC (win, then loss) and keeps 0.01 BTC; its marks follow BTC_PATH, one per minute.
const BTC_PATH = Array.from({ length: 105 }, (_, i) => String(41_000 + ((i * 37) % 11) * 150 - (i % 4) * 90));

let a: TestAccount;
let b: TestAccount;
let c: TestAccount;
let agent: { agentId: string; apiKey: string };
let archived: { agentId: string; apiKey: string };
let sessionStart: number;
let firstMinute: number;
let aFills: Awaited<ReturnType<typeof fillsOf>>;

beforeAll(async () => {
  analytics = t.app.services.analytics!;
  tick('BTCUSDT', '40000', '10000');
  tick('ETHUSDT', '2000', '50000');

  a = await registerAccount(t.app, { display_name: 'Alpha desk' }, { plain: true });
  b = await registerAccount(t.app, { display_name: 'Beta desk' }, { plain: true });
  c = await registerAccount(t.app, { display_name: 'Only buys' }, { plain: true });
  agent = await createAgent(t.app, a, { display_name: 'Alpha bot' });
  archived = await createAgent(t.app, a, { display_name: 'Retired bot' });
  const A = keyHeader(a.apiKey);

  await marketOrder(a, 'BTCUSDT', 'buy', '0.05');
  await marketOrder(b, 'ETHUSDT', 'buy', '1');
  await marketOrder(c, 'ETHUSDT', 'buy', '0.5');
  await marketOrder(agent, 'ETHUSDT', 'buy', '0.2');
  await marketOrder(archived, 'ETHUSDT', 'buy', '0.2');
  tick('BTCUSDT', '42000');
  tick('ETHUSDT', '2100');
  await marketOrder(a, 'BTCUSDT', 'sell', '0.025');
  await marketOrder(b, 'ETHUSDT', 'sell', '0.5');
  await marketOrder(agent, 'ETHUSDT', 'sell', '0.1');
  await marketOrder(archived, 'ETHUSDT', 'sell', '0.1');
  tick('BTCUSDT', '39000');
  await marketOrder(a, 'BTCUSDT', 'sell', '0.015');
  const archive = await api(t.app, {
    method: 'POST',
    url: `/agents/${archived.agentId}/archive`,
    headers: bearer(a),
  });
  expect(archive.statusCode, archive.body).toBe(200);
  await settle();

  const info = await getOk(A, '/account/info');
  sessionStart = Date.parse(info.current_session.started_at);
  aFills = await fillsOf(A);

  // One marks event per minute after the trades, BTC following BTC_PATH (ETH stays at 2,100).
  firstMinute = minuteOf(Date.now()) + 60_000;
  for (let i = 0; i < BTC_PATH.length; i++) {
    tick('BTCUSDT', BTC_PATH[i]!);
    const recorded = await analytics.snapshotter!.record(firstMinute + i * 60_000);
    expect(recorded).toBeDefined();
  }
  await settle();
  const lastMinute = firstMinute + (BTC_PATH.length - 1) * 60_000;
  analytics.now = () => lastMinute + 30_000;
}, 120_000);

const sessionOf = async (account: TestAccount): Promise<string> =>
  (await getOk(keyHeader(account.apiKey), '/account/info')).current_session.session_id;

/** A's equity at each mark, from its fills and the BTC price the test set (cash + 0.01 BTC × price). */
const expectedEquity = () => {
  const { cash, btc } = holdingsAfter('10000', aFills.raw);
  expect(fmt(btc)).toBe('0.01000000');
  return BTC_PATH.map((p, i) => ({
    time: firstMinute + i * 60_000,
    equity: fmt(roundHalfEven8(cash.plus(btc.times(p)))),
  }));
};

describe('GET /analytics/portfolio/history', () => {
  it('answers the newest 100 hourly snapshots by default, oldest first, valued to the satoshi', async () => {
    const body = await getOk(keyHeader(a.apiKey), '/analytics/portfolio/history');
    expect(body.account_id).toBe(a.accountId);
    expect(body.agent_id).toBeNull();
    expect(body.interval).toBe('1h');
    const expected = expectedEquity();
    // The first marks of each hour are that hour's snapshot.
    const hours = new Map<number, (typeof expected)[number]>();
    for (const e of expected)
      if (!hours.has(Math.floor(e.time / 3_600_000))) hours.set(Math.floor(e.time / 3_600_000), e);
    expect(body.snapshots.map((s: { time: string }) => Date.parse(s.time))).toEqual(
      [...hours.values()].map((e) => e.time),
    );
    expect(body.snapshots.map((s: { total_equity: string }) => s.total_equity)).toEqual(
      [...hours.values()].map((e) => e.equity),
    );
  });

  it('answers 1-minute snapshots with limit: the newest, oldest first; default limit 100', async () => {
    const expected = expectedEquity();
    const all = await getOk(keyHeader(a.apiKey), '/analytics/portfolio/history?interval=1m');
    expect(all.snapshots).toHaveLength(100);
    expect(all.snapshots.map((s: { total_equity: string }) => s.total_equity)).toEqual(
      expected.slice(-100).map((e) => e.equity),
    );
    const five = await getOk(keyHeader(a.apiKey), '/analytics/portfolio/history?interval=1m&limit=5');
    expect(five.snapshots).toHaveLength(5);
    const last = five.snapshots[4];
    expect(last.time).toBe(new Date(expected[expected.length - 1]!.time).toISOString());
    expect(last.total_equity).toBe(expected[expected.length - 1]!.equity);
    // unrealized = 0.01 × price − the cost basis left (the buy's notional less the sold shares' cost)
    const realized = aFills.raw.reduce((s, f) => s.plus(f.realized_pnl), dec(0));
    expect(last.realized_pnl).toBe(fmt(realized));
    const buy = aFills.raw[0]!;
    const sold = aFills.raw.filter((f) => f.side === 'sell');
    const costLeft = dec(buy.quantity)
      .times(buy.price)
      .minus(sold.reduce((s, f) => s.plus(dec(f.quantity).times(f.price)).minus(f.realized_pnl), dec(0)));
    expect(last.unrealized_pnl).toBe(
      fmt(roundHalfEven8(dec('0.01').times(BTC_PATH.at(-1)!).minus(costLeft))),
    );
    const thousand = await getOk(keyHeader(a.apiKey), '/analytics/portfolio/history?interval=1m&limit=1000');
    expect(thousand.snapshots).toHaveLength(BTC_PATH.length);
  });

  it('answers daily snapshots: the first marks of each UTC day', async () => {
    const expected = expectedEquity();
    const lastDay = Math.floor(expected.at(-1)!.time / 86_400_000);
    const first = expected.find((e) => Math.floor(e.time / 86_400_000) === lastDay)!;
    const body = await getOk(keyHeader(a.apiKey), '/analytics/portfolio/history?interval=1d&limit=1');
    expect(body.interval).toBe('1d');
    expect(body.snapshots).toHaveLength(1);
    expect(body.snapshots[0].time).toBe(new Date(first.time).toISOString());
    expect(body.snapshots[0].total_equity).toBe(first.equity);
  });

  it('rejects a bad interval or limit with VALIDATION_ERROR 422 and issues', async () => {
    for (const [query, field] of [
      ['interval=5m', 'interval'],
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
    ] as const) {
      const res = await get(keyHeader(a.apiKey), `/analytics/portfolio/history?${query}`);
      expect(res.statusCode, query).toBe(422);
      const err = res.json().error;
      expect(err.code).toBe('VALIDATION_ERROR');
      expect(err.details.issues).toContainEqual(expect.objectContaining({ field, location: 'querystring' }));
    }
  });

  it('is scoped to the agent with its key or a JWT with X-Agent-Id', async () => {
    const byKey = await getOk(keyHeader(agent.apiKey), '/analytics/portfolio/history?interval=1m&limit=3');
    const byJwt = await getOk(
      { ...bearer(a), 'x-agent-id': agent.agentId },
      '/analytics/portfolio/history?interval=1m&limit=3',
    );
    expect(byKey.agent_id).toBe(agent.agentId);
    expect(byKey.account_id).toBe(a.accountId);
    expect(byJwt).toEqual(byKey);
    // 10,000 − the ETH buy's total + the sell's total + 0.1 ETH × 2,100
    const fills = (await fillsOf(keyHeader(agent.apiKey))).raw;
    const cash = fills.reduce(
      (s, f) => (f.side === 'buy' ? s.minus(f.total) : s.plus(f.total)),
      dec('10000'),
    );
    expect(byKey.snapshots[2].total_equity).toBe(fmt(roundHalfEven8(cash.plus(dec('0.1').times('2100')))));
    const accountView = await getOk(bearer(a), '/analytics/portfolio/history?interval=1m&limit=3');
    expect(accountView.agent_id).toBeNull();
    expect(accountView.snapshots[2].total_equity).toBe(expectedEquity().at(-1)!.equity);
  });
});

describe('GET /analytics/performance', () => {
  const expectedFor = (period: '1d' | 'all') => {
    const snapshots = expectedEquity();
    const hourly: typeof snapshots = [];
    for (const e of snapshots) {
      if (!hourly.some((h) => Math.floor(h.time / 3_600_000) === Math.floor(e.time / 3_600_000)))
        hourly.push(e);
    }
    const series = period === '1d' ? snapshots : hourly;
    const now = analytics.now();
    return computePerformance({
      startingBalance: '10000',
      equity: [{ time: sessionStart, equity: '10000' }, ...series],
      intervalMs: period === '1d' ? 60_000 : 3_600_000,
      fills: aFills.metrics,
      // Per-day figures count the window as at least one day (docs/analytics.md).
      period: { start: Math.min(sessionStart, now - 86_400_000), end: now },
    });
  };

  it('defaults to all and equals domain/metrics for the same fills and hourly equity', async () => {
    const body = await getOk(keyHeader(a.apiKey), '/analytics/performance');
    const p = expectedFor('all');
    // An undefined metric is "0.00000000" on the wire and named in undefined_metrics (issue 17, item 1).
    const wire = (v: string | null) => v ?? '0.00000000';
    expect(body).toMatchObject({
      period: 'all',
      account_id: a.accountId,
      agent_id: null,
      sharpe_ratio: wire(p.metrics.sharpe_ratio),
      sortino_ratio: wire(p.metrics.sortino_ratio),
      max_drawdown_pct: p.metrics.max_drawdown_pct,
      max_drawdown_duration_days: p.metrics.max_drawdown_duration_days,
      win_rate: p.metrics.win_rate,
      profit_factor: p.metrics.profit_factor,
      avg_win: p.metrics.avg_win,
      avg_loss: p.metrics.avg_loss,
      total_trades: 3,
      avg_trades_per_day: p.metrics.trades_per_day,
      best_trade: p.metrics.best_trade,
      worst_trade: p.metrics.worst_trade,
      current_streak: -1,
      snapshot_interval: '1h',
    });
    // The session is younger than a day: its 3 fills count as 3 per day, not thousands.
    expect(body.avg_trades_per_day).toBe('3.00000000');
    // Fewer than 30 hourly returns: no ratios, answered as zero and named as undefined.
    expect(p.metrics.sharpe_ratio).toBeNull();
    expect(body.sharpe_ratio).toBe('0.00000000');
    expect(body.sortino_ratio).toBe('0.00000000');
    expect(body.undefined_metrics).toEqual(expect.arrayContaining(['sharpe_ratio', 'sortino_ratio']));
    expect(body.undefined_metrics).not.toContain('win_rate');
  });

  it('1d: ratios from 1-minute returns, trade figures computed by hand', async () => {
    const body = await getOk(keyHeader(a.apiKey), '/analytics/performance?period=1d');
    const p = expectedFor('1d');
    expect(body.returns_count).toBe(BTC_PATH.length);
    expect(p.metrics.sharpe_ratio).not.toBeNull();
    expect(body.sharpe_ratio).toBe(p.metrics.sharpe_ratio);
    expect(body.undefined_metrics).toEqual([]);
    expect(body.sortino_ratio).toBe(p.metrics.sortino_ratio);
    expect(body.max_drawdown_pct).toBe(p.metrics.max_drawdown_pct);
    expect(Number(body.max_drawdown_pct)).toBeGreaterThan(0);
    expect(body.avg_trades_per_day).toBe(p.metrics.trades_per_day);
    // The sells: of 0.05 BTC bought at ~40,004, 0.025 sold at ~41,996 (win), 0.015 at ~38,996 (loss).
    const [buy, win, loss] = aFills.raw;
    const entry = dec(buy!.price);
    expect(win!.realized_pnl).toBe(fmt(dec(win!.price).minus(entry).times('0.025')));
    expect(loss!.realized_pnl).toBe(fmt(dec(loss!.price).minus(entry).times('0.015')));
    expect(body).toMatchObject({
      period: '1d',
      total_trades: 3,
      closed_trades: 2,
      winning_trades: 1,
      losing_trades: 1,
      win_rate: '50.00000000',
      avg_win: win!.realized_pnl,
      avg_loss: loss!.realized_pnl,
      best_trade: win!.realized_pnl,
      worst_trade: loss!.realized_pnl,
      profit_factor: fmt(roundHalfEven8(dec(win!.realized_pnl).div(dec(loss!.realized_pnl).abs()))),
      current_streak: -1,
      max_drawdown_duration_days: 0,
      snapshot_interval: '1m',
    });
    expect(Number(body.avg_loss)).toBeLessThan(0);
  });

  it('answers "0.00000000" and names the metric in undefined_metrics where §11 leaves it undefined (no closed trades)', async () => {
    const body = await getOk(keyHeader(c.apiKey), '/analytics/performance?period=7d');
    expect(body).toMatchObject({
      period: '7d',
      total_trades: 1,
      closed_trades: 0,
      win_rate: '0.00000000',
      profit_factor: '0.00000000',
      avg_win: '0.00000000',
      avg_loss: '0.00000000',
      best_trade: '0.00000000',
      worst_trade: '0.00000000',
      current_streak: 0,
      sharpe_ratio: '0.00000000',
    });
    expect(body.undefined_metrics.slice().sort()).toEqual(
      [
        'avg_loss',
        'avg_win',
        'best_trade',
        'profit_factor',
        'sharpe_ratio',
        'sortino_ratio',
        'win_rate',
        'worst_trade',
      ].sort(),
    );
    // No metric of the body is null: the original SDK parses each as a decimal.
    expect(Object.values(body).filter((v) => v === null && v !== body.agent_id)).toEqual([]);
  });

  it('rejects an unknown period with VALIDATION_ERROR 422; needs credentials; counts in the analytics group', async () => {
    const bad = await get(keyHeader(a.apiKey), '/analytics/performance?period=2d');
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error.code).toBe('VALIDATION_ERROR');
    expect(bad.json().error.details.issues).toContainEqual(
      expect.objectContaining({ field: 'period', location: 'querystring' }),
    );
    const anonymous = await api(t.app, { method: 'GET', url: '/analytics/performance' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().error.code).toBe('INVALID_API_KEY');
    const ok = await get(keyHeader(b.apiKey), '/analytics/performance?period=90d');
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['x-ratelimit-limit']).toBe('120');
  });
});

describe('a period that starts after the session', () => {
  it('opens the curve with the first snapshot in the period, and counts only fills inside it', async () => {
    const saved = analytics.now;
    // A day after a point 30 minutes into the marks: the 1d window starts there.
    const from = firstMinute + 30 * 60_000 + 15_000;
    analytics.now = () => from + 86_400_000;
    try {
      const body = await getOk(keyHeader(a.apiKey), '/analytics/performance?period=1d');
      const inWindow = expectedEquity().filter((e) => e.time >= from);
      const p = computePerformance({
        startingBalance: inWindow[0]!.equity,
        equity: inWindow,
        intervalMs: 60_000,
        fills: [],
        period: { start: from, end: from + 86_400_000 },
      });
      expect(body).toMatchObject({
        from: new Date(from).toISOString(),
        total_trades: 0,
        closed_trades: 0,
        win_rate: '0.00000000',
        returns_count: inWindow.length - 1,
        sharpe_ratio: p.metrics.sharpe_ratio ?? '0.00000000',
        sortino_ratio: p.metrics.sortino_ratio ?? '0.00000000',
        max_drawdown_pct: p.metrics.max_drawdown_pct,
        avg_trades_per_day: '0.00000000',
      });
      const firsts = await firstSnapshotsSince(
        t.database.db,
        [{ ownerId: a.accountId, sessionId: await sessionOf(a) }],
        '1m',
        from,
      );
      expect(firsts.get(a.accountId)?.total_equity).toBe(inWindow[0]!.equity);
    } finally {
      analytics.now = saved;
    }
  });
});

describe('GET /analytics/leaderboard', () => {
  it('defaults to 30d and ranks active wallets with a closed trade by ROI, no balances', async () => {
    const body = await getOk(keyHeader(c.apiKey), '/analytics/leaderboard');
    expect(body.period).toBe('30d');
    const ids = body.rankings.map(
      (r: { account_id: string; agent_id: string | null }) => r.agent_id ?? r.account_id,
    );
    // A, B and A's agent sold something; C only bought; the archived agent is excluded.
    expect(new Set(ids)).toEqual(new Set([a.accountId, b.accountId, agent.agentId]));
    const rois = body.rankings.map((r: { roi_pct: string }) => dec(r.roi_pct));
    for (let i = 1; i < rois.length; i++) expect(rois[i - 1].gte(rois[i])).toBe(true);
    expect(body.rankings.map((r: { rank: number }) => r.rank)).toEqual([1, 2, 3]);
    for (const r of body.rankings) {
      expect(Object.keys(r).sort()).toEqual(
        [
          'account_id',
          'agent_id',
          'display_name',
          'rank',
          'roi_pct',
          'sharpe_ratio',
          'total_trades',
          'undefined_metrics',
          'win_rate',
        ].sort(),
      );
      // Never null (issue 17, item 1): an undefined metric is zero and named.
      expect(r.sharpe_ratio).toMatch(/^-?\d+\.\d{8}$/);
      expect(r.win_rate).toMatch(/^-?\d+\.\d{8}$/);
      for (const name of r.undefined_metrics) expect(r[name]).toBe('0.00000000');
    }
    const names = Object.fromEntries(
      body.rankings.map((r: { display_name: string; agent_id: string | null; account_id: string }) => [
        r.agent_id ?? r.account_id,
        r.display_name,
      ]),
    );
    expect(names).toEqual({
      [a.accountId]: 'Alpha desk',
      [b.accountId]: 'Beta desk',
      [agent.agentId]: 'Alpha bot',
    });
  });

  it('all: ROI equals the portfolio roi_pct, the other figures equal /analytics/performance', async () => {
    const body = await getOk(bearer(a), '/analytics/leaderboard?period=all');
    for (const [headers, id] of [
      [keyHeader(a.apiKey), a.accountId],
      [keyHeader(b.apiKey), b.accountId],
      [keyHeader(agent.apiKey), agent.agentId],
    ] as const) {
      const entry = body.rankings.find(
        (r: { agent_id: string | null; account_id: string }) => (r.agent_id ?? r.account_id) === id,
      );
      const portfolio = await getOk(headers, '/account/portfolio');
      const perf = await getOk(headers, '/analytics/performance?period=all');
      expect(entry.roi_pct).toBe(portfolio.roi_pct);
      expect(entry.sharpe_ratio).toBe(perf.sharpe_ratio);
      expect(entry.total_trades).toBe(perf.total_trades);
      expect(entry.win_rate).toBe(perf.win_rate);
      expect(entry.undefined_metrics).toEqual(
        perf.undefined_metrics.filter((m: string) => m === 'sharpe_ratio' || m === 'win_rate'),
      );
    }
    // A: 10,000 → cash + 0.01 BTC at the live price (the last of BTC_PATH).
    const { cash, btc } = holdingsAfter('10000', aFills.raw);
    const equity = cash.plus(btc.times(BTC_PATH.at(-1)!));
    const entryA = body.rankings.find(
      (r: { account_id: string; agent_id: string | null }) =>
        r.account_id === a.accountId && r.agent_id === null,
    );
    expect(entryA.roi_pct).toBe(fmt(roundHalfEven8(equity.minus(10000).div(10000).times(100))));
  });

  it('rejects an unknown period', async () => {
    const res = await get(keyHeader(a.apiKey), '/analytics/leaderboard?period=365d');
    expect(res.statusCode).toBe(422);
    expect(res.json().error.details.issues[0]).toMatchObject({ field: 'period', location: 'querystring' });
  });
});

describe('equity snapshot retention', () => {
  it('drops 1-minute snapshots older than 25 hours, keeps hourly and daily ones', async () => {
    const later = firstMinute + (BTC_PATH.length - 1) * 60_000 + 26 * 3_600_000;
    expect(await analytics.snapshotter!.record(later)).toBeDefined();
    // The same minute again records nothing (one event per minute).
    expect(await analytics.snapshotter!.record(later)).toBeUndefined();
    await settle();
    const minutes = await getOk(keyHeader(a.apiKey), '/analytics/portfolio/history?interval=1m&limit=1000');
    expect(minutes.snapshots.map((s: { time: string }) => Date.parse(s.time))).toEqual([later]);
    const hours = await getOk(keyHeader(a.apiKey), '/analytics/portfolio/history?interval=1h&limit=1000');
    expect(hours.snapshots.length).toBeGreaterThanOrEqual(2);
    expect(Date.parse(hours.snapshots.at(-1).time)).toBe(later);
  });
});

describe('OpenAPI', () => {
  it('documents the three endpoints from their zod schemas, with the query bounds', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const history = doc.paths['/api/v1/analytics/portfolio/history'].get;
    const limit = history.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(limit.schema).toMatchObject({ minimum: 1, maximum: 1000, default: 100 });
    const performance = doc.paths['/api/v1/analytics/performance'].get;
    expect(performance.parameters.find((p: { name: string }) => p.name === 'period').schema).toMatchObject({
      enum: ['1d', '7d', '30d', '90d', 'all'],
      default: 'all',
    });
    const board = doc.paths['/api/v1/analytics/leaderboard'].get;
    expect(board.parameters.find((p: { name: string }) => p.name === 'period').schema.default).toBe('30d');
  });
});

describe('rebuild', () => {
  it('rebuilds equity_snapshots from the log in other batches, identical row by row, and serves the same history', async () => {
    const before = await getOk(keyHeader(a.apiKey), '/analytics/portfolio/history?interval=1h&limit=1000');
    for (const batchSize of [7, 5_000]) {
      const result = await rebuildProjection(
        t.runtime.services.eventStore,
        t.database.db,
        equitySnapshotsProjection,
        {
          verify: true,
          batchSize,
        },
      );
      expect(result.differences ?? []).toEqual([]);
      expect(result.swapped).toBe(true);
    }
    expect(await getOk(keyHeader(a.apiKey), '/analytics/portfolio/history?interval=1h&limit=1000')).toEqual(
      before,
    );
  });

  it('still rebuilds identical after a deleted agent’s fill gave the latest price of a symbol', async () => {
    // The fill's reference price is the newest ETHUSDT mark; deleting the agent removes that fill from the log,
    // so a rebuild values ETHUSDT at the recorded marks again: the live table must take the fill's mark back.
    const doomed = await createAgent(t.app, a, { display_name: 'Doomed bot' });
    tick('ETHUSDT', '2150');
    await marketOrder(doomed, 'ETHUSDT', 'buy', '0.1');
    await settle();
    const removed = await api(t.app, {
      method: 'DELETE',
      url: `/agents/${doomed.agentId}`,
      headers: bearer(a),
    });
    expect(removed.statusCode, removed.body).toBe(204);
    await settle();
    const result = await rebuildProjection(
      t.runtime.services.eventStore,
      t.database.db,
      equitySnapshotsProjection,
      {
        verify: true,
      },
    );
    expect(result.differences ?? []).toEqual([]);
  });
});
