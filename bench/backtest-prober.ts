/**
 * Backtests beside live trading (issue 24 item 4): does a whole-range backtest batch stall the live venue?
 *
 * The venue runs as `npm start` does (`src/main.ts`: API, projections, matching engine in one process), in a
 * child process on its own port, on a scratch database of the PostgreSQL server named by `--postgres` or
 * `DATABASE_URL` (`h_str_prober_*`, dropped at the end; else embedded PGlite in a temporary directory), on the real
 * market data (`MARKET_DATA_DIR`, the 16 hourly pairs). A prober in its own process (bench/prober-process.ts: a
 * separate client, whose timers and reads this bench's batch driving cannot delay), open loop, sends every `--every`
 * ms (20 by default) one request, in turn a `GET /market/price/BTCUSDT` and a market order (`POST /trade/order`,
 * 0.001 BTC, buys and sells alternating), round-robin over `--agents` agents' keys (under the per-caller rate
 * limits), each timed from when it was due (no coordinated omission). Three phases, `--seconds` each or until their batches end:
 *   - `idle`: the prober alone;
 *   - `1 batch`: one user's whole-range `step/batch` (16 pairs, 2021-04-05 → 2023-12-30, 23,976 hourly steps);
 *   - `4 batches`: four users' at once.
 * Reported per phase: the prober's latency (p50/p90/p99/max) of prices and of orders, statuses, the batches' wall
 * time, the venue's peak RSS (sampled every 100 ms from /proc) and its event loop's stalls (measured inside the
 * venue by `bench/loop-stalls.mjs`: each lateness ≥ 10 ms of a 5 ms timer, count, total and max; less dependent on
 * the machine's load than the latencies). Run it twice for an A/B at the same load:
 *
 *   BACKTEST_THREADS=0 DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres MARKET_DATA_DIR=../shared/market-data \
 *     npx tsx bench/backtest-prober.ts --port 8510 --json bench/results/backtest-prober-threads0.json
 *   BACKTEST_THREADS=1 … npx tsx bench/backtest-prober.ts --port 8511 --json bench/results/backtest-prober-threads1.json
 *
 * `BACKTEST_THREADS=0` decides batches on the request thread (the venue before issue 24 item 4); 1 on a worker
 * thread. Results: `docs/benchmarks.md` ("Backtests beside live trading").
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { Agent } from 'undici';
import { positiveInt } from './options';
import { statusesBetween } from './prober';
import { startProberProcess } from './prober-process';
import { createScratchDatabase } from './stats';
import { venueClient } from './venue-client';

const options = new Command()
  .option('--port <n>', 'port of the venue', positiveInt, 8510)
  .option('--every <ms>', 'prober period (ms): a price read and a market order in turn', positiveInt, 20)
  .option('--agents <n>', 'agents the prober rotates over (rate limits are per caller)', positiveInt, 24)
  .option('--seconds <n>', 'length of the idle phase and minimum of the others', positiveInt, 10)
  .option('--phases <list>', 'batches at once per phase, comma-separated (0 = idle)', '0,1,4')
  .option('--postgres <url>', 'PostgreSQL server for the scratch database (default: DATABASE_URL)')
  .option('--pglite', 'embedded PGlite even when DATABASE_URL is set')
  .option('--json <file>', 'also write the results as JSON')
  .option('--db-prefix <name>', 'prefix of the scratch database name', 'h_str_prober')
  .parse()
  .opts<{
    port: number;
    every: number;
    agents: number;
    seconds: number;
    phases: string;
    postgres?: string;
    pglite?: boolean;
    json?: string;
    dbPrefix: string;
  }>();

const DATA = path.resolve(process.env.MARKET_DATA_DIR ?? '../shared/market-data');
const START = '2021-04-05T00:00:00Z';
const END = '2023-12-30T00:00:00Z';
const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50_ms: round(percentile(sorted, 50)),
    p90_ms: round(percentile(sorted, 90)),
    p99_ms: round(percentile(sorted, 99)),
    max_ms: round(sorted.at(-1) ?? Number.NaN),
  };
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const postgresServer = options.pglite ? undefined : options.postgres || process.env.DATABASE_URL || undefined;
const base = `http://127.0.0.1:${options.port}`;
const dispatcher = new Agent({ connections: 64, keepAliveTimeout: 30_000 });

const { call, ok } = venueClient(base, dispatcher);

/** Resident set size of a process (bytes), from /proc; 0 when unreadable. */
const rssOf = (pid: number): number => {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
};

const main = async () => {
  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    load_average_at_start: os.loadavg().map((l) => round(l)),
    backtest_threads: process.env.BACKTEST_THREADS ?? '(default)',
    every_ms: options.every,
  };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'h_str_prober-'));
  const scratch = postgresServer
    ? await createScratchDatabase(postgresServer, `${options.dbPrefix}_`)
    : undefined;
  results.database = scratch ? 'postgresql' : 'pglite';
  let venue: ChildProcess | undefined;
  // The venue's request-thread stalls (bench/loop-stalls.mjs), attributed to the phase they ended in.
  const stallsFile = path.join(dataDir, 'loop-stalls.csv');
  const stallsBetween = (from: number, to: number) => {
    const stalls = (fs.existsSync(stallsFile) ? fs.readFileSync(stallsFile, 'utf8') : '')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(',').map(Number) as [number, number])
      .filter(([at]) => at >= from && at < to)
      .map(([, ms]) => ms);
    return {
      count_ge_10ms: stalls.length,
      count_ge_100ms: stalls.filter((s) => s >= 100).length,
      total_ms: round(stalls.reduce((a, b) => a + b, 0)),
      max_ms: round(Math.max(0, ...stalls)),
    };
  };
  try {
    venue = spawn(
      process.execPath,
      ['--import', 'tsx', '--import', './bench/loop-stalls.mjs', 'src/main.ts'],
      {
        cwd: path.resolve(import.meta.dirname, '..'),
        env: {
          ...process.env,
          PORT: String(options.port),
          DATA_DIR: dataDir,
          MARKET_DATA_DIR: DATA,
          LOG_LEVEL: 'error',
          DATABASE_URL: scratch?.url ?? '',
          LOOP_STALLS_FILE: stallsFile,
        },
        stdio: ['ignore', 'inherit', 'inherit'],
      },
    );
    const pid = venue.pid!;
    for (let i = 0; ; i++) {
      const up = await call('GET', '/market/price/BTCUSDT').catch(() => undefined);
      if (up?.status === 200) break;
      if (i > 3000) throw new Error('the venue did not start in 600 s');
      await sleep(200);
    }
    const reg = await ok('POST', '/auth/register', { display_name: 'prober' });
    const login = await ok('POST', '/auth/login', { api_key: reg.api_key, api_secret: reg.api_secret });
    const auth = { authorization: `Bearer ${login.token}` };
    const keys: string[] = [];
    for (let i = 0; i < options.agents; i++) {
      const a = await ok('POST', '/agents', { display_name: `probe ${i}` }, auth);
      keys.push(a.api_key as string);
    }
    // Backtest users: one account and agent each.
    const users: { auth: Record<string, string>; agent: string }[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await ok('POST', '/auth/register', { display_name: `backtester ${i}` });
      const l = await ok('POST', '/auth/login', { api_key: r.api_key, api_secret: r.api_secret });
      const h = { authorization: `Bearer ${l.token}` };
      const a = await ok('POST', '/agents', { display_name: `bt ${i}` }, h);
      users.push({ auth: h, agent: a.agent_id as string });
    }

    // One prober process for every phase, split by its counts at each phase's start and end: a process per phase
    // began every phase with a cold module load, JIT and new connections (the first phase still does).
    const prober = await startProberProcess(base, keys, options.every);
    const phase = async (batches: number) => {
      let peakRss = rssOf(pid);
      const rssTimer = setInterval(() => {
        peakRss = Math.max(peakRss, rssOf(pid));
      }, 100);
      const from = await prober.mark();
      const t0 = performance.now();
      const wall0 = Date.now();
      const minimum = sleep(options.seconds * 1000);
      const runs = users.slice(0, batches).map(async (u) => {
        const created = await ok(
          'POST',
          '/backtest/create',
          {
            start_time: START,
            end_time: END,
            starting_balance: '100000',
            candle_interval: '1h',
            agent_id: u.agent,
            strategy_label: 'prober',
            pairs: null,
          },
          u.auth,
        );
        const id = created.session_id as string;
        await ok('POST', `/backtest/${id}/start`, undefined, u.auth);
        const tb = performance.now();
        const last = await ok('POST', `/backtest/${id}/step/batch`, { steps: 100_000 }, u.auth);
        return {
          steps: last.step as number,
          complete: last.is_complete as boolean,
          batch_ms: round(performance.now() - tb),
        };
      });
      const batchResults = await Promise.all(runs);
      await minimum;
      const to = await prober.mark();
      clearInterval(rssTimer);
      return {
        from,
        to,
        batches,
        seconds: round((performance.now() - t0) / 1000),
        batch_runs: batchResults,
        venue_peak_rss_mib: round(peakRss / 2 ** 20, 1),
        // Stalls of the venue's event loop during the phase (timer lateness ≥ 10 ms, measured in the venue).
        venue_loop_stalls: stallsBetween(wall0, Date.now() + 1),
        load_average: os.loadavg().map((l) => round(l)),
      };
    };

    const measured = [];
    for (const n of options.phases.split(',').map(Number)) measured.push(await phase(n));
    const { price, order } = await prober.stop();
    results.phases = measured.map(({ from, to, ...rest }) => {
      const out = {
        ...rest,
        price: summary(price.slice(from.price, to.price)),
        order: summary(order.slice(from.order, to.order)),
        statuses: statusesBetween(from.statuses, to.statuses),
      };
      console.log(JSON.stringify(out));
      return out;
    });
  } finally {
    if (venue && venue.exitCode === null) {
      const exited = new Promise((r) => venue!.once('exit', r));
      venue.kill('SIGTERM');
      await exited;
    }
    await dispatcher.close();
    await scratch?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  if (options.json) fs.writeFileSync(options.json, `${JSON.stringify(results, null, 2)}\n`);
};

await main();
