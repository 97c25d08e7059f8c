/**
 * Backtest benchmark (issue "Done when"; ARCHITECTURE §9):
 *
 * (a) In process: the pure backtest decider stepping the real hourly data of all 16 pairs (2021-04-05 →
 *     2023-12-30, 23,976 steps) in batches, read from `MARKET_DATA_DIR` with the venue's own kline parser:
 *     candle-updates/s = steps × pairs / time of the `StepBacktest` decisions, in three scenarios — nothing held,
 *     16 positions held and 16 pending orders that never fill (every candle walked along its path), and a grid of
 *     pending orders that fill and are replaced all the way. Also: loading the candles into the session market.
 * (b) Through HTTP: the real runtime (`createRuntime` + `buildApp`, projections and matching engine running in
 *     this process as with `npm start`) listening on a local port, on the real data set, on a scratch database
 *     (`ptv_bench_backtest_*`, dropped at the end) of the PostgreSQL server named by `--postgres` or
 *     `DATABASE_URL`, else on embedded PGlite in a temporary data directory (`--pglite` forces PGlite):
 *     - `whole`: the whole 16-pair hourly run: create (pairs null = every pair), start, one `step/batch` of 100,000
 *       steps (clamped at 23,976: the run completes), then `GET /results` — wall time of each call and in total;
 *     - `grid`: the whole 16-pair hourly run with a grid strategy (issue 21, "Done when": ≤ 2 s under the
 *       realistic fill model): a position in every pair, then a buy limit 2 % below and a sell limit 2 % above the
 *       price in each; stepped in batches of `--grid-batch` steps (default 168, a week), and after each batch every
 *       fill it reports (partial fills included) is replaced by an order of its quantity on the other side, 2 %
 *       from its price — wall time of the whole run (and of the first batch, where cold step threads start),
 *       calls, fills, `GET /results`; the `Server-Timing` sums of the placements and batches; the CPU of this process
 *       (all threads, and per thread), of the scratch database's backends, and the statements sent;
 *     - `batches`: a 16-pair session stepped in batches of `--batch` steps to the end;
 *     - `single`: `--steps` `POST /step` calls one after another on a 16-pair session holding BTC and ETH, after
 *       50 warm-up calls, alternating in blocks of 100 between two clients in this process (node:http with a
 *       keep-alive agent, and `fetch`), so both see the same load: latency p50/p90/p99/max per client; where the
 *       time of a call goes (server side: request arrival → command, the command (decision and durable append),
 *       command → response written; the rest is the client and the loopback); CPU ms per step of this process
 *       (server and client) and of the PostgreSQL backends of the scratch database; database statements sent
 *       per step; event-loop delay. Then, unless `--no-breakdown`, the same single steps (node:http client) with
 *       the matching engine stopped, and with the projections stopped too: what the background work each step
 *       causes costs the step.
 *     With `--worker` (PostgreSQL only) the API process runs with `PROJECTIONS=false` and a worker process
 *     (`src/main.ts worker`: projections and matching engine) follows the log, as the api/worker deployment of
 *     `docs/operations.md`; its CPU is reported too, and the breakdown is the same steps with the worker stopped.
 *
 *   MARKET_DATA_DIR=../shared/market-data npx tsx bench/backtest.ts [--steps 2000] [--batch 1000] [--json out.json]
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres MARKET_DATA_DIR=../shared/market-data \
 *     npx tsx bench/backtest.ts --skip-in-process --parts single --steps 1000
 *
 * Targets: ≥ 1,000,000 candle-updates/s in process, single step p50 ≤ 2 ms, the whole 16-pair run through batch
 * steps in ≤ 10 s. Results: `docs/benchmarks.md` ("Backtesting").
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { PGlite } from '@electric-sql/pglite';
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
import { positiveInt } from './options';
import { createScratchDatabase, processCpuSeconds } from './stats';

const PARTS = ['whole', 'grid', 'batches', 'single'] as const;

const options = new Command()
  .option('--steps <n>', 'single steps timed through HTTP', positiveInt, 2000)
  .option('--batch <n>', 'steps per batch call in the HTTP batch run', positiveInt, 1000)
  .option(
    '--grid-batch <n>',
    'steps per batch call of the HTTP grid run (the grid is refilled after each)',
    positiveInt,
    168,
  )
  .option('--rounds <n>', 'repetitions of each in-process scenario', positiveInt, 5)
  .option('--skip-http', 'only the in-process measurements')
  .option('--skip-in-process', 'only the HTTP measurements')
  .option('--parts <list>', `HTTP parts to run, comma-separated: ${PARTS.join(', ')}`, PARTS.join(','))
  .option(
    '--postgres <url>',
    'run the HTTP part on a scratch database of this PostgreSQL server (default: DATABASE_URL)',
  )
  .option('--pglite', 'run the HTTP part on embedded PGlite even when DATABASE_URL is set')
  .option(
    '--worker',
    'PostgreSQL only: projections and matching engine in a separate worker process (src/main.ts worker), the API ' +
      'process with PROJECTIONS=false, as the api/worker deployment of docs/operations.md',
  )
  .option('--no-breakdown', 'skip the single steps with the background work stopped')
  .option('--breakdown-steps <n>', 'single steps per background configuration', positiveInt, 500)
  .option('--json <file>', 'also write the results as JSON')
  .parse()
  .opts<{
    steps: number;
    batch: number;
    gridBatch: number;
    rounds: number;
    skipHttp?: boolean;
    skipInProcess?: boolean;
    parts: string;
    postgres?: string;
    pglite?: boolean;
    worker?: boolean;
    breakdown: boolean;
    breakdownSteps: number;
    json?: string;
  }>();

const parts = new Set(options.parts.split(',').map((p) => p.trim()));
for (const part of parts) {
  if (!(PARTS as readonly string[]).includes(part)) throw new InvalidArgumentError(`unknown part ${part}`);
}
const postgresServer = options.pglite ? undefined : options.postgres || process.env.DATABASE_URL || undefined;
if (options.worker && !postgresServer) {
  throw new InvalidArgumentError('--worker needs a PostgreSQL server (--postgres or DATABASE_URL)');
}

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
          candleCount: () => 1,
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
    while (i < s.length - 1 && s.openTime[i]! + 3_600_000 <= START) i++;
    return Number(s.candleAt(Math.max(0, i - 1)).close);
  };
  const qty = (symbol: string, usdt: number) => {
    const step = Number(market.bySymbol.get(symbol)!.filters.stepSize);
    return (Math.floor(usdt / price(symbol) / step) * step).toFixed(8);
  };
  // A market buy of 20,000 USDT worth of `symbol`, and a limit order of `usdt` worth at `at`.
  const bought = (symbol: string) =>
    ({ symbol, side: 'buy', type: 'market', quantity: qty(symbol, 20_000) }) as const;
  const limit = (symbol: string, side: 'buy' | 'sell', usdt: number, at: number) =>
    ({ symbol, side, type: 'limit', quantity: qty(symbol, usdt), price: at.toFixed(4) }) as const;
  const scenarios = [
    scenario('nothing held, no orders', () => {}),
    scenario('16 positions held, 16 pending orders never reached', (place) => {
      for (const s of symbols) {
        place(bought(s));
        place(limit(s, 'buy', 1000, price(s) / 1000));
      }
    }),
    scenario(
      'grid: 2 pending orders per pair, refilled after each fill (batches of 24 steps)',
      (place) => {
        for (const s of symbols) {
          place(bought(s));
          place(limit(s, 'buy', 2000, price(s) * 0.98));
          place(limit(s, 'sell', 2000, price(s) * 1.02));
        }
      },
      true,
    ),
  ];
  results.in_process = {
    load_session_market_ms: round(loadMs),
    candles: market.series.reduce((n, s) => n + s.length, 0),
    scenarios,
  };
  console.log(JSON.stringify(results.in_process, null, 2));
};

// ---------------------------------------------------------------------------------------------------------
// (b) Through HTTP
// ---------------------------------------------------------------------------------------------------------

/** CPU ms (user + system) of each thread of this process — `main`, or `+n`: thread id − process id — from `/proc/self/task`. */
const threadCpuMs = (): Map<string, number> => {
  const out = new Map<string, number>();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(
        tid === String(process.pid) ? 'main' : `+${Number(tid) - process.pid}`,
        (Number(fields[11]) + Number(fields[12])) * 10,
      );
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return out;
};

/**
 * CPU meter of a measured window: this process (server and client), the worker process when there is one and, on
 * a local PostgreSQL server, the backends serving the scratch database. On a shared 2-core machine latency moves with the neighbours' load; CPU time per
 * step barely does, so it is the figure to compare between versions.
 */
const cpuMeter = async (
  serverUrl: string | undefined,
  database: string | undefined,
  workerPid: number | undefined,
) => {
  const admin = serverUrl ? new pg.Client({ connectionString: serverUrl }) : undefined;
  await admin?.connect();
  const backends = async () =>
    admin
      ? (
          await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [
            database,
          ])
        ).rows.map((r) => r.pid)
      : [];
  const sum = (pids: number[]) => pids.reduce((a, pid) => a + (processCpuSeconds(pid) ?? 0), 0);
  const pids = await backends();
  const before = {
    pg: sum(pids),
    node: process.cpuUsage(),
    worker: workerPid ? processCpuSeconds(workerPid) : undefined,
  };
  return async (steps: number) => {
    const now = await backends();
    const fresh = now.filter((p) => !pids.includes(p));
    const node = process.cpuUsage(before.node);
    const postgres = sum(now.filter((p) => pids.includes(p))) - before.pg + sum(fresh);
    const worker = workerPid && before.worker !== undefined ? processCpuSeconds(workerPid) : undefined;
    await admin?.end();
    /** Totals of the window (ms): this process (all its threads) and the scratch database's backends. */
    const totals = { node_ms: round((node.user + node.system) / 1000), postgres_ms: round(postgres * 1000) };
    return {
      totals,
      node_ms_per_step: round((node.user + node.system) / 1000 / steps, 3),
      ...(worker !== undefined
        ? { worker_ms_per_step: round(((worker - before.worker!) * 1000) / steps, 3) }
        : {}),
      ...(admin ? { postgres_ms_per_step: round((postgres * 1000) / steps, 3) } : {}),
    };
  };
};

/** Counts the statements this process sends to the database (pg clients and PGlite) while `counting`. */
const statementCounter = (() => {
  let count = 0;
  let counting = false;
  for (const proto of [pg.Client.prototype, PGlite.prototype] as { query: (...a: unknown[]) => unknown }[]) {
    const query = proto.query;
    proto.query = function (this: unknown, ...args: unknown[]) {
      if (counting) count++;
      return query.apply(this, args);
    };
  }
  return {
    start: () => {
      count = 0;
      counting = true;
    },
    stop: () => {
      counting = false;
      return count;
    },
  };
})();

const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    p50_ms: round(percentile(sorted, 50), 3),
    p90_ms: round(percentile(sorted, 90), 3),
    p99_ms: round(percentile(sorted, 99), 3),
    max_ms: round(sorted.at(-1) ?? Number.NaN, 3),
  };
};

/** Starts `src/main.ts worker` (projections and matching engine) on the database; resolves once it runs. */
const startWorker = async (env: Record<string, string | undefined>): Promise<ChildProcess> => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'worker'], {
    cwd: path.resolve(import.meta.dirname, '..'),
    env: { ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += String(chunk);
      if (buffer.includes('"worker running"')) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
  });
  return child;
};

const stopWorker = async (child: ChildProcess | undefined): Promise<void> => {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
};

const throughHttp = async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-bench-backtest-'));
  const scratch = postgresServer
    ? await createScratchDatabase(postgresServer, 'ptv_bench_backtest_')
    : undefined;
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    MARKET_DATA_DIR: DATA,
    LOG_LEVEL: 'error',
    DATABASE_URL: scratch?.url ?? '',
  };
  const config = loadConfig({ ...env, ...(options.worker ? { PROJECTIONS: 'false' } : {}) });
  let t = performance.now();
  const runtime = await createRuntime(config, pino({ level: 'error' }));
  const app = await buildApp(runtime.services);
  // Listening first also keeps the process alive while the candle store is written (its delay timer is unref'd).
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  await runtime.services.market!.persisted();
  // The worker starts on the migrated database with the candles already stored (it skips unchanged files).
  let worker = options.worker ? await startWorker(env) : undefined;
  const startupMs = performance.now() - t;
  const base = `${address}/api/v1`;
  results.http = {
    database: config.DATABASE_URL ? 'postgresql' : 'pglite',
    deployment: options.worker
      ? 'API process (PROJECTIONS=false) + worker process (projections, matching engine)'
      : 'one process (API, projections, matching engine), as npm start',
    startup_ms: round(startupMs),
  };
  const out = results.http as Record<string, unknown>;
  /** The `Server-Timing` header of the last response (`name;dur=ms, …`). */
  let serverTiming = '';
  /** Adds each metric of the last response's `Server-Timing` to `into` (ms by name). */
  const addTimings = (into: Record<string, number>) => {
    for (const m of serverTiming.matchAll(/([\w-]+);dur=([\d.]+)/g)) {
      into[m[1]!] = (into[m[1]!] ?? 0) + Number(m[2]);
    }
  };
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
      serverTiming = res.headers.get('server-timing') ?? '';
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
    const create = (pairs: string[] | null, startingBalance = '100000') =>
      request(
        'POST',
        '/backtest/create',
        {
          start_time: new Date(START).toISOString(),
          end_time: new Date(END).toISOString(),
          starting_balance: startingBalance,
          candle_interval: '1h',
          agent_id: agent.agent_id,
          strategy_label: 'bench',
          pairs,
        },
        auth,
      );
    const buyBtcAndEth = async (id: string) => {
      for (const symbol of ['BTCUSDT', 'ETHUSDT']) {
        await request(
          'POST',
          `/backtest/${id}/trade/order`,
          { symbol, side: 'buy', type: 'market', quantity: symbol === 'BTCUSDT' ? '0.5' : '5' },
          auth,
        );
      }
    };
    const timed = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
      const t0 = performance.now();
      const value = await f();
      return [value, round(performance.now() - t0)];
    };

    if (parts.has('whole')) {
      // The whole 16-pair run through one batch call.
      const [created, createMs] = await timed(() => create(null));
      const id = created.session_id;
      const [, startMs] = await timed(() => request('POST', `/backtest/${id}/start`, undefined, auth));
      await buyBtcAndEth(id);
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
      out.whole_run = whole;
    }

    if (parts.has('grid')) out.grid_run = await gridRun();

    /** The whole run with a grid strategy refilled after every batch (see the file's docstring). */
    async function gridRun() {
      const { pairs } = await request('GET', '/market/pairs');
      const stepOf = new Map<string, number>(
        pairs.map((p: { symbol: string; step_size: string }) => [p.symbol, Number(p.step_size)]),
      );
      const quantity = (symbol: string, usdt: number, price: number) => {
        const step = stepOf.get(symbol)!;
        const places = Math.max(0, Math.round(-Math.log10(step)));
        return (Math.floor(usdt / price / step) * step).toFixed(places);
      };
      const cpu = await cpuMeter(postgresServer, scratch?.name, worker?.pid);
      const threadsBefore = threadCpuMs();
      statementCounter.start();
      const t0 = performance.now();
      const created = await create(null, '1000000');
      const id = created.session_id;
      await request('POST', `/backtest/${id}/start`, undefined, auth);
      const { prices } = await request('GET', `/backtest/${id}/market/prices`, undefined, auth);
      let calls = 3;
      let placed = 0;
      let fills = 0;
      const fillsPerOrder = new Map<string, number>();
      let placeMs = 0;
      let batchMs = 0;
      /** The first batch call: where a cold venue starts its step worker threads unless they were started before. */
      let firstBatchMs: number | undefined;
      /** Server-Timing sums (ms) of the placements and of the batch calls. */
      const placeServer: Record<string, number> = {};
      const batchServer: Record<string, number> = {};
      const place = async (order: Record<string, string>) => {
        calls++;
        placed++;
        const t1 = performance.now();
        await request('POST', `/backtest/${id}/trade/order`, order, auth);
        placeMs += performance.now() - t1;
        addTimings(placeServer);
      };
      for (const [symbol, p] of Object.entries(prices as Record<string, string>)) {
        const price = Number(p);
        await place({ symbol, side: 'buy', type: 'market', quantity: quantity(symbol, 20_000, price) });
        for (const [side, factor] of [
          ['buy', 0.98],
          ['sell', 1.02],
        ] as const) {
          const order = { symbol, side, type: 'limit', quantity: quantity(symbol, 2000, price) };
          await place({ ...order, price: (price * factor).toPrecision(6) });
        }
      }
      let last: { step: number; is_complete: boolean; orders_filled: Record<string, string>[] };
      do {
        calls++;
        const t1 = performance.now();
        last = await request('POST', `/backtest/${id}/step/batch`, { steps: options.gridBatch }, auth);
        batchMs += performance.now() - t1;
        firstBatchMs ??= performance.now() - t1;
        addTimings(batchServer);
        for (const f of last.orders_filled) {
          if (f.type === 'market') continue;
          fills++;
          fillsPerOrder.set(f.order_id!, (fillsPerOrder.get(f.order_id!) ?? 0) + 1);
          if (last.is_complete) continue;
          const price = Number(f.executed_price);
          const side = f.side === 'buy' ? 'sell' : 'buy';
          await place({
            symbol: f.symbol!,
            side,
            type: 'limit',
            quantity: f.quantity!,
            price: (side === 'sell' ? price * 1.02 : price * 0.98).toPrecision(6),
          });
        }
      } while (!last.is_complete);
      calls++;
      const res = await request('GET', `/backtest/${id}/results`, undefined, auth);
      const totalMs = performance.now() - t0;
      const statements = statementCounter.stop();
      const { totals } = await cpu(1);
      const threads = [...threadCpuMs()]
        .map(([k, v]) => [k, v - (threadsBefore.get(k) ?? 0)] as const)
        .filter(([, v]) => v > 0)
        .sort((a, b) => b[1] - a[1]);
      const ms = (sums: Record<string, number>) =>
        Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, round(v)]));
      const grid = {
        pairs: created.estimated_pairs,
        fill_model: created.fill_model ?? null,
        grid_batch: options.gridBatch,
        steps: last.step,
        http_calls: calls,
        orders_placed: placed,
        limit_fills: fills,
        /** Orders filled in several parts (the realistic model's participation share). */
        orders_filled_in_parts: [...fillsPerOrder.values()].filter((n) => n > 1).length,
        total_ms: round(totalMs),
        /** Of which in the `step/batch` calls, and in the order placements. */
        batch_calls_ms: round(batchMs),
        first_batch_ms: round(firstBatchMs ?? 0),
        placements_ms: round(placeMs),
        /** `Server-Timing` sums (ms): of the placements, of the batch calls. */
        placements_server_ms: ms(placeServer),
        batch_calls_server_ms: ms(batchServer),
        /**
         * CPU (ms) of the run: this process — the venue, its step worker threads and the bench's HTTP client — and
         * the scratch database's PostgreSQL backends. Comparable on a busy machine, where `total_ms` is not.
         */
        cpu_process_ms: totals.node_ms,
        load_average_after: os.loadavg().map((l) => round(l)),
        cpu_postgres_ms: totals.postgres_ms,
        /** Statements this process sent to the database during the run (appends, projections, rate limits). */
        statements,
        /**
         * CPU (ms) of this process's threads that used any: `main` (requests, projections, the client), and the others
         * by thread id − process id (the first few: V8's platform threads — concurrent GC and compilation — then the
         * libuv pool and the worker threads, step and metrics).
         */
        cpu_threads_ms: Object.fromEntries(threads),
        final_equity: res.summary.final_equity,
        total_trades: res.summary.total_trades,
      };
      console.log('grid run', grid);
      return grid;
    }

    if (parts.has('batches')) {
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
      out.batches = batches;
    }

    /** Single steps: two clients alternating, where the time goes, then without the background work. */
    async function singleSteps() {
      const id = (await create(null)).session_id;
      await request('POST', `/backtest/${id}/start`, undefined, auth);
      await buyBtcAndEth(id);
      const port = Number(new URL(address).port);
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const viaHttp = () =>
        new Promise<void>((resolve, reject) => {
          const req = http.request(
            {
              host: '127.0.0.1',
              port,
              method: 'POST',
              path: `/api/v1/backtest/${id}/step`,
              headers: auth,
              agent,
            },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () => {
                if ((res.statusCode ?? 500) >= 300) reject(new Error(Buffer.concat(chunks).toString()));
                else resolve(JSON.parse(Buffer.concat(chunks).toString()));
              });
            },
          );
          req.on('error', reject);
          req.end();
        });
      const viaFetch = () => request('POST', `/backtest/${id}/step`, undefined, auth);

      // Where a call's time goes, seen from the server: request arrival → command start (routing, rate limit,
      // authentication), the command (decision and durable append), command end → response written.
      const marks = { arrive: 0, commandStart: 0, commandEnd: 0, written: 0 };
      let tracing = false;
      app.server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
        if (!tracing) return;
        marks.arrive = performance.now();
        res.once('finish', () => {
          marks.written = performance.now();
        });
      });
      const commands = runtime.services.backtest!.commands;
      const step = commands.step;
      commands.step = async (...args) => {
        marks.commandStart = performance.now();
        try {
          return await step(...args);
        } finally {
          marks.commandEnd = performance.now();
        }
      };

      const measure = async (clients: Record<string, () => Promise<unknown>>, steps: number) => {
        const latencies: Record<string, number[]> = {};
        const phases = {
          before_command: [] as number[],
          command: [] as number[],
          after_command: [] as number[],
        };
        const outside: number[] = [];
        for (const name of Object.keys(clients)) latencies[name] = [];
        const delay = monitorEventLoopDelay({ resolution: 1 });
        const cpu = await cpuMeter(postgresServer, scratch?.name, worker?.pid);
        const clientList = Object.entries(clients);
        delay.enable();
        statementCounter.start();
        tracing = true;
        for (let i = 0; i < steps; i++) {
          const [name, call] = clientList[Math.floor(i / 100) % clientList.length]!;
          const t0 = performance.now();
          await call();
          const total = performance.now() - t0;
          latencies[name]!.push(total);
          phases.before_command.push(marks.commandStart - marks.arrive);
          phases.command.push(marks.commandEnd - marks.commandStart);
          phases.after_command.push(marks.written - marks.commandEnd);
          outside.push(total - (marks.written - marks.arrive));
        }
        tracing = false;
        const statements = statementCounter.stop();
        delay.disable();
        const usage = await cpu(steps);
        return {
          steps,
          ...Object.fromEntries(Object.entries(latencies).map(([k, v]) => [k, summary(v)])),
          p50_ms_by_phase: {
            ...Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, summary(v).p50_ms])),
            client_and_loopback: summary(outside).p50_ms,
          },
          ...usage,
          statements_per_step: round(statements / steps, 2),
          event_loop_delay_ms: {
            p50: round(delay.percentile(50) / 1e6, 2),
            p99: round(delay.percentile(99) / 1e6, 2),
            max: round(delay.max / 1e6, 2),
          },
        };
      };

      for (let i = 0; i < 50; i++) await (i % 2 ? viaHttp() : viaFetch());
      const single: Record<string, unknown> = {
        pairs: 16,
        positions: 2,
        load_average_before: os.loadavg().map((l) => round(l)),
        ...(await measure({ http: viaHttp, fetch: viaFetch }, options.steps)),
      };
      console.log('single steps', JSON.stringify(single));
      if (options.breakdown && worker) {
        await stopWorker(worker);
        worker = undefined;
        const noBackground = await measure({ http: viaHttp }, options.breakdownSteps);
        console.log('single steps, worker stopped', JSON.stringify(noBackground));
        single.without_background = { worker_stopped: noBackground };
      } else if (options.breakdown) {
        // The same client as the rows below, everything running: the baseline they are compared with (the
        // alternating run above also pays for `fetch`, so its CPU per step is not comparable).
        const everything = await measure({ http: viaHttp }, options.breakdownSteps);
        console.log('single steps, node:http only, everything running', JSON.stringify(everything));
        await runtime.services.trading?.stop();
        const noMatching = await measure({ http: viaHttp }, options.breakdownSteps);
        console.log('single steps, matching engine stopped', JSON.stringify(noMatching));
        await runtime.services.projections.stop();
        const noBackground = await measure({ http: viaHttp }, options.breakdownSteps);
        console.log('single steps, projections and matching engine stopped', JSON.stringify(noBackground));
        single.without_background = {
          everything_running: everything,
          matching_engine_stopped: noMatching,
          projections_and_matching_engine_stopped: noBackground,
        };
      }
      single.load_average_after = os.loadavg().map((l) => round(l));
      agent.destroy();
      return single;
    }

    if (parts.has('single')) out.single_step = await singleSteps();
  } finally {
    await app.close();
    await stopWorker(worker);
    await runtime.close();
    await scratch?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
};

if (!options.skipInProcess) inProcess();
if (!options.skipHttp) await throughHttp();
if (options.json) fs.writeFileSync(options.json, `${JSON.stringify(results, null, 2)}\n`);
