/**
 * Trading benchmark (issue "Done when"; ARCHITECTURE §8):
 *
 * (a) Market orders through HTTP with durable events and projections: the real server (`bench/trading-server.ts`,
 *     i.e. `createRuntime` + `buildApp`) on a fresh scratch database of the local PostgreSQL server
 *     (`ptv_bench_trading_*`, dropped at the end), `synchronous_commit` as configured. `--agents` agents (default
 *     64) each place market buys of 0.0002 BTC with their own API key over their own keep-alive connection.
 *     An order is answered once its events are durable and its owner's next request waits for the read models
 *     (`READ_YOUR_WRITES=on-read`, the default; `--read-your-writes on-response` answers after the projections
 *     have folded it). Three measured windows after `--warmup` seconds: closed loop (autocannon: each agent sends
 *     its next order when the last one is answered: the most the venue does); open loop at `--rate` orders/s
 *     spread evenly over time and agents (`bench/open-loop.ts`: latency from each order's due time, so no
 *     coordinated omission); and the same open loop while 8 probe agents each place an order and read their
 *     positions at once, checking that the read includes the order (read your writes under load). Each reports
 *     orders/s, p50/p90/p99/max latency, the server's own timing (`Server-Timing`) and CPU ms per order of the
 *     server, the PostgreSQL backends and the load generator (read from `/proc`; comparable across runs on a
 *     busy machine where throughput is not).
 * (b) The matching engine with `--pending` pending orders (default 100,000) over 10 symbols: time per tick of
 *     `MatchingEngine.onTick` (index lookup and fill dispatch; the fills themselves go to a stub that fills each
 *     order whole, as the `instant` model does), for ticks that reach nothing and for ticks that reach orders.
 *     `bench/matching.ts` measures the engine under the `realistic` model with real fills.
 *
 *   npx tsx bench/trading.ts [--agents 64] [--duration 15] [--warmup 3] [--rate 1000] [--pending 100000] [--json out.json]
 *
 * With `BENCH_COUNT_QUERIES=1` each window also reports the SQL statements the server sent per order, in total and by
 * text (`statements_per_order`), counted over that window alone.
 *
 * The JSON names the commit measured (and whether the working tree differed) and the load average at the start,
 * so alternating runs of two versions (A/B, e.g. in two `git worktree`s) can be told apart.
 *
 * Targets: ≥ 1,000 orders/s with p99 ≤ 50 ms; ≤ 1 ms per tick. Results: `docs/benchmarks.md` ("Trading").
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import pg from 'pg';
import { venueNodeOptions } from '../bin/node-flags.mjs';
import type { WalletCommands } from '../commands/wallet';
import { fromUnits } from '../domain/market/decimal';
import { dec } from '../domain/trading/decimal';
import { type AllSubscription, type EventStore, START } from '../ports/event-store';
import { indexedOrder } from '../src/matching/order-index';
import { type ListeningChild, spawnListening } from './listening-child';
import { openLoop } from './open-loop';
import { jsonOption, nonNegativeInt, positiveInt, withScratchDatabase, writeJsonResults } from './options';
import { benchEngine, PENDING_KINDS, seededRandom, timedTick, walkedPrice } from './pending-orders';
import { processCpuSeconds, round, summarize } from './stats';

const options = withScratchDatabase(new Command(), 'ptv_bench_trading_')
  .option('--agents <n>', 'concurrent agents placing orders', positiveInt, 64)
  .option('--duration <s>', 'measured seconds of the HTTP run', positiveInt, 15)
  .option('--warmup <s>', 'seconds before measuring', positiveInt, 3)
  .option(
    '--rate <n>',
    'also measure at this offered rate (orders/s over all agents; 0: skip)',
    nonNegativeInt,
    1000,
  )
  .option('--pending <n>', 'pending orders in the matching index', positiveInt, 100_000)
  .option('--ticks <n>', 'ticks measured on the matching engine', positiveInt, 20_000)
  .option('--skip-http', 'only the matching engine')
  .option('--skip-probe', 'skip the read-your-writes window')
  .option(
    '--read-your-writes <mode>',
    'READ_YOUR_WRITES of the server: on-read or on-response (default as configured)',
  )
  .option('--read-model-wait <ms>', 'READ_MODEL_WAIT_MS of the server (diagnostics; default as configured)')
  .addOption(jsonOption())
  .option(
    '--port <n>',
    "the server's port (0: any free one; a shared machine's helpers each have a range)",
    nonNegativeInt,
    0,
  )
  .parse()
  .opts<{
    agents: number;
    duration: number;
    warmup: number;
    pending: number;
    rate: number;
    ticks: number;
    url: string;
    dbPrefix: string;
    skipHttp?: boolean;
    readModelWait?: string;
    readYourWrites?: string;
    skipProbe?: boolean;
    json?: string;
    port: number;
  }>();

interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  statusCodeStats: Record<string, { count: number }>;
  latency: { average: number; p50: number; p90: number; p99: number; max: number; totalCount?: number };
}
const autocannon = createRequire(import.meta.url)('autocannon') as (
  options: Record<string, unknown>,
) => Promise<AutocannonResult>;

/** Probe agents and their pause between rounds (read your writes under load). */
const PROBE_AGENTS = 8;
const PROBE_PAUSE_MS = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const stats = (values: number[]) => summarize(values);

/**
 * CPU meter of a measured window: the server process, the PostgreSQL backends serving the scratch database (a
 * local server) and this load-generating process. Contention moves throughput a lot on a shared 2-core machine;
 * CPU time per order barely moves, so it is the figure to compare between versions.
 */
const cpuMeter = async (admin: pg.Client, database: string, serverPid: number) => {
  const backends = async () =>
    (
      await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [database])
    ).rows.map((r) => r.pid);
  const sum = (pids: number[]) => pids.reduce((a, pid) => a + (processCpuSeconds(pid) ?? 0), 0);
  const pids = await backends();
  const before = { server: processCpuSeconds(serverPid) ?? 0, pg: sum(pids), client: process.cpuUsage() };
  return async () => {
    // Backends that connected meanwhile started from zero; ones that left are not counted (pools keep theirs).
    const now = await backends();
    const fresh = now.filter((p) => !pids.includes(p));
    const client = process.cpuUsage(before.client);
    return {
      server_s: (processCpuSeconds(serverPid) ?? 0) - before.server,
      postgres_s: sum(now.filter((p) => pids.includes(p))) - before.pg + sum(fresh),
      load_generator_s: (client.user + client.system) / 1e6,
    };
  };
};

// ---------------------------------------------------------------------------------------------------------------
// (a) HTTP market orders

// Extra Node/V8 flags for experiments (e.g. `BENCH_NODE_FLAGS=--max-semi-space-size=16`, V8's default), recorded in
// the JSON; the server otherwise runs with the venue's own flags (bin/node-flags.mjs) in NODE_OPTIONS, as `ptv serve`
// and `npm start` do, unless these or NODE_OPTIONS set the same option.
const serverFlags = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
const serverNodeOptions = venueNodeOptions(process.env.NODE_OPTIONS, serverFlags);

const startServer = (databaseUrl: string, dataDir: string): Promise<ListeningChild> => {
  const profile = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
    : [];
  return spawnListening([...profile, ...serverFlags, '--import', 'tsx', 'bench/trading-server.ts'], {
    ...(serverNodeOptions ? { NODE_OPTIONS: serverNodeOptions } : {}),
    HOST: '127.0.0.1',
    PORT: String(options.port),
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    MARKET_SOURCE: 'synthetic',
    MARKET_SYMBOLS: 'BTCUSDT',
    MARKET_DATA_DIR: '',
    LOG_LEVEL: 'warn',
    ...(options.readModelWait !== undefined ? { READ_MODEL_WAIT_MS: options.readModelWait } : {}),
    ...(options.readYourWrites !== undefined ? { READ_YOUR_WRITES: options.readYourWrites } : {}),
  });
};

const http = async (url: string, method: string, headers: Record<string, string>, body?: unknown) => {
  const res = await fetch(url, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
};

const httpBenchmark = async () => {
  const name = `${options.dbPrefix}${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: options.url });
  await admin.connect();
  const version = (await admin.query('show server_version')).rows[0].server_version as string;
  const syncCommit = (await admin.query('show synchronous_commit')).rows[0].synchronous_commit as string;
  await admin.query(`create database ${name}`);
  const dbUrl = new URL(options.url);
  dbUrl.pathname = `/${name}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-bench-trading-'));
  let server: ListeningChild | undefined;
  try {
    server = await startServer(dbUrl.toString(), dataDir);
    const api = `${server.url}/api/v1`;
    for (let i = 0; ; i++) {
      if ((await fetch(`${api}/market/price/BTCUSDT`)).status === 200) break;
      if (i > 100) throw new Error('no BTCUSDT price');
      await sleep(200);
    }
    const reg = await http(`${api}/auth/register`, 'POST', {}, { display_name: 'bench' });
    let login = await http(
      `${api}/auth/login`,
      'POST',
      {},
      { api_key: reg.body.api_key, api_secret: reg.body.api_secret },
    );
    for (let i = 0; login.status !== 200 && i < 50; i++) {
      await sleep(100); // with --read-model-wait 0 the account may not be readable yet
      login = await http(
        `${api}/auth/login`,
        'POST',
        {},
        { api_key: reg.body.api_key, api_secret: reg.body.api_secret },
      );
    }
    const jwt = { authorization: `Bearer ${login.body.token}` };
    const keys: string[] = [];
    for (let i = 0; i < options.agents; i++) {
      const agent = await http(`${api}/agents`, 'POST', jwt, {
        display_name: `bench-${i}`,
        starting_balance: '1000000',
      });
      if (agent.status !== 201) throw new Error(`agent: ${agent.status} ${JSON.stringify(agent.body)}`);
      keys.push(agent.body.api_key);
    }
    // Probe agents (read your writes under load): each places an order and at once reads its positions.
    const probeKeys: string[] = [];
    for (let i = 0; i < PROBE_AGENTS; i++) {
      const agent = await http(`${api}/agents`, 'POST', jwt, {
        display_name: `probe-${i}`,
        starting_balance: '1000000',
      });
      if (agent.status !== 201) throw new Error(`agent: ${agent.status} ${JSON.stringify(agent.body)}`);
      probeKeys.push(agent.body.api_key);
    }
    await sleep(500); // the agents' keys must be in the read models
    // autocannon, one connection per agent and one order in flight each: its HTTP client costs a fraction of
    // `fetch`'s CPU, and this machine's two cores are shared by the load generator, the server and PostgreSQL.
    // Each request gets a unique `X-Bench-Client` (`idReplacement`) so the per-credential order limit (100/min)
    // does not apply to the benchmark (bench/trading-server.ts keys rate limits by that header).
    let next = 0;
    let stale = 0;
    // The server's own account of each order (`Server-Timing`: handler, command, read-models), in ms.
    let timings = new Map<string, number[]>();
    const body = JSON.stringify({ symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.0002' });
    const observe = (headers: Record<string, string | string[] | undefined>) => {
      if (headers['x-read-model-stale']) stale++;
      for (const part of String(headers['server-timing'] ?? '').split(',')) {
        const m = /^\s*([\w-]+);dur=([\d.]+)/.exec(part);
        if (!m) continue;
        const list = timings.get(m[1]!) ?? [];
        list.push(Number(m[2]));
        timings.set(m[1]!, list);
      }
    };
    /** Closed loop: each agent sends its next order as soon as the last one is answered (autocannon). */
    const closedLoopRun = (seconds: number) =>
      autocannon({
        url: `${api}/trade/order`,
        connections: keys.length,
        duration: seconds,
        idReplacement: true,
        method: 'POST',
        body,
        setupClient: (client: { setHeaders: (h: Record<string, string>) => void }) => {
          client.setHeaders({
            'content-type': 'application/json',
            'x-api-key': keys[next++ % keys.length]!,
            'x-bench-client': '[<id>]',
          });
        },
        requests: [
          {
            onResponse: (
              _status: number,
              _body: string,
              _context: unknown,
              headers: Record<string, string>,
            ) => observe(headers),
          },
        ],
      });
    await closedLoopRun(options.warmup);
    /** The counts and raw latencies of one window, whichever generator ran it. */
    interface Window {
      seconds: number;
      statuses: Map<number, number>;
      latency: { mean: number; p50: number; p90: number; p99: number; max: number };
      errors: number;
      timeouts: number;
      sendLagMs?: { p99: number; max: number };
    }
    const closedLoopWindow = async (): Promise<Window> => {
      const result = await closedLoopRun(options.duration);
      return {
        seconds: result.duration,
        statuses: new Map(
          Object.entries(result.statusCodeStats).map(([code, v]) => [Number(code), v.count] as const),
        ),
        latency: {
          mean: round(result.latency.average, 3),
          p50: result.latency.p50,
          p90: result.latency.p90,
          p99: result.latency.p99,
          max: result.latency.max,
        },
        errors: result.errors,
        timeouts: result.timeouts,
      };
    };
    /** Open loop: `rate` orders/s spread evenly over time and agents (bench/open-loop.ts). */
    const openLoopWindow = async (rate: number): Promise<Window> => {
      const origin = new URL(api).origin;
      const result = await openLoop({
        origin,
        path: '/api/v1/trade/order',
        method: 'POST',
        agents: keys.map((key) => ({ headers: { 'content-type': 'application/json', 'x-api-key': key } })),
        rate,
        seconds: options.duration,
        body,
        requestHeaders: (i) => ({ 'x-bench-client': `open-${i}` }),
        onResponse: (_status, headers) => observe(headers),
      });
      const s = stats(result.latenciesMs);
      return {
        seconds: result.seconds,
        statuses: result.statuses,
        latency: { mean: s.mean, p50: s.p50, p90: s.p90, p99: s.p99, max: s.max },
        errors: result.errors,
        timeouts: 0,
        sendLagMs: { p99: round(result.sendLagMs.p99, 3), max: round(result.sendLagMs.max, 3) },
      };
    };
    /**
     * With `BENCH_COUNT_QUERIES` set: the statements the server sent since the last call, by text (it prints them on
     * SIGUSR2, see bench/trading-server.ts); undefined otherwise.
     */
    const statementCounts = async (): Promise<[string, number][] | undefined> => {
      if (!process.env.BENCH_COUNT_QUERIES) return undefined;
      const child = server!.child;
      const counted = new Promise<[string, number][]>((resolve) => {
        let buffer = '';
        const onData = (chunk: Buffer) => {
          buffer += String(chunk);
          // Whole lines only: a long line (many statement texts) may come in several chunks.
          const line = buffer
            .split('\n')
            .slice(0, -1)
            .find((l) => l.startsWith('{"statements"'));
          if (!line) return;
          child.stdout!.off('data', onData);
          resolve((JSON.parse(line) as { statements: [string, number][] }).statements);
        };
        child.stdout!.on('data', onData);
      });
      child.kill('SIGUSR2');
      return counted;
    };
    /** Statements per order of a window, in total and by text (the 20 most frequent). */
    const perOrder = (counts: [string, number][], orders: number) => ({
      total: round(counts.reduce((a, [, n]) => a + n, 0) / Math.max(1, orders), 3),
      by_text: counts.slice(0, 20).map(([text, n]) => [round(n / Math.max(1, orders), 3), text] as const),
    });
    /** One measured window: closed loop (as fast as answers come) or open loop at an offered rate. */
    const measure = async (rate?: number) => {
      stale = 0;
      timings = new Map();
      await statementCounts();
      const cpu = await cpuMeter(admin, name, server!.child.pid!);
      const result = rate ? await openLoopWindow(rate) : await closedLoopWindow();
      const used = await cpu();
      const statements = await statementCounts();
      const seconds = result.seconds;
      const statuses = result.statuses;
      const count = [...statuses.values()].reduce((a, b) => a + b, 0);
      const ok = statuses.get(201) ?? 0;
      return {
        offered_rate: rate ?? 'closed loop (one order in flight per agent)',
        seconds: round(seconds),
        orders: count,
        filled: ok,
        orders_per_second: round(count / seconds, 1),
        filled_per_second: round(ok / seconds, 1),
        statuses: Object.fromEntries(statuses),
        read_model_stale: stale,
        latency_ms: result.latency,
        ...(result.sendLagMs ? { generator_send_lag_ms: result.sendLagMs } : {}),
        server_timing_ms: Object.fromEntries(
          [...timings].map(([metric, values]) => [metric, stats(values)] as const),
        ),
        errors: result.errors,
        timeouts: result.timeouts,
        cpu_ms_per_order: {
          server: round((used.server_s * 1000) / Math.max(1, count), 3),
          postgres: round((used.postgres_s * 1000) / Math.max(1, count), 3),
          load_generator: round((used.load_generator_s * 1000) / Math.max(1, count), 3),
        },
        load_average_1m: round(os.loadavg()[0]!, 2),
        ...(statements ? { statements_per_order: perOrder(statements, count) } : {}),
      };
    };
    /**
     * Read your writes under load: while the open loop runs at `rate`, each probe agent places a market buy,
     * reads `GET /account/positions` as soon as it is answered, checks that the position includes every buy
     * so far, and pauses `PROBE_PAUSE_MS`. A read that misses its own order counts as stale.
     */
    const probe = async (rate: number) => {
      let stopAt = Number.POSITIVE_INFINITY;
      const orderMs: number[] = [];
      const readMs: number[] = [];
      const waits: number[] = [];
      let stale = 0;
      let failed = 0;
      let id = 0;
      const loops = probeKeys.map(async (key) => {
        const headers = { 'x-api-key': key };
        let bought = dec(0);
        while (performance.now() < stopAt) {
          const t0 = performance.now();
          const placed = await http(
            `${api}/trade/order`,
            'POST',
            { ...headers, 'x-bench-client': `p${id++}` },
            {
              symbol: 'BTCUSDT',
              side: 'buy',
              type: 'market',
              quantity: '0.0002',
            },
          );
          const t1 = performance.now();
          if (placed.status !== 201) {
            failed++;
            continue;
          }
          bought = bought.plus('0.0002');
          const read = await http(`${api}/account/positions`, 'GET', {
            ...headers,
            'x-bench-client': `p${id++}`,
          });
          const t2 = performance.now();
          orderMs.push(t1 - t0);
          readMs.push(t2 - t1);
          const wait = /own-writes;dur=([\d.]+)/.exec(read.headers.get('server-timing') ?? '');
          waits.push(wait ? Number(wait[1]) : 0);
          const btc = (read.body.positions as { symbol: string; quantity: string }[]).find(
            (p) => p.symbol === 'BTCUSDT',
          );
          if (read.status !== 200 || !btc || !dec(btc.quantity).eq(bought)) stale++;
          await sleep(PROBE_PAUSE_MS);
        }
      });
      const load = measure(rate);
      const measured = await load;
      stopAt = 0;
      await Promise.all(loops);
      return {
        load: measured,
        probe: {
          agents: probeKeys.length,
          rounds: readMs.length,
          failed_orders: failed,
          stale_reads: stale,
          order_latency_ms: stats(orderMs),
          read_latency_ms: stats(readMs),
          read_waited_for_own_writes_ms: stats(waits),
        },
      };
    };
    const closedLoop = await measure();
    const atRate = options.rate > 0 ? await measure(options.rate) : undefined;
    const readYourWrites = options.rate > 0 && !options.skipProbe ? await probe(options.rate) : undefined;
    const health = (await (await fetch(`${server.url}/health`)).json()) as any;
    return {
      agents: options.agents,
      machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model },
      server_node_flags: process.env.BENCH_NODE_FLAGS ?? '',
      server_node_options: serverNodeOptions ?? process.env.NODE_OPTIONS ?? '',
      read_your_writes: options.readYourWrites ?? 'on-read (default)',
      postgres: {
        version,
        synchronous_commit: syncCommit,
        url: dbUrl.toString().replace(/\/\/[^@]*@/, '//'),
      },
      closed_loop: closedLoop,
      ...(atRate ? { at_rate: atRate } : {}),
      ...(readYourWrites ? { read_your_writes_under_load: readYourWrites } : {}),
      projections: health.projections?.map((p: any) => ({ name: p.name, lag: p.lag_events, state: p.state })),
    };
  } finally {
    if (server) {
      const exited = new Promise((r) => server!.child.once('exit', r));
      server.child.kill('SIGTERM');
      await Promise.race([exited, sleep(15_000)]);
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
};

// ---------------------------------------------------------------------------------------------------------------
// (b) Matching engine

const matchingBenchmark = async () => {
  // A store with an empty log (the index is filled directly) and a leader that always leads.
  let end: (() => void) | undefined;
  const closed = new Promise<IteratorResult<never>>((resolve) => {
    end = () => resolve({ done: true, value: undefined });
  });
  const idleSubscription = {
    close: async () => end?.(),
    [Symbol.asyncIterator]: () => ({ next: () => closed }),
  } as unknown as AllSubscription;
  const store = {
    headPosition: async () => START,
    subscribeToAll: () => idleSubscription,
  } as unknown as EventStore;
  let fills = 0;
  const wallets = {
    fill: async () => {
      fills++;
      // Filled whole (the instant model): out of the index. (The stub's empty state made every fill throw, so
      // every reached order went back into the index and was reached again on every tick: at 100,000 pending
      // orders the run never ended. bench/matching.ts measures the realistic model with real fills.)
      return { ownerId: '', events: [{ type: 'OrderFilled' }], state: { openOrders: {} } } as never;
    },
  } as unknown as WalletCommands;
  const engine = benchEngine(store, wallets);
  await engine.start();
  const symbols = Array.from({ length: 10 }, (_, i) => `SYM${i}USDT`);
  const base = 100 * 1e8; // 100 USDT in units
  // Deterministic levels: ±5% around 100, every side and type.
  const rand = seededRandom();
  const memBefore = process.memoryUsage().heapUsed;
  const tBuild = performance.now();
  for (let i = 0; i < options.pending; i++) {
    const [side, type, sign] = PENDING_KINDS[i % PENDING_KINDS.length]!;
    // Orders away from the price in the direction they wait for: 0.5%–5% away.
    const level = Math.round(base * (1 + sign * (0.005 + rand() * 0.045)));
    engine.index.add(
      indexedOrder({
        orderId: `o${i}`,
        ownerId: `w${i % 1000}`,
        symbol: symbols[i % symbols.length]!,
        side,
        type,
        level: fromUnits(level),
      }),
    );
  }
  const buildMs = performance.now() - tBuild;
  const heapMb = (process.memoryUsage().heapUsed - memBefore) / 2 ** 20;
  const quiet: number[] = [];
  const active: number[] = [];
  const prices = new Map(symbols.map((s) => [s, base]));
  let reachedTotal = 0;
  for (let i = 0; i < options.ticks; i++) {
    const symbol = symbols[i % symbols.length]!;
    const next = walkedPrice(prices.get(symbol)!, i, options.ticks, rand);
    prices.set(symbol, next);
    reachedTotal += timedTick(engine, symbol, next, { quiet, active });
  }
  await engine.idle();
  await engine.stop();
  return {
    pending_orders: options.pending,
    symbols: symbols.length,
    build_ms: round(buildMs, 1),
    heap_mb: round(heapMb, 1),
    ticks: options.ticks,
    reached: reachedTotal,
    fills_dispatched: fills,
    left_pending: engine.index.size,
    tick_ms_no_fill: stats(quiet),
    tick_ms_with_fills: stats(active),
    tick_ms_all: stats([...quiet, ...active]),
  };
};

/** The commit measured and whether the working tree differed from it (A/B runs compare versions). */
const codeVersion = () => {
  const git = (...args: string[]) =>
    spawnSync('git', args, { cwd: path.resolve(import.meta.dirname, '..'), encoding: 'utf8' }).stdout?.trim();
  return {
    commit: git('rev-parse', '--short', 'HEAD') || 'unknown',
    dirty: Boolean(git('status', '--porcelain')),
  };
};

const machine = {
  code: codeVersion(),
  /** The machine's load when the run started (the other windows report theirs at their end). */
  load_average_1m_at_start: round(os.loadavg()[0]!, 2),
  cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}`,
  memory_gb: round(os.totalmem() / 2 ** 30, 1),
  node: process.version,
  platform: `${os.platform()} ${os.release()}`,
  date: new Date().toISOString(),
};
const matching = await matchingBenchmark();
console.log('matching engine:', JSON.stringify(matching, null, 2));
const orders = options.skipHttp ? undefined : await httpBenchmark();
if (orders) console.log('market orders over HTTP:', JSON.stringify(orders, null, 2));
const result = { machine, options, orders, matching };
writeJsonResults(options.json, result);
process.exit(0);
