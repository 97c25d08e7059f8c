/**
 * Event store benchmark (ARCHITECTURE §5): append throughput with many concurrent streams, `$all` read rate and
 * subscriber end-to-end latency, on a PostgreSQL server (a fresh database, dropped at the end) and, for
 * comparison, on in-memory PGlite.
 *
 *   npx tsx bench/eventstore.ts [--events 200000] [--json out.json] [--pool 20] [--wait-quiet 30] [--no-pglite]
 *                               [--batch-in-flight 2] [--batch-max-appends 128] [--no-batching] [--compare-unbatched]
 *
 * (a) single-event appends from 64 concurrent streams with exact expected revisions, through the adapter's append
 * batcher (reported: batches sent and their mean size; `--compare-unbatched` repeats (a) with batching off); (b) `readAll` over a log
 * pre-filled to `--events` with batched appends, pages of 1,000 and 5,000; (c) latency from just before `append`
 * to delivery by `subscribeToAll`, with an exactly-once and in-order check. (a) and (c) also run on PGlite.
 * Each phase reports CPU use (Node, machine, and the PostgreSQL backends of the scratch database) because other
 * work on the machine distorts throughput; `--wait-quiet` waits for an idle machine first.
 *
 * Durability stays as the server is configured (no `synchronous_commit = off`): the numbers are for commits
 * that survive a crash. Results and the machine they came from are recorded in `docs/benchmarks.md`, raw
 * results in `bench/results/`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { Command, InvalidArgumentError } from 'commander';
import { sql } from 'kysely';
import pg from 'pg';
import {
  comparePositions,
  type EventStore,
  type ExpectedRevision,
  type LogPosition,
  type NewEvent,
  START,
} from '../ports/event-store';
import { type DatabaseHandle, openPGlite, openPostgres } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrate';
import {
  createPostgresEventStore,
  type PostgresEventStore,
  type PostgresEventStoreOptions,
} from '../src/eventstore/postgres';
import { jsonOption, positiveInt, positiveNumber, withScratchDatabase } from './options';
import { percentileOfSorted as percentile, processCpuSeconds } from './stats';

// ---------------------------------------------------------------------------------------------------------------
// Options

interface Options {
  dbPrefix: string;
  events: number;
  appends: number;
  appendSeconds: number;
  streams: number;
  pool: number;
  batch: number;
  rate: number;
  writers: number;
  seconds: number;
  url: string;
  json?: string;
  pglite: boolean;
  timeout: number;
  waitQuiet: number;
  batching: boolean;
  batchInFlight?: number;
  batchMaxAppends?: number;
  compareUnbatched: boolean;
  appendsOnly: boolean;
}

const program = withScratchDatabase(
  new Command(),
  'ptv_bench_',
  'PostgreSQL server to create the scratch database on',
)
  .name('bench/eventstore.ts')
  .description(
    'Benchmarks the PostgreSQL event store (server and PGlite): appends, $all reads, subscriber latency',
  )
  .option(
    '--events <n>',
    'events in the log for the $all read test (pre-populated in batches)',
    positiveInt,
    200_000,
  )
  .option('--appends <n>', 'single-event appends in the throughput test', positiveInt, 20_000)
  .option('--append-seconds <s>', 'time limit of the throughput test', positiveNumber, 10)
  .option(
    '--streams <n>',
    'concurrent streams (one async worker each) in the throughput test',
    positiveInt,
    64,
  )
  .option('--pool <n>', 'pg pool size (openPostgres max); the application default is 20', positiveInt, 20)
  .option('--batch <n>', 'events per append call when pre-populating', positiveInt, 500)
  .option('--rate <n>', 'total append rate (events/s) during the subscriber test', positiveInt, 500)
  .option('--writers <n>', 'concurrent writers during the subscriber test', positiveInt, 8)
  .option('--seconds <s>', 'duration of the subscriber test', positiveNumber, 10)
  .addOption(jsonOption())
  .option('--no-pglite', 'skip the PGlite comparison runs')
  .option(
    '--wait-quiet <s>',
    'wait up to this many seconds for the machine to be idle (< 25% CPU busy) before starting',
    (v: string) => {
      const n = Number(v);
      if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('expected a number >= 0');
      return n;
    },
    0,
  )
  .option('--no-batching', 'append one call per append (the append batcher off)')
  .option(
    '--batch-in-flight <n>',
    'append batches in flight at once (adapter default when absent)',
    positiveInt,
  )
  .option('--batch-max-appends <n>', 'most appends per batch (adapter default when absent)', positiveInt)
  .option('--compare-unbatched', 'also run the append test with the batcher off, right after', false)
  .option('--appends-only', 'run only the append test (a), e.g. to compare batcher settings', false)
  .option(
    '--timeout <s>',
    'abort (and drop the scratch database) after this many seconds',
    positiveNumber,
    300,
  )
  .parse();

const opts = program.opts<Options>();

// ---------------------------------------------------------------------------------------------------------------
// Helpers

/** Wall-clock milliseconds with sub-millisecond precision. */
const nowMs = (): number => performance.timeOrigin + performance.now();

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const log = (message: string): void => {
  process.stderr.write(`[bench] ${message}\n`);
};

interface Percentiles {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentiles of `values` (ms). */
const percentiles = (values: number[]): Percentiles => {
  const sorted = Float64Array.from(values).sort();
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : NaN,
    mean: sorted.length ? sum / sorted.length : NaN,
  };
};

/**
 * CPU use during a phase: this Node process (share of one core), the whole machine (share of all cores busy),
 * and CPU time in ms of this Node process and of the PostgreSQL backends serving the scratch database (when the
 * server runs on this machine: read from `/proc`; undefined otherwise and for PGlite, which runs inside Node).
 */
interface CpuUse {
  node: number;
  machine: number;
  nodeMs: number;
  postgresMs?: number;
}

const machineTimes = () => {
  let busy = 0;
  let total = 0;
  for (const { times: t } of os.cpus()) {
    busy += t.user + t.nice + t.sys + t.irq;
    total += t.user + t.nice + t.sys + t.irq + t.idle;
  }
  return { busy, total };
};

/** CPU ticks (1/100 s) of each backend connected to `handle`'s database, when they are local processes. */
const backendTicks = async (handle?: DatabaseHandle): Promise<Map<number, number> | undefined> => {
  if (handle?.kind !== 'postgres' || !fs.existsSync('/proc/self/stat')) return undefined;
  const { rows } = await sql<{ pid: number }>`
    select pid from pg_stat_activity where datname = current_database()`.execute(handle.db);
  const ticks = new Map<number, number>();
  for (const { pid } of rows) {
    // Not a process of this machine (remote server) or already gone: not counted.
    const seconds = processCpuSeconds(pid, 'postgres');
    if (seconds !== undefined) ticks.set(pid, Math.round(seconds * 100));
  }
  return ticks.size ? ticks : undefined;
};

/** Starts measuring CPU use; call the result at the end of the phase. */
const cpuMeter = async (handle?: DatabaseHandle): Promise<() => Promise<CpuUse>> => {
  const backends = await backendTicks(handle);
  const node = process.cpuUsage();
  const machine = machineTimes();
  const started = performance.now();
  return async () => {
    const d = process.cpuUsage(node);
    const m = machineTimes();
    const seconds = (performance.now() - started) / 1000;
    const after = backends ? await backendTicks(handle) : undefined;
    let postgresTicks: number | undefined;
    if (after) {
      postgresTicks = 0;
      for (const [pid, t] of after) postgresTicks += t - (backends?.get(pid) ?? 0);
    }
    return {
      node: (d.user + d.system) / 1e6 / seconds,
      machine: m.total > machine.total ? (m.busy - machine.busy) / (m.total - machine.total) : NaN,
      nodeMs: (d.user + d.system) / 1e3,
      ...(postgresTicks === undefined ? {} : { postgresMs: postgresTicks * 10 }),
    };
  };
};

/** CPU summary; with `per` (operations and their name) also the CPU time per operation. */
const cpuText = (c: CpuUse, per?: { count: number; unit: string; scale?: number }): string => {
  const parts = [`CPU: node ${fmt(c.node * 100)}% of a core, machine ${fmt(c.machine * 100)}% busy`];
  if (per && per.count > 0) {
    const scale = per.scale ?? 1;
    const perOp = (ms: number) => fmt((ms / per.count) * scale, 3);
    parts.push(
      `CPU ms per ${per.unit}: node ${perOp(c.nodeMs)}` +
        (c.postgresMs === undefined ? '' : `, PostgreSQL backends ${perOp(c.postgresMs)}`),
    );
  }
  return parts.join('; ');
};

/** A realistic event: an order as the venue records it (money as decimal strings). */
const orderPlaced = (worker: number, n: number): NewEvent => ({
  type: 'OrderPlaced',
  data: {
    order_id: randomUUID(),
    account_id: `acct-${worker}`,
    client_order_id: `c-${worker}-${n}`,
    symbol: 'BTC-USD',
    side: n % 2 ? 'buy' : 'sell',
    type: 'limit',
    time_in_force: 'GTC',
    price: '64123.50000000',
    quantity: '0.01000000',
  },
  metadata: { actor: `agent-${worker}`, correlation_id: randomUUID() },
});

const fmt = (n: number, digits = 0): string =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : '-';

// ---------------------------------------------------------------------------------------------------------------
// (a) single-event appends, many concurrent streams

interface AppendResultStats {
  /** Whether the append batcher was on. */
  batching: boolean;
  streams: number;
  appends: number;
  seconds: number;
  perSecond: number;
  latencyMs: Percentiles;
  cpu: CpuUse;
  /** Batches the adapter sent during the timed part (batcher on). */
  batches?: { batches: number; meanAppends: number; largest: number };
}

const benchAppends = async (
  store: PostgresEventStore,
  handle: DatabaseHandle,
  label: string,
): Promise<AppendResultStats> => {
  const run = randomBytes(3).toString('hex');
  const streams = Array.from({ length: opts.streams }, (_, w) => `bench-append-${run}-${w}`);
  const expected: ExpectedRevision[] = streams.map(() => 'no_stream');
  // Warm-up (untimed): every stream gets its first event, so pool connections and plans exist.
  await Promise.all(
    streams.map(async (s, w) => {
      expected[w] = (
        await store.append(s, [orderPlaced(w, 0)], { expectedRevision: expected[w] })
      ).nextRevision;
    }),
  );
  log(`${label}: appends, ${opts.streams} streams, up to ${opts.appends} appends or ${opts.appendSeconds} s`);
  const latencies: number[] = [];
  let issued = 0;
  const batchesBefore = store.appendBatchStats();
  const cpu = await cpuMeter(handle);
  const started = performance.now();
  const deadline = started + opts.appendSeconds * 1000;
  await Promise.all(
    streams.map(async (s, w) => {
      let n = 1;
      while (issued < opts.appends && performance.now() < deadline) {
        issued++;
        const t0 = performance.now();
        const r = await store.append(s, [orderPlaced(w, n++)], { expectedRevision: expected[w] });
        latencies.push(performance.now() - t0);
        expected[w] = r.nextRevision;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuUse = await cpu();
  const batchesAfter = store.appendBatchStats();
  const sent = batchesAfter && batchesBefore ? batchesAfter.batches - batchesBefore.batches : 0;
  return {
    batching: batchesAfter !== undefined,
    streams: opts.streams,
    appends: latencies.length,
    seconds,
    perSecond: latencies.length / seconds,
    latencyMs: percentiles(latencies),
    cpu: cpuUse,
    ...(batchesAfter && batchesBefore && sent > 0
      ? {
          batches: {
            batches: sent,
            meanAppends: (batchesAfter.items - batchesBefore.items) / sent,
            largest: batchesAfter.largest,
          },
        }
      : {}),
  };
};

// ---------------------------------------------------------------------------------------------------------------
// (b) $all read rate

interface PopulateStats {
  added: number;
  seconds: number;
  perSecond: number;
  total: number;
}

const countEvents = async (handle: DatabaseHandle): Promise<number> => {
  const { rows } = await sql<{ n: string }>`select count(*)::text as n from events`.execute(handle.db);
  return Number(rows[0]!.n);
};

/** Fills the log up to `opts.events` events with batched appends (one new stream per batch), 8 at a time. */
const populate = async (store: EventStore, handle: DatabaseHandle): Promise<PopulateStats> => {
  const run = randomBytes(3).toString('hex');
  const before = await countEvents(handle);
  const missing = Math.max(0, opts.events - before);
  const batches = Math.ceil(missing / opts.batch);
  log(`postgres: populating ${missing} events (${batches} appends of <= ${opts.batch} events)`);
  let next = 0;
  let added = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < batches) {
        const b = next++;
        const size = Math.min(opts.batch, missing - b * opts.batch);
        const events = Array.from({ length: size }, (_, i) => orderPlaced(b, i));
        await store.append(`bench-fill-${run}-${b}`, events, { expectedRevision: 'no_stream' });
        added += size;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { added, seconds, perSecond: added / seconds, total: before + added };
};

interface ReadStats {
  pageSize: number;
  events: number;
  pages: number;
  seconds: number;
  perSecond: number;
  cpu: CpuUse;
}

const benchReadAll = async (
  store: EventStore,
  handle: DatabaseHandle,
  pageSize: number,
  expectedTotal: number,
): Promise<ReadStats> => {
  const maxPages = Math.ceil(expectedTotal / pageSize) + 10;
  let after: LogPosition = START;
  let events = 0;
  let pages = 0;
  const cpu = await cpuMeter(handle);
  const started = performance.now();
  while (pages < maxPages) {
    const page = await store.readAll({ after, maxCount: pageSize });
    if (page.events.length === 0) break;
    events += page.events.length;
    pages++;
    after = page.next;
  }
  const seconds = (performance.now() - started) / 1000;
  return { pageSize, events, pages, seconds, perSecond: events / seconds, cpu: await cpu() };
};

// ---------------------------------------------------------------------------------------------------------------
// (c) subscriber end-to-end latency

interface SubscriberStats {
  variant: string;
  writers: number;
  targetRate: number;
  seconds: number;
  appended: number;
  delivered: number;
  duplicates: number;
  missing: number;
  outOfOrder: number;
  exactlyOnce: boolean;
  latencyMs: Percentiles;
  /** Latency of the events sent after the first second (without the subscription's start-up). */
  steadyLatencyMs: Percentiles;
  appendLatencyMs: Percentiles;
  cpu: CpuUse;
  /** Write transactions of other databases on the server during the run (postgres only). */
  foreignTransactions?: ForeignTransactions;
}

interface ForeignTransactions {
  samples: number;
  /** Samples that saw at least one. */
  withForeign: number;
  /** Age of the oldest one seen (ms). */
  maxAgeMs: number;
}

/**
 * Samples, every 50 ms, the oldest transaction holding a transaction id in another database of the server.
 * `$all` readers see only events below the oldest running transaction id of the whole cluster, so such a
 * transaction (a test suite, a migration, a batch job) delays delivery here; reported so that a slow run can be
 * told apart from a slow store.
 */
const sampleForeignTransactions = async (): Promise<() => Promise<ForeignTransactions>> => {
  const client = new pg.Client({ connectionString: serverUrl });
  client.on('error', () => {});
  await client.connect();
  const stats: ForeignTransactions = { samples: 0, withForeign: 0, maxAgeMs: 0 };
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      const { rows } = await client.query<{ age: number | null }>(
        `select max(extract(epoch from clock_timestamp() - xact_start) * 1000)::float8 as age
         from pg_stat_activity where backend_xid is not null and datname is distinct from $1`,
        [dbName],
      );
      stats.samples++;
      const age = rows[0]?.age;
      if (age !== null && age !== undefined) {
        stats.withForeign++;
        stats.maxAgeMs = Math.max(stats.maxAgeMs, age);
      }
    } catch {
      // A failed sample is skipped.
    } finally {
      busy = false;
    }
  }, 50);
  return async () => {
    clearInterval(timer);
    await client.end().catch(() => {});
    return stats;
  };
};

/**
 * Writers append at a steady total rate (open loop: each event has a scheduled send time); a subscription from
 * the head receives them. Latency = delivery time − the time just before `append` was called (`t` in the data).
 */
const benchSubscriber = async (
  writer: EventStore,
  reader: EventStore,
  handle: DatabaseHandle,
  label: string,
  variant: string,
): Promise<SubscriberStats> => {
  const run = randomBytes(4).toString('hex');
  log(`${label}: subscriber (${variant}), ${opts.writers} writers, ${opts.rate}/s for ${opts.seconds} s`);
  const head = await reader.headPosition();
  const subscription = reader.subscribeToAll({ after: head });
  const appendedIds = new Set<string>();
  const seen = new Set<string>();
  const latencies: number[] = [];
  const steadyLatencies: number[] = [];
  const appendLatencies: number[] = [];
  let steadyFrom = Number.POSITIVE_INFINITY;
  let duplicates = 0;
  let outOfOrder = 0;
  let writersDone = false;
  let allDelivered: () => void = () => {};
  const delivered = new Promise<void>((resolve) => {
    allDelivered = resolve;
  });
  const checkDone = () => {
    if (writersDone && [...appendedIds].every((id) => seen.has(id))) allDelivered();
  };

  const reading = (async () => {
    let last = head;
    for await (const batch of subscription) {
      const at = nowMs();
      for (const e of batch) {
        if (comparePositions(e.position, last) <= 0) outOfOrder++;
        last = e.position;
        const data = e.data as { bench?: string; t?: number };
        if (data?.bench !== run) continue;
        if (seen.has(e.eventId)) {
          duplicates++;
          continue;
        }
        seen.add(e.eventId);
        latencies.push(at - data.t!);
        if (data.t! >= steadyFrom) steadyLatencies.push(at - data.t!);
      }
      if (writersDone && seen.size >= appendedIds.size) checkDone();
    }
  })();

  const interval = (opts.writers * 1000) / opts.rate;
  const foreign = handle.kind === 'postgres' ? await sampleForeignTransactions() : undefined;
  const cpu = await cpuMeter(handle);
  const started = performance.now();
  steadyFrom = nowMs() + 1000;
  const end = started + opts.seconds * 1000;
  await Promise.all(
    Array.from({ length: opts.writers }, async (_, w) => {
      const stream = `bench-sub-${run}-${w}`;
      let expected: ExpectedRevision = 'no_stream';
      for (let k = 0; ; k++) {
        const due = started + (w * interval) / opts.writers + k * interval;
        if (due >= end) break;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        const t = nowMs();
        const r = await writer.append(stream, [{ type: 'BenchTick', data: { bench: run, t, w, k } }], {
          expectedRevision: expected,
        });
        appendLatencies.push(nowMs() - t);
        expected = r.nextRevision;
        appendedIds.add(r.events[0]!.eventId);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuUse = await cpu();
  const foreignTransactions = await foreign?.();
  writersDone = true;
  checkDone();
  // Wait for the stragglers (bounded), then give late duplicates a moment to show up.
  const drained = await Promise.race([delivered.then(() => true), sleep(10_000).then(() => false)]);
  if (!drained) log(`${label}: subscriber did not receive every event within 10 s`);
  await sleep(300);
  await subscription.close();
  await Promise.race([reading, sleep(5_000)]);
  let missing = 0;
  for (const id of appendedIds) if (!seen.has(id)) missing++;
  return {
    variant,
    writers: opts.writers,
    targetRate: opts.rate,
    seconds,
    appended: appendedIds.size,
    delivered: seen.size,
    duplicates,
    missing,
    outOfOrder,
    exactlyOnce: duplicates === 0 && missing === 0 && seen.size === appendedIds.size,
    latencyMs: percentiles(latencies),
    steadyLatencyMs: percentiles(steadyLatencies),
    appendLatencyMs: percentiles(appendLatencies),
    cpu: cpuUse,
    ...(foreignTransactions ? { foreignTransactions } : {}),
  };
};

// ---------------------------------------------------------------------------------------------------------------
// Scratch database on the server

const serverUrl = opts.url;
const dbName = `${opts.dbPrefix}${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
let created = false;
let dropped: Promise<void> | undefined;

const adminQuery = async (text: string): Promise<pg.QueryResult> => {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end().catch(() => {});
  }
};

const dropDatabase = (): Promise<void> => {
  if (!created) return Promise.resolve();
  dropped ??= adminQuery(`drop database if exists ${pg.escapeIdentifier(dbName)} with (force)`).then(
    () => log(`dropped database ${dbName}`),
    (error: Error) => log(`could not drop database ${dbName}: ${error.message}`),
  );
  return dropped;
};

const abort = (reason: string, code: number) => {
  log(reason);
  void dropDatabase().finally(() => process.exit(code));
};
process.once('SIGINT', () => abort('interrupted', 130));
process.once('SIGTERM', () => abort('terminated', 143));
setTimeout(
  () => abort(`timed out after ${opts.timeout} s`, 2),
  (opts.timeout + opts.waitQuiet) * 1000,
).unref();

// ---------------------------------------------------------------------------------------------------------------
// Main

interface Results {
  date: string;
  command: string;
  machine: Record<string, unknown>;
  options: Options;
  postgres: {
    appends?: AppendResultStats;
    /** The same test with the batcher off (`--compare-unbatched`). */
    appendsUnbatched?: AppendResultStats;
    populate?: PopulateStats;
    readAll: ReadStats[];
    subscriber: SubscriberStats[];
  };
  pglite: {
    appends?: AppendResultStats;
    subscriber: SubscriberStats[];
  };
}

/**
 * Share of the machine's CPU busy over one second. Other work on the machine (a test run, a compiler) distorts
 * every number here, so it is measured before starting and reported.
 */
const machineBusy = async (): Promise<number> => {
  const meter = await cpuMeter();
  await sleep(1000);
  return (await meter()).machine;
};

const waitForQuiet = async (): Promise<number> => {
  const until = performance.now() + opts.waitQuiet * 1000;
  let busy = await machineBusy();
  while (busy >= 0.25 && performance.now() < until) {
    log(`machine ${fmt(busy * 100)}% busy, waiting for it to settle`);
    busy = await machineBusy();
  }
  if (busy >= 0.25)
    log(`WARNING: machine ${fmt(busy * 100)}% busy before start: other work distorts the results`);
  return busy;
};

/** The adapter's batching as the options ask: off, the adapter's defaults, or with the given overrides. */
const storeOptions = (): PostgresEventStoreOptions => {
  if (!opts.batching) return { batching: false };
  if (opts.batchInFlight === undefined && opts.batchMaxAppends === undefined) return {};
  return {
    batching: {
      ...(opts.batchInFlight === undefined ? {} : { maxInFlight: opts.batchInFlight }),
      ...(opts.batchMaxAppends === undefined ? {} : { maxItems: opts.batchMaxAppends }),
    },
  };
};

const main = async (): Promise<Results> => {
  const busyBefore = await waitForQuiet();
  const settings = await adminQuery(
    `select current_setting('server_version') as version, current_setting('synchronous_commit') as synchronous_commit,
            current_setting('fsync') as fsync, current_setting('wal_sync_method') as wal_sync_method,
            current_setting('shared_buffers') as shared_buffers, current_setting('max_connections') as max_connections,
            current_setting('commit_delay') as commit_delay`,
  );
  const results: Results = {
    date: new Date().toISOString(),
    command: `npx tsx bench/eventstore.ts ${process.argv.slice(2).join(' ')}`.trim(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      loadAverageAtStart: os.loadavg().map((x) => Number(x.toFixed(2))),
      busyBeforeStart: Number(busyBefore.toFixed(3)),
      platform: `${os.type()} ${os.release()} ${os.arch()}`,
      node: process.version,
      postgres: settings.rows[0],
    },
    options: opts,
    postgres: { readAll: [], subscriber: [] },
    pglite: { subscriber: [] },
  };

  await adminQuery(`create database ${pg.escapeIdentifier(dbName)}`);
  created = true;
  log(`created database ${dbName}`);
  const url = new URL(serverUrl);
  url.pathname = `/${dbName}`;

  const handle = openPostgres(url.toString(), { max: opts.pool });
  const store = createPostgresEventStore(handle, storeOptions());
  let reader: DatabaseHandle | undefined;
  let readerStore: EventStore | undefined;
  try {
    await migrateToLatest(handle.db);
    results.postgres.appends = await benchAppends(store, handle, 'postgres');
    if (opts.compareUnbatched) {
      const unbatched = createPostgresEventStore(handle, { batching: false });
      results.postgres.appendsUnbatched = await benchAppends(unbatched, handle, 'postgres (batcher off)');
      await unbatched.close();
    }
    if (!opts.appendsOnly) await benchReadsAndSubscribers();
  } finally {
    await readerStore?.close();
    await reader?.close();
    await store.close();
    await handle.close();
    await dropDatabase();
  }

  async function benchReadsAndSubscribers() {
    results.postgres.populate = await populate(store, handle);
    const total = await countEvents(handle);
    await sql`vacuum analyze events`.execute(handle.db);
    log(`postgres: reading $all (${total} events), pages of 1,000 and 5,000 (after an untimed warm-up pass)`);
    await benchReadAll(store, handle, 1000, total);
    for (const size of [1000, 5000])
      results.postgres.readAll.push(await benchReadAll(store, handle, size, total));
    // Same store: woken by its own append (in-process) and by NOTIFY.
    results.postgres.subscriber.push(await benchSubscriber(store, store, handle, 'postgres', 'same store'));
    // A separate store on its own pool: woken by LISTEN/NOTIFY only, as a subscriber in another process would be.
    reader = openPostgres(url.toString(), { max: 4 });
    readerStore = createPostgresEventStore(reader);
    results.postgres.subscriber.push(
      await benchSubscriber(store, readerStore, handle, 'postgres', 'separate store, NOTIFY'),
    );
  }

  if (opts.pglite) {
    const lite = await openPGlite();
    const liteStore = createPostgresEventStore(lite, storeOptions());
    try {
      await migrateToLatest(lite.db);
      results.pglite.appends = await benchAppends(liteStore, lite, 'pglite');
      if (!opts.appendsOnly) {
        results.pglite.subscriber.push(
          await benchSubscriber(liteStore, liteStore, lite, 'pglite', 'same store'),
        );
      }
    } finally {
      await liteStore.close();
      await lite.close();
    }
  }
  return results;
};

const table = (rows: string[][]): string => {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const line = (r: string[]) => `| ${r.map((cell, c) => cell.padEnd(widths[c]!)).join(' | ')} |`;
  return [
    line(rows[0]!),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...rows.slice(1).map(line),
  ].join('\n');
};

const report = (r: Results): string => {
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const rows: string[][] = [['Backend', 'Measurement', 'Result', 'Detail', 'Target']];
  const appendRow = (backend: string, a: AppendResultStats | undefined, target: boolean) => {
    if (!a) return;
    const batching = a.batches
      ? `batcher on: ${fmt(a.batches.batches)} batches, ${fmt(a.batches.meanAppends, 1)} appends each on average (largest ${fmt(a.batches.largest)}); `
      : a.batching
        ? 'batcher on; '
        : 'batcher off; ';
    rows.push([
      backend,
      `single-event appends, ${a.streams} concurrent streams`,
      `${fmt(a.perSecond)} appends/s`,
      `${fmt(a.appends)} in ${fmt(a.seconds, 1)} s; ${batching}latency p50 ${fmt(a.latencyMs.p50, 1)} ms, p99 ${fmt(a.latencyMs.p99, 1)} ms; ${cpuText(a.cpu, { count: a.appends, unit: 'append' })}`,
      target ? `>= 3,000/s: ${verdict(a.perSecond >= 3000)}` : '-',
    ]);
  };
  appendRow(
    `PostgreSQL ${r.machine.postgres ? (r.machine.postgres as { version: string }).version : ''} (pool ${r.options.pool})`,
    r.postgres.appends,
    true,
  );
  appendRow('PostgreSQL, batcher off (comparison)', r.postgres.appendsUnbatched, false);
  if (r.postgres.populate) {
    const p = r.postgres.populate;
    rows.push([
      'PostgreSQL',
      `batched appends (${r.options.batch} events/append, 8 concurrent)`,
      `${fmt(p.perSecond)} events/s`,
      `${fmt(p.added)} events in ${fmt(p.seconds, 1)} s; log now ${fmt(p.total)} events`,
      '-',
    ]);
  }
  for (const x of r.postgres.readAll) {
    rows.push([
      'PostgreSQL',
      `$all read, readAll pages of ${fmt(x.pageSize)}`,
      `${fmt(x.perSecond)} events/s`,
      `${fmt(x.events)} events in ${fmt(x.seconds, 2)} s (${fmt(x.pages)} pages); ${cpuText(x.cpu, { count: x.events, unit: '1,000 events', scale: 1000 })}`,
      `>= 100,000/s: ${verdict(x.perSecond >= 100_000)}`,
    ]);
  }
  const subRow = (backend: string, s: SubscriberStats, target: boolean) => {
    const inOrder = s.outOfOrder === 0;
    rows.push([
      backend,
      `subscriber latency (${s.variant}), ${s.writers} writers at ${fmt(s.targetRate)}/s`,
      `p50 ${fmt(s.latencyMs.p50, 1)} / p99 ${fmt(s.latencyMs.p99, 1)} / max ${fmt(s.latencyMs.max, 1)} ms`,
      [
        `after the first second p99 ${fmt(s.steadyLatencyMs.p99, 1)} ms`,
        `appended ${fmt(s.appended)} (${fmt(s.appended / s.seconds)}/s), delivered ${fmt(s.delivered)}, duplicates ${s.duplicates}, missing ${s.missing}, out of order ${s.outOfOrder}: ${s.exactlyOnce ? 'exactly once' : 'NOT exactly once'}, ${inOrder ? 'in order' : 'NOT in order'}`,
        `append p50 ${fmt(s.appendLatencyMs.p50, 1)} ms`,
        cpuText(s.cpu, { count: s.appended, unit: 'event' }),
        ...(s.foreignTransactions
          ? [
              `write transactions of other databases open in ${fmt((100 * s.foreignTransactions.withForeign) / Math.max(1, s.foreignTransactions.samples))}% of samples, oldest ${fmt(s.foreignTransactions.maxAgeMs)} ms`,
            ]
          : []),
      ].join('; '),
      target ? `p99 <= 50 ms: ${verdict(s.latencyMs.p99 <= 50 && s.exactlyOnce && inOrder)}` : '-',
    ]);
  };
  for (const s of r.postgres.subscriber) subRow('PostgreSQL', s, true);
  appendRow('PGlite (in-memory, comparison)', r.pglite.appends, false);
  for (const s of r.pglite.subscriber) subRow('PGlite (in-memory, comparison)', s, false);
  const m = r.machine;
  const pgs = m.postgres as Record<string, string>;
  return [
    `Event store benchmark, ${r.date}`,
    `Machine: ${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.platform}; Node ${m.node}; PostgreSQL ${pgs.version} (synchronous_commit=${pgs.synchronous_commit}, fsync=${pgs.fsync}, wal_sync_method=${pgs.wal_sync_method}, shared_buffers=${pgs.shared_buffers})`,
    `Before start: machine ${fmt(Number(m.busyBeforeStart) * 100)}% CPU busy, load average ${(m.loadAverageAtStart as number[]).join(' ')}`,
    '',
    table(rows),
  ].join('\n');
};

const toJson = (value: unknown): string =>
  JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? v.toString() : v), 2);

main().then(
  (results) => {
    process.stdout.write(`${report(results)}\n`);
    if (opts.json) {
      fs.writeFileSync(opts.json, `${toJson(results)}\n`);
      log(`wrote ${opts.json}`);
    }
    process.exit(0);
  },
  async (error: unknown) => {
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    await dropDatabase();
    process.exit(1);
  },
);
