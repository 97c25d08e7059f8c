import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';
import type { PerformanceInput } from '../../domain/metrics/performance';
import { bearer, createAgent, registerAccount, startApp, type TestAccount } from '../accounts/support';
import { csvRows, linkedDataDir } from '../market/support';
import { ok } from '../support/api-calls';
import type { TestDatabase } from '../support/databases';
import { lateBound } from '../support/late-bound';
import { type SharedTestApp, useTestApp } from '../support/test-app';
import { orderBody } from '../trading/key-calls';

/** The real hourly files of BTCUSDT and ETHUSDT and the exchangeInfo, linked into a temporary data directory. */
export const dataDirectory = () =>
  linkedDataDir(['exchangeInfo.json', 'klines/1h/BTCUSDT-1h.csv', 'klines/1h/ETHUSDT-1h.csv']);

/**
 * An app on the market data directory; for a restart, on a given database and server data directory (its keys:
 * tokens issued before stay valid).
 */
export const startBacktestApp = async (
  marketDir: string,
  restart?: { database: TestDatabase; dataDir?: string },
  env: Record<string, string> = {},
) => {
  const t = await startApp({
    env: { MARKET_DATA_DIR: marketDir, ...env },
    ...(restart ? { database: restart.database } : {}),
    ...(restart?.dataDir ? { dataDir: restart.dataDir } : {}),
  });
  await t.app.services.market!.persisted();
  return t;
};

/** An account with one agent, calling with its JWT scoped to nothing (account level). */
export interface Trader {
  account: TestAccount;
  agentId: string;
  agentKey: string;
  headers: Record<string, string>;
}

export const trader = async (app: FastifyInstance, risk?: Record<string, number>): Promise<Trader> => {
  const account = await registerAccount(app, {}, { plain: true });
  const agent = await createAgent(app, account, risk ? { risk_profile: risk } : {});
  return { account, agentId: agent.agentId, agentKey: agent.apiKey, headers: bearer(account) };
};

/**
 * The {@link trader} of a test file (or describe block), registered on the app `t` in a `beforeAll` (90 s: the
 * app may still be storing candles on a loaded machine); `risk` is the agent's risk profile. Read its members
 * inside hooks and tests only: before the hook has run there is no trader and they throw.
 */
export const useTrader = (t: { readonly app: FastifyInstance }, risk?: Record<string, number>): Trader => {
  let registered: Trader | undefined;
  beforeAll(async () => {
    registered = await trader(t.app, risk);
  }, 90_000);
  return lateBound('the trader', () => registered);
};

/**
 * `text` (a session's answers, joined) with the session id replaced by `SESSION`, every other UUID (order and
 * trade ids) by `ID<n>` in order of first appearance, and the wall-clock `duration_real_seconds` blanked: two runs
 * of the same session compare equal exactly when they decided the same.
 */
export const normalizeSessionText = (text: string, sessionId: string): string => {
  const ids = new Map<string, string>();
  return text
    .replaceAll(sessionId, 'SESSION')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => {
      if (!ids.has(id)) ids.set(id, `ID${ids.size}`);
      return ids.get(id)!;
    })
    .replace(/"duration_real_seconds":"[^"]*"/g, '"duration_real_seconds":"-"');
};

/** A call a session test replays: method, path under `/backtest/{id}`, body, expected status (default 200). */
export type SessionCommand = ['POST' | 'GET' | 'DELETE', string, unknown?, number?];

/** A {@link SessionCommand} placing an order ({@link orderBody}'s fields), expected to answer 201. */
export const sessionOrder = (
  symbol: string,
  side: string,
  type: string,
  quantity: string,
  more: Record<string, unknown> = {},
): SessionCommand => ['POST', '/trade/order', orderBody(symbol, side, type, quantity, more), 201];

/**
 * Sends `commands` in order to the session `id` of `who` on `app`, each expected to answer its status; answers
 * the bodies as JSON texts (for {@link normalizeSessionText}).
 */
export const runSessionCommands = async (
  app: FastifyInstance,
  who: Trader,
  id: string,
  commands: readonly SessionCommand[],
): Promise<string[]> => {
  const out: string[] = [];
  for (const [method, url, body, status] of commands) {
    out.push(
      JSON.stringify(await ok(app, who.headers, method, `/backtest/${id}${url}`, body, status ?? 200)),
    );
  }
  return out;
};

export { call, fails, ok } from '../support/api-calls';

/** The raw hourly candles of a symbol, read straight from the CSV file (independent of the code under test). */
export const rawCandles = (symbol: string) => {
  const out = new Map<
    number,
    { open: number; high: number; low: number; close: number; closeText: string }
  >();
  for (const row of csvRows(`klines/1h/${symbol}-1h.csv`)) {
    out.set(Number(row[0]), {
      open: Number(row[1]),
      high: Number(row[2]),
      low: Number(row[3]),
      close: Number(row[4]),
      closeText: row[4]!,
    });
  }
  return out;
};

export const H = 3_600_000;

/** Wall-clock stamps and configuration of a session: the only times a sandbox answer may hold beyond its clock. */
const CONFIG_KEYS = new Set(['end_time', 'created_at', 'started_at', 'completed_at', 'ended_at']);

/**
 * Every ISO 8601 timestamp in a sandbox answer (market data, orders, fills, valuations), for the no-look-ahead
 * checks: none may be after the session's virtual time. Leaves out the configuration (`end_time`) and the wall-clock
 * stamps of the session record (`created_at`, `started_at`, ...).
 */
export const sandboxTimesIn = (value: unknown): number[] => {
  const out: number[] = [];
  const walk = (v: unknown) => {
    if (typeof v === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(v)) out.push(Date.parse(v));
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) if (!CONFIG_KEYS.has(k)) walk(x);
    }
  };
  walk(value);
  return out;
};

/**
 * The body of `POST /backtest/create` for the agent of `who`, from `start` to `end` (ISO 8601 text, or ms since
 * the epoch) in 1h candles on `pairs` (`null`: every pair) with a starting balance of `'10000'` USDT; `more` adds
 * fields or overrides these.
 */
export const sessionBody = (
  who: { agentId: string },
  start: string | number,
  end: string | number,
  pairs: string[] | null,
  more: Record<string, unknown> = {},
) => ({
  start_time: typeof start === 'number' ? new Date(start).toISOString() : start,
  end_time: typeof end === 'number' ? new Date(end).toISOString() : end,
  starting_balance: '10000',
  candle_interval: '1h',
  agent_id: who.agentId,
  pairs,
  ...more,
});

/** Places `order` in session `id`'s sandbox with `headers` and expects `status` (default 201); answers the body. */
export const sandboxOrder = (
  app: FastifyInstance,
  headers: Record<string, string>,
  id: string,
  order: Record<string, unknown>,
  status = 201,
) => ok(app, headers, 'POST', `/backtest/${id}/trade/order`, order, status);

/** The reads of a sandbox's own account, orders and status, after its market reads in the no-look-ahead checks. */
const SANDBOX_ACCOUNT_READS = [
  '/account/balance',
  '/account/positions',
  '/account/portfolio',
  '/trade/orders',
  '/trade/history',
  '/status',
];

/**
 * The no-look-ahead check of session `id` after a step answered `stepped`: GETs each of `marketReads` and then the
 * account reads (balance, positions, portfolio, orders, history, status) under `/backtest/{id}` as `trader` (200
 * each) and expects no time in them, nor in `stepped`, after its `virtual_time`. Answers the bodies in that order.
 */
export const readsAtClock = async (
  app: FastifyInstance,
  trader: Trader,
  id: string,
  stepped: { virtual_time: string },
  marketReads: string[],
): Promise<any[]> => {
  const at = Date.parse(stepped.virtual_time);
  const reads = await Promise.all(
    [...marketReads, ...SANDBOX_ACCOUNT_READS].map((u) =>
      ok(app, trader.headers, 'GET', `/backtest/${id}${u}`),
    ),
  );
  for (const body of [stepped, ...reads]) {
    for (const time of sandboxTimesIn(body)) expect(time).toBeLessThanOrEqual(at);
  }
  return reads;
};

/**
 * The backtest app of one test file (or describe block; {@link useTestApp}) on a temporary market data directory
 * linking `files` of the data set (default: {@link dataDirectory}'s), removed after the app has closed. The start
 * budget is useTestApp's (the app also waits for the candles to be stored).
 */
export const useBacktestApp = (files?: string[], env: Record<string, string> = {}): SharedTestApp => {
  let data: { dir: string; remove: () => void } | undefined;
  // Registered before the app's own afterAll, so it runs after it (vitest runs after-hooks in reverse).
  afterAll(() => data?.remove());
  return useTestApp(() => {
    data = files ? linkedDataDir(files) : dataDirectory();
    return startBacktestApp(data.dir, undefined, env);
  });
};

/**
 * The metrics input (`computePerformance`) rebuilt from what a client can read: the published equity curve's
 * points, the trade log's trades and the last step's `prices` (their closes value the positions still open).
 * `startingBalance` in USDT; `intervalMs` the candle interval (ms); `period` as `PerformanceInput.period`.
 */
export const performanceInputFromResults = (published: {
  startingBalance: string;
  intervalMs: number;
  points: readonly { time: string; equity: string }[];
  trades: readonly Record<string, string>[];
  prices: Record<string, unknown>;
  period?: PerformanceInput['period'];
}): PerformanceInput => ({
  startingBalance: published.startingBalance,
  intervalMs: published.intervalMs,
  equity: published.points.map((p) => ({ time: Date.parse(p.time), equity: p.equity })),
  fills: published.trades.map((x) => ({
    symbol: x.symbol!,
    side: x.side as 'buy' | 'sell',
    quantity: x.quantity!,
    price: x.price!,
    notional: x.notional!,
    fee: x.fee!,
    realizedPnl: x.realized_pnl!,
    time: Date.parse(x.executed_at!),
  })),
  marks: Object.fromEntries(
    Object.entries(published.prices).map(([symbol, p]) => [symbol, (p as { close: string }).close]),
  ),
  ...(published.period ? { period: published.period } : {}),
});
