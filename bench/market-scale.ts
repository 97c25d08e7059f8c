/**
 * Market data at real scale (issue 24, "Done when"): for each N of `--pairs` (default 10, 25, 100) pairs × one
 * year of 1-minute candles (2022-01-01 → 2023-01-01; 100 pairs = 52.6 M candles), on generated data:
 *
 *   1. generate: `ptv generate-market-data --pairs N … --seed 42 --out DIR/gen-N` (kept between runs: a rerun
 *      into the same directory finds the files complete and writes nothing; the time says which it was);
 *   2. import: `ptv import-market-data DIR/gen-N` (the real CLI, in a child process) into a fresh store
 *      `DIR/store-N` and a fresh scratch database: wall time, candles/s, the importer's peak RSS, and the store's
 *      size on disk in bytes per 1-minute candle (every file under the store: month files of the 1m series and of
 *      the served 5m…1d series, and the manifest; target ≤ 30);
 *   3. serve: the venue as `npm start` runs it (`src/main.ts`, API + projections + matching engine in one process,
 *      with the venue's Node flags of bin/node-flags.mjs)
 *      on that store and database (`MARKET_SOURCE=files`, `MARKET_DATA_DIR` = the generated directory, whose
 *      start-up import finds every file already imported), in a child process on `--port`;
 *   4. reads: `--reads` × `GET /api/v1/market/candles/{symbol}?interval=1m&limit=1000&start_time=…`, one at a
 *      time, a random pair and a random minute of the year each (seeded), rotating over 24 agents' keys (the
 *      market group's limit is per caller): p50/p90/p99/max (target p99 ≤ 20 ms). Each answer is checked
 *      (status 200, first candle at or after start_time, 1,000 candles unless the year ends first);
 *   5. backtest: one `step/batch` backtest of all N pairs over the whole year (or to `--backtest-to`) at 1m through
 *      HTTP: create, start,
 *      one step, a market buy of BTCUSDT and of ETHUSDT (so every step values positions), then batches of the
 *      largest size the API takes (100,000 steps) to the end, then `results`: wall time of each part (target ≤ 60 s
 *      at 100 pairs for the whole run), the venue's CPU seconds, and its peak RSS sampled every 100 ms from /proc
 *      (target ≤ 2 GiB) beside the kernel's high-water mark (VmHWM, since the process started);
 *   6. concurrent (`--concurrent N`): N such backtests at once while a prober reads `/market/price` and places a
 *      market order every `--every` (20) ms in turn: the prober's p50/p99/max (target p99 ≤ 20 ms). The prober
 *      runs `--warmup` seconds uncounted, then `--alone` seconds alone (its figures without backtests), then beside
 *      them; it runs in its own process (`--prober-in process`, a separate client as an agent would be) unless
 *      `--prober-in bench` puts it in this one, beside the batches' driving. `--venue-renice helpers` sets every
 *      thread of the venue but its request thread to nice 19 once the venue is up and again before the backtests
 *      (V8's platform threads: both isolates' GC and compiler jobs; libuv's pool). `--stalls` preloads `bench/loop-stalls.mjs` into the venue and reports, per phase, the request
 *      thread's stalls (≥ 10 / 20 / 50 ms), how much of them it spent on a core and how much waiting for one, and
 *      its garbage collections; `--venue-flags` adds node flags to the venue, `--venue-log` keeps its stdout.
 *
 * The venue's database is a scratch database `h_bigdata_*` (`--db-prefix`) on the PostgreSQL server of `--postgres` or
 * `DATABASE_URL` (dropped at the end), else embedded PGlite in DIR/data-N. `--cpu-prof DIR` runs the venue with
 * `--cpu-prof` (one profile per thread, written at exit) for where the time goes. Prints one table and writes
 * every figure as JSON (`--json`). Generated data and stores are left in DIR for reruns unless `--clean`.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
 *     npx tsx bench/market-scale.ts --pairs 10,25,100 --dir /tmp/bigdata --port 8800 \
 *     --json bench/results/market-scale-<date>.json
 *
 * Results: `docs/benchmarks.md`, "Market data at scale (issue 24)".
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command, Option } from 'commander';
import { Agent } from 'undici';
import { venueNodeOptions } from '../bin/node-flags.mjs';
import { mulberry32 } from '../domain/market/random';
import { gcTraceSummary } from './gc-trace';
import { nonNegativeInt, positiveInt } from './options';
import { countsOf, startProber } from './prober';
import { startProberProcess } from './prober-process';
import { createScratchDatabase, processCpuSeconds, round, type ScratchDatabase, summarize } from './stats';
import { venueClient } from './venue-client';

const options = new Command()
  .option('--pairs <list>', 'pair counts, comma-separated', '10,25,100')
  .option('--dir <dir>', 'where generated files, stores and PGlite data go', '/tmp/bigdata')
  .option('--port <n>', 'port of the venue', positiveInt, 8800)
  .option('--reads <n>', 'candle range reads per pair count', positiveInt, 2000)
  .option('--from <date>', 'first day (UTC)', '2022-01-01')
  .option('--to <date>', 'end (UTC, exclusive)', '2023-01-01')
  .option('--seed <n>', 'generator seed', '42')
  .option('--skip <list>', 'parts to leave out: backtest, reads', '')
  .option('--backtest-to <date>', 'end of the backtest (UTC, exclusive; default --to): a shorter window', '')
  .option('--backtest-timeout <s>', 'give the backtest up after this many seconds', positiveInt, 900)
  .option('--postgres <url>', 'PostgreSQL server for the scratch database (default: DATABASE_URL)')
  .option('--pglite', 'embedded PGlite even when DATABASE_URL is set')
  .option(
    '--db-prefix <name>',
    'name prefix of the scratch database (the pair count and a random tail follow)',
    'h_bigdata_',
  )
  .option('--cpu-prof <dir>', 'run the venue with --cpu-prof, profiles into this directory')
  .option('--reuse-store', 'keep a store imported by an earlier run (the import is not measured again)')
  .option('--clean', 'delete the generated files and the store of each pair count after it')
  .option('--concurrent <n>', 'then N such backtests at once beside a prober (0: none)', positiveInt, 0)
  .option('--every <ms>', 'prober period (ms): a price read and a market order in turn', positiveInt, 20)
  .addOption(
    new Option('--prober-in <where>', "the prober's process: its own (a separate client) or this bench's")
      .choices(['process', 'bench'])
      .default('process'),
  )
  .option(
    '--warmup <s>',
    'seconds of the prober before its alone phase, not counted (JIT, first-use paths)',
    nonNegativeInt,
    0,
  )
  .option('--alone <s>', 'seconds of the prober alone before the backtests start', positiveInt, 1)
  .option(
    '--stalls',
    "record the venue's request-thread stalls (bench/loop-stalls.mjs) and summarize them by phase",
  )
  .addOption(
    new Option(
      '--venue-renice <which>',
      'threads of the venue set to nice 19: none, or all but the request thread',
    )
      .choices(['none', 'helpers'])
      .default('none'),
  )
  .option(
    '--venue-autogroup-nice <n>',
    "diagnostics: the venue's scheduling group (Linux autogroup, /proc/PID/autogroup) at this nice once it is up " +
      '(below 0 needs CAP_SYS_NICE): how much of the tail is CPU contention with other processes',
  )
  .option('--venue-flags <list>', 'extra node flags of the venue, comma-separated (e.g. --trace-gc)', '')
  .option(
    '--venue-log <file>',
    "the venue's stdout into this file (pino's log, --trace-gc lines) instead of ours",
  )
  .option('--json <file>', 'also write the results as JSON')
  .parse()
  .opts<{
    pairs: string;
    dir: string;
    port: number;
    reads: number;
    from: string;
    to: string;
    seed: string;
    skip: string;
    backtestTo: string;
    backtestTimeout: number;
    postgres?: string;
    pglite?: boolean;
    dbPrefix: string;
    cpuProf?: string;
    reuseStore?: boolean;
    clean?: boolean;
    concurrent: number;
    every: number;
    proberIn: 'process' | 'bench';
    warmup: number;
    alone: number;
    stalls?: boolean;
    venueRenice: 'none' | 'helpers';
    venueAutogroupNice?: string;
    venueFlags: string;
    venueLog?: string;
    json?: string;
  }>();

const ROOT = path.resolve(import.meta.dirname, '..');
const DIR = path.resolve(options.dir);
const FROM = Date.parse(`${options.from}T00:00:00Z`);
const TO = Date.parse(`${options.to}T00:00:00Z`);
const BACKTEST_TO = options.backtestTo ? Date.parse(`${options.backtestTo}T00:00:00Z`) : TO;
const MINUTE = 60_000;
const LIMIT = 1000;
const BATCH = 100_000;
const skip = new Set(options.skip.split(',').filter(Boolean));
const postgresServer = options.pglite ? undefined : options.postgres || process.env.DATABASE_URL || undefined;
const base = `http://127.0.0.1:${options.port}`;
const dispatcher = new Agent({
  connections: 16,
  keepAliveTimeout: 30_000,
  bodyTimeout: 0,
  headersTimeout: 0,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () => os.loadavg().map((l) => round(l, 2));
const mib = (bytes: number) => round(bytes / 2 ** 20, 1);

const { call, ok } = venueClient(base, dispatcher);

/**
 * Logs a just-registered account in. On PostgreSQL a new key may be invisible to the login's read for a moment
 * (the xid8 horizon is the whole server's: another database's open transaction holds it back), so a 401 is retried
 * for up to 10 s.
 */
const login = async (registered: Record<string, any>): Promise<Record<string, any>> => {
  const body = { api_key: registered.api_key, api_secret: registered.api_secret };
  for (let i = 0; ; i++) {
    const r = await call('POST', '/auth/login', body);
    if (r.status < 300) return r.json;
    if (r.status !== 401 || i >= 50)
      throw new Error(`POST /auth/login: ${r.status} ${JSON.stringify(r.json)}`);
    await sleep(200);
  }
};

/**
 * The venue's child processes (its stepping processes with `BACKTEST_STEPPING=process`), from /proc: their threads
 * count as the venue's in the thread sampler (a `child` field names the process), their RSS in its peak.
 */
const childrenOf = (pid: number): number[] => {
  try {
    return fs
      .readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .split(' ')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
};

/** Resident set size and its high-water mark of a process and its children (bytes), from /proc; 0 when unreadable. */
const memoryOf = (pid: number): { rss: number; hwm: number } => {
  const own = memoryOfOne(pid);
  for (const c of childrenOf(pid)) {
    const m = memoryOfOne(c);
    own.rss += m.rss;
    own.hwm += m.hwm;
  }
  return own;
};

const memoryOfOne = (pid: number): { rss: number; hwm: number } => {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch {
    return { rss: 0, hwm: 0 };
  }
};

/**
 * `--venue-renice helpers`: sets every thread of process `pid` but its main thread (the request thread) to nice 19
 * (Linux: a thread id is a valid `setpriority` target); answers how many it changed. A thread created later inherits
 * its creator's nice value.
 */
const reniceHelpers = (pid: number): number => {
  if (options.venueRenice === 'none') return 0;
  let changed = 0;
  for (const tid of fs.readdirSync(`/proc/${pid}/task`).map(Number)) {
    if (tid === pid) continue;
    try {
      if (os.getPriority(tid) !== 19) {
        os.setPriority(tid, 19);
        changed++;
      }
    } catch {
      // The thread ended between the listing and the call.
    }
  }
  return changed;
};

/**
 * `--venue-autogroup-nice N`: writes N to `/proc/PID/autogroup` (the scheduling group of the venue's session: Linux
 * weighs each session's group as one task, so every PostgreSQL backend, a session of its own, weighs as much as the
 * whole venue); answers what the file then says, or why it could not be set. Undefined without the option.
 */
const setAutogroupNice = (pid: number): string | undefined => {
  if (options.venueAutogroupNice === undefined) return undefined;
  try {
    fs.writeFileSync(`/proc/${pid}/autogroup`, options.venueAutogroupNice);
    return fs.readFileSync(`/proc/${pid}/autogroup`, 'utf8').trim();
  } catch (error) {
    return `not set: ${(error as Error).message}`;
  }
};

/** Samples a process's RSS every 100 ms until `stop()`, which answers the peak (bytes). */
const rssSampler = (pid: number) => {
  let peak = memoryOf(pid).rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, memoryOf(pid).rss);
  }, 100);
  return {
    peak: () => peak,
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, memoryOf(pid).rss);
    },
  };
};

/** Bytes of every file under `dir` (apparent sizes) and the count of files. */
const sizeOf = (dir: string): { bytes: number; files: number } => {
  let bytes = 0;
  let files = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    bytes += fs.statSync(path.join(entry.parentPath, entry.name)).size;
    files++;
  }
  return { bytes, files };
};

/** Runs `src/main.ts <args>` to its end; resolves to its wall time, output, peak RSS and CPU seconds. */
const runCli = async (args: string[], env: Record<string, string>) => {
  const t0 = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const sampler = rssSampler(child.pid!);
  let cpu = 0;
  const cpuTimer = setInterval(() => {
    cpu = processCpuSeconds(child.pid!) ?? cpu;
  }, 200);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(cpuTimer);
  const peak = sampler.stop();
  const seconds = (performance.now() - t0) / 1000;
  if (code !== 0) throw new Error(`ptv ${args.join(' ')} exited with ${code}:\n${out.slice(-3000)}`);
  return { seconds, out, peakRss: peak, cpuSeconds: cpu };
};

interface Venue {
  child: ChildProcess;
  pid: number;
  /** The NODE_OPTIONS it ran with ('' when none). */
  nodeOptions: string;
  stop(): Promise<void>;
}

/** `--venue-flags`: the venue's extra node flags, split once. */
const venueFlags = options.venueFlags.split(',').filter(Boolean);

/** The `--stalls` file of the pair count being measured (`end epoch ms,stall ms,on-core ms,run-queue ms` lines, bench/loop-stalls.mjs). */
let stallsFile: string | undefined;

/**
 * The venue's stdout when it runs with `--trace-gc-nvp` (`--venue-flags`) into `--venue-log`: the concurrent phase then
 * reports each isolate's collections per phase (`gc_by_isolate`, bench/gc-trace.ts).
 */
const gcTraceFile = (): string | undefined =>
  options.venueLog && venueFlags.includes('--trace-gc-nvp') ? options.venueLog : undefined;

/** The size of {@link gcTraceFile} now (a phase boundary), 0 without one. */
const gcTraceOffset = (): number => {
  const file = gcTraceFile();
  return file && fs.existsSync(file) ? fs.statSync(file).size : 0;
};

const startVenue = async (env: Record<string, string>): Promise<Venue> => {
  // The venue's own Node flags (bin/node-flags.mjs), as `npm start` runs it, unless --venue-flags or NODE_OPTIONS
  // set the same option.
  const nodeOptions = venueNodeOptions(process.env.NODE_OPTIONS, venueFlags);
  const execArgv = [
    ...(options.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(options.cpuProf)] : []),
    ...venueFlags,
    '--import',
    'tsx',
    ...(stallsFile ? ['--import', './bench/loop-stalls.mjs'] : []),
  ];
  const child = spawn(process.execPath, [...execArgv, 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...env,
      ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
      ...(stallsFile ? { LOOP_STALLS_FILE: stallsFile } : {}),
    },
    stdio: ['ignore', options.venueLog ? fs.openSync(options.venueLog, 'a') : 'inherit', 'inherit'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  for (let i = 0; ; i++) {
    const up = await call('GET', '/market/price/BTCUSDT').catch(() => undefined);
    if (up?.status === 200) break;
    if (child.exitCode !== null) throw new Error(`the venue exited with ${child.exitCode}`);
    if (i > 1500) throw new Error('the venue did not start in 300 s');
    await sleep(200);
  }
  return {
    child,
    pid: child.pid!,
    nodeOptions: nodeOptions ?? process.env.NODE_OPTIONS ?? '',
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
};

/**
 * The whole-year backtest of `symbols` through HTTP: create, start, one step, a market buy of BTCUSDT and of
 * ETHUSDT, batches of {@link BATCH} steps to the end, results. Records each part into `out` as it goes (so a
 * timeout still reports how far it got): `reached`, `create_ms`, `start_ms`, `batches`, `results_ms`, ….
 */
const runBacktest = async (
  auth: Record<string, string>,
  agentId: string,
  symbols: string[],
  pid: number,
  out: Record<string, any>,
  quiet = false,
) => {
  const timed = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
    const t = performance.now();
    const v = await f();
    return [v, round(performance.now() - t, 1)];
  };
  const [created, createMs] = await timed(() =>
    ok(
      'POST',
      '/backtest/create',
      {
        start_time: new Date(FROM).toISOString(),
        end_time: new Date(BACKTEST_TO).toISOString(),
        starting_balance: '1000000',
        candle_interval: '1m',
        agent_id: agentId,
        strategy_label: `market-scale ${symbols.length}`,
        pairs: symbols,
      },
      auth,
    ),
  );
  Object.assign(out, {
    create_ms: createMs,
    total_steps: created.total_steps,
    pairs: created.estimated_pairs,
    reached: 'start',
  });
  const id = created.session_id as string;
  const [, startMs] = await timed(() => ok('POST', `/backtest/${id}/start`, undefined, auth));
  Object.assign(out, {
    start_ms: startMs,
    venue_rss_after_start_mib: mib(memoryOf(pid).rss),
    reached: 'orders',
  });
  await ok('POST', `/backtest/${id}/step`, undefined, auth);
  for (const [symbol, quantity] of [
    ['BTCUSDT', '0.5'],
    ['ETHUSDT', '5'],
  ] as const) {
    await ok('POST', `/backtest/${id}/trade/order`, { symbol, side: 'buy', type: 'market', quantity }, auth);
  }
  const batches: { steps: number; ms: number; rss_after_mib: number }[] = [];
  out.batches = batches;
  let last: Record<string, any> = { step: 1 };
  while (!last.is_complete) {
    out.reached = `batch ${batches.length + 1} (from step ${last.step})`;
    const [stepped, ms] = await timed(() => ok('POST', `/backtest/${id}/step/batch`, { steps: BATCH }, auth));
    batches.push({ steps: stepped.step - last.step, ms, rss_after_mib: mib(memoryOf(pid).rss) });
    last = stepped;
    if (!quiet) console.error(`   batch to step ${stepped.step}/${stepped.total_steps}: ${ms} ms`);
  }
  out.reached = 'results';
  // A whole year's results are computed off the request thread after completion: 503 with Retry-After until then.
  const [results, resultsMs] = await timed(async () => {
    for (;;) {
      const r = await call('GET', `/backtest/${id}/results`, undefined, auth);
      if (r.status === 200) return r.json;
      if (r.status !== 503)
        throw new Error(`GET /backtest/${id}/results: ${r.status} ${JSON.stringify(r.json)}`);
      await sleep(200);
    }
  });
  Object.assign(out, {
    results_ms: resultsMs,
    final_equity: results.summary?.final_equity,
    total_trades: results.summary?.total_trades,
    reached: 'end',
  });
};

/**
 * The venue's threads — and its child processes' (`child`: their process id) — as /proc shows them: per thread id, its nice value and CPU seconds (user + system) since the
 * process started and since the sampler did (`cpu_seconds_during`), sampled every 500 ms until `stop` (a worker
 * thread that ends keeps its last sample). The request thread is the one whose id is the process id;
 * `os.setPriority`/piscina's `niceIncrement` in a worker thread renices only that thread.
 */
const threadSampler = (pid: number) => {
  const seen = new Map<number, { nice: number; cpu_seconds: number; child?: number }>();
  const atStart = new Map<number, number>();
  let started = false;
  const tick = 100; // USER_HZ: clock ticks per second of /proc stat times on Linux
  const sample = () => {
    for (const p of [pid, ...childrenOf(pid)]) {
      try {
        for (const t of fs.readdirSync(`/proc/${p}/task`)) {
          const stat = fs.readFileSync(`/proc/${p}/task/${t}/stat`, 'utf8');
          const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          // Fields after the name: state(0) … utime(11) stime(12) … nice(16).
          const cpu = (Number(f[11]) + Number(f[12])) / tick;
          seen.set(Number(t), { nice: Number(f[16]), cpu_seconds: cpu, ...(p === pid ? {} : { child: p }) });
          // A thread started after the sampler counts from 0.
          if (!atStart.has(Number(t))) atStart.set(Number(t), started ? 0 : cpu);
        }
      } catch {
        // The process or a thread ended between the listing and the read.
      }
    }
  };
  sample();
  started = true;
  const timer = setInterval(sample, 500);
  /** CPU seconds per thread at the phase boundaries `mark` was called at, by the mark's name. */
  const marks = new Map<string, Map<number, number>>();
  return {
    /** Samples now and keeps each thread's CPU seconds under `name` (a phase boundary). */
    mark(name: string) {
      sample();
      marks.set(name, new Map([...seen].map(([tid, v]) => [tid, v.cpu_seconds])));
    },
    /**
     * Stops sampling and answers the threads (with ≥ 0.5 s of CPU since the process started, and the request
     * thread), each with its CPU seconds between the marks `phases` names (`[from, to]`: a mark's name or
     * `'end'`; a thread absent at a mark counts 0 there).
     */
    stop(phases: Record<string, [string, string]> = {}) {
      clearInterval(timer);
      sample();
      marks.set('end', new Map([...seen].map(([tid, v]) => [tid, v.cpu_seconds])));
      const threads = [...seen].map(([tid, v]) => ({
        tid,
        main: tid === pid,
        ...v,
        cpu_seconds_during: round(v.cpu_seconds - (atStart.get(tid) ?? 0), 2),
        ...Object.fromEntries(
          Object.entries(phases).map(([phase, [from, to]]) => [
            `cpu_seconds_${phase}`,
            round((marks.get(to)?.get(tid) ?? 0) - (marks.get(from)?.get(tid) ?? 0), 2),
          ]),
        ),
      }));
      return threads
        .filter((t) => t.main || t.cpu_seconds >= 0.5)
        .sort((a, b) => b.cpu_seconds - a.cpu_seconds);
    },
  };
};

/**
 * The request-thread stalls (`--stalls`) that ended in [from, to) (epoch ms): how many of 10 / 20 / 50 ms or more,
 * their total and largest (ms), and the ten largest; the same by the thread's own time on a core during each stall
 * (`on_core_*`) and its total wait for a core (`run_queue_ms`); and the main thread's garbage collections of 1 ms or more
 * that ended in it, per kind (count, total and largest ms).
 */
const stallsBetween = (file: string, from: number, to: number) => {
  const stalls = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(',').map(Number) as [number, number, number?, number?])
    .filter(([end]) => end >= from && end < to);
  const onCore = stalls.map(([, , cpu]) => cpu ?? 0).sort((a, b) => b - a);
  const runQueue = stalls.reduce((a, [, , , wait]) => a + (wait ?? 0), 0);
  const lengths = stalls.map(([, ms]) => ms).sort((a, b) => b - a);
  // The main thread's collections (loop-stalls.mjs's `.gc` file): count, total and largest per kind.
  const gc: Record<string, { count: number; total_ms: number; max_ms: number }> = {};
  const gcFile = `${file}.gc`;
  for (const line of fs.existsSync(gcFile) ? fs.readFileSync(gcFile, 'utf8').split('\n') : []) {
    const [end, ms, kind] = line.split(',');
    if (!kind || Number(end) < from || Number(end) >= to) continue;
    const k = gc[kind] ?? { count: 0, total_ms: 0, max_ms: 0 };
    gc[kind] = k;
    k.count++;
    k.total_ms = round(k.total_ms + Number(ms), 1);
    k.max_ms = Math.max(k.max_ms, Number(ms));
  }
  const atLeast = (list: number[], ms: number) => list.filter((x) => x >= ms).length;
  return {
    seconds: round((to - from) / 1000, 1),
    gc,
    ge10: lengths.length,
    ge20: atLeast(lengths, 20),
    ge50: atLeast(lengths, 50),
    total_ms: round(
      lengths.reduce((a, b) => a + b, 0),
      1,
    ),
    largest: lengths.slice(0, 10),
    // The same stalls by the thread's own time on a core (what it computed, not the wait for a core).
    on_core_ge10: atLeast(onCore, 10),
    on_core_ge20: atLeast(onCore, 20),
    on_core_ge50: atLeast(onCore, 50),
    on_core_ms: round(
      onCore.reduce((a, b) => a + b, 0),
      1,
    ),
    run_queue_ms: round(runQueue, 1),
    largest_on_core: onCore.slice(0, 10),
  };
};

/**
 * The prober of `--concurrent` (bench/prober.ts) where `--prober-in` says: in its own process (`process`, as a
 * separate agent would be; the default) or in this one (`bench`, sharing this event loop with the batches' driving,
 * as before). `mark()` answers how many answers of each kind it has so far and the statuses so far; `stop()` everything it recorded.
 */
const probe = async (keys: string[]) => {
  if (options.proberIn === 'process') return startProberProcess(base, keys, options.every);
  const prober = startProber(call, keys, options.every);
  return {
    startedAt: prober.startedAt,
    mark: async () => countsOf(prober.record),
    stop: () => prober.stop(),
  };
};

/**
 * `--concurrent N` backtests of every pair over the window at once (each its own user: create, start, a step, two
 * market buys, batches to the end, results), while a prober (`--prober-in`: its own process by default), open loop,
 * sends one request every
 * `--every` ms — `GET /market/price/BTCUSDT` and a 0.001 BTC market order (`POST /trade/order`, buys and sells in
 * turn) alternately, over the 24 agents' keys — each timed from when it was due (no coordinated omission). Reported:
 * the prober's latency of each kind (target p99 ≤ 20 ms), its statuses, each backtest's parts, the venue's CPU
 * seconds and peak RSS.
 */
const concurrentBacktests = async (venue: Venue, keys: string[], symbols: string[]) => {
  const users: { auth: Record<string, string>; agent: string }[] = [];
  for (let i = 0; i < options.concurrent; i++) {
    const r = await ok('POST', '/auth/register', { display_name: `backtester ${i}` });
    const l = await login(r);
    const h = { authorization: `Bearer ${l.token}` };
    const a = await ok('POST', '/agents', { display_name: `bt ${i}` }, h);
    users.push({ auth: h, agent: a.agent_id as string });
  }
  const reniced = reniceHelpers(venue.pid);
  const sampler = rssSampler(venue.pid);
  const threads = threadSampler(venue.pid);
  const cpu0 = processCpuSeconds(venue.pid) ?? 0;
  const loadBefore = load();
  const prober = await probe(keys);
  // `--warmup` seconds not counted, then `--alone` seconds of the prober alone: its figures beside the backtests'
  // are then comparable.
  await sleep(options.warmup * 1000);
  const warm = await prober.mark();
  const aloneFrom = Date.now();
  threads.mark('alone');
  const gcAlone = gcTraceOffset();
  await sleep(options.alone * 1000);
  const alone = await prober.mark();
  const besideFrom = Date.now();
  threads.mark('beside');
  const gcBeside = gcTraceOffset();
  const runs = await Promise.all(
    users.map(async (u) => {
      const out: Record<string, any> = { reached: 'create' };
      const t = performance.now();
      try {
        await runBacktest(u.auth, u.agent, symbols, venue.pid, out, true);
      } catch (error) {
        out.error = error instanceof Error ? error.message : String(error);
      }
      out.seconds = round((performance.now() - t) / 1000, 1);
      return out;
    }),
  );
  const besideTo = Date.now();
  threads.mark('after');
  const gcAfter = gcTraceOffset();
  const { price, order, statuses } = await prober.stop();
  return {
    backtests: options.concurrent,
    prober_in: options.proberIn,
    venue_renice: options.venueRenice,
    reniced_threads: reniced,
    seconds: round((performance.now() - prober.startedAt) / 1000, 1),
    // Latencies while the backtests ran (the first second, the prober alone, is left out).
    price: summarize(price.slice(alone.price), 2),
    order: summarize(order.slice(alone.order), 2),
    prober_alone: {
      seconds: options.alone,
      after_warmup_seconds: options.warmup,
      price: summarize(price.slice(warm.price, alone.price), 2),
      order: summarize(order.slice(warm.order, alone.order), 2),
    },
    ...(stallsFile
      ? {
          stalls_alone: stallsBetween(stallsFile, aloneFrom, besideFrom),
          stalls_beside: stallsBetween(stallsFile, besideFrom, besideTo),
        }
      : {}),
    statuses,
    venue_cpu_seconds: round((processCpuSeconds(venue.pid) ?? 0) - cpu0, 1),
    venue_peak_rss_mib: mib(sampler.stop()),
    // Threads with ≥ 0.5 s of CPU since the venue started (and the request thread): nice and CPU seconds.
    // `cpu_seconds_alone`: the prober alone; `cpu_seconds_beside`: from the backtests' start to their end.
    venue_threads: threads.stop({ alone: ['alone', 'beside'], beside: ['beside', 'after'] }),
    ...(gcTraceFile()
      ? {
          gc_by_isolate: {
            alone: gcTraceSummary(gcTraceFile()!, gcAlone, gcBeside),
            beside: gcTraceSummary(gcTraceFile()!, gcBeside, gcAfter),
          },
        }
      : {}),
    load_average_before: loadBefore,
    load_average_after: load(),
    runs,
  };
};

/** One pair count, end to end. */
const measure = async (pairs: number) => {
  const result: Record<string, any> = { pairs, load_average_at_start: load() };
  const genDir = path.join(DIR, `gen-${pairs}`);
  const storeDir = path.join(DIR, `store-${pairs}`);
  const dataDir = path.join(DIR, `data-${pairs}`);
  console.error(`\n== ${pairs} pairs: generate into ${genDir}`);
  const generated = await runCli(
    [
      'generate-market-data',
      '--pairs',
      String(pairs),
      '--from',
      options.from,
      '--to',
      options.to,
      '--interval',
      '1m',
      '--seed',
      options.seed,
      '--out',
      genDir,
    ],
    {},
  );
  const genLine = generated.out.trim().split('\n').at(-1) ?? '';
  const meta = JSON.parse(fs.readFileSync(path.join(genDir, 'GENERATED.json'), 'utf8')) as {
    symbols: string[];
  };
  const symbols = meta.symbols;
  result.generate = {
    seconds: round(generated.seconds, 1),
    summary: genLine,
    zipped_bytes: sizeOf(path.join(genDir, 'klines')).bytes,
  };

  const reuse = options.reuseStore && fs.existsSync(path.join(storeDir, 'manifest.json'));
  if (!reuse) fs.rmSync(storeDir, { recursive: true, force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(dataDir, { recursive: true });
  let scratch: ScratchDatabase | undefined;
  let venue: Venue | undefined;
  try {
    if (postgresServer) scratch = await createScratchDatabase(postgresServer, `${options.dbPrefix}${pairs}_`);
    const env = {
      DATA_DIR: dataDir,
      MARKET_STORE_DIR: storeDir,
      DATABASE_URL: scratch?.url ?? '',
      LOG_LEVEL: 'error',
    };
    if (reuse) {
      // The venue's start-up import records the exchangeInfo in the new database and finds every kline file known.
      result.import = { reused: storeDir, store_bytes: sizeOf(storeDir).bytes };
    } else {
      console.error(`== ${pairs} pairs: import into ${storeDir} (${scratch ? scratch.name : 'PGlite'})`);
      const loadBeforeImport = load();
      const imported = await runCli(['import-market-data', genDir], env);
      const added = Number(
        /([\d,]+) candles added/.exec(imported.out)?.[1]?.replaceAll(',', '') ?? Number.NaN,
      );
      const store = sizeOf(storeDir);
      result.import = {
        seconds: round(imported.seconds, 1),
        candles: added,
        candles_per_second: Math.round(added / imported.seconds),
        peak_rss_mib: mib(imported.peakRss),
        cpu_seconds: round(imported.cpuSeconds, 1),
        store_bytes: store.bytes,
        store_files: store.files,
        bytes_per_candle: round(store.bytes / added, 2),
        summary: imported.out.trim().split('\n').at(-1),
        load_average_before: loadBeforeImport,
        load_average_after: load(),
      };
      console.error(JSON.stringify(result.import));
    }

    console.error(`== ${pairs} pairs: start the venue on port ${options.port}`);
    const t0 = performance.now();
    stallsFile = options.stalls ? path.join(DIR, `loop-stalls-${pairs}.csv`) : undefined;
    if (stallsFile) for (const f of [stallsFile, `${stallsFile}.gc`]) fs.rmSync(f, { force: true });
    venue = await startVenue({
      ...env,
      PORT: String(options.port),
      HOST: '127.0.0.1',
      MARKET_SOURCE: 'files',
      MARKET_DATA_DIR: genDir,
    });
    reniceHelpers(venue.pid);
    const autogroup = setAutogroupNice(venue.pid);
    result.venue = {
      ...(autogroup ? { autogroup } : {}),
      start_seconds: round((performance.now() - t0) / 1000, 1),
      rss_after_start_mib: mib(memoryOf(venue.pid).rss),
      node_options: venue.nodeOptions,
    };
    const reg = await ok('POST', '/auth/register', { display_name: 'bigdata bench' });
    const auth = { authorization: `Bearer ${(await login(reg)).token}` };
    const keys: string[] = [];
    for (let i = 0; i < 24; i++) {
      const a = await ok('POST', '/agents', { display_name: `reader ${i}` }, auth);
      keys.push(a.api_key as string);
    }

    if (!skip.has('reads')) {
      console.error(`== ${pairs} pairs: ${options.reads} candle range reads`);
      const next = mulberry32(pairs);
      const latencies: number[] = [];
      // The venue's own CPU while idle (the replayed feed's ticks, timers), over 5 s before the reads: what the
      // CPU per read below includes beside the reads themselves.
      const idleCpu0 = processCpuSeconds(venue.pid) ?? 0;
      const idle0 = performance.now();
      await sleep(5000);
      const idleCpuMsPerSecond =
        (((processCpuSeconds(venue.pid) ?? 0) - idleCpu0) * 1000) / ((performance.now() - idle0) / 1000);
      const sampler = rssSampler(venue.pid);
      const readLoad = load();
      const readCpu0 = processCpuSeconds(venue.pid) ?? 0;
      const reads0 = performance.now();
      let short = 0;
      for (let i = 0; i < options.reads; i++) {
        const symbol = symbols[Math.floor(next() * symbols.length)]!;
        const start = FROM + Math.floor(next() * ((TO - FROM) / MINUTE)) * MINUTE;
        const url = `/market/candles/${symbol}?interval=1m&limit=${LIMIT}&start_time=${new Date(start).toISOString().replace('.000Z', 'Z')}`;
        const t = performance.now();
        const r = await call('GET', url, undefined, { 'x-api-key': keys[i % keys.length]! });
        latencies.push(performance.now() - t);
        if (r.status !== 200) throw new Error(`GET ${url}: ${r.status} ${JSON.stringify(r.json)}`);
        const candles = r.json.candles as { time: string }[];
        if (candles.length === 0 || Date.parse(candles[0]!.time) < start)
          throw new Error(`GET ${url}: first candle ${candles[0]?.time} before start_time`);
        if (candles.length !== Math.min(LIMIT, (TO - start) / MINUTE)) short++;
      }
      const readsCpuMs = ((processCpuSeconds(venue.pid) ?? 0) - readCpu0) * 1000;
      const readsSeconds = (performance.now() - reads0) / 1000;
      result.reads = {
        ...summarize(latencies, 2),
        short_answers: short,
        // The venue's CPU per read (all its threads): what an idle machine's latency would be made of.
        venue_cpu_ms_per_read: round(readsCpuMs / options.reads, 2),
        venue_idle_cpu_ms_per_s: round(idleCpuMsPerSecond, 1),
        // Less what the venue spends idle over the same time.
        venue_cpu_ms_per_read_net: round((readsCpuMs - idleCpuMsPerSecond * readsSeconds) / options.reads, 2),
        venue_peak_rss_mib: mib(sampler.stop()),
        load_average_before: readLoad,
        load_average_after: load(),
      };
      console.error(JSON.stringify(result.reads));
    }

    if (!skip.has('backtest')) {
      console.error(`== ${pairs} pairs: 1m backtest of every pair to ${new Date(BACKTEST_TO).toISOString()}`);
      const agent = await ok('POST', '/agents', { display_name: 'backtester' }, auth);
      const backtest: Record<string, any> = { load_average_before: load(), reached: 'create' };
      result.backtest = backtest;
      const pid = venue.pid;
      const sampler = rssSampler(pid);
      const cpu0 = processCpuSeconds(pid) ?? 0;
      const tAll = performance.now();
      const finish = () => {
        backtest.seconds = round((performance.now() - tAll) / 1000, 1);
        backtest.batches_ms = round(
          (backtest.batches ?? []).reduce((s: number, b: { ms: number }) => s + b.ms, 0),
          1,
        );
        backtest.venue_cpu_seconds = round((processCpuSeconds(pid) ?? 0) - cpu0, 1);
        backtest.venue_peak_rss_mib = mib(sampler.stop());
        backtest.venue_hwm_mib = mib(memoryOf(pid).hwm);
        backtest.load_average_after = load();
      };
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), options.backtestTimeout * 1000);
      });
      const exited = new Promise<'exited'>((resolve) => venue!.child.once('exit', () => resolve('exited')));
      const outcome = await Promise.race([
        runBacktest(auth, agent.agent_id as string, symbols, pid, backtest).then(() => 'done' as const),
        timeout,
        exited,
      ]);
      clearTimeout(timer);
      finish();
      if (outcome !== 'done') {
        backtest.outcome =
          outcome === 'timeout'
            ? `gave up after ${options.backtestTimeout} s in ${backtest.reached}`
            : `the venue exited (code ${venue.child.exitCode}, signal ${venue.child.signalCode}) in ${backtest.reached}`;
      } else backtest.outcome = 'completed';
      // A given-up run goes on in the venue until it is stopped: report it as it was at that moment.
      result.backtest = structuredClone(backtest);
      console.error(JSON.stringify({ ...backtest, batches: undefined }));
    }

    if (options.concurrent > 0) {
      console.error(`== ${pairs} pairs: ${options.concurrent} backtests at once beside a prober`);
      result.concurrent = await concurrentBacktests(venue, keys, symbols);
      console.error(JSON.stringify({ ...result.concurrent, runs: undefined }));
    }
  } finally {
    await venue?.stop();
    await scratch?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (options.clean) {
      fs.rmSync(storeDir, { recursive: true, force: true });
      fs.rmSync(genDir, { recursive: true, force: true });
    }
  }
  return result;
};

const main = async () => {
  const results: Record<string, any> = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    memory_gib: round(os.totalmem() / 2 ** 30, 1),
    commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }).toString().trim(),
    database: postgresServer ? 'postgresql' : 'pglite',
    load_average_at_start: load(),
    runs: [] as Record<string, any>[],
  };
  fs.mkdirSync(DIR, { recursive: true });
  for (const n of options.pairs.split(',').map(Number)) {
    results.runs.push(await measure(n));
    if (options.json) fs.writeFileSync(options.json, `${JSON.stringify(results, null, 2)}\n`);
  }
  await dispatcher.close();
  const rows = results.runs.map((r: Record<string, any>) => ({
    pairs: r.pairs,
    candles: r.import?.candles,
    'import s': r.import?.seconds,
    'candles/s': r.import?.candles_per_second,
    'B/candle': r.import?.bytes_per_candle,
    'import RSS MiB': r.import?.peak_rss_mib,
    'read p50 ms': r.reads?.p50,
    'read p99 ms': r.reads?.p99,
    'read CPU ms': r.reads?.venue_cpu_ms_per_read,
    'backtest s': r.backtest?.seconds,
    outcome: r.backtest?.outcome,
    'start ms': r.backtest?.start_ms,
    'venue peak MiB': r.backtest?.venue_peak_rss_mib,
    'concurrent probe p99 ms': r.concurrent
      ? `${r.concurrent.price.p99} / ${r.concurrent.order.p99}`
      : undefined,
  }));
  console.table(rows);
};

await main();
