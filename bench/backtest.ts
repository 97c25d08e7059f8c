/**
 * Backtest benchmark (issue "Done when"; ARCHITECTURE §9):
 *
 * (a) In process: the pure backtest decider stepping the real hourly data of all 16 pairs (2021-04-05 →
 *     2023-12-30, 23,976 steps) in batches, read from `MARKET_DATA_DIR` with the venue's own kline parser:
 *     candle-updates/s = steps × pairs / time of the `StepBacktest` decisions, in three scenarios — nothing held,
 *     16 positions held and 16 pending orders that never fill (every candle walked along its path), and a grid of
 *     pending orders that fill and are replaced all the way. Also: loading the candles into the session market.
 * (b) Through HTTP: the real runtime (`createRuntime` + `buildApp`, projections running, embedded PGlite in a temp
 *     data directory unless `DATABASE_URL` is set) listening on a local port, on the real data set:
 *     - the whole 16-pair hourly run: create (pairs null = every pair), start, one `step/batch` of 100,000 steps
 *       (clamped at 23,976: the run completes), then `GET /results` — wall time of each call and in total;
 *     - batch stepping through HTTP: a 16-pair session stepped in batches of `--batch` steps to the end;
 *     - single steps: `--steps` `POST /step` calls one after another (keep-alive), latency p50/p99.
 *
 *   MARKET_DATA_DIR=../shared/market-data npx tsx bench/backtest.ts [--steps 2000] [--batch 1000] [--json out.json]
 *
 * Targets: ≥ 1,000,000 candle-updates/s in process, single step p50 ≤ 2 ms, the whole 16-pair run through batch
 * steps in ≤ 10 s. Results: `docs/benchmarks.md` ("Backtesting").
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import pg from 'pg';
import pino from 'pino';
import type { BacktestCommand, BacktestContext } from '../domain/backtest/commands';
import { backtestDecider } from '../domain/backtest/decide';
import type { BacktestStreamEvent } from '../domain/backtest/events';
import { buildSessionMarket } from '../domain/backtest/market';
import type { BacktestState } from '../domain/backtest/state';
import type { Candle } from '../domain/market/candle';
import { parseKlineCsv } from '../domain/market/klines';
import { parseExchangeInfo } from '../domain/market/pair';
import { loadConfig } from '../src/config';
import { buildApp } from '../src/http/app';
import { createRuntime } from '../src/runtime';

const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
};

const options = new Command()
  .option('--steps <n>', 'single steps timed through HTTP', positiveInt, 2000)
  .option('--batch <n>', 'steps per batch call in the HTTP batch run', positiveInt, 1000)
  .option('--rounds <n>', 'repetitions of each in-process scenario', positiveInt, 5)
  .option('--skip-http', 'only the in-process measurements')
  .option('--skip-in-process', 'only the HTTP measurements')
  .option(
    '--postgres <url>',
    'run the HTTP part on a scratch database of this PostgreSQL server instead of PGlite',
  )
  .option('--json <file>', 'also write the results as JSON')
  .parse()
  .opts<{
    steps: number;
    batch: number;
    rounds: number;
    skipHttp?: boolean;
    skipInProcess?: boolean;
    postgres?: string;
    json?: string;
  }>();

const DATA = path.resolve(process.env.MARKET_DATA_DIR ?? '../shared/market-data');
const BINANCE = fs.existsSync(path.join(DATA, 'binance')) ? path.join(DATA, 'binance') : DATA;
const START = Date.parse('2021-04-05T00:00:00Z');
const END = Date.parse('2023-12-30T00:00:00Z');
const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
const results: Record<string, unknown> = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: os.cpus().length,
  cpu_model: os.cpus()[0]?.model,
  load_average: os.loadavg().map((l) => round(l)),
};

// ---------------------------------------------------------------------------------------------------------
// (a) In process
// ---------------------------------------------------------------------------------------------------------

const inProcess = () => {
  const pairs = parseExchangeInfo(
    JSON.parse(fs.readFileSync(path.join(BINANCE, 'exchangeInfo.json'), 'utf8')),
  );
  const dir = path.join(BINANCE, 'klines', '1h');
  const loaded: { filters: NonNullable<ReturnType<typeof pairs.pairs.find>>; candles: Candle[] }[] = [];
  for (const file of fs.readdirSync(dir).sort()) {
    const symbol = file.split('-')[0]!;
    const filters = pairs.pairs.find((p) => p.symbol === symbol);
    if (!filters) continue;
    loaded.push({
      filters,
      candles: parseKlineCsv(fs.readFileSync(path.join(dir, file), 'utf8'), '1h').candles,
    });
  }
  let t = performance.now();
  const market = buildSessionMarket('1h', loaded);
  const loadMs = performance.now() - t;
  const symbols = market.series.map((s) => s.symbol);

  const scenario = (
    name: string,
    setup: (place: (order: Record<string, string>) => void) => void,
    grid = false,
  ) => {
    const times: number[] = [];
    let fills = 0;
    let steps = 0;
    for (let r = 0; r < options.rounds; r++) {
      let state: BacktestState = backtestDecider.initialState();
      let n = 0;
      const ctx: BacktestContext = {
        now: new Date(0),
        newId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`,
        market,
        catalog: {
          pair: (s) => market.bySymbol.get(s)?.filters,
          range: () => ({ earliest: START - 86_400_000, latest: END }),
          symbolsWithData: () => symbols,
        },
      };
      const apply = (c: BacktestCommand): BacktestStreamEvent[] => {
        const events = backtestDecider.decide(c, state, ctx);
        for (const e of events) state = backtestDecider.evolve(state, e);
        return events;
      };
      apply({
        type: 'CreateBacktest',
        data: {
          sessionId: 'bt_bench',
          accountId: 'account',
          agentId: 'agent',
          request: {
            startTime: START,
            endTime: END,
            candleInterval: '1h',
            startingBalance: '1000000',
            strategyLabel: null,
            pairs: null,
          },
          riskProfile: {
            max_position_size_pct: 100,
            daily_loss_limit_pct: 100,
            max_open_orders: 200,
            max_order_size_pct: 100,
          },
          feeRate: '0.001',
        },
      });
      apply({ type: 'StartBacktest', data: { fingerprint: '' } });
      const place = (o: Record<string, string>) => {
        apply({
          type: 'PlaceSandboxOrder',
          data: {
            order: {
              symbol: o.symbol!,
              side: o.side as 'buy',
              type: o.type as 'limit',
              quantity: o.quantity!,
              price: o.price ?? null,
              triggerPrice: o.trigger ?? null,
            },
          },
        });
      };
      setup(place);
      let spent = 0;
      const batch = grid ? 24 : 5000;
      while (state.status === 'running') {
        const before = state.step;
        t = performance.now();
        const events = apply({ type: 'StepBacktest', data: { steps: batch } });
        spent += performance.now() - t;
        steps += state.step - before;
        for (const e of events) {
          if (e.type === 'OrderFilled') {
            fills++;
            if (grid && state.status === 'running') {
              // Replace the filled order on the other side, 2% away from its fill.
              const price = Number(e.data.executed_price);
              const side = e.data.side === 'buy' ? 'sell' : 'buy';
              const level = side === 'sell' ? price * 1.02 : price * 0.98;
              place({
                symbol: e.data.symbol,
                side,
                type: 'limit',
                quantity: e.data.quantity,
                price: level.toFixed(2),
              });
            }
          }
        }
      }
      times.push(spent);
    }
    const sorted = [...times].sort((a, b) => a - b);
    const median = percentile(sorted, 50);
    const perRound = steps / options.rounds;
    return {
      name,
      steps: perRound,
      pairs: symbols.length,
      fills_per_round: fills / options.rounds,
      median_ms: round(median),
      candle_updates_per_s: Math.round((perRound * symbols.length) / (median / 1000)),
    };
  };

  const price = (symbol: string) => {
    const s = market.bySymbol.get(symbol)!;
    let i = 0;
    while (i < s.candles.length - 1 && s.candles[i]!.openTime + 3_600_000 <= START) i++;
    return Number(s.candles[Math.max(0, i - 1)]!.close);
  };
  const qty = (symbol: string, usdt: number) => {
    const step = Number(market.bySymbol.get(symbol)!.filters.stepSize);
    return (Math.floor(usdt / price(symbol) / step) * step).toFixed(8);
  };
  const scenarios = [
    scenario('nothing held, no orders', () => {}),
    scenario('16 positions held, 16 pending orders never reached', (place) => {
      for (const s of symbols) {
        place({ symbol: s, side: 'buy', type: 'market', quantity: qty(s, 20_000) });
        place({
          symbol: s,
          side: 'buy',
          type: 'limit',
          quantity: qty(s, 1000),
          price: (price(s) / 1000).toFixed(4),
        });
      }
    }),
    scenario(
      'grid: 2 pending orders per pair, refilled after each fill (batches of 24 steps)',
      (place) => {
        for (const s of symbols) {
          place({ symbol: s, side: 'buy', type: 'market', quantity: qty(s, 20_000) });
          place({
            symbol: s,
            side: 'buy',
            type: 'limit',
            quantity: qty(s, 2000),
            price: (price(s) * 0.98).toFixed(4),
          });
          place({
            symbol: s,
            side: 'sell',
            type: 'limit',
            quantity: qty(s, 2000),
            price: (price(s) * 1.02).toFixed(4),
          });
        }
      },
      true,
    ),
  ];
  results.in_process = {
    load_session_market_ms: round(loadMs),
    candles: market.series.reduce((n, s) => n + s.candles.length, 0),
    scenarios,
  };
  console.log(JSON.stringify(results.in_process, null, 2));
};

// ---------------------------------------------------------------------------------------------------------
// (b) Through HTTP
// ---------------------------------------------------------------------------------------------------------

/** A scratch database on the server (`ptv_bench_backtest_*`), dropped by the returned function. */
const scratchDatabase = async (serverUrl: string) => {
  const name = `ptv_bench_backtest_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const a = new pg.Client({ connectionString: serverUrl });
      await a.connect();
      await a.query(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
};

const http = async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-bench-backtest-'));
  const scratch = options.postgres ? await scratchDatabase(options.postgres) : undefined;
  const config = loadConfig({
    ...process.env,
    DATA_DIR: dataDir,
    MARKET_DATA_DIR: DATA,
    LOG_LEVEL: 'error',
    DATABASE_URL: scratch?.url ?? '',
  });
  let t = performance.now();
  const runtime = await createRuntime(config, pino({ level: 'error' }));
  const app = await buildApp(runtime.services);
  await runtime.services.market!.persisted();
  const startupMs = performance.now() - t;
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `${address}/api/v1`;
  try {
    const request = async (
      method: string,
      url: string,
      body?: unknown,
      headers: Record<string, string> = {},
    ) => {
      const res = await fetch(`${base}${url}`, {
        method,
        headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
      return JSON.parse(text);
    };
    const reg = await request('POST', '/auth/register', { display_name: 'bench' });
    const login = await request('POST', '/auth/login', { api_key: reg.api_key, api_secret: reg.api_secret });
    const auth = { authorization: `Bearer ${login.token}` };
    const agent = await request(
      'POST',
      '/agents',
      { display_name: 'bench agent', risk_profile: { max_position_size_pct: 100 } },
      auth,
    );
    const create = (pairs: string[] | null) =>
      request(
        'POST',
        '/backtest/create',
        {
          start_time: new Date(START).toISOString(),
          end_time: new Date(END).toISOString(),
          starting_balance: '100000',
          candle_interval: '1h',
          agent_id: agent.agent_id,
          strategy_label: 'bench',
          pairs,
        },
        auth,
      );
    const timed = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
      const t0 = performance.now();
      const value = await f();
      return [value, round(performance.now() - t0)];
    };

    // The whole 16-pair run through one batch call.
    const [created, createMs] = await timed(() => create(null));
    const id = created.session_id;
    const [, startMs] = await timed(() => request('POST', `/backtest/${id}/start`, undefined, auth));
    for (const symbol of ['BTCUSDT', 'ETHUSDT']) {
      await request(
        'POST',
        `/backtest/${id}/trade/order`,
        { symbol, side: 'buy', type: 'market', quantity: symbol === 'BTCUSDT' ? '0.5' : '5' },
        auth,
      );
    }
    const [last, batchMs] = await timed(() =>
      request('POST', `/backtest/${id}/step/batch`, { steps: 100_000 }, auth),
    );
    const [res, resultsMs] = await timed(() => request('GET', `/backtest/${id}/results`, undefined, auth));
    const whole = {
      pairs: created.estimated_pairs,
      steps: last.step,
      complete: last.is_complete,
      create_ms: createMs,
      start_ms: startMs,
      batch_ms: batchMs,
      results_ms: resultsMs,
      total_ms: round(createMs + startMs + batchMs + resultsMs),
      candle_updates_per_s: Math.round((last.step * created.estimated_pairs) / (batchMs / 1000)),
      final_equity: res.summary.final_equity,
      sharpe_ratio: res.metrics.sharpe_ratio,
    };
    console.log('whole run', whole);

    // Batches of `--batch` steps through HTTP.
    const second = (await create(null)).session_id;
    await request('POST', `/backtest/${second}/start`, undefined, auth);
    let steps = 0;
    t = performance.now();
    for (;;) {
      const r = await request('POST', `/backtest/${second}/step/batch`, { steps: options.batch }, auth);
      steps = r.step;
      if (r.is_complete) break;
    }
    const batchRunMs = performance.now() - t;
    const batches = {
      batch: options.batch,
      calls: Math.ceil(steps / options.batch),
      steps,
      total_ms: round(batchRunMs),
      candle_updates_per_s: Math.round((steps * 16) / (batchRunMs / 1000)),
    };
    console.log('batches', batches);

    // Single steps.
    const third = (await create(null)).session_id;
    await request('POST', `/backtest/${third}/start`, undefined, auth);
    const latencies: number[] = [];
    for (let i = 0; i < options.steps + 50; i++) {
      const t0 = performance.now();
      await request('POST', `/backtest/${third}/step`, undefined, auth);
      if (i >= 50) latencies.push(performance.now() - t0);
    }
    latencies.sort((a, b) => a - b);
    const single = {
      steps: latencies.length,
      pairs: 16,
      p50_ms: round(percentile(latencies, 50), 3),
      p90_ms: round(percentile(latencies, 90), 3),
      p99_ms: round(percentile(latencies, 99), 3),
      max_ms: round(latencies.at(-1) ?? Number.NaN, 3),
    };
    console.log('single steps', single);
    results.http = {
      database: config.DATABASE_URL ? 'postgresql' : 'pglite',
      startup_ms: round(startupMs),
      whole_run: whole,
      batches,
      single_step: single,
    };
  } finally {
    await app.close();
    await runtime.close();
    await scratch?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
};

if (!options.skipInProcess) inProcess();
if (!options.skipHttp) await http();
if (options.json) fs.writeFileSync(options.json, `${JSON.stringify(results, null, 2)}\n`);
